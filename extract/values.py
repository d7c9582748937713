"""Small pure helpers for values as documents print them: dates, numbers, ranges, flags.

Shared by the HL7, DOCX and XLSX extractors. Nothing here touches I/O or the project's
models beyond the ``AbnormalFlag`` literal's spelling; every function is total (returns
``None`` instead of raising on text it does not understand) so a strange cell or field
can never crash an extraction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import Iterable

from extract.text_rules import RangeBounds

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
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for name in names
}

# Years outside this window are treated as typing errors rather than dates.
MIN_YEAR = 1850
MAX_YEAR = 2100


@dataclass(frozen=True, slots=True)
class ParsedDate:
    """A date as read from text.

    ``iso`` is set only for a complete, valid calendar day. ``precision`` says how much
    of a date the text held ("day", "month" or "year"); ``ambiguous`` is True when the
    day and month could be swapped (03/04/2020) and the US reading (month first) was used.
    """

    iso: str | None
    precision: str
    ambiguous: bool = False


def _valid(y: int, m: int, d: int) -> str | None:
    if not (MIN_YEAR <= y <= MAX_YEAR):
        return None
    try:
        return date(y, m, d).isoformat()
    except ValueError:
        return None


def _year(text: str) -> tuple[int, bool]:
    """Four-digit years pass through; two-digit years pivot at 30 and count as ambiguous."""
    y = int(text)
    if len(text) == 2:
        return (2000 + y if y <= 30 else 1900 + y), True
    return y, False


def parse_date(value: object) -> ParsedDate | None:
    """Read a date from a datetime/date object or from text in the usual clinical shapes.

    Handles ISO (2020-01-31, 2020/01/31, 20200131, with or without a time), US and
    day-first numeric dates (01/31/2020, 1-31-2020, 31/01/2020, 31.01.2020), month names
    (January 31, 2020 / Jan 31 2020 / 31 Jan 2020 / 31-Jan-2020) and partial dates
    (03/2024, March 2024, 2024-03, 2024), which come back without ``iso``.
    """
    if isinstance(value, datetime):
        return ParsedDate(value.date().isoformat(), "day")
    if isinstance(value, date):
        return ParsedDate(value.isoformat(), "day")
    if not isinstance(value, str):
        return None
    text = normalize_ws(value).rstrip(".,;")
    if not text:
        return None

    # ISO-like, optionally followed by a time.
    m = re.fullmatch(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[ T].*)?", text)
    if m:
        iso = _valid(int(m[1]), int(m[2]), int(m[3]))
        return ParsedDate(iso, "day") if iso else None
    m = re.fullmatch(r"(\d{4})(\d{2})(\d{2})(?:\d{0,6}(?:\.\d+)?)?(?:[+-]\d{4})?", text)
    if m:
        iso = _valid(int(m[1]), int(m[2]), int(m[3]))
        return ParsedDate(iso, "day") if iso else None

    # Numeric with separators: M/D/Y or D/M/Y.
    m = re.fullmatch(r"(\d{1,2})[-/.](\d{1,2})[-/.](\d{4}|\d{2})(?:[ T].*)?", text)
    if m:
        a, b = int(m[1]), int(m[2])
        y, two_digit = _year(m[3])
        if a > 12 and b <= 12:
            iso = _valid(y, b, a)
            return ParsedDate(iso, "day", two_digit) if iso else None
        iso = _valid(y, a, b)
        if iso is None:
            return None
        ambiguous = two_digit or (a <= 12 and b <= 12 and a != b)
        return ParsedDate(iso, "day", ambiguous)

    # Month names.
    m = re.fullmatch(r"([A-Za-z]+)\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})(?: .*)?", text)
    if m and m[1].lower() in _MONTHS:
        iso = _valid(int(m[3]), _MONTHS[m[1].lower()], int(m[2]))
        return ParsedDate(iso, "day") if iso else None
    m = re.fullmatch(r"(\d{1,2})(?:st|nd|rd|th)?[ -]([A-Za-z]+)\.?[ ,-]*(\d{4}|\d{2})(?: .*)?", text)
    if m and m[2].lower() in _MONTHS:
        y, two_digit = _year(m[3])
        iso = _valid(y, _MONTHS[m[2].lower()], int(m[1]))
        return ParsedDate(iso, "day", two_digit) if iso else None

    # Partial dates: month + year, or a bare year.
    m = re.fullmatch(r"(\d{1,2})[-/](\d{4})", text) or re.fullmatch(r"(\d{4})[-/](\d{1,2})", text)
    if m:
        nums = sorted((m[1], m[2]), key=len)
        if 1 <= int(nums[0]) <= 12 and MIN_YEAR <= int(nums[1]) <= MAX_YEAR:
            return ParsedDate(None, "month")
        return None
    m = re.fullmatch(r"([A-Za-z]+)\.?,? (\d{4})", text)
    if m and m[1].lower() in _MONTHS and MIN_YEAR <= int(m[2]) <= MAX_YEAR:
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

_NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+"


def parse_number(text: str) -> float | None:
    """A plain number ("5.8", "105,600", "-2"); None for comparators, words or ranges."""
    t = normalize_ws(str(text))
    if re.fullmatch(_NUMBER, t):
        return float(t.replace(",", ""))
    return None


def is_numeric_result(text: str) -> bool:
    """A number, optionally with a comparator: 5.8, <0.5, >=32, > 11.0."""
    return bool(re.fullmatch(r"(?:[<>]=?|=)?\s*(?:" + _NUMBER + ")", normalize_ws(text)))


_UNIT_TOKEN = r"[A-Za-z%\u00b5\u03bc][\w/%\u00b5\u03bc^*.\[\]{}-]*(?:/[\w%\u00b5\u03bc^*.{}-]+)*"


def split_value_unit(text: str) -> tuple[str, str]:
    """Split "7.9 %" or "182 mg/dL" into value and unit; other text comes back unchanged."""
    t = normalize_ws(text)
    m = re.fullmatch(r"((?:[<>]=?)?\s*(?:" + _NUMBER + r"))\s*(" + _UNIT_TOKEN + r")", t)
    if m:
        return m[1].replace(" ", ""), m[2]
    return t, ""


# ---------------------------------------------------------------------------- ranges


# One numeric-range type for every format (the PDF rules define it).
RefRange = RangeBounds


def parse_range(text: str) -> RefRange | None:
    """Read a numeric reference range: "4.3 to 6.2", "13-18", "70_105", "<30",
    "<= 5.6", ">40", "<9 mcg/dL: acceptable ...". Units or words after the numbers are
    ignored. Returns None when no numeric range can be read.
    """
    t = normalize_ws(text or "")
    if not t:
        return None
    m = re.match(r"(" + _NUMBER + r")\s*(?:-|\u2013|\u2014|to|_|\.\.)\s*(" + _NUMBER + r")(?![\d.])", t)
    if m:
        lo, hi = float(m[1].replace(",", "")), float(m[2].replace(",", ""))
        if lo <= hi:
            return RefRange(lo, hi)
        return None
    m = re.match(r"(<=|=<|\u2264|<|>=|=>|\u2265|>)\s*(" + _NUMBER + r")(?![\d.])", t)
    if m:
        op, n = m[1], float(m[2].replace(",", ""))
        if op in ("<", "<=", "=<", "\u2264"):
            return RefRange(None, n, high_inclusive=op != "<")
        return RefRange(n, None, low_inclusive=op != ">")
    return None


# ---------------------------------------------------------------------------- flags

# HL7 table 0078 and what people type in spreadsheets and letters.
_FLAG_MAP: dict[str, str] = {
    "N": "normal", "NORMAL": "normal", "NEG": "normal", "NEGATIVE": "normal",
    "NR": "normal", "ND": "normal", "NOT DETECTED": "normal", "S": "normal",
    "WNL": "normal", "IN RANGE": "normal",
    "H": "high", "HI": "high", "HIGH": "high", "HU": "high", ">": "high", "\u2191": "high",
    "L": "low", "LO": "low", "LOW": "low", "LU": "low", "<": "low", "\u2193": "low",
    "HH": "critical_high", "H*": "critical_high", "CRITICAL HIGH": "critical_high",
    "CH": "critical_high", "PANIC HIGH": "critical_high", "H!": "critical_high",
    "LL": "critical_low", "L*": "critical_low", "CRITICAL LOW": "critical_low",
    "CL": "critical_low", "PANIC LOW": "critical_low", "L!": "critical_low",
    "A": "abnormal", "AA": "abnormal", "ABN": "abnormal", "ABNORMAL": "abnormal",
    "POS": "abnormal", "POSITIVE": "abnormal", "DET": "abnormal", "DETECTED": "abnormal",
    "RR": "abnormal", "R": "abnormal", "I": "abnormal", "MS": "abnormal", "W": "abnormal",
    "TOX": "abnormal", "*": "abnormal", "!": "abnormal", "OUT OF RANGE": "abnormal",
}

_FLAG_RANK = {
    "unknown": 0, "normal": 1, "abnormal": 2, "high": 3, "low": 3,
    "critical_high": 4, "critical_low": 4,
}


def map_flag(raw: str) -> str | None:
    """One printed flag to the AbnormalFlag vocabulary; None when it is not recognised."""
    key = normalize_ws(raw or "").upper().rstrip(".")
    if not key:
        return None
    return _FLAG_MAP.get(key)


def combine_flags(raws: Iterable[str]) -> str:
    """Several printed flags ("H~POS") to one: the most severe wins; high and low
    together make "abnormal"; nothing recognised gives "unknown"."""
    mapped = [f for f in (map_flag(r) for r in raws) if f]
    if not mapped:
        return "unknown"
    if {"high", "low"} <= set(mapped) or {"critical_high", "critical_low"} <= set(mapped):
        return "abnormal"
    return max(mapped, key=lambda f: _FLAG_RANK[f])


def derive_flag(value: str, ref_range: str) -> str | None:
    """Compare a plain numeric value with a numeric range: "high", "low" or "normal".
    None when either side is not a plain number/range (never guess from comparators)."""
    v = parse_number(value)
    r = parse_range(ref_range)
    if v is None and parse_number(ref_range) is None and not re.search(r"\d", value or ""):
        # Qualitative: "Negative" against a printed normal of "Negative".
        a, b = normalize_ws(value or "").lower(), normalize_ws(ref_range or "").lower()
        return "normal" if a and a == b else None
    if v is None or r is None:
        return None
    if r.low is not None and (v < r.low or (v == r.low and not r.low_inclusive)):
        return "low"
    if r.high is not None and (v > r.high or (v == r.high and not r.high_inclusive)):
        return "high"
    return "normal"


def flags_disagree(printed: str, derived: str | None) -> bool:
    """A printed normal against a derived high/low (or the reverse) is worth a look.
    Critical flags agree with the matching direction."""
    if derived is None or printed in ("unknown", "abnormal"):
        return False
    direction = {"critical_high": "high", "critical_low": "low"}.get(printed, printed)
    return direction != derived


# ---------------------------------------------------------------------------- wording

_UNCERTAIN = re.compile(
    r"(\?|\bpossibl[ey]\b|\bprobabl[ey]\b|\bquery\b|\bsuspected\b|\bunsure\b|\bunclear\b"
    r"|\buncertain\b|\bmaybe\b|\bquestionable\b|\b(?:r/o|rule out)\b|\bnot sure\b"
    r"|\bunconfirmed\b|\bto be confirmed\b|\btbc\b)",
    re.IGNORECASE,
)


def uncertainty_cue(text: str) -> str | None:
    """The first hedge in a phrase ("? sulfa", "possible latex allergy"), or None."""
    m = _UNCERTAIN.search(text or "")
    return m.group(0) if m else None


def clamp_confidence(value: float) -> float:
    """Keep a computed confidence inside (0, 1) with two decimals."""
    return round(min(0.99, max(0.05, value)), 2)


def confidence(base: float, factors: Iterable[float]) -> float:
    """A base confidence multiplied by penalty factors (each in 0..1)."""
    c = base
    for f in factors:
        c *= f
    return clamp_confidence(c)


# ---------------------------------------------------------------------------- plausibility

# Analytes whose unit is unambiguous enough that a different one is worth a second look.
_EXPECTED_UNITS: list[tuple[re.Pattern, tuple[str, ...]]] = [
    (
        re.compile(r"\b(?:hb\s*a1c|hba1c|a1c|glycated h(?:a)?emoglobin|glycoh(?:a)?emoglobin)\b", re.IGNORECASE),
        ("%", "mmol/mol"),
    ),
]


def implausible_unit(test_name: str, unit: str) -> str | None:
    """A reason when a printed unit does not fit a well-known analyte (HbA1c in mg/dL)."""
    if not unit or not test_name:
        return None
    for pattern, expected in _EXPECTED_UNITS:
        if pattern.search(test_name) and not any(u.lower() in unit.lower() for u in expected):
            return (f"unit {unit!r} is unusual for {normalize_ws(test_name)} "
                    f"(expected {' or '.join(expected)})")
    return None


# ---------------------------------------------------------------------------- free-text lists

def split_items(text: str, *, commas: bool = True) -> list[str]:
    """Split a list written in prose ("Metformin 500 mg BD; Lisinopril 10 mg daily") into
    items: on new lines, semicolons, bullets and (optionally) commas outside brackets.
    Items are returned stripped of bullets and trailing punctuation, as substrings."""
    items: list[str] = []
    depth = 0
    buf: list[str] = []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        if ch in "\n;\u2022" or (commas and ch == "," and depth == 0):
            items.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    items.append("".join(buf))
    out = []
    for item in items:
        item = re.sub(r"^\s*(?:[-*\u2013\u2022\u25aa\u25cf\u00b7]|\d+[.)])\s+", "", item).strip().rstrip(".;,")
        if item:
            out.append(item)
    return out


_DOSE = re.compile(
    r"(\d+(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?)?\s*"
    r"(?:mg/ml|mg/kg|mg|mcg|\u00b5g|\u03bcg|micrograms?|g|ml|mL|units?|iu|IU|%|puffs?|tablets?|tabs?"
    r"|capsules?|caps?|drops?|mmol|meq|sprays?|patch(?:es)?)\b)",
    re.IGNORECASE,
)
_FREQUENCY = re.compile(
    r"\b(once daily|twice daily|three times (?:a day|daily)|four times (?:a day|daily)|once a day|twice a day"
    r"|every other day|alternate days|every \d+(?:-\d+)? ?(?:hours|hrs|h)\b|q\d+h|once weekly|weekly|monthly"
    r"|daily|nightly|at night|at bedtime|in the morning|with meals|as needed|as required|when required"
    r"|od|bd|bid|tds|tid|qds|qid|qhs|qam|qpm|nocte|mane|prn|stat)\b",
    re.IGNORECASE,
)
_ROUTE = re.compile(
    r"\b(oral(?:ly)?|by mouth|po|subcutaneous(?:ly)?|subcut|sc|intramuscular|im|intravenous|iv|inhaled|inh"
    r"|topical(?:ly)?|sublingual|sl|pr|nasal|transdermal|ophthalmic|eye drops)\b",
    re.IGNORECASE,
)


def parse_medication(text: str) -> dict:
    """Name, dose, frequency and route from one medication line, each as printed
    ("Metformin 500 mg twice daily" -> name "Metformin", dose "500 mg",
    frequency "twice daily"); missing parts are None."""
    t = normalize_ws(text)
    dose = _DOSE.search(t)
    freq = _FREQUENCY.search(t)
    route = _ROUTE.search(t)
    cut = min([m.start() for m in (dose, freq, route) if m] or [len(t)])
    name = t[:cut].strip(" ,-:(") or t
    return {
        "name": name,
        "dose": dose.group(1) if dose else None,
        "frequency": freq.group(1) if freq else None,
        "route": route.group(1) if route else None,
    }


_SEVERITY_WORDS = re.compile(r"\b(mild|moderate|severe|life[- ]threatening|anaphyla\w*)\b", re.IGNORECASE)
_NO_KNOWN = re.compile(r"^\s*(?:nkda|nka|nkfa|no known (?:drug |food )?allerg(?:y|ies)|none known|nil known)\b", re.IGNORECASE)


def parse_allergy(text: str) -> dict:
    """Substance, reaction and severity from "Penicillin (rash)", "Codeine - nausea",
    "Latex: hives, severe". "NKDA"/"No known allergies" sets ``no_known_allergies``."""
    t = normalize_ws(text)
    if _NO_KNOWN.match(t):
        return {"substance": None, "reaction": None, "severity": None, "no_known_allergies": True}
    m = re.match(r"(.+?)\s*\((.+)\)\s*$", t) or re.match(r"(.+?)\s*(?:\s[-\u2013\u2014]\s|:|\u2192|->)\s*(.+)$", t)
    substance, reaction = (m.group(1).strip(), m.group(2).strip()) if m else (t, None)
    sev = _SEVERITY_WORDS.search(reaction or "")
    severity = None
    if sev:
        word = sev.group(1).lower()
        severity = "severe" if word.startswith(("anaphyla", "life")) else word
    return {"substance": substance, "reaction": reaction, "severity": severity, "no_known_allergies": False}


_ICD10 = re.compile(r"\b([A-TV-Z][0-9][0-9AB](?:\.[0-9A-Z]{1,4})?)\b")
_ICD9 = re.compile(r"\b(\d{3}\.\d{1,2}|V\d{2}(?:\.\d{1,2})?)\b")


def parse_problem(text: str) -> dict:
    """Description plus an ICD code when one is printed ("Hypertension (I10)")."""
    t = normalize_ws(text)
    code = system = None
    m = re.search(r"[\[(]\s*(?:ICD-?10(?:-CM)?:?\s*)?([A-TV-Z][0-9][0-9AB](?:\.[0-9A-Z]{1,4})?)\s*[\])]", t) or \
        re.search(r"(?:ICD-?10(?:-CM)?:?\s*)([A-TV-Z][0-9][0-9AB](?:\.[0-9A-Z]{1,4})?)\b", t)
    if m:
        code, system = m.group(1), "ICD-10"
        description = (t[: m.start()] + t[m.end():]).strip(" -,:;")
    else:
        description = t
    return {"code": code, "description": description or t, "coding_system": system}
