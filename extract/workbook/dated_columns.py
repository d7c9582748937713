"""A workbook table with one column per date and one row per test or sign, as cumulative
reports and home-monitoring flowsheets print a trend:

    Analyte    | Units  | Ref range | 02/09/2026 | 07/10/2026 | 17/11/2026
    Potassium  | mmol/L | 3.5-5.2   | 4.8        | 5.4        | 5.9
    Heart rate | bpm    |           | 72         | 78         | 96

Each filled cell under a date is one result of its row's test (or one reading of its
row's sign) taken that day, cited to that cell. The header is found by its dates (two
or more cells that are whole dates) beside a column naming what the rows hold ("Test",
"Analyte", "Observation", or "Date" in the corner); units and reference ranges may have
columns of their own. Printed dates are read the way the workbook prints its dates
(``numeric_date_order``); a date nothing settles is an open question on every result
under it. A row naming no test or sign the vocabulary knows, under a corner that does
not say the rows are tests, and a cell holding no value are reported, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from domain.content import Section
from domain.models import ExtractionWarning
from domain.policy.facts.analytes import canonical_analyte
from domain.policy.facts.vital_signs import sign_of_label
from extract.section_facts import SectionFacts
from extract.values import numbers as V
from extract.values.dates import find_date, settle
from extract.values.ranges import split_range_unit
from extract.values.wide_results import NOT_A_VALUE, read_result_cell
from extract.workbook.labels import LAB_ROLES, NULL_VALUE, column_role
from extract.workbook.vitals import SIGN_COLUMN, VitalRow, VitalRows

MIN_DATE_COLUMNS = 2
# A corner cell over the rows' names that says nothing of what they are; rows are then
# read only when they name a known test or sign.
_CORNER_WORDS = frozenset({"date", "dates", "date/time", "date time", "collected", "collection date", "sample date",
                           "week", "day", "visit", "visit date"})


@dataclass(slots=True)
class DateColumn:
    iso: str | None
    printed: str
    problem: str | None = None  # a small doubt: a two-digit year's century
    open_question: str | None = None  # day or month first, unsettled: each result under it goes to a person


@dataclass(slots=True)
class DatedHeader:
    header_row: int
    name_col: int
    dates: dict[int, DateColumn]
    unit_col: int | None = None
    range_col: int | None = None
    named: bool = False  # the corner says the rows are tests or signs ("Analyte", "Observation")


def _column_date(cell: dict, day_first: bool | None) -> DateColumn | None:
    """The date a header cell prints, as a whole: a real date cell, or text that is one
    date (a time of day after it allowed)."""
    if cell.get("iso"):
        return DateColumn(cell["iso"][:10], cell["text"])
    text = V.normalize_ws(cell["text"])
    found = find_date(text)
    if found is None or found.start != 0 or not _only_time_after(text[found.end:]):
        return None
    found = settle(found, day_first)
    if found.day_first_iso is not None:
        return DateColumn(found.iso, text, open_question=(
            f"the column date {text!r} reads {found.iso} month first or {found.day_first_iso} day first; "
            "nothing in the workbook settles which"))
    return DateColumn(found.iso, text, f"ambiguous date {text!r} (read as {found.iso})" if found.ambiguous else None)


_TIME_OF_DAY = re.compile(r"\d{1,2}[:.]\d{2}(?::\d{2})?\s*(?:am|pm)?", re.IGNORECASE)


def _only_time_after(rest: str) -> bool:
    rest = rest.strip(" ,")
    return not rest or bool(_TIME_OF_DAY.fullmatch(rest))


def read_dated_header(cells: list[dict], row: int, day_first: bool | None) -> DatedHeader | None:
    """A header row with a column per date, or None. Every other header cell must say what
    its column holds (the rows' names, units, ranges): a row of values is no header."""
    dates: dict[int, DateColumn] = {}
    others: list[dict] = []
    for c in cells:
        found = _column_date(c, day_first) if c["kind"] in ("text", "date") else None
        if found is not None:
            dates[c["col"]] = found
        else:
            others.append(c)
    if len(dates) < MIN_DATE_COLUMNS:
        return None
    name_col = unit_col = range_col = None
    named = False
    for c in others:
        if c["kind"] != "text":
            return None
        text = V.normalize_ws(c["text"])
        role = column_role(text, LAB_ROLES)
        norm = text.lower().rstrip(":# ")
        if name_col is None and (role == "test" or norm in SIGN_COLUMN):
            name_col, named = c["col"], True
        elif name_col is None and norm in _CORNER_WORDS:
            name_col = c["col"]
        elif role == "unit" and unit_col is None:
            unit_col = c["col"]
        elif role == "range" and range_col is None:
            range_col = c["col"]
        else:
            return None
    if name_col is None or name_col > min(dates):
        return None
    return DatedHeader(row, name_col, dates, unit_col, range_col, named)


@dataclass(slots=True)
class DatedRows:
    """Reads the rows under one ``DatedHeader``."""

    sheet: str
    header: DatedHeader
    unread: list[tuple[str, str]] = field(default_factory=list)  # (cell coordinates, why)

    def row(self, section: Section, by_col: dict[int, dict], cell_sections: dict[str, Section],
            lab, vitals: VitalRows) -> None:
        """One row: a result or reading per filled cell under a date. ``lab(cell_section,
        quote, name, value, unit, ref, flag, date)`` makes a lab result."""
        h = self.header
        filled = [(col, by_col[col]) for col in h.dates if col in by_col and not NULL_VALUE.match(by_col[col]["text"])]
        if not filled:
            return
        name_cell = by_col.get(h.name_col)
        if name_cell is None or name_cell["kind"] != "text":
            self.unread.append((", ".join(c["coord"] for _, c in filled), "the row names no test or sign"))
            return
        name = V.normalize_ws(name_cell["text"])
        sign = sign_of_label(name)
        unit = V.normalize_ws(by_col[h.unit_col]["text"]) if h.unit_col in by_col else ""
        ref = V.normalize_ws(by_col[h.range_col]["text"]) if h.range_col in by_col else ""
        ref, unit = split_range_unit(ref, unit)
        if sign is None and not h.named and canonical_analyte(name, unit=unit or None) is None:
            self.unread.append((", ".join(c["coord"] for _, c in filled),
                                f"{name!r} is no test or vital sign the reader knows"))
            return
        for col, cell in filled:
            column = h.dates[col]
            cite = cell_sections.get(f"{self.sheet}!{cell['coord']}", section)
            doubts = [d for d in (column.open_question, column.problem) if d]
            if sign is not None:
                kind, label_unit = sign
                vitals.one(VitalRow(section, by_col, None), kind, name, cell, unit or label_unit, column.iso, doubts,
                           cite=cite)
                continue
            read = read_result_cell(cell["text"])
            if read is None:
                self.unread.append((cell["coord"], f"{cell['text']!r} under {name!r}: {NOT_A_VALUE}"))
                continue
            value, cell_unit, flag = read
            lab(cite, cell["text"], name, value, cell_unit or unit, ref, flag, column)

    def finish(self, ctx: SectionFacts) -> None:
        for coords, why in self.unread:
            ctx.warnings.append(ExtractionWarning(
                code="xlsx_result_not_read",
                message=f"{self.sheet}!{coords}: in the table with a column per date on row {self.header.header_row}, "
                        f"not read: {why}."))
        self.unread.clear()
