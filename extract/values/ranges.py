"""How printed reference ranges and critical (panic) limits are read (pure).

A range as a lab prints it ("3.4 - 10.8", "<5.7", "65-99 mg/dL", "Negative"), its
bounds, the critical limits printed beside or inside it, whether a value lies past
them, and whether a range or its limits cannot be right (a misread). The flag rule
(``extract.values.flags``) compares results with what is read here; numbers and units are read
by ``extract.values.numbers``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.policy.facts.analytes import normalize_unit
from extract.values.numbers import (
    COMPARATOR, LOWER_OPS, NUMBER, UPPER_OPS, RangeBounds, comparator_bound, is_qualitative, looks_like_unit,
    normalize_ws, to_float, value_bounds,
)

_RANGE_NUMBERS = re.compile(rf"({NUMBER})\s*(?:-|\u2013|\u2014|to|_|\.\.)\s*({NUMBER})(?![\d.])", re.I)
_RANGE_BOUND = re.compile(rf"({COMPARATOR})\s*({NUMBER})(?![\d.])")


# "> OR = 60", ">OR=60", "< or = 5.6": how some US labs print ">=" and "<=".
_SPELLED_COMPARATOR = re.compile(r"([<>])\s*or\s*=\s*", re.I)
# "<5.7 % of total Hgb": a percentage of what the value is a share of, said after the unit.
_SHARE_OF = re.compile(r"(?<=%)\s+of\s+total(?:\s+[A-Za-z0-9]+)?$", re.I)


def _plain_comparators(text: str) -> str:
    return _SPELLED_COMPARATOR.sub(r"\1=", text)


def parse_range(text: str) -> RangeBounds | None:
    """Bounds of a printed reference range: "4.3 to 6.2", "13-18", "70 - 99", "70_105",
    "<30", "<= 5.6", ">40", "\u2264 5", "<9 mcg/dL: acceptable ...". Units or words after
    the numbers are ignored; a qualitative range ("Negative") has no bounds (None)."""
    t = _plain_comparators(normalize_ws(text or ""))
    if t[:1] in "([" and t[-1:] in ")]":
        t = t[1:-1].strip()
    if not t:
        return None
    m = _RANGE_NUMBERS.match(t)
    if m:
        lo, hi = to_float(m[1]), to_float(m[2])
        return RangeBounds(lo, hi) if lo <= hi else None
    m = _RANGE_BOUND.match(t)
    return comparator_bound(m[1], m[2]) if m else None


def printed_as_range(text: str) -> bool:
    """A cell that prints two numbers as a span ("10-20", "3 - 5"): a count a microscope
    gives per field, or a reference range standing where a value should be."""
    t = normalize_ws(text or "")
    m = _RANGE_NUMBERS.fullmatch(t)
    return bool(m) and to_float(m[1]) <= to_float(m[2])


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
    "Ref: <100" -> ("<100", ""); "Negative" -> ("Negative", ""); "> OR = 60 mL/min/1.73m2"
    -> (">=60", "mL/min/1.73m2"); "<5.7 % of total Hgb" -> ("<5.7", "%"). None for
    anything else.

    Critical (panic) limits printed in the cell stay with the range, wherever the unit
    is: "3.5-5.0 (critical <2.5 or >6.5) mmol/L" and "3.5-5.0 mmol/L (critical <2.5 or
    >6.5)" -> ("3.5-5.0 (critical <2.5 or >6.5)", "mmol/L"); the flag rules read the
    limits from the range (``labelled_critical_limits``).
    """
    t = _SHARE_OF.sub("", _plain_comparators(_RANGE_PREFIX.sub("", normalize_ws(text or ""))))
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
        n = to_float(num)
        if op in UPPER_OPS:
            low, low_inc = n, UPPER_OPS[op]
        else:
            high, high_inc = n, LOWER_OPS[op]
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
    if (m := _RANGE_NUMBERS.match(t)) and to_float(m[1]) > to_float(m[2]):
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


# --------------------------------------------------------------------------- ranges OCR lost a mark of

_OCR_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
# Edge debris OCR leaves on a range cell: a bracket half read, a trailing comma.
_OCR_RANGE_EDGES = re.compile(r"^[\s(\[{'\",;:]+|[\s)\]}'\",;:.]+$")


def _decimals(number: str) -> int:
    return len(number.split(".")[1]) if "." in number else 0


def _plausible_bounds(lo: str, hi: str) -> bool:
    """Two numbers that can be a printed interval's ends: rising, written to the same
    decimals (labs print "3.4-10.8", "0.57-1.00"), and whole numbers of near size
    ("134-144", "6-24", never "13-4144")."""
    if not (_OCR_NUMBER.match(lo) and _OCR_NUMBER.match(hi)) or float(lo) >= float(hi):
        return False
    if _decimals(lo) != _decimals(hi):
        return False
    whole_lo, whole_hi = len(lo.split(".")[0]), len(hi.split(".")[0])
    return whole_hi - whole_lo in (0, 1) and not (whole_lo > 1 and lo.startswith("0"))


def _with_lost_point(lo: str, hi: str) -> tuple[str, str] | None:
    """Ends that fall ("377-5.28", "3.4-108") because OCR lost one decimal point: put it
    back where the other end's decimals say ("3.77-5.28", "3.4-10.8"), or None."""
    for fix_lo in (True, False):
        plain, other = (lo, hi) if fix_lo else (hi, lo)
        k = _decimals(other)
        if "." in plain or not k or len(plain) <= k:
            continue
        pointed = f"{plain[:-k]}.{plain[-k:]}"
        ends = (pointed, hi) if fix_lo else (lo, pointed)
        if _plausible_bounds(*ends):
            return ends
    return None


def _ocr_marks(t: str) -> str:
    """Marks OCR misreads inside a range: a gap before a decimal point ("3.5-5 .2",
    "<5 .7"), "=" or "~" for the dash ("0=149"), and a decimal comma beside decimal
    points ("3,5-5.2": one of the two marks is misread, and the points agree)."""
    t = re.sub(r"(?<=\d)\s+\.(?=\d)|(?<=\d)\.\s+(?=\d)", ".", t)
    t = re.sub(r"(?<=\d)\s*[=~]\s*(?=\d)", "-", t)
    if re.search(r"\d\.\d", t) and re.search(r"\d,\d", t):
        t = re.sub(r"(?<=\d),(?=\d)", ".", t)
    return t


_SIMPLE_RANGE = re.compile(r"^(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)$")


def repair_ocr_range(text: str) -> str | None:
    """The interval an OCR'd range cell printed when OCR lost or misread its dash or a
    decimal point, or None when the cell allows no single reading: "134144" ->
    "134-144", "3.410.8" -> "3.4-10.8", "0.571.00" -> "0.57-1.00", "3.5.5.2" ->
    "3.5-5.2", "6 24" -> "6-24", "(0-149" -> "0-149", "6599 mg/dL" -> "65-99 mg/dL",
    "377-5.28" -> "3.77-5.28", "11115.9" -> "11.1-15.9". A cell that reads two ways
    ("34108": "34-108" or "3.4-10.8"?) or none stays unread; callers send any repair to
    a person."""
    t = _OCR_RANGE_EDGES.sub("", normalize_ws(text or ""))
    if not t:
        return None
    t = _ocr_marks(t)
    simple = _SIMPLE_RANGE.match(t)
    if simple and float(simple[1]) >= float(simple[2]):
        ends = _with_lost_point(simple[1], simple[2])  # read as a range, but it falls
        return "-".join(ends) if ends else None
    if parse_reference_range(text) is not None and t == _OCR_RANGE_EDGES.sub("", normalize_ws(text)):
        return None
    if parse_reference_range(t) is not None:
        return t  # a bracket or comma too many, a misread mark
    parts = t.split()
    if len(parts) > 1 and looks_like_unit(parts[-1]):
        # The unit printed in the cell after the range ("134144 mmol/L").
        inner = repair_ocr_range(" ".join(parts[:-1]))
        return f"{inner} {parts[-1]}" if inner else None
    if len(parts) == 2:
        ends = tuple(parts) if _plausible_bounds(*parts) else _with_lost_point(*parts)
        return "-".join(ends) if ends else None
    if len(parts) != 1 or not re.fullmatch(r"[\d.]+", t):
        return None
    readings = set()
    for i in range(1, len(t)):
        for lo, hi in ((t[:i], t[i:]), (t[:i], t[i + 1:]) if t[i] == "." else (None, None)):
            if lo is None or not hi:
                continue  # the dash lost, or read as a point
            ends = (lo, hi) if _plausible_bounds(lo, hi) else _with_lost_point(lo, hi)
            if ends:
                readings.add("-".join(ends))
    return readings.pop() if len(readings) == 1 else None
