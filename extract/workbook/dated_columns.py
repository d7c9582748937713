"""A workbook table with one column per date and one row per test or sign (cumulative
results, home-monitoring flowsheets), read by ``extract.values.dated_results``: each
filled cell under a date is one lab result or one vital-sign reading of its row, taken
that day, cited to that cell. What the rows and cells hold that is not read (a row naming
nothing known under a bare corner, a word where a value belongs) is reported by cell.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from domain.content import Section
from domain.models import ExtractionWarning
from extract.section_facts import SectionFacts
from extract.values.dated_results import DatedHeader, read_dated_header, read_dated_row
from extract.workbook.vitals import VitalRow, VitalRows


def dated_header(cells: list[dict], day_first: bool | None) -> DatedHeader | None:
    """A header row of the sheet with a column per date, or None."""
    return read_dated_header([(c["col"], c["text"], c.get("iso") if c["kind"] == "date" else None) for c in cells],
                             day_first)


@dataclass(slots=True)
class DatedRows:
    """Reads the rows under one header with a column per date."""

    sheet: str
    header: DatedHeader
    header_row: int
    unread: list[tuple[str, str]] = field(default_factory=list)  # (cell coordinates, why)
    accounted: set[int] = field(default_factory=set)  # rows whose cells were reported as not read

    def row(self, section: Section, by_col: dict[int, dict], cell_sections: dict[str, Section],
            lab, vitals: VitalRows) -> None:
        """One row: a lab result (``lab(cell_section, row, cell)``) or a vital-sign reading
        per filled cell under a date."""
        read = read_dated_row(self.header, {col: c["text"] for col, c in by_col.items()})
        if read is None:
            return
        for cols, why in read.unread:
            self.unread.append((", ".join(by_col[col]["coord"] for col in cols), why))
            self.accounted.add(section.meta["row"])
        for cell in read.cells:
            cite = cell_sections.get(f"{self.sheet}!{by_col[cell.col]['coord']}", section)
            if read.sign is not None:
                kind, label_unit = read.sign
                doubts = [d for d in (cell.column.open_question, cell.column.problem) if d]
                when = f"{cell.column.iso} {cell.column.clock}" if cell.column.clock else cell.column.iso
                vitals.one(VitalRow(section, by_col, None), kind, read.label, by_col[cell.col], read.unit or label_unit,
                           when, doubts, cite=cite)
            else:
                lab(cite, read, cell)

    def finish(self, ctx: SectionFacts) -> None:
        for coords, why in self.unread:
            ctx.warnings.append(ExtractionWarning(
                code="xlsx_result_not_read",
                message=f"{self.sheet}!{coords}: in the table with a column per date on row {self.header_row}, "
                        f"not read: {why}."))
        self.unread.clear()


