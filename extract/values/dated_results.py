"""Result tables with one column per date and one row per test or sign, as cumulative
reports, flowsheets and letters print a trend:

    Analyte    | Units  | Ref range | 02/09/2026 | 07/10/2026 | 17/11/2026
    Potassium  | mmol/L | 3.5-5.2   | 4.8        | 5.4        | 5.9

Shared by the workbook and letter readers; they cite and hold what it reads. The header
is found by its dates (two or more cells that are each one whole date) beside a column
naming what the rows hold ("Test", "Analyte", "Observation", or a bare "Date" corner);
units and reference ranges may have columns of their own, and any other header cell
means the row is no such header. Printed dates are read the way the document prints its
dates (``numeric_date_order``); a date nothing settles is an open question on every
result under it. Under a bare corner a row is read only when it names a known test or
sign; a row naming nothing known and a cell holding no value come back as unread, never
guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from domain.policy.facts.analytes import canonical_analyte
from domain.policy.facts.vital_signs import sign_of_label
from extract.values import numbers as V
from extract.values.dates import find_date, settle, time_of_day
from extract.values.ranges import split_range_unit
from extract.values.wide_results import BRACKETS, NOT_A_VALUE, RANGE_ROW_LABELS, UNIT_ROW_LABELS, read_result_cell

MIN_DATE_COLUMNS = 2
# Corner words saying the rows are tests or signs.
NAME_HEADERS = frozenset({"test", "tests", "test name", "analyte", "analytes", "component", "investigation",
                          "investigations", "parameter", "parameters", "observation", "observations", "obs", "sign",
                          "signs", "vital sign", "vital signs", "vitals", "assay", "measurement", "measurements", "item",
                          "lab test", "blood test", "blood tests", "result", "results"})
# Corner words saying nothing of what the rows are: rows must then name a known test or sign.
CORNER_WORDS = frozenset({"date", "dates", "date/time", "date time", "collected", "collection date", "sample date",
                          "date taken", "taken", "week", "day", "visit", "visit date"})


@dataclass(slots=True)
class DateColumn:
    iso: str
    printed: str
    clock: str | None = None  # "20:00": the time of day the header prints (an obs chart's two columns of one day)
    problem: str | None = None  # a small doubt: a two-digit year's century
    open_question: str | None = None  # day or month first, unsettled: each result under it goes to a person


@dataclass(slots=True)
class DatedHeader:
    name_col: int
    dates: dict[int, DateColumn]
    unit_col: int | None = None
    range_col: int | None = None
    named: bool = False  # the corner says the rows are tests or signs


@dataclass(slots=True)
class DatedCell:
    col: int
    text: str  # the cell as printed (the quote)
    column: DateColumn
    value: str = ""  # a result's value, unit and flag (for a sign: the reading is the caller's to read)
    unit: str = ""
    flag: str = ""


@dataclass(slots=True)
class DatedRow:
    name: str  # without a bracketed unit ("Sodium" of "Sodium (mmol/L)")
    label: str  # as printed
    sign: tuple[str, str] | None  # (kind, unit in the label) when the row names a vital sign
    unit: str
    reference_range: str
    cells: list[DatedCell] = field(default_factory=list)
    unread: list[tuple[list[int], str]] = field(default_factory=list)  # (columns, why)


def _norm(text: str) -> str:
    return re.sub(r"[:#*.]+$", "", V.normalize_ws(text).lower()).strip()


def column_date(text: str, iso: str | None, day_first: bool | None) -> DateColumn | None:
    """The date a header cell prints as a whole (``iso``: a cell that is a real date), a
    time of day after it allowed; None for anything else."""
    if iso:
        shown = V.normalize_ws(text)  # a date cell's text: "2026-11-03 08:00" when it holds a time
        clock = time_of_day(shown[10:]) if shown.startswith(iso[:10]) and shown[10:].strip() else None
        return DateColumn(iso[:10], text, clock if clock != "00:00" else None)  # midnight: a date without a time
    text = V.normalize_ws(text)
    found = find_date(text)
    rest = text[found.end:].strip(" ,") if found else ""
    clock = time_of_day(rest) if rest else None
    if found is None or found.start != 0 or (rest and clock is None):
        return None
    found = settle(found, day_first)
    if found.day_first_iso is not None:
        return DateColumn(found.iso, text, clock, open_question=(
            f"the column date {text!r} reads {found.iso} month first or {found.day_first_iso} day first; "
            "nothing in the document settles which"))
    return DateColumn(found.iso, text, clock,
                      f"ambiguous date {text!r} (read as {found.iso})" if found.ambiguous else None)


def read_dated_header(cells: list[tuple[int, str, str | None]], day_first: bool | None) -> DatedHeader | None:
    """A header row with a column per date, or None. ``cells``: (column, text, ISO date
    when the format holds a real date). Every other header cell must say what its column
    holds (the rows' names, units, ranges): a row of values is no header."""
    dates: dict[int, DateColumn] = {}
    others: list[tuple[int, str]] = []
    for col, text, iso in cells:
        if not V.normalize_ws(text) and not iso:
            continue
        found = column_date(text, iso, day_first)
        if found is not None:
            dates[col] = found
        else:
            others.append((col, text))
    if len(dates) < MIN_DATE_COLUMNS:
        return None
    header = DatedHeader(-1, dates)
    for col, text in others:
        t = _norm(text)
        bare = BRACKETS.sub(" ", t).strip()
        if header.name_col < 0 and (t in NAME_HEADERS or bare in NAME_HEADERS):
            header.name_col, header.named = col, True
        elif header.name_col < 0 and t in CORNER_WORDS:
            header.name_col = col
        elif header.unit_col is None and t in UNIT_ROW_LABELS:
            header.unit_col = col
        elif header.range_col is None and (t in RANGE_ROW_LABELS or bare in RANGE_ROW_LABELS):
            header.range_col = col
        else:
            return None
    if header.name_col < 0:  # an empty corner: the rows' names stand left of the dates
        header.name_col = min(dates) - 1
        if header.name_col < 0 or others:
            return None
    return header if header.name_col < min(dates) else None


def read_dated_row(header: DatedHeader, by_col: dict[int, str]) -> DatedRow | None:
    """What one row under the header prints, or None for a row with nothing under a date."""
    by_col = {col: V.normalize_ws(text) for col, text in by_col.items() if V.normalize_ws(text)}
    filled = [col for col in header.dates if col in by_col and not V.NULL_VALUE.match(by_col[col])]
    if not filled:
        return None
    name = by_col.get(header.name_col, "")
    unit, ref = by_col.get(header.unit_col, ""), by_col.get(header.range_col, "")
    ref, unit = split_range_unit(ref, unit)
    bare = BRACKETS.sub(" ", name).strip()
    if not unit and (inside := BRACKETS.search(name)) and V.looks_like_unit(inside.group(1)):
        unit = inside.group(1).strip()  # "Sodium (mmol/L)"
    row = DatedRow(bare or name, name, sign_of_label(name) if name else None, unit, ref)
    if not name or V.parse_number(name) is not None:
        row.unread.append((filled, "the row names no test or sign"))
        return row
    if row.sign is None and not header.named and canonical_analyte(row.name, unit=unit or None) is None:
        row.unread.append((filled, f"{name!r} is no test or vital sign the reader knows"))
        return row
    for col in filled:
        cell = DatedCell(col, by_col[col], header.dates[col])
        if row.sign is None:
            read = read_result_cell(cell.text)
            if read is None:
                row.unread.append(([col], f"{cell.text!r} under {name!r}: {NOT_A_VALUE}"))
                continue
            cell.value, cell_unit, cell.flag = read
            cell.unit = cell_unit or unit
        row.cells.append(cell)
    return row
