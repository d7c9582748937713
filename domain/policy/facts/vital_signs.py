"""Vital signs as data (pure): the canonical signs, the labels a sheet or table prints
for them, their units and the range a real reading falls in.

A reading outside its plausible range ("pulse 1120") is a misprint or a misread, never
a chart value: the rule says why and the reading goes to review. Readers match labels
through ``sign_of_label``; promotion, answers and the overview name a sign by
``VITAL_SIGNS[kind].display``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class VitalSign:
    kind: str
    display: str  # how an answer names it
    abbreviation: str  # how a one-line summary names it ("BP 152/94 mmHg")
    labels: tuple[str, ...]  # printed labels, lower case, compared whole
    # Canonical unit -> (spellings, plausible low, plausible high). The first is the usual one.
    units: dict[str, tuple[tuple[str, ...], float, float]]


_MMHG = {"mmHg": (("mmhg", "mm hg", "mm/hg"), 0.0, 0.0)}  # limits per number, in BP_LIMITS
_PER_MIN = ("/min", "bpm", "b/min", "beats/min", "beats per minute", "per min", "/minute", "min-1", "breaths/min",
            "br/min", "rpm", "breaths per minute", "bts/min")

VITAL_SIGNS: dict[str, VitalSign] = {s.kind: s for s in (
    VitalSign("blood_pressure", "blood pressure", "BP",
              ("bp", "b/p", "b.p", "b.p.", "blood pressure", "nibp", "bp sitting", "bp seated", "bp standing",
               "bp lying", "arterial pressure", "blood pressure (sitting)", "bp (sys/dia)", "sys/dia"), _MMHG),
    VitalSign("heart_rate", "pulse", "Pulse",
              ("pulse", "hr", "heart rate", "pulse rate", "heart rate (pulse)", "apical pulse", "radial pulse",
               ),
              {"/min": (_PER_MIN, 20, 250)}),
    VitalSign("temperature", "temperature", "Temp",
              ("temp", "t", "temperature", "body temperature", "temp.", "tympanic temp", "oral temp"),
              {"°C": (("°c", "c", "deg c", "degc", "celsius", "ºc", "° c", "oc"), 30, 44),
               "°F": (("°f", "f", "deg f", "degf", "fahrenheit", "ºf", "° f", "of"), 86, 111)}),
    VitalSign("respiratory_rate", "respiratory rate", "RR",
              ("rr", "resp", "resp rate", "respiratory rate", "respirations", "resps", "resp.", "breathing rate"),
              {"/min": (_PER_MIN, 4, 60)}),
    VitalSign("spo2", "oxygen saturation", "SpO2",
              ("spo2", "sp02", "spo₂", "sao2", "o2 sat", "o2 sats", "o2 saturation", "oxygen saturation", "sats",
               "saturations", "oxygen saturations", "o2 saturations",  # a British letter's plural
               "sat", "pulse ox", "pulse oximetry", "spo2 (%)", "o2sat"),
              {"%": (("%", "percent", "pct"), 50, 100)}),
    VitalSign("weight", "weight", "Weight",
              ("wt", "weight", "body weight", "wt.", "weight (kg)", "weighs", "weighed"),  # "he weighs 128 kg"
              {"kg": (("kg", "kgs", "kilograms", "kilogram"), 0.5, 350),
               "lb": (("lb", "lbs", "pounds", "pound"), 1, 770)}),
    VitalSign("height", "height", "Height",
              ("ht", "height", "ht.", "stature"),
              {"cm": (("cm", "cms", "centimetres", "centimeters"), 30, 250),
               "m": (("m", "metres", "meters"), 0.3, 2.5),
               "in": (("in", "inch", "inches", '"'), 12, 100)}),
    VitalSign("bmi", "body mass index", "BMI",
              ("bmi", "body mass index", "b.m.i", "b.m.i."),
              {"kg/m2": (("kg/m2", "kg/m²", "kg/m^2", "kg m-2"), 8, 90)}),
)}

# The two numbers of a blood pressure, each with its own range, and the labels of a
# sheet that prints them in two columns.
BP_LIMITS = {"systolic": (50.0, 260.0), "diastolic": (20.0, 160.0)}
BP_PART_LABELS = {
    "systolic": ("systolic", "sbp", "sys", "systolic bp", "bp systolic", "systolic blood pressure", "bp sys",
                 "systolic pressure"),
    "diastolic": ("diastolic", "dbp", "dia", "diastolic bp", "bp diastolic", "diastolic blood pressure", "bp dia",
                  "diastolic pressure"),
}

_LABEL_OF: dict[str, str] = {label: s.kind for s in VITAL_SIGNS.values() for label in s.labels}
_PART_OF: dict[str, str] = {label: part for part, labels in BP_PART_LABELS.items() for label in labels}
_UNIT_OF: dict[tuple[str, str], str] = {(s.kind, spelling): unit for s in VITAL_SIGNS.values()
                                        for unit, (spellings, _, _) in s.units.items()
                                        for spelling in (*spellings, unit.lower())}


def _norm(label: str) -> str:
    t = " ".join(str(label or "").split()).lower().rstrip(":*# ")
    return t


def _bare(label: str) -> tuple[str, str]:
    """A label without a bracketed unit ("Temp (°C)" -> "temp", "°C")."""
    t = _norm(label)
    m = re.match(r"^(.*?)\s*[\(\[]\s*([^\)\]]*)\s*[\)\]]\s*$", t)
    return (m.group(1).strip(), m.group(2).strip()) if m else (t, "")


def sign_of_label(label: str) -> tuple[str, str] | None:
    """(kind, unit named in the label) for a printed label of a vital sign, or None. A
    blood pressure half comes back as ``systolic`` / ``diastolic``."""
    t = _norm(label)
    words = t.split()
    bare_unit = _bare(t)[1]
    if t in _LABEL_OF and bare_unit and (unit := canonical_unit(_LABEL_OF[t], bare_unit)):
        return _LABEL_OF[t], unit  # listed whole ("weight (kg)"), its bracketed unit still counts
    # The label itself, the label with its unit in brackets ("Temp (°C)"), or the label
    # followed by one of its units ("Temp °F", "Weight kg", "HR bpm", "SpO2 %").
    tries = [(t, ""), _bare(t)] + [(" ".join(words[:i]), " ".join(words[i:])) for i in range(len(words) - 1, 0, -1)]
    for candidate, unit in tries:
        if candidate in _LABEL_OF:
            kind = _LABEL_OF[candidate]
            if unit and canonical_unit(kind, unit) is None and (candidate, unit) != _bare(t):
                continue  # "Temp site", "BP arm": not a unit, not this sign's label
            return kind, canonical_unit(kind, unit) or unit
        if candidate in _PART_OF:
            if unit and canonical_unit("blood_pressure", unit) is None and (candidate, unit) != _bare(t):
                continue
            return _PART_OF[candidate], unit
    return None


def canonical_unit(kind: str, unit: str) -> str | None:
    """The canonical spelling of a unit of this sign ("bpm" -> "/min"), or None when the
    unit is not one of its units."""
    u = " ".join(str(unit or "").split()).lower()
    if kind in ("systolic", "diastolic"):
        kind = "blood_pressure"
    return _UNIT_OF.get((kind, u))


def only_unit(kind: str) -> str | None:
    """The unit a sign is always measured in (a pulse in /min), or None when it has several."""
    units = VITAL_SIGNS[kind].units
    return next(iter(units)) if len(units) == 1 else None


def unit_from_magnitude(kind: str, number: float) -> str | None:
    """The one unit whose plausible range holds the number (a temperature of 37.2 is in
    °C, 99.1 in °F), or None when none or several do."""
    fits = [u for u, (_, low, high) in VITAL_SIGNS[kind].units.items() if low <= number <= high]
    return fits[0] if len(fits) == 1 else None


def implausible(kind: str, value: str, unit: str, systolic: str | None = None,
                diastolic: str | None = None) -> str | None:
    """Why a reading cannot be a real measurement of this sign, or None."""
    sign = VITAL_SIGNS[kind]
    if kind == "blood_pressure":
        numbers = {"systolic": systolic, "diastolic": diastolic}
        for part, text in numbers.items():
            number = _number(text)
            low, high = BP_LIMITS[part]
            if number is None:
                return f"{sign.display} {value!r}: the {part} number could not be read"
            if not low <= number <= high:
                return (f"{sign.display} {value}: a {part} pressure of {text} mmHg is outside the plausible "
                        f"range {low:g}-{high:g}")
        if _number(systolic) <= _number(diastolic):
            return f"{sign.display} {value}: the systolic number is not above the diastolic"
        return None
    number = _number(value)
    if number is None:
        return f"{sign.display} {value!r} is not a number"
    if unit not in sign.units:
        return f"{sign.display} {value}: unit {unit!r} is not a unit of {sign.display}"
    _, low, high = sign.units[unit]
    if not low <= number <= high:
        return f"{sign.display} {value} {unit} is outside the plausible range {low:g}-{high:g} {unit}"
    return None


def _number(text: str | None) -> float | None:
    try:
        return float(str(text).strip())
    except (TypeError, ValueError):
        return None


def summary(kind: str, value: str, unit: str) -> str:
    """One line as a chart or an answer shows it: "BP 152/94 mmHg", "Pulse 112 /min"."""
    sign = VITAL_SIGNS.get(kind)
    name = sign.abbreviation if sign else kind
    sep = "" if unit in ("%", "°C", "°F") else " "
    return f"{name} {value}" + (f"{sep}{unit}" if unit else "")


def vital_text(value: dict) -> str:
    """A reading's one-line text: "BP 152/94 mmHg on 2025-11-02 08:40"."""
    when = value.get("measured_at")
    return summary(str(value.get("kind") or ""), str(value.get("value") or ""), str(value.get("unit") or "")) + (
        f" on {when}" if when else "")
