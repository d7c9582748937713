"""Small pure parsers for the text printed on lab reports and intake forms.

Each function takes a string (a cell, a line fragment) and returns a normalised
reading of it or ``None`` when the text does not say what the function looks for.
Nothing here knows about pages, boxes or any particular document layout; the
extractors decide *which* text to hand in, these rules decide what it means.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from core.models import AbnormalFlag

# --------------------------------------------------------------------------- dates

_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}
_MONTH = (
    r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|"
    r"aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"(?P<d>\d{1,2})(?:st|nd|rd|th)?"
# Order matters only for overlapping matches at the same start; all are anchored on
# word boundaries so "2026-04-10" is never read as a US date.
_DATE_PATTERNS = [
    re.compile(r"(?<![\d/-])(?P<y>\d{4})[-/](?P<m>\d{1,2})[-/](?P<d>\d{1,2})(?![\d/-])"),
    re.compile(r"(?<![\d/-])(?P<m>\d{1,2})([/-])(?P<d>\d{1,2})\2(?P<y>\d{4}|\d{2})(?![\d/-])"),
    re.compile(rf"(?<![\w]){_DAY}[\s-]+{_MONTH}[\s,-]+(?P<y>\d{{4}})(?!\d)", re.I),
    re.compile(rf"(?<![\w]){_MONTH}\s+{_DAY},?\s+(?P<y>\d{{4}})(?!\d)", re.I),
]
_TRAILING_TIME = re.compile(r"[\s,@]+(?:at\s+)?\d{1,2}:\d{2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?\s*$", re.I)


@dataclass(frozen=True, slots=True)
class DateMatch:
    iso: str  # YYYY-MM-DD
    start: int
    end: int


def _year(raw: str, today: date) -> int:
    """Expand a two-digit year to the most recent year not more than a year ahead.

    "7/22/58" is a 1958 birth date and "4/10/26" a 2026 collection, read on any
    day from 2026 to 2057 alike.
    """
    if len(raw) == 4:
        return int(raw)
    year = 2000 + int(raw)
    return year if year <= today.year + 1 else year - 100


def _to_iso(m: re.Match, today: date) -> str | None:
    groups = m.groupdict()
    month = int(groups["m"]) if groups.get("m") else _MONTHS[groups["mon"].lower()[:3]]
    try:
        return date(_year(groups["y"], today), month, int(groups["d"])).isoformat()
    except ValueError:  # 02/30/2026, month 13 ...
        return None


def find_date(text: str, *, today: date | None = None) -> DateMatch | None:
    """The first complete, valid calendar date anywhere in ``text``.

    Understands ISO (2026-04-10), US m/d/yyyy and m/d/yy, "22 July 1958",
    "July 22, 1958", "Jul 22 1958" and dd-Mon-yyyy. Partial dates ("03/2024")
    are not dates: a result without a day cannot be placed on a timeline.
    """
    today = today or date.today()
    best: DateMatch | None = None
    for pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            iso = _to_iso(m, today)
            if iso and (best is None or m.start() < best.start):
                best = DateMatch(iso, m.start(), m.end())
                break
    return best


def parse_date(text: str, *, today: date | None = None) -> str | None:
    """``text`` read as one date (a trailing time of day is allowed) -> "YYYY-MM-DD"."""
    cleaned = _TRAILING_TIME.sub("", text.strip()).strip(" ,.;:()")
    m = find_date(cleaned, today=today)
    if m is None or m.start != 0 or cleaned[m.end:].strip(" ,.") != "":
        return None
    return m.iso


# --------------------------------------------------------------------------- names

_NAME_PART = r"[A-Za-z][A-Za-z'\u2019]*(?:-[A-Za-z][A-Za-z'\u2019]*)*\.?"
_HONORIFIC = re.compile(r"^(?:mr|mrs|ms|miss|mx|dr)\.?$", re.I)


@dataclass(frozen=True, slots=True)
class PersonName:
    first: str
    last: str
    middle: str = ""

    @property
    def display(self) -> str:
        """First [Middle] Last, capitalised sensibly whatever case it was printed in."""
        parts = [self.first, self.middle, self.last]
        return " ".join(_nice_case(p) for p in parts if p)


def _nice_case(part: str) -> str:
    if part.isupper() or part.islower():
        return "-".join(p[:1].upper() + p[1:].lower() for p in part.split("-"))
    return part


def parse_person_name(text: str) -> PersonName | None:
    """Read "LAST, FIRST M", "First M. Last" or "First Last" (hyphens kept).

    Returns ``None`` for anything with digits or fewer than two name parts, so a
    label's stray value ("DOB 01/02/1960") is never taken for a name.
    """
    text = " ".join(text.split()).strip(" ;")
    if not text or any(ch.isdigit() for ch in text):
        return None
    if "," in text:
        last, _, rest = text.partition(",")
        given = rest.split()
        family = last.split()
        if not given or not family:
            return None
    else:
        tokens = [t for t in text.split() if not _HONORIFIC.match(t)]
        if len(tokens) < 2:
            return None
        given, family = tokens[:-1], [tokens[-1]]
    tokens = given + family
    if not all(re.fullmatch(_NAME_PART, t) for t in tokens):
        return None
    first = given[0].rstrip(".")
    middle = " ".join(t.rstrip(".") for t in given[1:])
    return PersonName(first=first, last=" ".join(family), middle=middle)


# --------------------------------------------------------------------------- numbers, units

_NUM = r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|-?\.\d+"
_NUMBER = re.compile(rf"^(?:{_NUM})$")
_COMPARATOR = r"(?:<=|>=|<|>|≤|≥|=<|=>)"

QUALITATIVE_VALUES = frozenset(
    """negative positive pos neg reactive non-reactive nonreactive detected
    not-detected none trace small moderate large clear cloudy hazy turbid yellow
    amber straw colorless present absent equivocal indeterminate isolated
    borderline normal""".split()
)
_QUALITATIVE_PHRASES = ("not detected", "none detected", "not isolated", "non reactive", "no growth")
_NEGATIVE_LIKE = frozenset({"negative", "neg", "non-reactive", "nonreactive", "not detected",
                            "none detected", "not isolated", "non reactive", "none", "absent",
                            "no growth", "normal"})
_POSITIVE_LIKE = frozenset({"positive", "pos", "reactive", "detected", "present", "isolated"})


def to_number(text: str) -> float | None:
    """A plain printed number ("1,234.5", "-2", ".5") as a float, else ``None``."""
    text = text.strip()
    if not _NUMBER.match(text):
        return None
    return float(text.replace(",", ""))


def is_qualitative(text: str) -> bool:
    t = " ".join(text.lower().split())
    return t in QUALITATIVE_VALUES or t in _QUALITATIVE_PHRASES


_UNIT = re.compile(
    r"^(?:%|(?:x\s?)?10[\^E*]?\d+/[A-Za-zµμ]+|[A-Za-zµμ°][A-Za-z0-9µμ°/%.^*\-]*(?:/[A-Za-z0-9µμ.^]+)*)$"
)
_NOT_UNITS = frozenset({"h", "l", "hh", "ll", "a", "n", "high", "low", "abn", "abnormal", "critical",
                        "crit", "ref", "range", "see", "note", "and", "or", "to", "of", "the"})


def looks_like_unit(token: str) -> bool:
    """Whether a token reads as a unit of measure: mg/dL, %, x10E3/uL, mL/min/1.73m2, fL."""
    t = token.strip()
    if not t or t.lower() in _NOT_UNITS or is_qualitative(t):
        return False
    if not _UNIT.match(t):
        return False
    # A unit is short and either has a symbol or is a known bare unit word.
    has_symbol = any(c in t for c in "/%^µμ°") or t[:1] in "x1" or t.lower() in _BARE_UNITS
    return has_symbol and len(t) <= 24


# OCR reads the "10" of a power-of-ten unit as "lO", "1o", "IO" ... A unit comes from
# a closed vocabulary in which only "10" can stand there, so that one spot is
# repaired; nothing else in a unit (and nothing in a value) is ever rewritten.
_POWER_OF_TEN = re.compile(r"^(?P<x>[xX×]\s?)(?P<ten>[1lI|][0oO])(?P<rest>[Ee^*]\d{1,2}/[A-Za-zµμ]+)$")


def repair_ocr_unit(unit: str) -> str:
    """Undo OCR's letter-for-digit swap in the "10" of "x10E3/uL"; anything else as is.

    "xlOE3/uL" -> "x10E3/uL", "x 1oE6/uL" -> "x 10E6/uL"; "x1l0E3/uL" (a letter
    too many: which one is noise?) and "%o" stay as read.
    """
    m = _POWER_OF_TEN.match(unit.strip())
    if m is None:
        return unit
    return f"{m.group('x')}10{m.group('rest')}"


_BARE_UNITS = frozenset({"fl", "pg", "g", "mg", "mcg", "ug", "ng", "kg", "ml", "l", "dl", "iu", "u",
                         "meq", "mmol", "umol", "nmol", "pmol", "sec", "seconds", "ratio", "index",
                         "units", "cells", "mm", "cm", "mmhg", "bpm", "kg/m2", "copies", "titer"})


# --------------------------------------------------------------------------- reference ranges

_RANGE_CORE = re.compile(
    rf"^(?P<range>{_COMPARATOR}\s*(?:{_NUM})|(?:{_NUM})\s*(?:-|–|—|to)\s*(?:{_NUM}))(?:\s+(?P<unit>\S+))?$",
    re.I,
)
_RANGE_PREFIX = re.compile(r"^(?:ref(?:erence)?\.?(?:\s*(?:range|interval))?\s*:?\s*)", re.I)


def parse_reference_range(text: str) -> tuple[str, str] | None:
    """A printed reference range -> (range as printed, unit printed inside it or "").

    "65-99" -> ("65-99", ""); "3.4 - 10.8" -> ("3.4 - 10.8", ""); "<5.7" ->
    ("<5.7", ""); "> 60" -> ("> 60", ""); "65-99 mg/dL" -> ("65-99", "mg/dL");
    "(3.4-10.8)" -> ("3.4-10.8", ""); "Negative" -> ("Negative", "").
    """
    t = " ".join(text.split())
    t = _RANGE_PREFIX.sub("", t)
    if t[:1] in "([" and t[-1:] in ")]":
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


@dataclass(frozen=True, slots=True)
class RangeBounds:
    low: float | None
    high: float | None
    low_inclusive: bool = True
    high_inclusive: bool = True


def range_bounds(reference_range: str) -> RangeBounds | None:
    """Numeric bounds of a range such as "65-99", "<100", ">= 60" (``None`` if qualitative)."""
    t = " ".join(reference_range.split())
    m = re.fullmatch(rf"({_NUM})\s*(?:-|–|—|to)\s*({_NUM})", t, re.I)
    if m:
        return RangeBounds(float(m.group(1).replace(",", "")), float(m.group(2).replace(",", "")))
    m = re.fullmatch(rf"({_COMPARATOR})\s*({_NUM})", t)
    if not m:
        return None
    op, num = m.group(1), float(m.group(2).replace(",", ""))
    if op in ("<", "≤", "<=", "=<"):
        return RangeBounds(None, num, high_inclusive=op != "<")
    return RangeBounds(num, None, low_inclusive=op != ">")


# --------------------------------------------------------------------------- values and flags

_FLAG_WORDS: dict[str, AbnormalFlag | str] = {
    "h": "high", "hi": "high", "high": "high", "^": "high", "↑": "high",
    "l": "low", "lo": "low", "low": "low", "v": "low", "↓": "low",
    "hh": "critical_high", "h*": "critical_high", "ch": "critical_high", "!h": "critical_high",
    "ll": "critical_low", "l*": "critical_low", "cl": "critical_low", "!l": "critical_low",
    "a": "abnormal", "ab": "abnormal", "abn": "abnormal", "abnormal": "abnormal", "*": "abnormal",
    "n": "normal", "nl": "normal", "normal": "normal", "wnl": "normal",
    "c": "critical", "crit": "critical", "critical": "critical", "panic": "critical", "!!": "critical",
}
_FLAG_PHRASES: dict[str, AbnormalFlag | str] = {
    "critical high": "critical_high", "crit high": "critical_high", "panic high": "critical_high",
    "critical low": "critical_low", "crit low": "critical_low", "panic low": "critical_low",
    "out of range": "abnormal", "within range": "normal", "in range": "normal",
}
_INLINE_FLAG = re.compile(r"^(?P<value>.*?\d)\s*(?P<flag>HH|LL|H|L|A|\*)$")
_VALUE = re.compile(rf"^(?:{_COMPARATOR}\s?)?(?:{_NUM})(?::\d+)?$")


def is_flag_word(text: str) -> bool:
    t = " ".join(text.lower().split())
    return t in _FLAG_WORDS or t in _FLAG_PHRASES


def parse_flag(text: str, value: str | None = None, reference_range: str | None = None) -> AbnormalFlag | None:
    """A printed abnormal flag -> the AbnormalFlag vocabulary, ``None`` if not a flag.

    H/High -> high, L/Low -> low, HH/LL or "critical high/low" -> critical_*,
    A/ABN/abnormal/* -> abnormal, N/normal -> normal. A bare "critical" says
    nothing about direction: the value against the range decides, else "abnormal".
    """
    t = " ".join(text.lower().split()).strip("()[]")
    flag = _FLAG_PHRASES.get(t) or _FLAG_WORDS.get(t)
    if flag is None:
        return None
    if flag == "critical":
        direction = derive_flag(value, reference_range) if value and reference_range else None
        return {"high": "critical_high", "low": "critical_low"}.get(direction or "", "abnormal")  # type: ignore[return-value]
    return flag  # type: ignore[return-value]


def is_value(text: str) -> bool:
    """A result value as printed: a number (with comparator or titre) or a qualitative word."""
    t = text.strip()
    return bool(_VALUE.match(t)) or is_qualitative(t)


# Letters OCR puts where a digit was printed: l/I/| for 1, O/o for 0.
_DIGIT_LOOKALIKES = str.maketrans({"l": "1", "I": "1", "|": "1", "O": "0", "o": "0"})


def garbled_number(text: str) -> bool:
    """A token that is not a value but would be one with OCR's digit look-alikes
    read as digits ("1l.8", "l3.1", "1O5"). Such a value is never rewritten: "1l.8"
    may be 11.8, or 1.8 with a speck read as "l". The caller sends it to review."""
    t = text.strip()
    if not any(c.isdigit() for c in t) or is_value(t) or split_value_flag(t) is not None:
        return False
    return split_value_flag(t.translate(_DIGIT_LOOKALIKES)) is not None


def split_value_flag(text: str) -> tuple[str, str | None] | None:
    """Separate a printed result from an inline flag: "7.9 H" -> ("7.9", "H"),
    "11.8H" -> ("11.8", "H"), "<0.5" -> ("<0.5", None), "POS" -> ("POS", None).
    ``None`` when the text is not a result value at all.
    """
    t = " ".join(text.split())
    if is_value(t):
        return t, None
    parts = t.rsplit(" ", 1)
    if len(parts) == 2 and is_value(parts[0]) and is_flag_word(parts[1]):
        return parts[0], parts[1]
    m = _INLINE_FLAG.match(t)
    if m and is_value(m.group("value")):
        return m.group("value"), m.group("flag")
    return None


def _numeric_value(value: str) -> tuple[float, int] | None:
    """(number, bias): bias -1 for "<x" (just below x), +1 for ">x", 0 otherwise."""
    t = value.replace(" ", "")
    bias = 0
    for op, b in (("<=", 0), (">=", 0), ("≤", 0), ("≥", 0), ("<", -1), (">", 1)):
        if t.startswith(op):
            t, bias = t[len(op):], b
            break
    n = to_number(t)
    return None if n is None else (n, bias)


def derive_flag(value: str | None, reference_range: str | None) -> AbnormalFlag | None:
    """Compare a printed value with its printed range: high / low / normal / abnormal.

    Used only when the document printed no flag; the caller records
    ``flag_derived=True``. Qualitative results are abnormal when a negative-type
    range ("Negative", "Not detected") meets a positive-type value.
    """
    if not value or not reference_range:
        return None
    v = " ".join(value.lower().split())
    r = " ".join(reference_range.lower().split())
    if is_qualitative(v) or v in _POSITIVE_LIKE:
        if r in _NEGATIVE_LIKE and v in _NEGATIVE_LIKE:
            return "normal"
        if r in _NEGATIVE_LIKE and v in _POSITIVE_LIKE:
            return "abnormal"
        return None
    num = _numeric_value(value)
    bounds = range_bounds(reference_range)
    if num is None or bounds is None:
        return None
    n, bias = num
    if bounds.low is not None:
        below = n < bounds.low or (n == bounds.low and (bias < 0 or not bounds.low_inclusive))
        if below:
            return "low"
    if bounds.high is not None:
        above = n > bounds.high or (n == bounds.high and (bias > 0 or not bounds.high_inclusive))
        if above:
            return "high"
    return "normal"
