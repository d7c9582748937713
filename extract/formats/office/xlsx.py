"""XLSX normaliser (openpyxl): bytes -> ``NormalizedContent`` of cells and row spans; the
``clinical_workbook`` extractor reading them is ``extract.workbook.extractor``.

Locators: ``Sheet!B4`` for one cell (text = its displayed value) and ``Sheet!B4:F4`` for
the non-empty span of a row (text = the displayed values joined by " | "). Sheet names
are used as-is, unquoted. A value merged across a range is shown in every cell of it
(a merged "Collected" date applies to each row it spans). Hidden sheets, rows and columns
are skipped with a warning; a formula without a cached value is reported
(``formula_without_value``) and treated as empty, so no fact can come from it.
"""

from __future__ import annotations

import io
import re
import zipfile
from datetime import date, datetime, time

from domain.content import NormalizedContent, Section
from domain.errors import ExtractionError
from domain.models import ExtractionWarning
from domain.limits import DEFAULT_LIMITS, SHEET_TOO_LARGE, Limits, exceeded
from extract.formats.office.ooxml import check_ooxml, scan_part
from extract.formats.office.xlsx_internals import filled_coordinates

ENGINE = "openpyxl 3.1.5"
_EXCEL_ERRORS = {"#DIV/0!", "#N/A", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#NULL!", "#SPILL!", "#CALC!"}


def normalize_xlsx(data: bytes, limits: Limits = DEFAULT_LIMITS) -> NormalizedContent:
    """Visible cells and row spans of every visible worksheet, with displayed values.

    Raises ``ExtractionError``: empty_file, encrypted_file, not_xlsx, corrupt_file,
    archive_too_large, sheet_too_large.
    """
    package = check_ooxml(data, "xlsx", limits)
    _check_sheet_sizes(package, limits)
    _check_shared_strings(package, limits)
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
    warnings: list[ExtractionWarning] = []
    sheets_meta = []
    for ws in values_wb.worksheets:
        if not hasattr(ws, "iter_rows"):
            continue  # a chart sheet
        if ws.sheet_state != "visible":
            warnings.append(ExtractionWarning(
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


# A shared-string item's start or end tag in any namespace prefix (<si>, <x:si ...>, </si>, <si/>).
_SI_TAG = re.compile(rb"<(/?)(?:[\w.-]+:)?si(?=[\s/>])([^>]*?)(/?)>")
_CHUNK = 1024 * 1024


def _check_shared_strings(zf: zipfile.ZipFile, limits: Limits) -> None:
    """Count the shared strings and measure each while streaming the part, before
    openpyxl builds them all in memory (10.5 million strings held a worker 150 s at
    1.8 GB; one 150 MB string reached the job's memory ceiling)."""
    for name in zf.namelist():
        if name.lower().rsplit("/", 1)[-1].startswith("sharedstrings") and name.lower().endswith(".xml"):
            _measure_shared_strings(zf, name, limits)


def _measure_shared_strings(zf: zipfile.ZipFile, name: str, limits: Limits) -> None:
    count, opened_at, consumed, rest = 0, None, 0, b""
    with zf.open(name) as part:
        while True:
            block = part.read(_CHUNK)
            buf = rest + block
            cut = (buf.rfind(b">") + 1 or len(buf)) if block else len(buf)
            for m in _SI_TAG.finditer(buf, 0, cut):
                where = consumed + m.start()
                if m.group(1):  # </si>
                    opened_at = None
                    continue
                count += 1
                if count > limits.max_shared_strings:
                    raise _too_large(f"The workbook holds more than {limits.max_shared_strings:,} distinct texts",
                                     "max_shared_strings")
                opened_at = None if m.group(3) else where
            consumed += cut
            rest = buf[cut:]
            if opened_at is not None and consumed + len(rest) - opened_at > limits.max_shared_string_bytes:
                raise _too_large(f"A text in the workbook is longer than {limits.max_shared_string_bytes // 1024:,} KB",
                                 "max_shared_string_bytes")
            if not block:
                return


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


def _sheet(ws, fws, limits: Limits = DEFAULT_LIMITS) -> tuple[list[Section], list[ExtractionWarning]]:
    from openpyxl.utils import get_column_letter

    title = ws.title
    warnings: list[ExtractionWarning] = []
    merged: dict[tuple[int, int], tuple[int, int]] = {}
    for rng in ws.merged_cells.ranges:
        for r in range(rng.min_row, rng.max_row + 1):
            for c in range(rng.min_col, rng.max_col + 1):
                if (r, c) != (rng.min_row, rng.min_col):
                    merged[(r, c)] = (rng.min_row, rng.min_col)
    # Only coordinates that hold something (a value, a formula, or a merged value): a sheet
    # formatted down to row 1,048,576 must not be walked cell by cell (xlsx_internals).
    filled = filled_coordinates(ws) | filled_coordinates(fws)
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
        warnings.append(ExtractionWarning(
            "xlsx_hidden_rows",
            f"Sheet {title!r}: {len(hidden_rows)} hidden row(s) with content were skipped "
            f"(rows {', '.join(map(str, hidden_rows[:10]))}{'...' if len(hidden_rows) > 10 else ''}).",
        ))
    if hidden_cols:
        warnings.append(ExtractionWarning(
            "xlsx_hidden_columns", f"Sheet {title!r}: {len(hidden_cols)} hidden column(s) were skipped."))
    if error_cells:
        warnings.append(ExtractionWarning(
            "xlsx_cell_error",
            f"Sheet {title!r}: cells show Excel errors and were treated as empty: {', '.join(error_cells[:10])}.",
        ))
    for coord in formula_cells:
        warnings.append(ExtractionWarning(
            "formula_without_value",
            f"{title}!{coord} holds a formula with no saved result (the file was not recalculated "
            f"in Excel); it was treated as empty.",
        ))
    return sections, warnings
