"""Result tables with one column per test and one row per sample ("Sample date | Na | K |
Urea | Creat"), as workbooks and letters print a patient's trend: each cell under a test's
column is a result of the row's date.

Shared by the workbook and referral readers; they cite and hold the results. A column
is a test's only when its header names an analyte the vocabulary knows
(``canonical_analyte``: "Na", "Creat (umol/L)", "Hb"); any other header is never guessed,
its numbers are returned as unread so the reader reports them. Units come from the
header ("Creat (umol/L)"), from a row of units under it, or from the cell ("231 umol/L");
reference ranges from a row labelled as ranges ("Ref range | 135-145 | ...") or from the
header's brackets ("K (3.5-5.2)").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from domain.policy.facts.analytes import canonical_analyte
from domain.policy.facts.vital_signs import sign_of_label
from extract.values import numbers as V
from extract.values.dates import document_date_order, parse_date
from extract.values.flags import flag_meaning
from extract.values.lists import MEDICATION_COLUMNS
from extract.values.ranges import parse_reference_range

# Headers of the column saying when the sample was taken.
DATE_HEADERS = frozenset({
    "date", "sample date", "date sampled", "sampled", "taken", "date taken", "collected", "date collected",
    "collection date", "collection", "drawn", "date drawn", "specimen date", "result date", "test date",
    "date of test", "date/time", "date time", "when", "bloods taken", "sample taken", "sample", "visit date",
    "seen", "date seen", "clinic date", "review date", "visit",
})
# First cells of a row under the header that gives units or reference ranges per column.
UNIT_ROW_LABELS = frozenset({"units", "unit", "uom", "unit of measure"})
RANGE_ROW_LABELS = frozenset({
    "range", "ranges", "ref", "ref range", "ref. range", "reference", "reference range", "reference ranges",
    "reference interval", "ref interval", "normal", "normal range", "normal ranges", "normal values", "target",
})
# Headers of columns that never hold results: their text is a note, not a test.
NOTE_HEADERS = frozenset({"note", "notes", "comment", "comments", "remarks", "remark", "by", "initials",
                          "lab", "lab no", "lab number", "specimen", "source", "requested by", "location"})
# Of those, the ones whose text is the lab's word on the row's sample: every table's notes column.
COMMENT_HEADERS = frozenset(MEDICATION_COLUMNS["notes"])
# Headers of a column printing each row's own reference range or target ("Date | INR |
# Target range | ..."): the range of that row's result when the table has one test column.
RANGE_COLUMN_HEADERS = RANGE_ROW_LABELS | frozenset({
    "target range", "therapeutic range", "target inr", "inr target", "target inr range", "goal", "goal range"})
# Beside a lone test column, at most this many header cells naming no test and one more: an
# anticoagulation record prints "Date | INR | Warfarin dose | Next test"; a row of many
# other words with one test's name among them is no header.
MAX_OTHER_COLUMNS_PER_TEST = 2
BRACKETS = re.compile(r"\s*[\(\[]([^)\]]*)[\)\]]\s*")


def _norm(text: str) -> str:
    return re.sub(r"[:#*.]+$", "", V.normalize_ws(text).lower()).strip()


@dataclass(slots=True)
class AnalyteColumn:
    col: int
    label: str  # the header as printed
    test_name: str  # the header without its bracketed unit or range
    analyte: str
    unit: str = ""
    reference_range: str = ""


@dataclass(slots=True)
class WideHeader:
    date_col: int
    analytes: dict[int, AnalyteColumn]
    unknown: dict[int, str] = field(default_factory=dict)  # col -> a header naming no test
    range_col: int | None = None  # each row's own reference range (one test column only)
    note_cols: list[int] = field(default_factory=list)  # "Comment", "Notes": the lab's words on the row's sample
    day_first: bool | None = None  # how the date column's other dates settle "04/03/2026" (``settle_dates``)


_NUMERIC_DATE = re.compile(r"^\s*(\d{1,2})[/.\-](\d{1,2})[/.\-](\d{2}|\d{4})\b")


def settle_dates(header: WideHeader, date_texts: list[str]) -> None:
    """One column prints its dates one way: when some of its dates can only be read
    day-first (30/09/2025) and none only month-first (09/30/2025), its ambiguous dates
    (04/09/2025) are read day-first too, and the other way round. Mixed or no evidence:
    they stay ambiguous."""
    header.day_first = document_date_order(date_texts)


@dataclass(slots=True)
class WideCell:
    """One result a cell prints, ready to become a lab result."""

    col: int
    text: str  # the cell as printed (the quote)
    column: AnalyteColumn
    value: str
    unit: str
    printed_flag: str
    reference_range: str = ""  # the column's, or the row's own under a range column


@dataclass(slots=True)
class WideRow:
    date: str | None
    date_problem: str | None
    results: list[WideCell]
    unread: dict[int, tuple[str, str]]  # col -> (its header, why the filled cell was not read)
    notes: list[str] = field(default_factory=list)  # what the row prints under a note's column


def read_header(cells: list[tuple[int, str]]) -> WideHeader | None:
    """A header row of a column-per-test table, or None. It has a date column and at least
    one column naming an analyte ("Date | INR" is an anticoagulation clinic's; beside a
    lone test, few other columns); a column naming a vital sign is no test's."""
    date_col = range_col = None
    note_cols: list[int] = []
    analytes: dict[int, AnalyteColumn] = {}
    unknown: dict[int, str] = {}
    for col, raw in cells:
        text = V.normalize_ws(raw)
        if not text:
            continue
        bare = BRACKETS.sub(" ", text).strip()
        if date_col is None and (_norm(text) in DATE_HEADERS or _norm(bare) in DATE_HEADERS):
            date_col = col
            continue
        if V.parse_number(text) is not None or parse_date(text) is not None:
            return None  # a header prints no values
        if range_col is None and (_norm(text) in RANGE_COLUMN_HEADERS or _norm(bare) in RANGE_COLUMN_HEADERS):
            range_col = col
            continue
        analyte = canonical_analyte(bare) if sign_of_label(text) is None else None
        if analyte is None:
            if _norm(bare) not in NOTE_HEADERS:
                unknown[col] = text
            elif _norm(bare) in COMMENT_HEADERS:
                note_cols.append(col)
            continue
        column = AnalyteColumn(col, text, bare, analyte)
        for inside in BRACKETS.findall(text):
            _describe(column, inside)
        analytes[col] = column
    if date_col is None or not analytes:
        return None
    if len(analytes) == 1 and len(unknown) > MAX_OTHER_COLUMNS_PER_TEST + 1:
        return None  # one test's name among many other words: no header
    if range_col is not None and len(analytes) != 1:
        unknown[range_col] = cells[[c for c, _ in cells].index(range_col)][1]  # whose range? not guessed
        range_col = None
    return WideHeader(date_col, analytes, unknown, range_col, note_cols)


def _describe(column: AnalyteColumn, text: str) -> None:
    """A unit or a reference range printed for a column (in its header's brackets or a row of its own)."""
    text = V.normalize_ws(text)
    parsed = parse_reference_range(text)
    if parsed is not None and V.parse_number(text) is None:
        column.reference_range, unit = parsed
        column.unit = column.unit or unit
    elif V.looks_like_unit(text):
        column.unit = text


def read_description_row(header: WideHeader, cells: list[tuple[int, str]]) -> bool:
    """A row of units or reference ranges under the header ("Units | mmol/L | ..."; or a
    row with an empty date cell printing only units): taken into the header's columns.
    Returns whether the row was one."""
    by_col = {col: V.normalize_ws(text) for col, text in cells if V.normalize_ws(text)}
    label = _norm(by_col.get(header.date_col, ""))
    under = {col: text for col, text in by_col.items() if col in header.analytes}
    if not under:
        return False
    if label in UNIT_ROW_LABELS or (not label and all(V.looks_like_unit(t) for t in under.values())):
        for col, text in under.items():
            header.analytes[col].unit = text
        return True
    if label in RANGE_ROW_LABELS:
        for col, text in under.items():
            _describe(header.analytes[col], text)
            header.analytes[col].reference_range = header.analytes[col].reference_range or text
        return True
    return False


def _split_flag(text: str) -> tuple[str, str]:
    """("6.1", "H") from "6.1 H", "6.1H", "6.1*", "6.1 ▲": a flag printed beside the value."""
    t = V.normalize_ws(text)
    m = re.fullmatch(r"(.*?\d)\s*([A-Za-z*!\u25b2\u25bc\u2191\u2193\u203c]{1,3}|\([A-Za-z]{1,2}\))", t)
    if m and flag_meaning(m[2]) is not None and not V.looks_like_unit(m[2]):
        return m[1], m[2]
    return t, ""


NOT_A_VALUE = "a word or mark that is no result value"


def read_result_cell(text: str) -> tuple[str, str, str] | None:
    """(value, unit, flag) of one result cell ("6.1 H", "231 umol/L", "negative"), or None
    when the cell holds no result value (a word such as "haemolysed", a mark)."""
    value, flag = _split_flag(text)
    value, unit = V.split_value_unit(value)
    if not (V.is_numeric_result(value) or V.is_qualitative(value)):
        return None
    return value, unit, flag


def read_row(header: WideHeader, cells: list[tuple[int, str]], date_iso: str | None = None) -> WideRow:
    """The results a data row prints, one per filled cell under an analyte column.
    ``date_iso``: the date cell's value when the format gives it as a real date."""
    by_col = {col: V.normalize_ws(text) for col, text in cells if V.normalize_ws(text)}
    date, problem = date_iso, None
    if date is None:
        raw = by_col.get(header.date_col, "")
        parsed = parse_date(raw) if raw else None
        if not raw:
            problem = "no sample date on the row"
        elif parsed is None or parsed.iso is None:
            problem = f"date {raw!r} could not be read"
        else:
            date = parsed.iso
            if parsed.ambiguous and _NUMERIC_DATE.match(raw) and header.day_first is not None:
                if header.day_first:  # read month-first by ``parse_date``: swap day and month
                    date = f"{date[:4]}-{date[8:10]}-{date[5:7]}"
            elif parsed.ambiguous:
                problem = f"ambiguous date {raw!r} (read as {parsed.iso})"
    results: list[WideCell] = []
    unread: dict[int, tuple[str, str]] = {}
    for col, column in header.analytes.items():
        text = by_col.get(col)
        if not text:
            continue
        read = read_result_cell(text)
        if read is None:
            unread[col] = (column.label, NOT_A_VALUE)  # "haemolysed", "96 ▼"
            continue
        value, unit, flag = read
        own_range = by_col.get(header.range_col, "") if header.range_col is not None else ""
        results.append(WideCell(col, text, column, value, unit or column.unit, flag,
                                own_range or column.reference_range))
    for col, label in header.unknown.items():
        text = by_col.get(col)
        if text and (V.is_numeric_result(text) or V.parse_number(text) is not None):
            unread[col] = (label, "the header names no test the reader knows")
    return WideRow(date, problem, results, unread, [by_col[c] for c in header.note_cols if by_col.get(c)])


def is_data_row(header: WideHeader, cells: list[tuple[int, str]]) -> bool:
    """A row with something under an analyte column (a result, or a word such as "haemolysed")."""
    return any(col in header.analytes and V.normalize_ws(text) for col, text in cells)
