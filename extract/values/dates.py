"""How printed dates are read (pure): complete dates inside text, one-date cells and
fields, partial dates, and HL7 timestamps.

One date rule for every extractor, like the other value rules (``extract.values.numbers``):
every function is total (text it does not understand gives ``None``), and a reading
that could be the other way round (03/04/2020, a two-digit year) says so.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Iterable, Iterator

from extract.values.numbers import normalize_ws

_MONTHS = {
    name: i
    for i, names in enumerate(
        [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",),
         ("jun", "june"), ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"),
         ("oct", "october"), ("nov", "november"), ("dec", "december")],
        start=1,
    )
    for name in names
}
_MONTH = (
    r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|"
    r"aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_ORDINAL = r"(?:st|nd|rd|th)?"
# Complete dates, each anchored so it is never read out of a longer number or a range
# ("3.4-10.8" is no date). Numeric day/month forms need "/" or "-" (or "." with a
# four-digit year: "3.4.10" would otherwise be a date).
_DATE_PATTERNS = [
    re.compile(r"(?<![\d/.-])(?P<y>\d{4})(?P<s>[-/.])(?P<m>\d{1,2})(?P=s)(?P<d>\d{1,2})(?![\d/-]|\.\d)"),
    re.compile(r"(?<![\d/.-])(?P<a>\d{1,2})(?P<s>[-/])(?P<b>\d{1,2})(?P=s)(?P<y>\d{4}|\d{2})(?![\d/-]|\.\d)"),
    re.compile(r"(?<![\d/.-])(?P<a>\d{1,2})\.(?P<b>\d{1,2})\.(?P<y>\d{4})(?![\d/-]|\.\d)"),
    re.compile(rf"(?<!\w)(?P<d>\d{{1,2}}){_ORDINAL}[\s-]+{_MONTH}[\s,-]+(?P<y>\d{{4}}|\d{{2}})(?!\d)", re.I),
    re.compile(rf"(?<!\w){_MONTH}\s+(?P<d>\d{{1,2}}){_ORDINAL},?\s+(?P<y>\d{{4}})(?!\d)", re.I),
]
_NUMERIC_PATTERNS = _DATE_PATTERNS[1:3]  # day and month as two numbers, either order
# A compact date (HL7 style), optionally with time and zone: 20200131, 200808151030-0700.
_COMPACT = re.compile(r"(\d{4})(\d{2})(\d{2})(?:\d{0,6}(?:\.\d+)?)?(?:[+-]\d{4})?")
# A time of day after a date: "08:15", "8:15 AM", "T10:15:00Z", "at 08:15".
_TRAILING_TIME = re.compile(
    r"(?:[\s,@]+(?:at\s+)?|T)\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:[ap]\.?m\.?)?\s*(?:Z|[+-]\d{2}:?\d{2})?\s*$",
    re.I,
)
_PARTIAL = [
    re.compile(r"(?P<m>\d{1,2})[-/](?P<y>\d{4})"),
    re.compile(r"(?P<y>\d{4})[-/](?P<m>\d{1,2})"),
    re.compile(rf"{_MONTH},?\s+(?P<y>\d{{4}})", re.I),
]

# Years outside this window are treated as typing errors rather than dates.
MIN_YEAR = 1850
MAX_YEAR = 2100


@dataclass(frozen=True, slots=True)
class ParsedDate:
    """A date as read from text.

    ``iso`` is set only for a complete, valid calendar day. ``precision`` says how much
    of a date the text held ("day", "month" or "year"); ``ambiguous`` is True when the
    day and month could be swapped (03/04/2020: the US reading, month first, was used)
    or the century was inferred from a two-digit year.
    """

    iso: str | None
    precision: str
    ambiguous: bool = False


@dataclass(frozen=True, slots=True)
class DateMatch:
    """A complete date found inside a longer text, with where it was printed."""

    iso: str  # YYYY-MM-DD
    start: int
    end: int
    ambiguous: bool = False
    # Printed as two numbers that could each be the month (03/12/2026): ``iso`` reads the
    # first as the month; ``day_first_iso`` is the other reading.
    day_first_iso: str | None = None


def _valid(y: int, m: int, d: int) -> str | None:
    if not (MIN_YEAR <= y <= MAX_YEAR):
        return None
    try:
        return date(y, m, d).isoformat()
    except ValueError:  # 02/30/2026, month 13 ...
        return None


def _year(raw: str, today: date) -> tuple[int, bool]:
    """(year, inferred). A two-digit year becomes the latest year not more than one year
    ahead of ``today``: "7/22/58" is 1958 and "4/10/26" is 2026, read on any day from 2026
    to 2057 alike."""
    if len(raw) == 4:
        return int(raw), False
    year = 2000 + int(raw)
    return (year if year <= today.year + 1 else year - 100), True


def _read_match(m: re.Match, today: date) -> tuple[str, bool] | None:
    """(ISO date, ambiguous) for one pattern match, or None for an impossible date."""
    g = m.groupdict()
    y, inferred = _year(g["y"], today)
    if g.get("mon"):
        iso = _valid(y, _MONTHS[g["mon"].lower()[:3]], int(g["d"]))
        return (iso, inferred) if iso else None
    if g.get("m"):
        iso = _valid(y, int(g["m"]), int(g["d"]))
        return (iso, inferred) if iso else None
    a, b = int(g["a"]), int(g["b"])
    if a > 12 and b <= 12:  # only a day-first reading is possible: 31/01/2020
        iso = _valid(y, b, a)
        return (iso, inferred) if iso else None
    iso = _valid(y, a, b)  # month first (US), the usual reading on these documents
    if iso is None:
        return None
    return iso, inferred or (a <= 12 and b <= 12 and a != b)


# OCR reads the round letters of a month's name as digits ("14-0ct-2025", "N0v"). A
# word of letters and such digits that is a month name once they are letters is read as
# that month; the text keeps its length, so offsets still point into what was printed.
_LOOKALIKE_WORD = re.compile(r"(?<![A-Za-z0-9])(?=[A-Za-z015]*[A-Za-z])(?=[A-Za-z015]*[015])[A-Za-z015]{3,9}(?![A-Za-z0-9])")
_AS_LETTERS = str.maketrans({"0": "o", "1": "l", "5": "s"})


def _month_lookalikes(text: str) -> str:
    def fix(m: re.Match) -> str:
        word = m.group(0).translate(_AS_LETTERS)
        return word if word.lower().rstrip(".") in _MONTHS else m.group(0)
    return _LOOKALIKE_WORD.sub(fix, text) if any(c in text for c in "015") else text


def find_date(text: str, *, today: date | None = None) -> DateMatch | None:
    """The first complete, valid calendar date anywhere in ``text``.

    Understands ISO (2026-04-10, 2026/04/10, 2026.04.10), US m/d/yyyy and m/d/yy,
    unambiguous day-first numbers (31/01/2020, 31.01.2020), "22 July 1958",
    "July 22, 1958", "Jul 22 1958" and dd-Mon-yyyy. Partial dates ("03/2024") are not
    dates here: a result without a day cannot be placed on a timeline.
    """
    today = today or date.today()
    best: DateMatch | None = None
    text = _month_lookalikes(text or "")
    for pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            read = _read_match(m, today)
            if read is None:
                continue
            if best is None or m.start() < best.start:
                best = DateMatch(read[0], m.start(), m.end(), read[1], _other_reading(m, read[0]))
            break
    return best


def _other_reading(m: re.Match, iso: str) -> str | None:
    """The day-first reading of a numeric date read month first, when it is a date too."""
    g = m.groupdict()
    if not g.get("a"):
        return None
    a, b = int(g["a"]), int(g["b"])
    if not (a <= 12 and b <= 12 and a != b):
        return None
    return f"{iso[:4]}-{iso[8:10]}-{iso[5:7]}"


def _printed_orders(texts: Iterable[str]) -> tuple[bool, bool]:
    """(some numeric date can only be read day first, some only month first)."""
    day_only = month_only = False
    for text in texts:
        for pattern in _NUMERIC_PATTERNS:
            for m in pattern.finditer(text or ""):
                a, b = int(m["a"]), int(m["b"])
                day_only |= a > 12 >= b
                month_only |= b > 12 >= a
    return day_only, month_only


def numeric_date_order(texts: Iterable[str]) -> bool | None:
    """How a document prints its numeric dates: day first (True: some date can only be
    read so, 30/09/2025, and none only month first), month first (False: the other way
    round), or None (no such date, or both kinds: nothing settles it). One document
    prints its dates one way, so its other dates settle how to read 04/09/2025."""
    day_only, month_only = _printed_orders(texts)
    return day_only if day_only != month_only else None


# The clinic's order for numeric dates nothing on a document settles (the setting
# WORKBENCH_DATE_ORDER, handed to the reader for one reading: ``clinic_date_order``).
# None: no order set; such a date is read month first and stays open.
_CLINIC_DAY_FIRST: ContextVar[bool | None] = ContextVar("clinic_day_first", default=None)
DATE_ORDERS = {"": None, "month_first": False, "day_first": True}


@contextmanager
def clinic_date_order(order: str | None) -> Iterator[None]:
    """Within this block, ``document_date_order`` falls back on the clinic's ``order``
    ("day_first", "month_first", or "" / None for none) where a document settles nothing."""
    token = _CLINIC_DAY_FIRST.set(DATE_ORDERS[order or ""])
    try:
        yield
    finally:
        _CLINIC_DAY_FIRST.reset(token)


def document_date_order(texts: Iterable[str]) -> bool | None:
    """``numeric_date_order`` of a whole document's dates, and where none of them
    settles it, the clinic's order when one is set. A document that prints dates both
    ways (31/01 beside 01/31) stays unsettled whatever the clinic's order: it contradicts
    itself, and a person reads it."""
    day_only, month_only = _printed_orders(texts)
    if day_only != month_only:
        return day_only
    return None if day_only else _CLINIC_DAY_FIRST.get()


_CLOCK = re.compile(r"^T?(\d{1,2})[:.h](\d{2})(?::\d{2})?\s*(am|pm)?$", re.IGNORECASE)


def time_of_day(text: str) -> str | None:
    """"08:10" of "08:10", "8.10 pm", "20h10" or "T08:10:00" (a text that is a time of
    day and nothing else); None for anything else."""
    m = _CLOCK.match((text or "").strip())
    if not m:
        return None
    hour, minute = int(m[1]), int(m[2])
    if m[3]:
        hour = hour % 12 + (12 if m[3].lower() == "pm" else 0)
    return f"{hour:02d}:{minute:02d}" if hour < 24 and minute < 60 else None


def settle(m: DateMatch, day_first: bool | None) -> DateMatch:
    """``m`` read the way its document prints numeric dates (``numeric_date_order``):
    day first or month first when the document's other dates show which, and then no
    longer open. With nothing to settle it (``None``), ``m`` as found: read month first,
    its ``day_first_iso`` the other reading a person may need to weigh."""
    if m.day_first_iso is None or day_first is None:
        return m
    return replace(m, iso=m.day_first_iso if day_first else m.iso, ambiguous=False, day_first_iso=None)


def parse_date(value: object, *, today: date | None = None) -> ParsedDate | None:
    """Read a cell or field that holds one date (a trailing time of day is allowed).

    Takes date/datetime objects too. Complete dates in every shape ``find_date`` knows,
    compact HL7-style dates (20200131, 200808151030-0700), and partial dates (03/2024,
    2024-03, March 2024, 2024) which come back without ``iso``. Anything else around
    the date ("Collected: 04/10/2026", "7/22/58 (age 67)") means it is not one date.
    """
    if isinstance(value, datetime):
        return ParsedDate(value.date().isoformat(), "day")
    if isinstance(value, date):
        return ParsedDate(value.isoformat(), "day")
    if not isinstance(value, str):
        return None
    today = today or date.today()
    text = normalize_ws(value).strip(" ,.;:()")
    if not text:
        return None
    if m := _COMPACT.fullmatch(text):
        iso = _valid(int(m[1]), int(m[2]), int(m[3]))
        return ParsedDate(iso, "day") if iso else None
    cleaned = _TRAILING_TIME.sub("", text).strip(" ,.;:()")
    found = find_date(cleaned, today=today)
    if found is not None:
        if found.start == 0 and cleaned[found.end:].strip(" ,.") == "":
            return ParsedDate(found.iso, "day", found.ambiguous)
        return None
    for pattern in _PARTIAL:
        m = pattern.fullmatch(text)
        if m and MIN_YEAR <= int(m["y"]) <= MAX_YEAR and (m.groupdict().get("mon") or 1 <= int(m["m"]) <= 12):
            return ParsedDate(None, "month")
    if re.fullmatch(r"\d{4}", text) and MIN_YEAR <= int(text) <= MAX_YEAR:
        return ParsedDate(None, "year")
    return None


def hl7_date(ts: str) -> str | None:
    """The calendar date of an HL7 DTM/TS value (YYYYMMDD[HHMM[SS[.S+]]][+/-ZZZZ]).

    The date is taken as printed (local to the sender); a timezone offset does not move
    it. Values with less than day precision return None.
    """
    ts = (ts or "").strip()
    m = re.match(r"(\d{4})(\d{2})(\d{2})(\d{0,6})(?:\.\d{1,4})?(?:[+-]\d{4})?$", ts)
    if not m:
        return None
    return _valid(int(m[1]), int(m[2]), int(m[3]))
