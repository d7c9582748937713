"""Result tables in a letter with one column per test and one row per date ("Taken |
Hb (g/L) | Ferritin | MCV"): one result per filled cell, cited to its table cell
("table 2 row 3 col 2", quoting the cell), dated by its row. The columns are read by
``extract.values.wide_results``; a column whose header names no known test is reported,
never guessed, and so is a cell under a test that holds no value. The table ends at a
row whose date cell holds something other than a date.
"""

from __future__ import annotations

from domain.content import NormalizedContent, Section
from domain.models import ExtractionWarning
from extract.referral.facts import Found
from extract.values.dates import parse_date
from extract.values.wide_results import (WideHeader, is_data_row, read_description_row, read_header, read_row,
                                        settle_dates)


def results_in_tables(content: NormalizedContent) -> tuple[list[Found], set[int], list[ExtractionWarning]]:
    """(results as ``Found`` items of ``how="result_table"``, the tables read so, warnings)."""
    cells = {s.locator: s for s in content.sections if s.section_type == "table_cell"}
    found: list[Found] = []
    tables: set[int] = set()
    unread: dict[tuple[int, str, str], list[str]] = {}
    header: WideHeader | None = None
    table = None
    rows = [s for s in content.sections if s.section_type == "table_row"]
    for i, row in enumerate(rows):
        t, r = row.meta["table"], row.meta["row"]
        pairs = [(c, text.strip()) for c, text in row.meta["cells"]]
        if t != table:
            table, header = t, None
        if header is None:
            header = read_header(pairs)
            if header is not None:
                tables.add(t)
                settle_dates(header, [dict(later.meta["cells"]).get(header.date_col, "") for later in rows[i + 1:]
                                      if later.meta["table"] == t])
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
            found.append(_found(section, result, read.date, read.date_problem))
        for col, (label, why) in read.unread.items():
            unread.setdefault((t, label, why), []).append(f"row {r} col {col}")
    warnings = [ExtractionWarning(
        code="docx_result_not_read",
        message=f"Table {t} ({', '.join(places[:10])}): values under the column {label!r} were not read: {why}.")
        for (t, label, why), places in unread.items()]
    return found, tables, warnings


def _found(section: Section, result, date: str | None, problem: str | None) -> Found:
    column = result.column
    return Found("labs", column.test_name, section, "result_table", result.text, parsed={
        "test_name": column.test_name, "value": result.value, "unit": result.unit,
        "reference_range": column.reference_range, "printed_flag": result.printed_flag, "analyte": column.analyte,
        "collection_date": date, "date_problem": problem})
