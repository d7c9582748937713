"""The native views of non-paged sources for the document viewer: the cited HL7
message as a segment table, the cited XLSX range in its sheet grid, the cited DOCX
paragraph among its neighbours, the cited FHIR resource as a tree of its elements.
Each re-reads the source as the pipeline read it
(document_view.reread_content, cached), so what is shown is what was cited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from domain.errors import ExtractionError, NotFound
from core.services.review.document_view import document_row, reread_content
from core.services.workbench import Workbench


def source_sections(wb: Workbench, document: dict):
    """The sections (paragraphs, cells, segments) of a non-paged source, re-read as the
    pipeline read it and cached; NotFound when it cannot be re-read."""
    try:
        return reread_content(wb, document, allow_ocr=False).sections
    except ExtractionError as exc:
        raise NotFound(f"{document['filename']} could not be re-read ({exc.code}).", code="source_unreadable") from None


def _cited_document(wb: Workbench, document_id: int | None, citation: dict[str, Any]) -> dict[str, Any]:
    if document_id is None:
        source = str(citation.get("source_id") or "")
        if not source.startswith("documents:"):
            raise NotFound(f"The citation does not point at a stored document ({source}).", code="not_a_document")
        document_id = int(source.split(":", 1)[1])
    return document_row(wb, document_id)


@dataclass
class Hl7View:
    rows: list[dict[str, Any]]  # segment, index, field, component, value, cited_segment, cited
    test_name: str = ""
    unit: str = ""
    reference_range: str = ""
    flag: str = ""
    message: int = 1


_HL7_LOC = re.compile(r"^(?P<prefix>message (?P<msg>\d+) )?(?P<seg>[A-Z][A-Z0-9]{2})\[(?P<occ>\d+)\](?:-(?P<field>\d+))?")


def hl7_segments(wb: Workbench, citation: dict[str, Any], *, document_id: int | None = None) -> Hl7View:
    """The cited message as a segment table (one row per field component) with the
    cited OBX segment and field flagged, and the cited result's test, unit and range."""
    from extract.formats.hl7.parse import components, read_encoding

    document = _cited_document(wb, document_id, citation)
    where = _HL7_LOC.match(str(citation.get("page_or_section") or ""))
    msg = int(where["msg"]) if where and where["msg"] else 1
    sections = [s for s in source_sections(wb, document) if s.meta.get("message", 1) == msg]
    segments = [s for s in sections if s.section_type == "segment"]
    header = next((s for s in segments if s.meta.get("segment") in ("MSH", "FHS", "BHS")), None)
    enc = read_encoding(header.text)[0] if header else read_encoding("MSH|^~\\&")[0]
    cited_seg = (where["seg"], int(where["occ"])) if where else None
    cited_field = int(where["field"]) if where and where["field"] else None
    rows: list[dict[str, Any]] = []
    by_field: dict[int, str] = {}
    for s in sections:
        if s.section_type != "field":
            continue
        seg, occ, n = s.meta["segment"], s.meta["occurrence"], s.meta["field"]
        in_cited = cited_seg == (seg, occ)
        if in_cited:
            by_field[n] = s.meta.get("raw", s.text)
        raw = s.meta.get("raw", s.text)
        parts = [s.text] if (seg in ("MSH", "FHS", "BHS") and n <= 2) else components(raw, enc)
        for c, value in enumerate(parts, start=1):
            if not value.strip():
                continue
            rows.append({"segment": seg, "index": occ, "field": n, "component": c if len(parts) > 1 else None,
                         "value": value, "cited_segment": in_cited, "cited": in_cited and n == cited_field})
    view = Hl7View(rows=rows, message=msg)
    if cited_seg and cited_seg[0] == "OBX":
        test = components(by_field.get(3, ""), enc)
        view.test_name = (test[1] if len(test) > 1 and test[1].strip() else (test[0] if test else "")).strip()
        view.unit = (components(by_field.get(6, ""), enc) or [""])[0].strip()
        view.reference_range = (components(by_field.get(7, ""), enc) or [""])[0].strip()
        view.flag = (components(by_field.get(8, ""), enc) or [""])[0].strip()
    return view


@dataclass
class SheetGrid:
    sheet: str
    columns: list[str]  # column letters shown, left to right
    rows: list[tuple[int, list[str]]]  # (row number, cell texts)
    cited: set[tuple[int, int]]  # (row number, column index 1-based) of the cited cells
    first_col: int = 1


_RANGE = re.compile(r"^(?P<c1>[A-Z]+)(?P<r1>\d+)(?::(?P<c2>[A-Z]+)(?P<r2>\d+))?$")


def _col_number(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n


def _col_letters(n: int) -> str:
    out = ""
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(65 + r) + out
    return out


def sheet_grid(wb: Workbench, citation: dict[str, Any], *, document_id: int | None = None,
               around: int = 3, max_cols: int = 20) -> SheetGrid:
    """The cited sheet from ``around`` rows above to ``around`` rows below the cited
    range, with the cited cells flagged."""
    document = _cited_document(wb, document_id, citation)
    where = str(citation.get("page_or_section") or "")
    sheet, _, ref = where.rpartition("!")
    m = _RANGE.match(ref)
    if not sheet or not m:
        raise NotFound(f"“{where}” is not a cell range of a sheet.", code="not_a_cell_range")
    c1, r1 = _col_number(m["c1"]), int(m["r1"])
    c2, r2 = (_col_number(m["c2"]), int(m["r2"])) if m["c2"] else (c1, r1)
    cells = {(s.meta["row"], s.meta["col"]): s.text for s in source_sections(wb, document)
             if s.section_type == "cell" and s.meta.get("sheet") == sheet}
    if not cells:
        raise NotFound(f"Sheet “{sheet}” was not found in {document['filename']}.", code="sheet_not_found")
    top, bottom = max(1, r1 - around), r2 + around
    used_cols = [c for (r, c) in cells if top <= r <= bottom] + [c1, c2]
    left, right = min(used_cols), max(used_cols)
    if right - left + 1 > max_cols:
        # Too wide to show whole: keep the cell holding the quote (the value) in view.
        quote = str(citation.get("quote_or_value") or "").strip()
        anchor = next((c for c in range(c1, c2 + 1) for r in range(r1, r2 + 1)
                       if quote and cells.get((r, c), "").strip() == quote), c1)
        left = max(left, min(anchor - max_cols // 2, right - max_cols + 1))
        right = left + max_cols - 1
    rows = [(r, [cells.get((r, c), "") for c in range(left, right + 1)])
            for r in range(top, bottom + 1) if any((r, c) in cells for c in range(left, right + 1)) or r1 <= r <= r2]
    cited = {(r, c) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1)}
    return SheetGrid(sheet=sheet, columns=[_col_letters(c) for c in range(left, right + 1)], rows=rows,
                     cited=cited, first_col=left)


@dataclass
class DocxContext:
    items: list[dict[str, Any]]  # locator, kind, text, cited, span (start, end) of the quote or None


_TABLE_LOC = re.compile(r"^(table \d+ row \d+)(?: col \d+)?$")


def docx_context(wb: Workbench, citation: dict[str, Any], *, document_id: int | None = None,
                 around: int = 2) -> DocxContext:
    """The paragraphs (or table rows) around the cited one, with the quote's span in
    the cited item."""
    document = _cited_document(wb, document_id, citation)
    where = str(citation.get("page_or_section") or "")
    table = _TABLE_LOC.match(where)
    target = table[1] if table else where
    body = [s for s in source_sections(wb, document) if s.section_type in ("paragraph", "table_row") or s.locator == target]
    index = next((i for i, s in enumerate(body) if s.locator == target), None)
    if index is None:
        raise NotFound(f"“{where}” was not found in {document['filename']}.", code="location_not_found")
    quote = str(citation.get("quote_or_value") or "")
    items = []
    for i in range(max(0, index - around), min(len(body), index + around + 1)):
        s = body[i]
        span = None
        if i == index and quote:
            at = s.text.lower().find(quote.lower())
            span = (at, at + len(quote)) if at >= 0 else None
        items.append({"locator": s.locator, "kind": s.section_type, "text": s.text, "cited": i == index, "span": span})
    return DocxContext(items=items)


@dataclass
class FhirTree:
    resource: str  # the cited resource's path ("Bundle.entry[3].resource")
    rows: list[dict[str, Any]]  # path, depth, key, value, cited (the element read or inside it), on_path
    resources: list[dict[str, Any]]  # the file's resources: path, summary, valid, cited


_FHIR_RESOURCE = re.compile(r"^(?:Bundle\.entry\[\d+\]\.resource|[A-Z][A-Za-z]+)")


def fhir_tree(wb: Workbench, citation: dict[str, Any], *, document_id: int | None = None,
              max_rows: int = 400) -> FhirTree:
    """The cited resource as a tree of its elements (one row each, by depth), the element
    read and everything inside it flagged, the elements on the way to it marked; and the
    file's resources, the cited one flagged."""
    import json

    document = _cited_document(wb, document_id, citation)
    where = str(citation.get("page_or_section") or "")
    resources = [s for s in source_sections(wb, document) if s.section_type == "resource"]
    cited = next((s for s in resources if where == s.locator or where.startswith((s.locator + ".", s.locator + "["))),
                 None)
    if cited is None:
        m = _FHIR_RESOURCE.match(where)
        raise NotFound(f"“{m[0] if m else where}” was not found in {document['filename']}.",
                       code="location_not_found")
    rows: list[dict[str, Any]] = []

    def walk(value: Any, path: str, key: str, depth: int) -> None:
        if len(rows) >= max_rows:
            return
        inside = path == where or path.startswith((where + ".", where + "["))
        on_path = not inside and where.startswith((path + ".", path + "["))
        if isinstance(value, dict):
            shown = f"{{{len(value)}}}"
        elif isinstance(value, list):
            shown = f"[{len(value)}]"
        else:
            shown = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
        rows.append({"path": path, "depth": depth, "key": key, "value": shown, "cited": inside, "on_path": on_path})
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{path}.{k}", k, depth + 1)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{path}[{i}]", f"[{i}]", depth + 1)

    walk(json.loads(cited.text), cited.locator, cited.meta.get("resource_type") or "resource", 0)
    listing = [{"path": s.locator, "summary": s.meta.get("summary") or s.meta.get("resource_type"),
                "valid": bool(s.meta.get("valid")), "cited": s is cited} for s in resources]
    return FhirTree(resource=cited.locator, rows=rows, resources=listing)
