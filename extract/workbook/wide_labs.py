"""A workbook's lab table with one column per test and one row per sample date
("Sample date | Na | K | Urea | Creat"): one ``lab_result`` per filled cell, cited to
that cell (``Sheet!C5``, quoting its value), dated by its row.

The table's columns come from ``extract.values.wide_results``. It ends at the first row
whose date cell holds something other than a date (the header of the next table, a
note): rows below are not read as its results. What is not read (a column whose header
names no known test, a cell that holds no value) is reported by sheet and cell.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from domain.content import Section
from domain.models import ExtractionWarning
from extract.section_facts import SectionFacts
from extract.values.dates import parse_date
from extract.values.wide_results import WideHeader, is_data_row, read_description_row, read_row

NO_DATE_REASON = "the row gives no sample date"


@dataclass(slots=True)
class WideLabRows:
    """Reads the rows of one column-per-test table."""

    sheet: str
    header: WideHeader
    header_row: int
    closed: bool = False
    unread: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (header, why) -> cell coordinates
    accounted: set[int] = field(default_factory=set)  # rows read as the header's units or ranges, or reported

    def row(self, section: Section, cells: list[dict], cell_sections: dict[str, Section],
            emit) -> None:
        """Read one row below the header. ``emit(section, result, date, date problem, the row's notes)`` makes the fact."""
        if self.closed:
            return
        pairs = [(c["col"], c["text"]) for c in cells]
        if read_description_row(self.header, pairs):
            self.accounted.add(section.meta["row"])
            return
        date_cell = next((c for c in cells if c["col"] == self.header.date_col), None)
        if date_cell is not None and not date_cell.get("iso") and parse_date(date_cell["text"]) is None:
            self.closed = True  # the next table's header, a note: this table is over
            return
        if not is_data_row(self.header, pairs):
            return
        read = read_row(self.header, pairs, date_cell.get("iso") if date_cell else None)
        by_col = {c["col"]: c for c in cells}
        for result in read.results:
            coord = by_col[result.col]["coord"]
            emit(cell_sections.get(f"{self.sheet}!{coord}", section), result, read.date, read.date_problem, read.notes)
        for col, why in read.unread.items():
            self.unread.setdefault(why, []).append(by_col[col]["coord"])
            self.accounted.add(section.meta["row"])

    def finish(self, ctx: SectionFacts) -> None:
        for (label, why), coords in self.unread.items():
            ctx.warnings.append(ExtractionWarning(
                code="xlsx_result_not_read",
                message=f"{self.sheet}!{', '.join(coords[:10])}: values under the column {label!r} of the results "
                        f"table on row {self.header_row} were not read: {why}."))
        self.unread.clear()
