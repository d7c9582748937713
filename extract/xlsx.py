"""XLSX clinical workbooks: normalizer (openpyxl) and ``clinical_workbook`` extractor.

Locators: ``Sheet!B4`` for one cell (text = its displayed value) and ``Sheet!B4:F4`` for
the non-empty span of a row (text = the displayed values joined by " | "). Sheet names
are used as-is, unquoted. A value merged across a range is shown in every cell of it
(a merged "Collected" date applies to each row it spans). Hidden sheets, rows and columns
are skipped with a warning; a formula without a cached value is reported
(``formula_without_value``) and treated as empty, so no fact can come from it.

The extractor finds table header rows anywhere on a sheet by their labels (test/analyte,
result/value, units, range, flag, date; medication/drug, dose, frequency, route), reads
patient identifiers from a label/value block above the table ("Patient:", "MRN:", "DOB:"),
and turns rows into ``lab_result`` and ``medication`` facts cited by their row span.
Tables whose headers say they are test plans ("Test Case #", "PASS/FAIL") or that carry
no result columns (data dictionaries) yield nothing.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from datetime import date, datetime, time

from core.content import ContentWarning, NormalizedContent, Section
from core.errors import ExtractionError
from core.models import (
    DocType,
    ExtractionResult,
    ExtractionWarning,
    FactProposal,
    IdentifierKind,
    IdentityCandidate,
    LabResultValue,
)
from core.policy.analytes import loinc_code_ok, unitless_analyte, usual_units_problem
from core.policy.context import hedge_cue
from extract import text_rules as tr
from extract import values as V
from extract.intake_labels import read_label, reads_as_label
from extract.phrases import parse_medication
from extract.section_facts import SectionFacts
from extract.limits import DEFAULT_LIMITS, SHEET_TOO_LARGE, Limits, exceeded
from extract.ooxml import check_ooxml, scan_part

SOURCE_TYPE = DocType.CLINICAL_WORKBOOK.value
ENGINE = "openpyxl 3.1.5"
_EXCEL_ERRORS = {"#DIV/0!", "#N/A", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#NULL!", "#SPILL!", "#CALC!"}

# ============================================================================ normalizer


def normalize_xlsx(data: bytes, limits: Limits = DEFAULT_LIMITS) -> NormalizedContent:
    """Visible cells and row spans of every visible worksheet, with displayed values.

    Raises ``ExtractionError``: empty_file, encrypted_file, not_xlsx, corrupt_file,
    archive_too_large, sheet_too_large.
    """
    _check_sheet_sizes(check_ooxml(data, "xlsx", limits), limits)
    from xml.etree.ElementTree import ParseError

    import openpyxl
    from lxml.etree import XMLSyntaxError
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        values_wb = openpyxl.load_workbook(io.BytesIO(data), data_only=True)
        formulas_wb = openpyxl.load_workbook(io.BytesIO(data), data_only=False)
    except (InvalidFileException, KeyError, ValueError, TypeError, IndexError, AttributeError,
            zipfile.BadZipFile, XMLSyntaxError, ParseError) as exc:
        # openpyxl reports malformed package XML with whatever error its reader hits first;
        # ParseError comes from the standard library's expat parser, which it uses for
        # sheets and shared strings (malformed XML, an undefined entity).
        raise ExtractionError(
            f"The Excel workbook is damaged and could not be read ({type(exc).__name__}: {exc}).",
            code="corrupt_file",
        ) from None
    sections: list[Section] = []
    warnings: list[ContentWarning] = []
    sheets_meta = []
    for ws in values_wb.worksheets:
        if not hasattr(ws, "iter_rows"):
            continue  # a chart sheet
        if ws.sheet_state != "visible":
            warnings.append(ContentWarning(
                "xlsx_hidden_sheet", f"Sheet {ws.title!r} is hidden ({ws.sheet_state}) and was not read."))
            continue
        sheet_sections, sheet_warnings = _sheet(ws, formulas_wb[ws.title], limits)
        sections += sheet_sections
        warnings += sheet_warnings
        sheets_meta.append({"title": ws.title, "max_row": ws.max_row, "max_column": ws.max_column})
    return NormalizedContent(source_kind="xlsx", sections=sections, warnings=warnings, engine=ENGINE,
                             meta={"sheets": sheets_meta})


# Start tags in any namespace prefix: a row, a cell, a merged range with its ref.
_SHEET_TAGS = re.compile(
    rb"<(?:[\w.-]+:)?(?:(row)|(c)|mergeCell\s[^>]*?\bref\s*=\s*[\"']([^\"']*))[\s/>\"']")
_NOT_SHEETS = ("xl/sharedStrings.xml", "xl/styles.xml")


def _check_sheet_sizes(zf: zipfile.ZipFile, limits: Limits) -> None:
    """Count rows, cells and merged cells in the raw sheet XML before openpyxl loads the
    workbook: openpyxl builds every cell of a merged range when it loads, so a range over
    the whole sheet must be refused unread. Every XML part under xl/ is counted (a sheet
    can sit at any path), cells and merged cells over the whole workbook."""
    cells = merged = 0
    for name in zf.namelist():
        if not name.startswith("xl/") or not name.endswith(".xml") or name in _NOT_SHEETS:
            continue
        rows = 0
        for m in scan_part(zf, name, _SHEET_TAGS):
            if m.group(1):
                rows += 1
                if rows > limits.max_sheet_rows:
                    raise _too_large(f"A sheet has more than {limits.max_sheet_rows:,} rows", "max_sheet_rows")
            elif m.group(2):
                cells += 1
                if cells > limits.max_sheet_cells:
                    raise _too_large(f"The workbook has more than {limits.max_sheet_cells:,} cells",
                                     "max_sheet_cells")
            else:
                merged += _range_size(m.group(3).decode("latin-1"))
                if merged > limits.max_merged_cells:
                    raise _too_large(f"Its merged ranges cover more than {limits.max_merged_cells:,} cells "
                                     f"(the last one read is {m.group(3).decode('latin-1')[:40]!r})",
                                     "max_merged_cells")


def _range_size(ref: str) -> int:
    """Cells in an A1-style range ("A1:XFD1048576", "A:A", "3:3"); 0 for a bad ref,
    which openpyxl then reports as a damaged file."""
    from openpyxl.utils.cell import range_boundaries

    try:
        min_col, min_row, max_col, max_row = range_boundaries(ref.strip())
    except (ValueError, TypeError):
        return 0
    cols = (max_col or 16_384) - (min_col or 1) + 1
    rows = (max_row or 1_048_576) - (min_row or 1) + 1
    return max(cols, 0) * max(rows, 0)


def _too_large(what: str, setting: str) -> ExtractionError:
    return exceeded(SHEET_TOO_LARGE, f"{what}, more than a clinical workbook holds, so it was not read.", setting)


def display_value(value: object, number_format: str = "General") -> tuple[str, str, str | None]:
    """(text as shown, kind, ISO date) for a cached cell value.

    kind is "date", "number", "bool" or "text". Percent and fixed-decimal number formats
    are honoured; other numbers print without float noise (182.0 -> "182").
    """
    if value is None:
        return "", "text", None
    if isinstance(value, bool):
        return ("TRUE" if value else "FALSE"), "bool", None
    if isinstance(value, datetime):
        if value.time() != time(0, 0) and re.search(r"h", number_format or "", re.IGNORECASE):
            return value.strftime("%Y-%m-%d %H:%M"), "date", value.date().isoformat()
        return value.date().isoformat(), "date", value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat(), "date", value.isoformat()
    if isinstance(value, time):
        return value.strftime("%H:%M"), "text", None
    if isinstance(value, (int, float)):
        fmt = number_format or "General"
        decimals = re.search(r"0\.(0+)", fmt)
        if "%" in fmt:
            d = len(decimals.group(1)) if decimals else 0
            return f"{value * 100:.{d}f}%", "number", None
        if decimals and "E" not in fmt.upper():
            return f"{value:.{len(decimals.group(1))}f}", "number", None
        if isinstance(value, float) and value.is_integer():
            return str(int(value)), "number", None
        return f"{value:.10g}" if isinstance(value, float) else str(value), "number", None
    return str(value), "text", None


def _sheet(ws, fws, limits: Limits = DEFAULT_LIMITS) -> tuple[list[Section], list[ContentWarning]]:
    from openpyxl.utils import get_column_letter

    title = ws.title
    warnings: list[ContentWarning] = []
    merged: dict[tuple[int, int], tuple[int, int]] = {}
    for rng in ws.merged_cells.ranges:
        for r in range(rng.min_row, rng.max_row + 1):
            for c in range(rng.min_col, rng.max_col + 1):
                if (r, c) != (rng.min_row, rng.min_col):
                    merged[(r, c)] = (rng.min_row, rng.min_col)
    # Only coordinates that hold something (a value, a formula, or a merged value): a sheet
    # formatted down to row 1,048,576 must not be walked cell by cell. ``_cells`` is
    # openpyxl's own cell store (stable in the pinned 3.1.5); iter_rows would create every
    # empty cell up to max_row.
    filled = {rc for rc, cell in ws._cells.items() if cell.value is not None}
    filled |= {rc for rc, cell in fws._cells.items() if cell.value is not None}
    filled |= {rc for rc, src in merged.items() if src in filled}
    used_rows = sorted({r for r, _ in filled})
    if len(used_rows) > limits.max_sheet_rows:  # the raw count missed them (an unusual layout)
        raise _too_large(f"Sheet {title!r} has {len(used_rows):,} rows with content, more than "
                         f"{limits.max_sheet_rows:,}", "max_sheet_rows")
    used_cols = sorted({c for _, c in filled})
    hidden_cols = {c for c in used_cols if ws.column_dimensions[get_column_letter(c)].hidden}
    hidden_rows: list[int] = []
    formula_cells: list[str] = []
    error_cells: list[str] = []
    sections: list[Section] = []
    for r in used_rows:
        if ws.row_dimensions[r].hidden:
            hidden_rows.append(r)
            continue
        cells = []
        for c in used_cols:
            if (r, c) not in filled:
                continue
            if c in hidden_cols:
                continue
            src = merged.get((r, c), (r, c))
            cell = ws.cell(*src)
            value = cell.value
            if value is None:
                formula = fws.cell(*src).value
                if isinstance(formula, str) and formula.startswith("=") or type(formula).__name__ == "ArrayFormula":
                    if src == (r, c):
                        formula_cells.append(cell.coordinate)
                    continue
            if isinstance(value, str) and value.strip() in _EXCEL_ERRORS:
                if src == (r, c):
                    error_cells.append(f"{cell.coordinate} ({value.strip()})")
                continue
            text, kind, iso = display_value(value, cell.number_format)
            if not text.strip():
                continue
            coord = f"{get_column_letter(c)}{r}"
            meta = {"sheet": title, "row": r, "col": c, "coord": coord, "kind": kind, "iso": iso}
            if src != (r, c):
                meta["merged_from"] = ws.cell(*src).coordinate
            cells.append(meta | {"text": text})
            sections.append(Section(f"{title}!{coord}", text, "cell", meta))
        if len(cells) > 1:
            span = f"{title}!{cells[0]['coord']}:{cells[-1]['coord']}"
            sections.append(Section(span, " | ".join(x["text"] for x in cells), "row",
                                    {"sheet": title, "row": r, "cells": cells}))
        elif cells:
            sections[-1].meta["only_cell_in_row"] = True
    if hidden_rows:
        warnings.append(ContentWarning(
            "xlsx_hidden_rows",
            f"Sheet {title!r}: {len(hidden_rows)} hidden row(s) with content were skipped "
            f"(rows {', '.join(map(str, hidden_rows[:10]))}{'...' if len(hidden_rows) > 10 else ''}).",
        ))
    if hidden_cols:
        warnings.append(ContentWarning(
            "xlsx_hidden_columns", f"Sheet {title!r}: {len(hidden_cols)} hidden column(s) were skipped."))
    if error_cells:
        warnings.append(ContentWarning(
            "xlsx_cell_error",
            f"Sheet {title!r}: cells show Excel errors and were treated as empty: {', '.join(error_cells[:10])}.",
        ))
    for coord in formula_cells:
        warnings.append(ContentWarning(
            "formula_without_value",
            f"{title}!{coord} holds a formula with no saved result (the file was not recalculated "
            f"in Excel); it was treated as empty.",
        ))
    return sections, warnings


# ============================================================================ extractor

_LAB_ROLES: dict[str, tuple[str, ...]] = {
    "test": ("test", "test name", "analyte", "component", "investigation", "lab test", "parameter",
             "observation", "assay", "determination", "examination", "lab"),
    "value": ("result", "value", "result value", "observed value", "reading", "level", "results"),
    "unit": ("units", "unit", "uom", "unit of measure"),
    "range": ("reference range", "ref range", "range", "normal range", "reference", "reference interval",
              "ref. range", "normal values", "ref", "reference values", "normal", "target range", "target",
              "therapeutic range", "target interval", "therapeutic interval", "reference ranges", "normal ranges",
              "ref interval", "ref. interval", "biological reference interval", "expected range", "goal range",
              "desired range"),
    "flag": ("flag", "flags", "abnormal flag", "h/l", "abn", "abnormal", "interpretation"),
    "date": ("date", "collected", "collection date", "date collected", "specimen date", "result date",
             "sample date", "date of test", "test date", "drawn", "collection"),
    "critical": ("critical range", "critical limits", "critical values", "critical value", "panic values",
                 "panic range", "panic limits", "critical"),
    "loinc": ("loinc", "loinc code"),
}
_MED_ROLES: dict[str, tuple[str, ...]] = {
    "name": ("medication", "drug", "medicine", "medication name", "drug name", "medications", "drugs"),
    "dose": ("dose", "strength", "dosage", "amount"),
    "frequency": ("frequency", "directions", "sig", "how often", "instructions", "schedule"),
    "route": ("route",),
    "start": ("start date", "started", "start", "date started"),
    "status": ("status",),
}
_TEST_PLAN = re.compile(r"test case|pass\s*/\s*fail|expected result|expected value", re.IGNORECASE)
_ID_LABELS = {
    "name": ("patient", "patient name", "name", "client", "client name", "patient's name", "full name"),
    "dob": ("dob", "d.o.b", "date of birth", "birth date", "birthdate"),
    "mrn": ("mrn", "medical record number", "medical record no", "hospital no", "hospital number",
            "record number", "patient id", "chart number", "mrn #", "mr number"),
    "collected": ("collected", "collection date", "date collected", "specimen date", "sample date"),
}
_ID_OF = {label: kind for kind, labels in _ID_LABELS.items() for label in labels}
# Label wordings read by meaning (the intake label vocabulary): "Surname", "Forename",
# "Given name", "Clinic ID", "Hospital number", "NHS number", "Chart #", "Unit no."...
_ID_KINDS = {"name": "name", "first_name": "first_name", "middle_name": "middle_name", "last_name": "last_name",
             "dob": "dob", "mrn": "mrn"}
MAX_ID_LABEL_WORDS = 5


def _id_kind(text: str) -> str | None:
    """The identity field a label cell names ("name", "first_name", "last_name",
    "middle_name", "dob", "mrn", "collected"), or None. A label about someone else
    ("Next of kin name", "GP name") names none of the patient's."""
    t = _norm(text)
    if t in _ID_OF:
        return _ID_OF[t]
    raw = V.normalize_ws(text).rstrip(": ")  # "Unit no." keeps its dot: "no" alone is an answer
    if not t or len(t.split()) > MAX_ID_LABEL_WORDS or not reads_as_label(raw):
        return None
    meaning = read_label(raw)
    return _ID_KINDS.get(meaning.kind or "") if meaning.owner is None else None
_NULL_VALUE = re.compile(r"^\s*(?:n/?a|none|null|unknown|tbd|tbc|-+|\?+|redacted|see .*)\s*$", re.IGNORECASE)


def _norm(text: str) -> str:
    t = V.normalize_ws(text).lower()
    t = re.sub(r"[:#*.]+$", "", t).strip()
    return t


def _role(text: str, roles: dict[str, tuple[str, ...]]) -> str | None:
    t = _norm(text)
    bare = re.sub(r"\s*\(.*?\)\s*", " ", t).strip()
    for role, names in roles.items():
        if t in names or bare in names:
            return role
    return None


@dataclass(slots=True)
class _Table:
    kind: str  # lab | medication
    header_row: int
    columns: dict[str, int]  # role -> column number
    header_units: str = ""  # "Result (mmol/L)"


_Ctx = SectionFacts


def extract_workbook(content: NormalizedContent, source_id: str) -> ExtractionResult:
    """Lab results, medications and identity from ``normalize_xlsx`` output."""
    ctx = _Ctx.for_content(content, "xlsx", SOURCE_TYPE, source_id)
    by_sheet: dict[str, list[Section]] = {}
    for s in content.sections:
        by_sheet.setdefault(s.meta["sheet"], []).append(s)
    plans = {sheet: _find_tables(ctx, sheet, secs) for sheet, secs in by_sheet.items()}
    sheet_dates: dict[str, str | None] = {}
    for sheet, secs in by_sheet.items():
        sheet_dates[sheet] = _identity_block(ctx, secs, plans[sheet])
    has_identity = bool(ctx.identifiers)
    for sheet, secs in by_sheet.items():
        _rows(ctx, sheet, secs, plans[sheet], sheet_dates[sheet], has_identity)
    return ExtractionResult(doc_type=DocType.CLINICAL_WORKBOOK, facts=ctx.facts, identifiers=ctx.identifiers,
                            warnings=ctx.warnings, engine=ENGINE)


# ---------------------------------------------------------------------------- tables


def _row_cells(section: Section) -> list[dict]:
    return section.meta["cells"] if section.kind == "row" else [section.meta | {"text": section.text}]


def _rows_of(secs: list[Section]) -> list[Section]:
    """One section per non-empty row: the row span, or the lone cell."""
    return [s for s in secs if s.kind == "row" or s.meta.get("only_cell_in_row")]


def _find_tables(ctx: _Ctx, sheet: str, secs: list[Section]) -> list[_Table]:
    tables: list[_Table] = []
    for s in _rows_of(secs):
        cells = _row_cells(s)
        if len(cells) < 2:
            continue
        texts = [c["text"] for c in cells]
        lab = {}
        med = {}
        for c in cells:
            if c["kind"] != "text":
                continue
            r = _role(c["text"], _LAB_ROLES)
            if r and r not in lab:
                lab[r] = c["col"]
            m = _role(c["text"], _MED_ROLES)
            if m and m not in med:
                med[m] = c["col"]
        is_lab = "test" in lab and "value" in lab and len(lab) >= 3
        is_med = "name" in med and ("dose" in med or "frequency" in med)
        if not (is_lab or is_med):
            continue
        if any(_TEST_PLAN.search(t) for t in texts):
            ctx.warnings.append(ExtractionWarning(
                code="xlsx_not_patient_results",
                message=f"{s.locator}: the table's headers describe a test plan (test cases, pass/fail), "
                        f"not a patient's results; its rows were not read as results.",
            ))
            continue
        if is_lab and (not is_med or len(lab) >= len(med)):
            value_header = next(c["text"] for c in cells if c["col"] == lab["value"])
            unit = re.search(r"\((.+?)\)", value_header)
            tables.append(_Table("lab", s.meta["row"], lab, unit.group(1) if unit else ""))
        else:
            tables.append(_Table("medication", s.meta["row"], med))
    return tables


def _table_for(row: int, tables: list[_Table]) -> _Table | None:
    current = None
    for t in tables:
        if t.header_row < row:
            current = t
    return current


# ---------------------------------------------------------------------------- identity


def _identity_block(ctx: _Ctx, secs: list[Section], tables: list[_Table]) -> str | None:
    """Label/value cells above the first table (or anywhere on a sheet without one).

    Only short rows count (at most two label/value pairs), so a data dictionary whose first
    column says "Patient" is not mistaken for a patient header block. Returns a sheet-level
    collection date when one is given ("Collected: 2024-03-12").
    """
    first_table = min((t.header_row for t in tables), default=None)
    cells_by_row: dict[int, list[Section]] = {}
    for s in secs:
        if s.kind == "cell" and (first_table is None or s.meta["row"] < first_table):
            cells_by_row.setdefault(s.meta["row"], []).append(s)
    collected = None
    parts: dict[str, tuple[str, Section]] = {}
    for row, cells in sorted(cells_by_row.items()):
        cells.sort(key=lambda s: s.meta["col"])
        kinds = [_id_kind(c.text) if c.meta["kind"] == "text" else None for c in cells]
        labels = [k is not None for k in kinds]
        # A label/value block: "Label:" cells, a bare two-cell row, or label|value|label|value.
        pairs_ok = len(cells) == 2 or (len(cells) == 4 and labels[0] and labels[2])
        for i, cell in enumerate(cells):
            text = cell.text.strip()
            inline = re.match(r"^([A-Za-z .'#]{2,30}?)\s*:\s*(\S.*)$", text)
            if inline and _id_kind(inline.group(1)):
                kind, value_cell, value = _id_kind(inline.group(1)), cell, inline.group(2).strip()
            elif (labels[i] and i + 1 < len(cells) and cell.meta["kind"] == "text"
                  and (text.endswith(":") or pairs_ok) and i % 2 == 0):
                kind, value_cell = kinds[i], cells[i + 1]
                value = value_cell.text.strip()
            else:
                continue
            if _NULL_VALUE.match(value):
                continue
            if kind in ("first_name", "middle_name", "last_name"):
                parts.setdefault(kind, (value, value_cell))  # a name written in parts
                continue
            if kind == "collected":
                parsed = V.parse_date(value) if value_cell.meta.get("iso") is None else None
                collected = value_cell.meta.get("iso") or (parsed.iso if parsed else None)
                continue
            _identifier(ctx, kind, value, value_cell)
    if "first_name" in parts and "last_name" in parts:
        (last, last_cell), (first, _) = parts["last_name"], parts["first_name"]
        middle = parts["middle_name"][0] if "middle_name" in parts else ""
        name = f"{last}, {first}" + (f" {middle}" if middle else "")
        if _reads_as_name(name):
            # Cited by the surname's cell (a citation holds one cell); the name is both parts.
            _identifier(ctx, "name", name, last_cell)
    return collected


_NAME_PARTICLES = frozenset({"de", "da", "del", "della", "di", "du", "van", "von", "der", "den", "la", "le", "bin",
                             "binti", "al", "el", "ter", "ten", "y", "st"})
MAX_NAME_PART_WORDS = 3


def _reads_as_name(name: str) -> bool:
    """A name put together from its parts reads as a person's name: each part a few
    capitalised words ("FITZWILLIAM-OSEI, Ngozi"), not a data dictionary's description
    ("Family name of the patient, Given name")."""
    last, _, given = name.partition(",")
    words = name.replace(",", " ").split()
    return tr.parse_person_name(name) is not None \
        and len(last.split()) <= MAX_NAME_PART_WORDS and len(given.split()) <= MAX_NAME_PART_WORDS + 1 \
        and all(w[:1].isupper() or w.lower() in _NAME_PARTICLES for w in words)


def _identifier(ctx: _Ctx, kind: str, value: str, cell: Section) -> None:
    if kind == "name":
        if not re.search(r"[A-Za-z]", value) or len(value) > 80 or "_" in value:
            return
        ident_kind, ident_value, quote = IdentifierKind.NAME, V.normalize_ws(value), value
    elif kind == "dob":
        iso = cell.meta.get("iso")
        if iso is None:
            parsed = V.parse_date(value)
            iso = parsed.iso if parsed else None
            if parsed and parsed.ambiguous:
                ctx.warnings.append(ExtractionWarning(
                    code="xlsx_ambiguous_date",
                    message=f"{cell.locator}: date of birth {value!r} could be read day- or month-first; read as {iso}."))
        if not iso:
            ctx.warnings.append(ExtractionWarning(
                code="xlsx_invalid_dob", message=f"{cell.locator}: {value!r} is not a complete date of birth."))
            return
        ident_kind, ident_value, quote = IdentifierKind.DOB, iso, value
    else:
        m = re.search(r"[A-Za-z0-9][A-Za-z0-9-]*\d[A-Za-z0-9-]*", value)
        if not m:
            return
        ident_kind, ident_value, quote = IdentifierKind.MRN, m.group(0), m.group(0)
    if any(c.kind == ident_kind and c.value == ident_value for c in ctx.identifiers):
        return
    ctx.identifiers.append(IdentityCandidate(
        kind=ident_kind, value=ident_value, citation=ctx.cite(cell, quote, f"patient.{ident_kind.value}")))


# ---------------------------------------------------------------------------- rows


def _rows(ctx: _Ctx, sheet: str, secs: list[Section], tables: list[_Table], sheet_date: str | None,
          has_identity: bool) -> None:
    header_rows = {t.header_row for t in tables}
    for s in _rows_of(secs):
        row = s.meta["row"]
        if row in header_rows:
            continue
        table = _table_for(row, tables)
        if table is None:
            continue
        by_col = {c["col"]: c for c in _row_cells(s)}
        if len(by_col) < 2:
            continue  # a title or a note inside the table area
        if table.kind == "lab":
            _lab_row(ctx, s, table, by_col, sheet_date, has_identity)
        else:
            _med_row(ctx, s, table, by_col, has_identity)


def _cell(by_col: dict[int, dict], table: _Table, role: str) -> dict | None:
    col = table.columns.get(role)
    return by_col.get(col) if col is not None else None


def _date_of(cell: dict | None) -> tuple[str | None, str | None]:
    """(ISO date, problem) from a date cell: real dates, or text in common formats."""
    if cell is None:
        return None, None
    if cell.get("iso"):
        return cell["iso"], None
    parsed = V.parse_date(cell["text"])
    if parsed is None:
        return None, f"date {cell['text']!r} could not be read"
    if parsed.iso is None:
        return None, f"incomplete date {cell['text']!r}"
    if parsed.ambiguous:
        return parsed.iso, f"ambiguous date {cell['text']!r} (read month-first as {parsed.iso})"
    return parsed.iso, None


def _lab_row(ctx: _Ctx, s: Section, table: _Table, by_col: dict[int, dict], sheet_date: str | None,
             has_identity: bool) -> None:
    test, value_cell = _cell(by_col, table, "test"), _cell(by_col, table, "value")
    if test is None or value_cell is None or test["kind"] != "text":
        return
    name = V.normalize_ws(test["text"])
    value = V.normalize_ws(value_cell["text"])
    unit_cell, range_cell, flag_cell, critical_cell, loinc_cell = (
        _cell(by_col, table, r) for r in ("unit", "range", "flag", "critical", "loinc"))
    unit = V.normalize_ws(unit_cell["text"]) if unit_cell else ""
    if not unit:
        value, unit = V.split_value_unit(value)  # "7.9 %" in one cell
    ref, unit = V.split_range_unit(V.normalize_ws(range_cell["text"]) if range_cell else "", unit)  # "3.5-5.0 mmol/L"
    unit = unit or table.header_units
    factors: list[float] = []
    reasons: list[str] = []
    printed_flag = V.normalize_ws(flag_cell["text"]) if flag_cell else ""
    reading = V.resolve_flag([printed_flag], value, ref,
                             critical_column=critical_cell["text"] if critical_cell else "")
    flag, derived_flag = reading.flag, reading.derived
    for reason, factor in reading.doubts():
        factors.append(factor)
        reasons.append(reason)
    coll, date_problem = _date_of(_cell(by_col, table, "date"))
    if coll is None and date_problem is None:
        coll = sheet_date
    if date_problem:
        if date_problem.startswith("ambiguous"):
            factors.append(0.9)
        else:
            factors.append(0.8)
            reasons.append(date_problem)
    if not V.is_numeric_result(value):
        factors.append(0.95)
    elif not unit and not unitless_analyte(name, loinc_cell["text"] if loinc_cell else None):
        factors.append(0.9)  # INR, pH, specific gravity and ratios have no unit to miss
    loinc = V.normalize_ws(loinc_cell["text"]) if loinc_cell else ""
    loinc = loinc if loinc_code_ok(loinc) else ""
    implausible = usual_units_problem(name, unit, loinc or None)
    if implausible:
        factors.append(0.7)
        reasons.append(implausible)
    cue = hedge_cue(f"{name} {value}")
    if cue:
        factors.append(0.7)
        reasons.append(f"uncertain wording ({cue!r})")
    if not has_identity:
        factors.append(0.7)
        reasons.append("the workbook does not identify the patient")
    if coll is None:
        factors.append(0.95)
    lab = LabResultValue(test_name=name, value=value, unit=unit, reference_range=ref, collection_date=coll,
                         abnormal_flag=flag, flag_derived=derived_flag).model_dump()
    if printed_flag:
        lab["flags_as_printed"] = [printed_flag]
    if reading.critical_range:
        lab["critical_range"] = reading.critical_range
    if loinc:
        lab["loinc"] = loinc
    path = ctx.path("results")
    text = f"{name}: {value}" + (f" {unit}" if unit else "") + (f" (ref {ref})" if ref else "") + (
        f" [{flag.replace('_', ' ')}]" if flag not in ("unknown", "normal") else "") + (
        f" collected {coll}" if coll else "")
    ctx.facts.append(FactProposal(
        fact_type="lab_result", fact_text=text, structured_value=lab,
        citation=ctx.cite(s, value_cell["text"], path), confidence=V.confidence(0.92, factors),
        wants_review=bool(reasons), review_reason="; ".join(reasons) or None,
    ))


def _med_row(ctx: _Ctx, s: Section, table: _Table, by_col: dict[int, dict], has_identity: bool) -> None:
    name_cell = _cell(by_col, table, "name")
    if name_cell is None or name_cell["kind"] != "text":
        return
    parts = {role: V.normalize_ws(c["text"]) for role in ("dose", "frequency", "route", "status")
             if (c := _cell(by_col, table, role)) is not None}
    parsed = parse_medication(name_cell["text"])
    name = parsed["name"]
    dose = parts.get("dose") or parsed["dose"]
    frequency = parts.get("frequency") or parsed["frequency"]
    if not dose and frequency:
        dose = parse_medication(frequency)["dose"]
    start, date_problem = _date_of(_cell(by_col, table, "start"))
    structured = {"name": name, "dose": dose or None, "frequency": frequency or None,
                  "route": parts.get("route") or parsed["route"], "start_date": start,
                  "status": parts.get("status") or None}
    factors: list[float] = []
    reasons: list[str] = []
    if not dose:
        factors.append(0.8)
        reasons.append("dose not stated")
    if not frequency:
        factors.append(0.9)
    cue = hedge_cue(" ".join(c["text"] for c in by_col.values()))
    if cue:
        factors.append(0.6)
        reasons.append(f"uncertain wording ({cue!r})")
    if date_problem and not date_problem.startswith("ambiguous"):
        factors.append(0.9)
    if not has_identity:
        factors.append(0.7)
        reasons.append("the workbook does not identify the patient")
    path = ctx.path("medications")
    summary = " ".join(v for v in (name, dose, structured["route"], frequency) if v)
    ctx.facts.append(FactProposal(
        fact_type="medication", fact_text=f"Medication: {summary}", structured_value=structured,
        citation=ctx.cite(s, name_cell["text"], path), confidence=V.confidence(0.9, factors),
        wants_review=bool(reasons), review_reason="; ".join(reasons) or None,
    ))
