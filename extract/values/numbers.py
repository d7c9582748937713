"""The value rules: how printed numbers, units and result words are read (pure).

One set of rules for every extractor (lab PDFs and OCR pages, HL7 v2, XLSX, DOCX), so the
same printed result is stored with the same value, range and flag whatever format it came
in. Layout questions (which words on a page form a cell, how OCR glues a flag to a
number) stay with the format's extractor (``extract.values.text_rules`` for pages); what the
text *means* is decided here and in the modules beside it: ``extract.values.dates`` (dates),
``extract.values.ranges`` (reference ranges and critical limits) and ``extract.values.flags`` (the
flag rule, ``resolve_flag``).

Every function is total: text it does not understand gives ``None`` (or "unknown"),
never an exception, so a strange cell or field cannot crash an extraction. Nothing here
touches I/O; values are kept as printed and only *read* (a flag, a date, bounds).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

# ---------------------------------------------------------------------------- whitespace


def normalize_ws(text: str) -> str:
    """Collapse runs of whitespace (incl. non-breaking spaces) to one space and trim."""
    return re.sub(r"\s+", " ", text.replace("\u00a0", " ")).strip()


def contains_normalized(haystack: str, needle: str) -> bool:
    """The citation rule: is ``needle`` inside ``haystack`` once whitespace is normalised?"""
    n = normalize_ws(needle)
    return bool(n) and n in normalize_ws(haystack)


# ---------------------------------------------------------------------------- numbers

# A number as printed: "5.8", "105,600" (thousands), "-2", ".5", and a decimal comma
# ("7,9", "12,0") where it cannot be a thousands separator: not followed by exactly three
# digits. "1,250" is always one thousand two hundred and fifty.
NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+,(?:\d{1,2}|\d{4,})(?!\d)|\d+(?:\.\d+)?)|[-+]?\.\d+"
COMPARATOR = r"<=|>=|=<|=>|\u2264|\u2265|<|>"
UPPER_OPS = {"<": False, "<=": True, "=<": True, "\u2264": True}  # op -> limit included
LOWER_OPS = {">": False, ">=": True, "=>": True, "\u2265": True}
_NUMBER = re.compile(NUMBER)
_DECIMAL_COMMA = re.compile(r"[-+]?\d+,(?:\d{1,2}|\d{4,})")
_NUMERIC_RESULT = re.compile(rf"(?:{COMPARATOR}|=)?\s*(?:{NUMBER})")
_COMPARED_NUMBER = re.compile(rf"({COMPARATOR})\s*({NUMBER})")


def to_float(number: str) -> float:
    """A string ``NUMBER`` matched -> its value (a decimal comma is a decimal point)."""
    if _DECIMAL_COMMA.fullmatch(number):
        return float(number.replace(",", "."))
    return float(number.replace(",", ""))


def parse_number(text: str) -> float | None:
    """A plain number ("5.8", "105,600", "-2", "7,9"); None for comparators, words or ranges."""
    t = normalize_ws(str(text))
    return to_float(t) if _NUMBER.fullmatch(t) else None


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


def comparator_bound(op: str, number: str) -> RangeBounds:
    n = to_float(number)
    if op in UPPER_OPS:
        return RangeBounds(None, n, high_inclusive=UPPER_OPS[op])
    return RangeBounds(n, None, low_inclusive=LOWER_OPS[op])


def value_bounds(value: str) -> RangeBounds | None:
    """What a printed result says about the true value: "7.9" is exactly 7.9, "<0.1" is
    below 0.1, ">=90" is 90 or more. None for anything that is not such a number."""
    t = normalize_ws(value or "")
    if (n := parse_number(t)) is not None:
        return RangeBounds(n, n)
    m = _COMPARED_NUMBER.fullmatch(t)
    return comparator_bound(m[1], m[2]) if m else None


# ---------------------------------------------------------------------------- units

_UNIT = re.compile(
    r"^(?:%|(?:x\s?)?10[\^E*]?\d+/[A-Za-z\u00b5\u03bc{}]+|"
    # A count per field or volume: "/HPF", "/LPF" under a urine microscope, "/uL".
    r"/[A-Za-z\u00b5\u03bc]{2,}[A-Za-z0-9.]*|"
    r"[A-Za-z\u00b5\u03bc\u00b0{][A-Za-z0-9\u00b5\u03bc\u00b0/%.^*\-{}\[\]]*(?:/[A-Za-z0-9\u00b5\u03bc.^{}]+)*)$"
)
_NOT_UNITS = frozenset({"h", "l", "hh", "ll", "a", "aa", "n", "high", "low", "abn", "abnormal", "critical",
                        "crit", "panic", "ref", "range", "see", "note", "and", "or", "to", "of", "the"})
_BARE_UNITS = frozenset({"fl", "pg", "g", "mg", "mcg", "ug", "ng", "kg", "ml", "l", "dl", "iu", "u",
                         "meq", "mmol", "umol", "nmol", "pmol", "sec", "seconds", "ratio", "index",
                         "units", "cells", "mm", "cm", "mmhg", "kpa", "bpm", "kg/m2", "copies", "titer"})


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
    abnormal few rare occasional many numerous immune non-immune nonimmune""".split()
)
# A dipstick's grade: "1+" to "4+", or "+" to "++++".
_GRADE = re.compile(r"[1-4]\+|\+{1,4}")
_QUALITATIVE_PHRASES = frozenset({"not detected", "none detected", "not isolated", "non reactive", "no growth",
                                  "within normal limits", "presumptive positive", "none seen", "colourless",
                                  "not immune", "non immune"})
# A urine's colour with its shade: "Dark yellow", "Pale straw" (a bare "red" is left out:
# it starts too many test names, "Red cell count").
_SHADE = re.compile(r"(?:dark|light|pale|deep)\s+(?:yellow|amber|straw|orange|red|brown)")


# A cell or field that holds no value ("n/a", "-", "??", "see note"): nothing to read.
NULL_VALUE = re.compile(r"^\s*(?:n/?a|none|null|unknown|tbd|tbc|-+|\?+|redacted|see .*)\s*$", re.IGNORECASE)


# What a lab prints in a result's place when it gives none: the sample could not be
# tested, the test was not done, or its result is still to come.
_NOT_RESULTED = re.compile(
    r"^\s*(?:(?:sample|specimen)\s+)?(?:haemolysed|hemolysed|hemolyzed|clotted|lipaemic|lipemic|unlabelled|unlabeled"
    r"|leaked|lost|unsuitable|insufficient(?:\s+(?:sample|specimen|quantity|volume))?|qns|q\.n\.s\."
    r"|(?:test\s+)?not\s+(?:done|performed|tested|processed|received)|cancell?ed|pending|to\s+follow|in\s+progress"
    r"|awaited)\s*[.!]?\s*$",
    re.IGNORECASE,
)


# ... or says so and why ("Unable to calculate: triglycerides above 400 mg/dL", a
# calculated LDL's usual text): the opening words decide, whatever follows them.
_NOT_RESULTED_OPENING = re.compile(
    r"^\s*(?:(?:unable\s+to|cannot|can\s*not|could\s+not)\s+(?:be\s+)?"
    r"(?:calculated?|determined?|performed?|perform|reported?|measured?|quantif(?:y|ied)|estimated?|analy[sz]ed?)"
    r"|not\s+(?:calculated|calculable|reportable|estimated|measurable)|calculation\s+not\s+(?:possible|performed|valid))\b",
    re.IGNORECASE,
)


def not_resulted(text: str) -> bool:
    """A result cell that says no result was given ("haemolysed", "insufficient sample",
    "not done", "pending", "Unable to calculate: ..."): not a value, and not one that
    failed to be read."""
    text = normalize_ws(text or "")
    return bool(_NOT_RESULTED.match(text) or _NOT_RESULTED_OPENING.match(text))


def no_result_words(printed: str) -> tuple[str, str]:
    """(why a person must look, what the chart is told) for a result whose place says
    no result was given (``not_resulted``): the lab and HL7 readers word it alike."""
    return (f"the report gives no result for this test: it says {printed!r}",
            f"the report gives no result for this test ({printed})")


def is_qualitative(text: str) -> bool:
    """A result printed as a word or a grade: Negative, Not detected, Trace, Yellow,
    Many, Abnormal, 2+..."""
    t = normalize_ws(text or "").lower()
    return (t in QUALITATIVE_VALUES or t in _QUALITATIVE_PHRASES or bool(_GRADE.fullmatch(t))
            or bool(_SHADE.fullmatch(t)))


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
