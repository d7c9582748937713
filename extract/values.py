"""The value rules: how printed dates, numbers, units, ranges and flags are read (pure).

One set of rules for every extractor (lab PDFs and OCR pages, HL7 v2, XLSX, DOCX), so the
same printed result is stored with the same value, range and flag whatever format it came
in. Layout questions (which words on a page form a cell, how OCR glues a flag to a
number) stay with the format's extractor (``extract.text_rules`` for pages); what the
text *means* is decided here.

Every function is total: text it does not understand gives ``None`` (or "unknown"),
never an exception, so a strange cell or field cannot crash an extraction. Nothing here
touches I/O; values are kept as printed and only *read* (a flag, a date, bounds).

The central lab rule is :func:`resolve_flag`: printed flags first (the vocabulary below,
HL7 table 0078 plus what reports and spreadsheets print), then an in/out-of-range column,
then the value compared with its reference range. A critical result is never downgraded:
a printed critical flag, or a value past printed critical limits, always ends as
``critical_high`` or ``critical_low``. A flag word or critical limits the rules cannot
read are never dropped in silence: ``FlagReading.doubts`` names them, and every
extractor sends such a result to review.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import Iterable

from core.policy.analytes import normalize_unit
from core.policy.certainty import decimal_separator_doubt
from core.policy.chart_rules import CRITICAL_FLAGS

# ---------------------------------------------------------------------------- whitespace


def normalize_ws(text: str) -> str:
    """Collapse runs of whitespace (incl. non-breaking spaces) to one space and trim."""
    return re.sub(r"\s+", " ", text.replace("\u00a0", " ")).strip()


def contains_normalized(haystack: str, needle: str) -> bool:
    """The citation rule: is ``needle`` inside ``haystack`` once whitespace is normalised?"""
    n = normalize_ws(needle)
    return bool(n) and n in normalize_ws(haystack)


# ---------------------------------------------------------------------------- dates

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


def find_date(text: str, *, today: date | None = None) -> DateMatch | None:
    """The first complete, valid calendar date anywhere in ``text``.

    Understands ISO (2026-04-10, 2026/04/10, 2026.04.10), US m/d/yyyy and m/d/yy,
    unambiguous day-first numbers (31/01/2020, 31.01.2020), "22 July 1958",
    "July 22, 1958", "Jul 22 1958" and dd-Mon-yyyy. Partial dates ("03/2024") are not
    dates here: a result without a day cannot be placed on a timeline.
    """
    today = today or date.today()
    best: DateMatch | None = None
    for pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text or ""):
            read = _read_match(m, today)
            if read is None:
                continue
            if best is None or m.start() < best.start:
                best = DateMatch(read[0], m.start(), m.end(), read[1])
            break
    return best


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


# ---------------------------------------------------------------------------- numbers

# A number as printed: "5.8", "105,600" (thousands), "-2", ".5", and a decimal comma
# ("7,9", "12,0") where it cannot be a thousands separator: not followed by exactly three
# digits. "1,250" is always one thousand two hundred and fifty.
NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+,(?:\d{1,2}|\d{4,})(?!\d)|\d+(?:\.\d+)?)|[-+]?\.\d+"
COMPARATOR = r"<=|>=|=<|=>|\u2264|\u2265|<|>"
_UPPER_OPS = {"<": False, "<=": True, "=<": True, "\u2264": True}  # op -> limit included
_LOWER_OPS = {">": False, ">=": True, "=>": True, "\u2265": True}
_NUMBER = re.compile(NUMBER)
_DECIMAL_COMMA = re.compile(r"[-+]?\d+,(?:\d{1,2}|\d{4,})")
_NUMERIC_RESULT = re.compile(rf"(?:{COMPARATOR}|=)?\s*(?:{NUMBER})")
_COMPARED_NUMBER = re.compile(rf"({COMPARATOR})\s*({NUMBER})")


def _to_float(number: str) -> float:
    """A string ``NUMBER`` matched -> its value (a decimal comma is a decimal point)."""
    if _DECIMAL_COMMA.fullmatch(number):
        return float(number.replace(",", "."))
    return float(number.replace(",", ""))


def parse_number(text: str) -> float | None:
    """A plain number ("5.8", "105,600", "-2", "7,9"); None for comparators, words or ranges."""
    t = normalize_ws(str(text))
    return _to_float(t) if _NUMBER.fullmatch(t) else None


def is_numeric_result(text: str) -> bool:
    """A number, optionally with a comparator: 5.8, <0.5, >=32, > 11.0."""
    return bool(_NUMERIC_RESULT.fullmatch(normalize_ws(text)))


@dataclass(frozen=True, slots=True)
class RangeBounds:
    """An interval of numbers: a reference range, critical limits, or what a printed
    result says about its value ("<0.1" is everything below 0.1). ``None`` is unbounded."""

    low: float | None
    high: float | None
    low_inclusive: bool = True
    high_inclusive: bool = True


def _bound(op: str, number: str) -> RangeBounds:
    n = _to_float(number)
    if op in _UPPER_OPS:
        return RangeBounds(None, n, high_inclusive=_UPPER_OPS[op])
    return RangeBounds(n, None, low_inclusive=_LOWER_OPS[op])


def value_bounds(value: str) -> RangeBounds | None:
    """What a printed result says about the true value: "7.9" is exactly 7.9, "<0.1" is
    below 0.1, ">=90" is 90 or more. None for anything that is not such a number."""
    t = normalize_ws(value or "")
    if (n := parse_number(t)) is not None:
        return RangeBounds(n, n)
    m = _COMPARED_NUMBER.fullmatch(t)
    return _bound(m[1], m[2]) if m else None


# ---------------------------------------------------------------------------- units

_UNIT = re.compile(
    r"^(?:%|(?:x\s?)?10[\^E*]?\d+/[A-Za-z\u00b5\u03bc{}]+|"
    r"[A-Za-z\u00b5\u03bc\u00b0{][A-Za-z0-9\u00b5\u03bc\u00b0/%.^*\-{}\[\]]*(?:/[A-Za-z0-9\u00b5\u03bc.^{}]+)*)$"
)
_NOT_UNITS = frozenset({"h", "l", "hh", "ll", "a", "aa", "n", "high", "low", "abn", "abnormal", "critical",
                        "crit", "panic", "ref", "range", "see", "note", "and", "or", "to", "of", "the"})
_BARE_UNITS = frozenset({"fl", "pg", "g", "mg", "mcg", "ug", "ng", "kg", "ml", "l", "dl", "iu", "u",
                         "meq", "mmol", "umol", "nmol", "pmol", "sec", "seconds", "ratio", "index",
                         "units", "cells", "mm", "cm", "mmhg", "bpm", "kg/m2", "copies", "titer"})


def looks_like_unit(token: str) -> bool:
    """Whether a token reads as a unit of measure: mg/dL, %, x10E3/uL, mL/min/1.73m2, fL."""
    t = token.strip()
    if not t or t.lower() in _NOT_UNITS or is_qualitative(t):
        return False
    if not _UNIT.match(t):
        return False
    # A unit is short and either has a symbol or is a known bare unit word.
    has_symbol = any(c in t for c in "/%^\u00b5\u03bc\u00b0{") or t[:1] in "x1" or t.lower() in _BARE_UNITS
    return has_symbol and len(t) <= 24


_VALUE_AND_UNIT = re.compile(rf"((?:{COMPARATOR})?\s*(?:{NUMBER}))\s*(\S+)")


def split_value_unit(text: str) -> tuple[str, str]:
    """Split "7.9 %" or "182 mg/dL" into value and unit; other text comes back unchanged."""
    t = normalize_ws(text)
    m = _VALUE_AND_UNIT.fullmatch(t)
    if m and looks_like_unit(m[2]):
        return m[1].replace(" ", ""), m[2]
    return t, ""


# ---------------------------------------------------------------------------- qualitative results

# Words a lab prints as a result; "normal"/"abnormal" read as verdicts on the result.
QUALITATIVE_VALUES = frozenset(
    """negative positive pos neg reactive non-reactive nonreactive detected not-detected
    none trace small moderate large clear cloudy hazy turbid yellow amber straw colorless
    present absent equivocal indeterminate inconclusive isolated borderline normal
    abnormal""".split()
)
_QUALITATIVE_PHRASES = frozenset({"not detected", "none detected", "not isolated", "non reactive", "no growth",
                                  "within normal limits", "presumptive positive"})
_NEGATIVE_LIKE = frozenset({"negative", "neg", "non-reactive", "nonreactive", "non reactive", "not detected",
                            "not-detected", "none detected", "not isolated", "none", "absent", "no growth",
                            "normal", "within normal limits", "nl", "wnl"})
_POSITIVE_LIKE = frozenset({"positive", "pos", "reactive", "detected", "present", "isolated", "abnormal",
                            "presumptive positive"})


def is_qualitative(text: str) -> bool:
    """A result printed as a word: Negative, Not detected, Trace, Yellow, Abnormal..."""
    t = normalize_ws(text or "").lower()
    return t in QUALITATIVE_VALUES or t in _QUALITATIVE_PHRASES


def _polarity(text: str) -> str | None:
    t = normalize_ws(text or "").lower().strip("()[]")
    if t in _NEGATIVE_LIKE:
        return "negative"
    if t in _POSITIVE_LIKE:
        return "positive"
    return None


# ---------------------------------------------------------------------------- ranges

_RANGE_NUMBERS = re.compile(rf"({NUMBER})\s*(?:-|\u2013|\u2014|to|_|\.\.)\s*({NUMBER})(?![\d.])", re.I)
_RANGE_BOUND = re.compile(rf"({COMPARATOR})\s*({NUMBER})(?![\d.])")


def parse_range(text: str) -> RangeBounds | None:
    """Bounds of a printed reference range: "4.3 to 6.2", "13-18", "70 - 99", "70_105",
    "<30", "<= 5.6", ">40", "\u2264 5", "<9 mcg/dL: acceptable ...". Units or words after
    the numbers are ignored; a qualitative range ("Negative") has no bounds (None)."""
    t = normalize_ws(text or "")
    if t[:1] in "([" and t[-1:] in ")]":
        t = t[1:-1].strip()
    if not t:
        return None
    m = _RANGE_NUMBERS.match(t)
    if m:
        lo, hi = _to_float(m[1]), _to_float(m[2])
        return RangeBounds(lo, hi) if lo <= hi else None
    m = _RANGE_BOUND.match(t)
    return _bound(m[1], m[2]) if m else None


_RANGE_CORE = re.compile(
    rf"^(?P<range>(?:{COMPARATOR})\s*(?:{NUMBER})|(?:{NUMBER})\s*(?:-|\u2013|\u2014|to)\s*(?:{NUMBER}))"
    r"(?:\s+(?P<unit>\S+))?$",
    re.I,
)
_RANGE_PREFIX = re.compile(r"^(?:ref(?:erence)?\.?(?:\s*(?:range|interval))?\s*:?\s*)", re.I)


def parse_reference_range(text: str) -> tuple[str, str] | None:
    """A cell or bracket that holds only a reference range -> (range as printed, unit
    printed inside it or "").

    "65-99" -> ("65-99", ""); "3.4 - 10.8" -> ("3.4 - 10.8", ""); "<5.7" -> ("<5.7", "");
    "65-99 mg/dL" -> ("65-99", "mg/dL"); "(3.4-10.8)" -> ("3.4-10.8", "");
    "Ref: <100" -> ("<100", ""); "Negative" -> ("Negative", ""). None for anything else.

    Critical (panic) limits printed in the cell stay with the range, wherever the unit
    is: "3.5-5.0 (critical <2.5 or >6.5) mmol/L" and "3.5-5.0 mmol/L (critical <2.5 or
    >6.5)" -> ("3.5-5.0 (critical <2.5 or >6.5)", "mmol/L"); the flag rules read the
    limits from the range (``labelled_critical_limits``).
    """
    t = _RANGE_PREFIX.sub("", normalize_ws(text or ""))
    note = _CRITICAL_NOTE.search(t)
    if note is not None and note.start() > 0:
        rest = normalize_ws(t[: note.start()] + " " + t[note.end():])
        parsed = parse_reference_range(rest)
        if parsed is None or is_qualitative(parsed[0]):
            return None
        printed = note.group("note").strip()
        return f"{parsed[0]} {printed}" if note.group("open") else f"{parsed[0]}; {printed}", parsed[1]
    if t[:1] in "([" and t[-1:] in ")]" and _balanced(t[1:-1]):
        t = t[1:-1].strip()
    if not t:
        return None
    m = _RANGE_CORE.match(t)
    if m:
        unit = m.group("unit") or ""
        if unit and not looks_like_unit(unit):
            return None
        return m.group("range"), unit
    if is_qualitative(t):
        return t, ""
    return None


def split_range_unit(reference_range: str, unit: str) -> tuple[str, str]:
    """(range, unit) for a range printed with its unit ("3.5 - 5.0 mmol/L"): the unit is
    the result's unit when none is printed elsewhere or it is the same one, and the range
    is then stored without it (as a page's range column is). Anything else as printed."""
    parsed = parse_reference_range(reference_range)
    if parsed is None or not parsed[1]:
        return reference_range, unit
    if unit and normalize_unit(unit) != normalize_unit(parsed[1]):
        return reference_range, unit  # another unit than the result's: keep what was printed
    return parsed[0], unit or parsed[1]


# Critical (panic) limits are printed as their own column ("<2.5 or >6.5") or labelled
# inside a range or a note ("3.5-5.0 (critical <2.5 or >6.5)").
_CRITICAL_LABEL = re.compile(r"\b(?:critical|crit|panic|alert)\b(?:\s+(?:values?|limits?|ranges?|results?))?\s*:?", re.I)


@dataclass(frozen=True, slots=True)
class CriticalLimits:
    """Values beyond ``low``/``high`` are critical (a limit itself is critical only when
    printed with "<=" / ">=")."""

    low: float | None
    high: float | None
    low_inclusive: bool = False  # "<=2.5": 2.5 is critical
    high_inclusive: bool = False


def parse_critical_limits(text: str) -> CriticalLimits | None:
    """Critical limits printed on their own: "<2.5 or >6.5", "<2.5, >6.5", ">30",
    "2.5-6.5" (critical outside it), "Critical: <40". None when nothing numeric is there."""
    t = _CRITICAL_LABEL.sub(" ", normalize_ws(text or "")).strip(" :;,()")
    if not t:
        return None
    pairs = _RANGE_BOUND.findall(t)
    low = high = None
    low_inc = high_inc = False
    for op, num in pairs:
        n = _to_float(num)
        if op in _UPPER_OPS:
            low, low_inc = n, _UPPER_OPS[op]
        else:
            high, high_inc = n, _LOWER_OPS[op]
    if pairs:
        return CriticalLimits(low, high, low_inc, high_inc)
    inner = parse_range(t)
    if inner is not None and inner.low is not None and inner.high is not None:
        return CriticalLimits(inner.low, inner.high)
    return None


# Limits right after their label: "<2.5 or >6.5", "< 40, > 400", "2.5-6.5".
_LIMITS_AFTER_LABEL = re.compile(
    rf"\s*(?:(?:{COMPARATOR})\s*(?:{NUMBER})(?:\s*(?:,|/|or|and)?\s*(?:{COMPARATOR})\s*(?:{NUMBER}))*"
    rf"|(?:{NUMBER})\s*(?:-|\u2013|to)\s*(?:{NUMBER}))(?![\d.])",
    re.I,
)


# Critical limits printed inside a range cell, bracketed or not, after a separator or
# not: "(critical <2.5 or >6.5)", "[panic: <40]", "; critical <2.5".
_CRITICAL_NOTE = re.compile(
    rf"\s*[;,]?\s*(?P<note>(?P<open>[(\[])?\s*(?:{_CRITICAL_LABEL.pattern})"
    rf"(?:{_LIMITS_AFTER_LABEL.pattern})\s*(?(open)[)\]]))",
    re.I,
)


def _balanced(text: str) -> bool:
    """No bracket in ``text`` closes before it opens: "3.4-10.8" or "a (b) c", not "1) (2"."""
    depth = 0
    for c in text:
        depth += (c in "([") - (c in ")]")
        if depth < 0:
            return False
    return depth == 0


def labelled_critical_limits(text: str) -> tuple[str, CriticalLimits] | None:
    """Critical limits labelled inside a longer text ("3.5-5.0 (critical <2.5 or >6.5)",
    a note "Panic values: <40 or >400 mg/dL"): (the printed limits, their reading).
    The limits must follow the label directly: "Critical value called at 14:35 >2 h"
    states no limits."""
    for label in _CRITICAL_LABEL.finditer(text or ""):
        limits = _LIMITS_AFTER_LABEL.match(text, label.end())
        if limits is None:
            continue
        parsed = parse_critical_limits(limits.group(0))
        if parsed is not None:
            return normalize_ws(text[label.start(): limits.end()]), parsed
    return None


def range_problem(reference_range: str, limits: CriticalLimits | None = None) -> str | None:
    """Why a printed reference range (with its critical limits) cannot be right, or None.

    A range whose low bound is above its high bound ("41.1-15.9": OCR read 11.1 as
    41.1), critical limits whose low is not below their high ("<6.5 or >2.5"), or
    critical limits that reach into the normal range ("3.5-5.0 (critical <4.0)": a normal
    value would be critical). Such a reading is misread or misprinted; whatever flag it
    gives, a person must check it (the result stays visible, in review)."""
    t = normalize_ws(reference_range or "")
    if t[:1] in "([" and t[-1:] in ")]":
        t = t[1:-1].strip()
    if (m := _RANGE_NUMBERS.match(t)) and _to_float(m[1]) > _to_float(m[2]):
        return (f"reference range {m.group(0)!r} has its low bound above its high bound: "
                f"it cannot be right (misread or misprinted)")
    if limits is None:
        return None
    if limits.low is not None and limits.high is not None and limits.low >= limits.high:
        return (f"critical limits (below {limits.low:g}, above {limits.high:g}) overlap: "
                f"they cannot be right (misread or misprinted)")
    r = parse_range(t)
    if r is not None and ((limits.low is not None and r.low is not None and limits.low > r.low)
                          or (limits.high is not None and r.high is not None and limits.high < r.high)):
        return (f"critical limits reach into the reference range {t!r}: "
                f"they cannot be right (misread or misprinted)")
    return None


def critical_direction(value: str, limits: CriticalLimits | None) -> str | None:
    """"critical_high" / "critical_low" when the printed value lies wholly past a limit."""
    v = value_bounds(value)
    if v is None or limits is None:
        return None
    if limits.low is not None and v.high is not None:
        if v.high < limits.low or (v.high == limits.low and (limits.low_inclusive or not v.high_inclusive)):
            return "critical_low"
    if limits.high is not None and v.low is not None:
        if v.low > limits.high or (v.low == limits.high and (limits.high_inclusive or not v.low_inclusive)):
            return "critical_high"
    return None


# ---------------------------------------------------------------------------- flags

# Printed flag -> meaning. "critical" is a critical flag without a direction (resolved in
# ``resolve_flag``). Keys are upper case with single spaces.
_FLAGS: dict[str, str] = {
    **dict.fromkeys(["N", "NL", "NORMAL", "WNL", "WITHIN NORMAL LIMITS", "IN RANGE", "WITHIN RANGE"], "normal"),
    **dict.fromkeys(["H", "HI", "HIGH", "^", "\u2191"], "high"),
    **dict.fromkeys(["L", "LO", "LOW", "V", "\u2193"], "low"),
    **dict.fromkeys(["HH", "H*", "*H", "CH", "H!", "!H", "\u2191\u2191", "CRITICAL HIGH", "CRIT HIGH", "PANIC HIGH",
                     "HIGH CRITICAL", "CRITICALLY HIGH", "CRITICAL H"], "critical_high"),
    **dict.fromkeys(["LL", "L*", "*L", "CL", "L!", "!L", "\u2193\u2193", "CRITICAL LOW", "CRIT LOW", "PANIC LOW",
                     "LOW CRITICAL", "CRITICALLY LOW", "CRITICAL L"], "critical_low"),
    **dict.fromkeys(["AA", "CRIT", "CRITICAL", "PANIC", "!!", "CRITICAL VALUE", "PANIC VALUE"], "critical"),
    **dict.fromkeys(["A", "AB", "ABN", "ABNORMAL", "*", "!", "OUT OF RANGE", "OUTSIDE RANGE"], "abnormal"),
}
# Codes that mean a flag only where a flag is expected (an HL7 OBX-8, a flag column): in
# running text beside a value "<", "S", "R", "POS" or "C" (Celsius) mean something else.
_FIELD_ONLY_FLAGS: dict[str, str] = {
    **dict.fromkeys(["NEG", "NEGATIVE", "NR", "ND", "NOT DETECTED", "S"], "normal"),
    **dict.fromkeys(["HU", ">"], "high"),
    **dict.fromkeys(["LU", "<"], "low"),
    "C": "critical",
    **dict.fromkeys(["POS", "POSITIVE", "DET", "DETECTED", "RR", "R", "I", "MS", "W", "TOX"], "abnormal"),
}
_FLAG_RANK = {"normal": 1, "abnormal": 2, "high": 3, "low": 3}


def _flag_key(raw: str) -> str:
    return normalize_ws(raw or "").upper().strip("()[]").rstrip(".:")


def flag_meaning(raw: str, *, in_text: bool = False) -> str | None:
    """What one printed flag says: an AbnormalFlag value, "critical" (no direction), or
    None when it is not a flag. ``in_text``: the token stands beside a value in running
    text, where only unmistakable flags count."""
    key = _flag_key(raw)
    if not key:
        return None
    return _FLAGS.get(key) or (None if in_text else _FIELD_ONLY_FLAGS.get(key))


def derive_flag(value: str | None, reference_range: str | None) -> str | None:
    """Compare a printed result with its printed range: "high", "low", "normal",
    "abnormal" or None when the two cannot be compared.

    Numbers are compared as intervals: "<0.1" against "<0.4" is normal, ">90" against
    ">60" normal, "<5" against "15-150" low, but "<10" against "5-20" could lie on
    either side of 5 and gives None. Words compare by meaning: "Positive" against a
    "Negative" range is abnormal, "Not detected" against "Negative" normal, a result
    printed as "Abnormal" is abnormal; other words only match themselves ("Yellow"/"Yellow").
    A decimal comma ("7,9" against "12,0-16,0") is read as such; a text that could hold
    both a decimal comma and a thousands separator is not compared.
    """
    v_text, r_text = normalize_ws(value or ""), normalize_ws(reference_range or "")
    if not v_text:
        return None
    if (doubt := decimal_separator_doubt(v_text, r_text)) and doubt.ambiguous:
        return None  # "1,250" against "0,5-1,5": a thousands separator or a decimal comma? not guessed
    v = value_bounds(v_text)
    if v is None:
        if v_text.lower() in ("abnormal", "abn"):
            return "abnormal"
        pv, pr = _polarity(v_text), _polarity(r_text)
        if pv is not None and pr is not None:
            return "normal" if pv == pr else "abnormal"
        if r_text and v_text.lower() == r_text.lower().strip("()[]") and not re.search(r"\d", v_text):
            return "normal"
        return None
    r = parse_range(r_text)
    if r is None:
        return None
    if r.low is not None and v.high is not None and (
            v.high < r.low or (v.high == r.low and not (v.high_inclusive and r.low_inclusive))):
        return "low"
    if r.high is not None and v.low is not None and (
            v.low > r.high or (v.low == r.high and not (v.low_inclusive and r.high_inclusive))):
        return "high"
    above_low = r.low is None or (v.low is not None and (
        v.low > r.low or (v.low == r.low and (r.low_inclusive or not v.low_inclusive))))
    below_high = r.high is None or (v.high is not None and (
        v.high < r.high or (v.high == r.high and (r.high_inclusive or not v.high_inclusive))))
    return "normal" if above_low and below_high else None


@dataclass(frozen=True, slots=True)
class FlagReading:
    """The abnormal flag a result is stored with, how it was reached, and what in the
    printed flag or limits a person must check before it enters a chart."""

    flag: str  # AbnormalFlag
    derived: bool  # computed from the value (and range or critical limits), not printed
    unrecognised: tuple[str, ...] = ()  # printed flags the vocabulary does not know
    direction_assumed: bool = False  # a critical flag with no direction, stored as critical_high
    disagreement: str | None = None  # the printed flag contradicts the value and range
    critical_range: str = ""  # printed critical (panic) limits, as printed
    critical_unread: bool = False  # critical limits were printed but could not be read
    impossible: str | None = None  # the printed range or limits cannot be right (``range_problem``)

    def doubts(self) -> list[tuple[str, float]]:
        """(reason, confidence factor) for each thing a person must check."""
        out = []
        if self.unrecognised:
            out.append((f"printed flag {' '.join(self.unrecognised)!r} is not one the rules know: "
                        f"the flag was not taken from it", 0.9))
        if self.direction_assumed:
            out.append(("critical flag printed without a direction (the value and range do not tell "
                        "high from low): stored as critical_high", 0.9))
        if self.disagreement:
            out.append((self.disagreement, 0.8))
        if self.critical_unread:
            out.append((f"critical limits {self.critical_range!r} could not be read: "
                        f"the value was not checked against them", 0.8))
        if self.impossible:
            out.append((self.impossible, 0.6))
        return out

    def review_reasons(self) -> list[str]:
        return [reason for reason, _ in self.doubts()]


def _critical_from(meanings: list[str], direction: str | None, past_limits: str | None) -> tuple[str, bool]:
    """(critical flag, direction assumed) for printed flags that include a critical one.

    A printed direction wins (a directed critical flag, or H/L printed beside an
    undirected one: "CRIT L"; the caller checks it against the value); then printed
    critical limits; then the value against the reference range. With none of these the
    flag is still kept critical (fail closed: never downgraded to high or abnormal) and
    stored as critical_high, the reading that prompts the most urgent look, with
    ``direction_assumed`` so the extractor sends it to review."""
    directed = {m for m in meanings if m in CRITICAL_FLAGS}
    if len(directed) == 1:
        return directed.pop(), False
    plain = {m for m in meanings if m in ("high", "low")}
    if not directed and len(plain) == 1:
        return f"critical_{plain.pop()}", False
    if past_limits:
        return past_limits, False
    if direction in ("high", "low"):
        return f"critical_{direction}", False
    return "critical_high", True


_FLAG_SEPARATORS = re.compile(r"[\s,/~;]+")


def _read_printed_flags(printed: Iterable[str]) -> tuple[list[str], list[str], tuple[str, ...]]:
    """(flags as printed, their meanings, the parts not understood).

    A printed flag is read whole first ("critical high", "out of range"), else word by
    word ("Crit H", "H, POS"): each word the vocabulary knows counts, and a word it does
    not know is reported, never dropped in silence."""
    shown = [p for p in (normalize_ws(x or "") for x in printed) if p]
    meanings: list[str] = []
    unknown: list[str] = []
    for flag in shown:
        if meaning := flag_meaning(flag):
            meanings.append(meaning)
            continue
        for word in _FLAG_SEPARATORS.split(flag):
            if not word.strip("-\u2013\u2014"):
                continue
            if meaning := flag_meaning(word):
                meanings.append(meaning)
            else:
                unknown.append(word)
    return shown, meanings, tuple(unknown)


def _critical_limits(column: str, texts: Iterable[str]) -> tuple[str, CriticalLimits | None]:
    """Printed critical limits: a column (or cell) of their own, where the label is the
    header; else limits labelled inside the range or a note ("critical <2.5 or >6.5").
    A column without a digit ("N/A", "-") states no limits."""
    column = normalize_ws(column or "")
    if any(c.isdigit() for c in column):
        return column, parse_critical_limits(column)
    for text in texts:
        if found := labelled_critical_limits(text or ""):
            return found
    return "", None


def resolve_flag(
    printed: Iterable[str] = (),
    value: str = "",
    reference_range: str = "",
    *,
    critical_column: str = "",
    notes: Iterable[str] = (),
    in_range: bool | None = None,
) -> FlagReading:
    """The one flag rule for every format.

    ``printed``: the flags the document prints for the result (an OBX-8 with its
    repeats, a flag column, a flag beside the value). ``critical_column``: printed
    critical limits from a column of their own; without one, limits labelled in the
    reference range or in ``notes`` count. ``in_range``: a layout that says it by
    column ("In Range" / "Out of Range").

    Order: printed flags (the most severe wins; H with L makes "abnormal"; a critical
    one is resolved by ``_critical_from``), else the column, else the value against
    the range; critical limits then raise any non-critical flag to critical when the
    value lies past them. What could not be read (a flag word, the limits), and a range
    or limits that cannot be right (low above high: a misread), are in
    ``FlagReading.doubts``: every extractor sends such a result to review.
    """
    shown, known, unrecognised = _read_printed_flags(printed)
    critical_printed, limits = _critical_limits(critical_column, (reference_range, *notes))
    derived = derive_flag(value, reference_range)
    direction = derived if derived in ("high", "low") else None
    past_limits = critical_direction(value, limits)
    assumed = False
    if any(m in CRITICAL_FLAGS or m == "critical" for m in known):
        flag, assumed = _critical_from(known, direction, past_limits)
        from_print = True
    elif known:
        plain = set(known)
        flag = "abnormal" if {"high", "low"} <= plain else max(plain, key=_FLAG_RANK.__getitem__)
        from_print = True
    elif in_range is not None:
        flag = "normal" if in_range else (direction or "abnormal")
        from_print = in_range or direction is None
    else:
        flag, from_print = derived or "unknown", False
    disagreement = None
    if CRITICAL_FLAGS <= set(known):
        disagreement = f"printed flags {'~'.join(shown)!r} contradict each other"
    elif known:
        as_direction = {"critical_high": "high", "critical_low": "low"}.get(flag, flag)
        if (as_direction in ("high", "low", "normal") and derived in ("high", "low", "normal")
                and as_direction != derived) or (as_direction == "normal" and derived == "abnormal"):
            disagreement = (f"printed flag {'~'.join(shown)!r} disagrees with value {value} "
                            f"and range {reference_range!r}")
    if past_limits and flag not in CRITICAL_FLAGS:
        if known:
            disagreement = (f"printed flag {'~'.join(shown)!r} but value {value} is past the "
                            f"printed critical limits")
        flag, from_print = past_limits, False
    return FlagReading(flag, derived=not from_print and flag != "unknown", unrecognised=unrecognised,
                       direction_assumed=assumed, disagreement=disagreement, critical_range=critical_printed,
                       critical_unread=bool(critical_printed) and limits is None,
                       impossible=range_problem(reference_range, limits))


# ---------------------------------------------------------------------------- confidence


def clamp_confidence(value: float) -> float:
    """Keep a computed confidence inside (0, 1) with two decimals."""
    return round(min(0.99, max(0.05, value)), 2)


def confidence(base: float, factors: Iterable[float]) -> float:
    """A base confidence multiplied by penalty factors (each in 0..1)."""
    c = base
    for f in factors:
        c *= f
    return clamp_confidence(c)
