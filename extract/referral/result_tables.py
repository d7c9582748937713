"""Result tables in a letter with one column per test and one row per date ("Taken |
Hb (g/L) | Ferritin | MCV"), or one column per date and one row per test ("Test |
02/09/2026 | 07/10/2026", ``extract.values.dated_results``): one result per filled cell,
cited to its table cell ("table 2 row 3 col 2", quoting the cell), dated by its row or
its column. A column (or row) naming no known test is reported, never guessed, and so
is a cell under a test that holds no value. A table with a column per test ends at a
row whose date cell holds something other than a date.

Vital signs are read the same two ways: a table with a column per sign ("Date | BP
(mmHg) | Pulse | Weight (kg)", two signs at least) or a sign's row in a table with a
column per date. Each reading is cited to its cell and dated by its row or column.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.content import NormalizedContent, Section
from domain.models import ExtractionWarning
from extract.referral.facts import Found
from domain.policy.facts.analytes import canonical_analyte
from extract.values.dated_results import DatedHeader, read_dated_header, read_dated_row
from domain.policy.facts.vital_signs import sign_of_label
from extract.values.dates import document_date_order, find_date, parse_date, settle
from extract.values.vital_readings import names_reading_date, read_vital
from extract.values.wide_results import (WideHeader, is_data_row, read_description_row, read_header, read_row,
                                        settle_dates)


def results_in_tables(content: NormalizedContent) -> tuple[list[Found], set[int], list[ExtractionWarning]]:
    """(results as ``Found`` items of ``how="result_table"``, the tables read so, warnings)."""
    cells = {s.locator: s for s in content.sections if s.section_type == "table_cell"}
    found: list[Found] = []
    tables: set[int] = set()
    unread: dict[tuple[int, str, str], list[str]] = {}
    header: WideHeader | None = None
    dated: DatedHeader | None = None
    signs: _SignColumns | None = None
    table = None
    rows = [s for s in content.sections if s.section_type == "table_row"]
    # One letter prints its dates one way: "17/11/2026" anywhere settles a column's "04/11/2026".
    day_first = document_date_order(s.text for s in content.sections if s.section_type != "table_cell")
    for i, row in enumerate(rows):
        t, r = row.meta["table"], row.meta["row"]
        pairs = [(c, text.strip()) for c, text in row.meta["cells"]]
        if t != table:
            table, header, dated, signs = t, None, None, None
        if dated is not None:
            _dated_row(dated, row, pairs, cells, found, unread)
            continue
        if signs is not None:
            _sign_row(signs, row, pairs, cells, found, unread, day_first)
            continue
        if header is None:
            if (signs := _sign_columns(pairs)) is not None:
                tables.add(t)
                continue
            header = read_header(pairs)
            if header is not None:
                tables.add(t)
                settle_dates(header, [dict(later.meta["cells"]).get(header.date_col, "") for later in rows[i + 1:]
                                      if later.meta["table"] == t])
            elif (dated := read_dated_header([(c, text, None) for c, text in pairs], day_first)) is not None:
                tables.add(t)
            continue
        if read_description_row(header, pairs):
            continue
        date_text = dict(pairs).get(header.date_col, "")
        if date_text and parse_date(date_text) is None:
            header = None  # the table goes on as something else: not its results
            continue
        if not is_data_row(header, pairs):
            continue
        read = read_row(header, pairs)
        for result in read.results:
            section = cells.get(f"table {t} row {r} col {result.col}", row)
            column = result.column
            found.append(_found(section, result.text, column.test_name, result.value, result.unit,
                                result.reference_range, result.printed_flag, column.analyte, read.date,
                                read.date_problem, read.notes))
        for col, (label, why) in read.unread.items():
            unread.setdefault((t, f"under the column {label!r}", why), []).append(f"row {r} col {col}")
    warnings = [ExtractionWarning(
        code="docx_result_not_read",
        message=f"Table {t} ({', '.join(places[:10])}): values {where} were not read: {why}.")
        for (t, where, why), places in unread.items() if places]
    return found, tables, warnings


def _dated_row(header: DatedHeader, row: Section, pairs: list[tuple[int, str]], cells: dict[str, Section],
               found: list[Found], unread: dict[tuple[int, str, str], list[str]]) -> None:
    """One row of a table with a column per date: a result per filled cell, dated by its column."""
    t, r = row.meta["table"], row.meta["row"]
    read = read_dated_row(header, dict(pairs))
    if read is None:
        return
    for cols, why in read.unread:
        unread.setdefault((t, f"on the row {read.label or 'without a name'!r}", why), []).extend(
            f"row {r} col {c}" for c in cols)
    if read.sign is not None:  # a sign's row ("BP | 128/76 | 141/88"): a reading per cell, dated by its column
        kind, label_unit = read.sign
        for cell in read.cells:
            _reading(kind, read.label, read.unit or label_unit, cells.get(f"table {t} row {r} col {cell.col}", row), cell.text,
                     cell.column.iso, cell.column.open_question or cell.column.problem, found,
                     unread.setdefault((t, f"on the row {read.label!r}", "no reading of that sign"), []),
                     f"row {r} col {cell.col}")
        return
    for cell in read.cells:
        column = cell.column
        found.append(_found(cells.get(f"table {t} row {r} col {cell.col}", row), cell.text, read.name, cell.value,
                            cell.unit, read.reference_range, cell.flag,
                            canonical_analyte(read.name, unit=cell.unit or None), column.iso,
                            column.open_question or column.problem))


def _found(section: Section, quote: str, test_name: str, value: str, unit: str, reference_range: str, flag: str,
           analyte: str | None, date: str | None, problem: str | None, notes: list[str] | None = None) -> Found:
    """One result of a letter's table, as the letter reader takes it (``facts._table_result``)."""
    return Found("labs", test_name, section, "result_table", quote, parsed={
        "test_name": test_name, "value": value, "unit": unit, "reference_range": reference_range,
        "printed_flag": flag, "analyte": analyte, "collection_date": date, "date_problem": problem,
        "notes": notes or []})


@dataclass(frozen=True, slots=True)
class _SignColumns:
    """A letter's table with a column per vital sign: col -> (kind, unit its header
    names, header as printed), and the date column if it has one."""

    signs: dict[int, tuple[str, str, str]]
    date_col: int | None


MIN_SIGN_COLUMNS = 2


def _sign_columns(pairs: list[tuple[int, str]]) -> _SignColumns | None:
    """The header of a table with a column per vital sign, or None: two signs at least
    and nothing but signs and a date in the header."""
    signs: dict[int, tuple[str, str, str]] = {}
    date_col = None
    for col, text in pairs:
        if not text:
            continue
        if names_reading_date(text) and date_col is None:
            date_col = col
        elif (sign := sign_of_label(text)) is not None and sign[0] not in ("systolic", "diastolic"):
            signs[col] = (sign[0], sign[1], text)
        else:
            return None
    return _SignColumns(signs, date_col) if len({k for k, _, _ in signs.values()}) >= MIN_SIGN_COLUMNS else None


def _sign_row(table: _SignColumns, row: Section, pairs: list[tuple[int, str]], cells: dict[str, Section],
              found: list[Found], unread: dict[tuple[int, str, str], list[str]], day_first: bool | None) -> None:
    """One row of a table with a column per sign: a reading per filled cell, dated by the row."""
    t, r = row.meta["table"], row.meta["row"]
    by_col = dict(pairs)
    date_text = by_col.get(table.date_col, "") if table.date_col is not None else ""
    when, problem = None, None
    if date_text:
        m = find_date(date_text)
        m = settle(m, day_first) if m is not None else None
        if m is None:
            problem = f"the row's date {date_text!r} could not be read"
        elif m.day_first_iso is not None:
            problem = f"the row's date {date_text!r} may be read day first or month first: check it"
        else:
            when = m.iso
    for col, (kind, unit, label) in table.signs.items():
        if by_col.get(col):
            _reading(kind, label, unit, cells.get(f"table {t} row {r} col {col}", row), by_col[col], when, problem,
                     found, unread.setdefault((t, f"under the column {label!r}", "no reading of that sign"), []),
                     f"row {r} col {col}")


def _reading(kind: str, label: str, header_unit: str, section: Section, text: str, when: str | None,
             problem: str | None, found: list[Found], unread: list[str], place: str) -> None:
    """A table cell's reading of a sign, as the letter reader takes it (``facts._table_result``);
    a cell that holds none is reported where ``unread`` says."""
    reading = read_vital(kind, text, header_unit)
    if reading is None:
        unread.append(place)
        return
    found.append(Found("vitals", label, section, "result_table", text, parsed={
        "kind": reading.kind, "label": label, "value": reading.value, "unit": reading.unit,
        "systolic": reading.systolic, "diastolic": reading.diastolic, "doubts": reading.doubts or [],
        "measured_at": when, "date_problem": problem}))
