"""How a printed vital-sign reading is read (pure, any format): "152/94", "152/94 mmHg",
"112 bpm", "37.8 °C", "98%", "82 kg", a number under a header that names the unit.

What the signs are, their units and plausible ranges is policy
(``domain.policy.facts.vital_signs``); this reads the printed text and says what it
could not read, so the caller can send the reading to review instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.policy.facts.vital_signs import VITAL_SIGNS, canonical_unit, only_unit, unit_from_magnitude
from extract.values.numbers import normalize_ws

_BP = re.compile(r"^(\d{2,3})\s*/\s*(\d{2,3})\s*([A-Za-z/ ]*?)\s*$")
_NUMBER_UNIT = re.compile(r"^([<>]?\s*\d+(?:[.,]\d+)?)\s*(.*?)\s*$")


# The headings of a column saying when readings were taken, in a workbook's or a letter's
# table of vital signs ("Date", "Visit date", "Month").
DATE_COLUMN = ("date", "date/time", "datetime", "date time", "date and time", "taken", "date taken", "time taken",
               "measured", "date measured", "when", "obs date", "observation date", "charted", "recorded at",
               "recorded on", "date recorded", "visit date", "visit", "recorded", "time recorded",
               "date/time recorded", "date & time", "timestamp", "measured at", "taken at", "charted at", "seen",
               "date seen", "clinic date", "review date", "month", "week", "week of")


def names_reading_date(heading: str) -> bool:
    """Whether a column heading says when a table's readings were taken ("Date", "Visit date:")."""
    return normalize_ws(heading).lower().rstrip(":#*. ") in DATE_COLUMN


@dataclass(slots=True)
class VitalReading:
    kind: str
    value: str
    unit: str = ""
    systolic: str | None = None
    diastolic: str | None = None
    # Why the reading cannot be trusted as read (a unit guessed, text that is no number).
    doubts: list[str] | None = None


def read_vital(kind: str, text: str, header_unit: str = "") -> VitalReading | None:
    """The reading of ``kind`` printed as ``text`` (``header_unit``: a unit its column
    or row names), or None when the text holds no reading at all."""
    text = normalize_ws(text)
    if not text:
        return None
    doubts: list[str] = []
    if kind == "blood_pressure":
        m = _BP.match(text)
        if not m:
            return None
        unit = _unit(kind, m.group(3) or header_unit, doubts) or "mmHg"
        return VitalReading(kind, f"{m.group(1)}/{m.group(2)}", unit, m.group(1), m.group(2), doubts)
    m = _NUMBER_UNIT.match(text.replace("º", "°"))
    if not m:
        return None
    value = m.group(1).replace(" ", "")
    unit = _unit(kind, m.group(2) or header_unit, doubts)
    if not unit:
        unit = only_unit(kind) or ""
    if not unit:
        number = _float(value)
        guess = unit_from_magnitude(kind, number) if number is not None else None
        if guess:
            unit = guess
            doubts.append(f"no unit printed for {VITAL_SIGNS[kind].display} {value} (read as {guess} by its size)")
        else:
            doubts.append(f"no unit printed for {VITAL_SIGNS[kind].display} {value}")
    return VitalReading(kind, value, unit, doubts=doubts)


def read_bp_parts(systolic_text: str, diastolic_text: str) -> VitalReading | None:
    """A blood pressure printed in two columns or rows (Systolic | Diastolic)."""
    s, d = (_NUMBER_UNIT.match(normalize_ws(t)) for t in (systolic_text, diastolic_text))
    if not s or not d:
        return None
    sys_value, dia_value = s.group(1).replace(" ", ""), d.group(1).replace(" ", "")
    doubts: list[str] = []
    for extra in (s.group(2), d.group(2)):
        _unit("blood_pressure", extra, doubts)
    return VitalReading("blood_pressure", f"{sys_value}/{dia_value}", "mmHg", sys_value, dia_value, doubts)


def _unit(kind: str, printed: str, doubts: list[str]) -> str:
    """The canonical unit of what is printed; a unit that is none of the sign's is
    kept as printed and said (the plausibility rule then holds the reading)."""
    printed = normalize_ws(printed).strip("() []")
    if not printed:
        return ""
    found = canonical_unit(kind, printed)
    if found:
        return found
    doubts.append(f"unit {printed!r} is not a unit of {VITAL_SIGNS.get(kind, VITAL_SIGNS['blood_pressure']).display}")
    return printed


def _float(text: str) -> float | None:
    try:
        return float(text.lstrip("<>"))
    except ValueError:
        return None
