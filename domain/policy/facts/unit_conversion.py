"""One analyte in two units is one quantity (pure).

Creatinine 88 umol/L and 1.0 mg/dL are the same result; potassium 5.1 mEq/L and
5.1 mmol/L too. The table is data, ``unit_conversion.json`` beside this module: every
printed unit spelling with its dimension and its factor to the dimension's base unit,
and per analyte the chemistry that crosses dimensions (molar mass: mmol/L <-> mg/dL;
valence: mEq/L <-> mmol/L). A unit is accepted for an analyte only in a dimension its
usual units (``analytes.json``) give it: a platelet count printed in
"g/L" (a French "G/L" lower-cased) is refused, not read as grams.

A conversion the table cannot make returns None, never a guess; callers then do not
compare the value (fail closed: it stays as printed, and the usual-units rule sends
an odd unit to review).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from domain.policy.facts.analytes import analyte as analyte_entry
from domain.policy.facts.analytes import normalize_unit

TABLE_PATH = Path(__file__).with_name("unit_conversion.json")


@dataclass(frozen=True)
class _Chemistry:
    molar_mass: float | None  # g/mol
    valence: int | None


@dataclass(frozen=True)
class _Table:
    version: str
    units: dict[str, tuple[str, float]]  # normalised spelling -> (dimension, factor to base)
    chemistry: dict[str, _Chemistry]


@lru_cache(maxsize=1)
def _table() -> _Table:
    data = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
    units: dict[str, tuple[str, float]] = {}
    for spelling, (dimension, factor) in data["units"].items():
        key = normalize_unit(spelling)
        if key in units and units[key] != (dimension, float(factor)):
            raise ValueError(f"unit {spelling!r} is listed twice in {TABLE_PATH.name} with different meanings")
        units[key] = (dimension, float(factor))
    chemistry: dict[str, _Chemistry] = {}
    for row in data["analytes"]:
        if row["reference"] not in data["references"]:
            raise ValueError(f"{row['analyte']!r} cites an unknown reference {row['reference']!r}")
        chemistry[row["analyte"]] = _Chemistry(row.get("molar_mass"), row.get("valence"))
    return _Table(data["version"], units, chemistry)


def table_version() -> str:
    return _table().version


def dimension(unit: str | None) -> str | None:
    """The dimension of a printed unit ("mass", "substance", "count"...), or None when
    the table does not know the spelling."""
    found = _table().units.get(normalize_unit(unit or ""))
    return found[0] if found else None


@lru_cache(maxsize=512)
def _dimensions(analyte_id: str) -> frozenset[str]:
    """The dimensions a result of this analyte is printed in: those of its usual units.
    Chemistry only converts between them; it never makes another dimension plausible
    (a potassium "in mg/dL" is a misprint to check, not 1.8 mmol/L)."""
    entry = analyte_entry(analyte_id)
    if entry is None:
        return frozenset()
    return frozenset(d for d in (dimension(u) for u in entry.units) if d)


def _to_base_substance(dim: str, value_in_base: float, chem: _Chemistry | None) -> float | None:
    """A value in its dimension's base unit as mol/L, or None without the chemistry."""
    if dim == "substance":
        return value_in_base
    if dim == "mass" and chem and chem.molar_mass:
        return value_in_base / chem.molar_mass
    if dim == "equivalents" and chem and chem.valence:
        return value_in_base / chem.valence
    return None


def _from_base_substance(dim: str, mol_per_l: float, chem: _Chemistry | None) -> float | None:
    if dim == "substance":
        return mol_per_l
    if dim == "mass" and chem and chem.molar_mass:
        return mol_per_l * chem.molar_mass
    if dim == "equivalents" and chem and chem.valence:
        return mol_per_l * chem.valence
    return None


def factor(analyte_id: str | None, from_unit: str | None, to_unit: str | None) -> float | None:
    """The number a value in ``from_unit`` is multiplied by to be in ``to_unit``, for
    this analyte; None when the table cannot say (unknown spelling, a dimension the
    analyte is never printed in, a crossing without the chemistry). The same spelling
    (after normalisation) is always 1, known to the table or not."""
    a, b = normalize_unit(from_unit or ""), normalize_unit(to_unit or "")
    if a == b:
        return 1.0
    if not analyte_id:
        return None
    table = _table()
    if a not in table.units or b not in table.units:
        return None
    (dim_a, f_a), (dim_b, f_b) = table.units[a], table.units[b]
    allowed = _dimensions(analyte_id)
    if dim_a not in allowed or dim_b not in allowed:
        return None
    if dim_a == dim_b:
        return f_a / f_b
    chem = table.chemistry.get(analyte_id)
    mol = _to_base_substance(dim_a, f_a, chem)
    if mol is None:
        return None
    out = _from_base_substance(dim_b, mol, chem)
    return None if out is None else out / f_b


def convert(value: float, analyte_id: str | None, from_unit: str | None, to_unit: str | None) -> float | None:
    f = factor(analyte_id, from_unit, to_unit)
    return None if f is None else value * f


# A printed number: digits with one decimal point or decimal comma, or thousands groups
# ("1,200"); a leading comparator ("<0.01", ">10") is kept apart.
_PRINTED = re.compile(r"^\s*(?P<cmp>[<>]=?|[\u2264\u2265])?\s*(?P<num>-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:[.,]\d+)?)\s*$")


@dataclass(frozen=True)
class PrintedNumber:
    value: float
    comparator: str  # "", "<", "<=", ">", ">="
    step: float  # the last printed digit's place (0.1 for "6.9"): how finely it was rounded


def read_number(text: str | None) -> PrintedNumber | None:
    """A result's printed number, or None when it is not one plain number (text,
    a range, a decimal separator in doubt such as "0,057"). "6,9" is a decimal comma;
    "1,200" a thousands group."""
    m = _PRINTED.match(str(text or ""))
    if not m:
        return None
    raw = m["num"]
    if "," in raw and "." not in raw:
        tail = raw.rsplit(",", 1)[1]
        if len(tail) == 3:
            if raw.lstrip("-").startswith("0"):
                return None  # "0,057": decimal or thousands? in doubt
            raw = raw.replace(",", "")
        elif raw.count(",") == 1:
            raw = raw.replace(",", ".")
        else:
            return None
    elif "," in raw:
        if not re.fullmatch(r"-?\d{1,3}(?:,\d{3})+\.\d+", raw):
            return None
        raw = raw.replace(",", "")
    decimals = len(raw.split(".", 1)[1]) if "." in raw else 0
    cmp = {"\u2264": "<=", "\u2265": ">="}.get(m["cmp"] or "", m["cmp"] or "")
    value = float(raw)
    if not math.isfinite(value):
        return None
    return PrintedNumber(value, cmp, 10.0 ** -decimals)


def same_quantity(analyte_id: str | None, value_a: str, unit_a: str, value_b: str, unit_b: str) -> bool | None:
    """Whether two printed results of one analyte state the same quantity once in one
    unit: equal within the rounding of what was printed (88 umol/L and 1.0 mg/dL of
    creatinine are; 88 umol/L and 1.2 mg/dL are not). A limit is compared with a limit of
    the same side ("<3" and "< 3" umol/L are one statement, a scan having closed the
    gap). None when it cannot be told (not numbers, a limit beside a plain number or
    one of the other side, a unit the table cannot convert)."""
    a, b = read_number(value_a), read_number(value_b)
    if a is None or b is None or a.comparator != b.comparator:
        return None
    f = factor(analyte_id, unit_a, unit_b)
    if f is None:
        return None
    tolerance = (a.step * f + b.step) / 2 + 1e-9 * max(abs(a.value * f), abs(b.value))
    return abs(a.value * f - b.value) <= tolerance


def display_number(value: float, like: str | None = None) -> str:
    """A converted value printed with sensible precision: three significant digits,
    at least as many decimals as ``like`` (a value of the target unit) prints."""
    places = 0
    if like and (n := read_number(like)) is not None and n.step < 1:
        places = round(-math.log10(n.step))
    if value != 0:
        places = max(places, 2 - math.floor(math.log10(abs(value))))
    places = max(0, min(places, 6))
    return f"{value:.{places}f}"
