"""A lab page's flowsheet: one column per test and one row per sample, as renal and
anticoagulation clinics print a trend ("Date sampled | Na | K | Urea | Creat", a row of
units and a row of reference ranges under it, then one row per date).

The page's words are cut into cells by the header's columns (each header piece is a
column; a word belongs to the column whose span holds its centre). The header, its rows
of units and ranges and the table's end are read by the rules workbooks and letters use
for such tables (``extract.values.wide_results``): a column is a test's only when its
header names a test the vocabulary knows, and the table ends at a row whose date cell
holds no date. Each cell is read by the lab's own result grammar, as a table's value
cell is; a cell that holds no value, or one under a column naming no known test, is
reported, never guessed. Each result cites its own cell (value and flag) and carries
its row's date as printed, which the extractor reads the way the report prints its
dates.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.content import Word
from extract.lab.rows import RowResult
from extract.lab.table import Column, Reading, TableLayout, assign_columns, read_result, set_bounds
from extract.layout import Row, segments
from extract.values import numbers as V
from extract.values.dates import parse_date
from extract.values.ranges import parse_reference_range
from extract.values.flags import FlagKey
from extract.values.wide_results import NOT_A_VALUE, WideHeader, is_data_row, read_description_row, read_header


@dataclass(slots=True)
class Flowsheet:
    header: WideHeader
    layout: TableLayout  # one column per header piece: where a row's words fall

    def cells(self, words: list[Word]) -> dict[int, list[Word]]:
        """A row's words by column (only the columns that hold some)."""
        return {k: ws for k, ws in enumerate(assign_columns(words, self.layout).by_column) if ws}


def detect_flowsheet(row: Row) -> Flowsheet | None:
    """The flowsheet a header row starts ("Date sampled  Na  K  Urea  Creat (umol/L)"),
    or None: a date column's heading first, then test columns (one is enough: "Date |
    INR"), each header piece a column of its own."""
    pieces = segments(row.words)
    if len(pieces) < 2:
        return None
    cells = [(k, " ".join(w.text for w in seg)) for k, seg in enumerate(pieces)]
    header = read_header(cells)  # an anticoagulation clinic's "Date | INR" is one
    if header is None:
        return None
    if header.date_col != 0:
        return None  # the sample's date opens each row
    columns = [Column("other", seg[0].x0, seg[-1].x1) for seg in pieces]
    set_bounds(columns, row.height)
    return Flowsheet(header, TableLayout(columns, row.page.width))


def flowsheet_results(flow: Flowsheet, row: Row, words: list[Word], key: FlagKey | None = None
                      ) -> list[RowResult] | None:
    """The results one row under the header prints (a row of units or ranges: none);
    None when the row is no part of the flowsheet (the table has ended). A cell is read
    by the lab's own result grammar (``table.read_result``: a flag glued to its value,
    a sign the page's key explains, a word no rule knows kept for review)."""
    by_col = flow.cells(words)
    cells = [(k, " ".join(w.text for w in ws)) for k, ws in sorted(by_col.items())]
    if read_description_row(flow.header, cells):
        return []
    date_text = dict(cells).get(flow.header.date_col, "")
    if not date_text or parse_date(date_text) is None or not is_data_row(flow.header, cells):
        return None  # its date is read by the extractor, as the report prints its dates
    # the row's own range, under a "Target range" column beside the one test column
    own_range = dict(cells).get(flow.header.range_col, "") if flow.header.range_col is not None else ""
    out: list[RowResult] = []
    for col, cited in sorted(by_col.items()):
        column = flow.header.analytes.get(col)
        label = column.label if column is not None else flow.header.unknown.get(col)
        if label is None:
            continue  # the date cell, or words under a note's column
        text = " ".join(w.text for w in cited)
        if column is None and not (V.is_numeric_result(text) or V.parse_number(text) is not None):
            continue  # "4 mg daily" under "Warfarin dose": no result (a number is reported, never guessed)
        reading = read_result(cited, key=key) if column is not None else None
        if reading is None:
            why = NOT_A_VALUE if column is not None else "the header names no test the reader knows"
            out.append(RowResult(
                row=row, words=cited, test_name=label, reading=Reading(value=text, value_words=cited),
                flag_text=None, position_flag=None, unit_clean=False, range_clean=False, alignment=1.0,
                unreadable=True, column_date=date_text, doubts=[f"{text!r} under the column {label!r}: {why}"]))
            continue
        reading.unit = reading.unit or column.unit
        ref = own_range or column.reference_range
        parsed = parse_reference_range(ref) if ref else None
        if parsed:
            reading.reference_range, reading.range_unit = parsed
        out.append(RowResult(
            row=row, words=cited, test_name=column.test_name, reading=reading,
            flag_text=reading.flag or reading.inline_flag, position_flag=None,
            unit_clean=bool(reading.unit) and V.looks_like_unit(reading.unit), range_clean=bool(parsed),
            alignment=1.0, range_expected=bool(ref), column_date=date_text))
    return out
