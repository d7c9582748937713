"""The backfill manifest: a CSV of ``path, patient MRN, category or doc type``.

A header row is optional (recognised by its column names, in any order); without one
the columns are taken in that order. Each row keeps its line number in the file, so a
failure in the report points at the line to fix. A row that cannot be read as one (a
missing column, an empty path) is a bad row with a code, never a crash.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from domain.errors import BadInput

# Accepted header names per column, lower-cased with spaces and dashes as underscores.
_COLUMNS = {
    "path": ("path", "file", "filename", "file_path"),
    "mrn": ("mrn", "patient_mrn", "patient", "patient_id"),
    "kind": ("category", "doc_type", "type", "category_or_doc_type", "document_type"),
}
BAD_ROW = "bad_row"


@dataclass(frozen=True)
class ManifestRow:
    line: int  # the row's line number in the manifest file (1-based, header counted)
    path: Path | None  # resolved against the manifest's folder when relative
    mrn: str
    kind: str  # a category name or a doc type
    error: str | None = None  # BAD_ROW when the row could not be read as one


def _key(name: str) -> str:
    return name.strip().lower().replace(" ", "_").replace("-", "_")


def _header(cells: list[str]) -> dict[str, int] | None:
    """Column positions when ``cells`` is a header row naming all three columns."""
    keys = [_key(c) for c in cells]
    found = {col: next((i for i, k in enumerate(keys) if k in names), None) for col, names in _COLUMNS.items()}
    return None if None in found.values() else found  # type: ignore[return-value]


def read_manifest(path: Path) -> list[ManifestRow]:
    """Every data row of the manifest at ``path`` (blank lines and ``#`` comments skipped)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise BadInput(f"Manifest not found: {path}", code="manifest_not_found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"The manifest cannot be read as UTF-8 text ({type(exc).__name__}).",
                       code="manifest_unreadable") from None
    base = path.resolve().parent
    reader = csv.reader(text.splitlines())
    rows: list[ManifestRow] = []
    columns = {"path": 0, "mrn": 1, "kind": 2}
    first = True
    for cells in reader:
        line = reader.line_num
        if not any(c.strip() for c in cells) or cells[0].lstrip().startswith("#"):
            continue
        if first:
            first = False
            header = _header(cells)
            if header is not None:
                columns = header
                continue
        if len(cells) <= max(columns.values()):
            rows.append(ManifestRow(line, None, "", "", BAD_ROW))
            continue
        raw, mrn, kind = (cells[columns[c]].strip() for c in ("path", "mrn", "kind"))
        if not raw or not mrn or not kind:
            rows.append(ManifestRow(line, None, mrn, kind, BAD_ROW))
            continue
        file = Path(raw).expanduser()
        rows.append(ManifestRow(line, file if file.is_absolute() else base / file, mrn, kind))
    return rows
