"""Result tables in a letter with one column per test and one row per date ("Taken |
Hb (g/L) | Ferritin | MCV"), or one column per date and one row per test ("Test |
02/09/2026 | 07/10/2026", ``extract.values.dated_results``): one result per filled cell,
cited to its table cell ("table 2 row 3 col 2", quoting the cell), dated by its row or
its column. A column (or row) naming no known test is reported, never guessed, and so
is a cell under a test that holds no value; a letter's rows of vital signs are reported
too. A table with a column per test ends at a row whose date cell holds something other
than a date.
"""

from __future__ import annotations

from domain.content import NormalizedContent, Section
from domain.models import ExtractionWarning
from extract.referral.facts import Found
from domain.policy.facts.analytes import canonical_analyte
from extract.values.dated_results import DatedHeader, read_dated_header, read_dated_row
from extract.values.dates import document_date_order, parse_date
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
    table = None
    rows = [s for s in content.sections if s.section_type == "table_row"]
    # One letter prints its dates one way: "17/11/2026" anywhere settles a column's "04/11/2026".
    day_first = document_date_order(s.text for s in content.sections if s.section_type != "table_cell")
    for i, row in enumerate(rows):
        t, r = row.meta["table"], row.meta["row"]
        pairs = [(c, text.strip()) for c, text in row.meta["cells"]]
        if t != table:
            table, header, dated = t, None, None
        if dated is not None:
            _dated_row(dated, row, pairs, cells, found, unread)
            continue
        if header is None:
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
                                column.reference_range, result.printed_flag, column.analyte, read.date,
                                read.date_problem))
        for col, (label, why) in read.unread.items():
            unread.setdefault((t, f"under the column {label!r}", why), []).append(f"row {r} col {col}")
    warnings = [ExtractionWarning(
        code="docx_result_not_read",
        message=f"Table {t} ({', '.join(places[:10])}): values {where} were not read: {why}.")
        for (t, where, why), places in unread.items()]
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
    if read.sign is not None and read.cells:  # a letter's reader reads no vital signs: said, not guessed
        unread.setdefault((t, f"on the row {read.label!r}", "a letter's tables are not read for vital signs"), []).extend(
            f"row {r} col {c.col}" for c in read.cells)
        return
    for cell in read.cells:
        column = cell.column
        found.append(_found(cells.get(f"table {t} row {r} col {cell.col}", row), cell.text, read.name, cell.value,
                            cell.unit, read.reference_range, cell.flag,
                            canonical_analyte(read.name, unit=cell.unit or None), column.iso,
                            column.open_question or column.problem))


def _found(section: Section, quote: str, test_name: str, value: str, unit: str, reference_range: str, flag: str,
           analyte: str | None, date: str | None, problem: str | None) -> Found:
    """One result of a letter's table, as the letter reader takes it (``facts._table_result``)."""
    return Found("labs", test_name, section, "result_table", quote, parsed={
        "test_name": test_name, "value": value, "unit": unit, "reference_range": reference_range,
        "printed_flag": flag, "analyte": analyte, "collection_date": date, "date_problem": problem})
