"""Chart values as FHIR R4 data types: printed numbers and units as UCUM Quantities,
printed reference ranges, flags as interpretations, dates and instants. The code tables
are data (``fhir_codes.json`` beside this module)."""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timezone
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path
from typing import Any

from domain.policy.facts.analytes import normalize_unit

CODES_PATH = Path(__file__).with_name("fhir_codes.json")

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
_COMPARATOR = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "\u2264": "<=", "\u2265": ">="}
_QUANTITY = re.compile(rf"^(?P<op><=|>=|<|>|\u2264|\u2265)?\s*(?P<num>{_NUMBER})$")
_RANGE = re.compile(rf"^(?P<low>{_NUMBER})\s*(?:-|\u2013|\u2014|to)\s*(?P<high>{_NUMBER})$", re.I)
_BOUND = re.compile(rf"^(?P<op><=|>=|<|>|\u2264|\u2265)\s*(?P<num>{_NUMBER})$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@lru_cache(maxsize=1)
def codes() -> dict[str, Any]:
    return json.loads(CODES_PATH.read_text(encoding="utf-8"))


def system(name: str) -> str:
    return codes()["systems"][name]


def coding(system_name: str, code: str, display: str | None = None) -> dict[str, Any]:
    out = {"system": system(system_name), "code": code}
    return out | {"display": display} if display else out


def ucum_code(unit: str | None) -> str | None:
    """The UCUM code of a printed unit, or None when the table does not know it."""
    return codes()["ucum"].get(normalize_unit(unit or "")) if unit else None


def _decimal(text: str) -> Decimal | None:
    try:
        number = Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def quantity(value: str | None, unit: str | None) -> dict[str, Any] | None:
    """A printed value ("7.9", "<0.01", "1,250") with its unit as a Quantity; None when
    the value is not a number (a text result stays a string). A unit the UCUM table does
    not know is kept as printed, without a code: a guessed code would be worse."""
    m = _QUANTITY.match((value or "").strip().replace(",", ""))
    if not m or (number := _decimal(m["num"])) is None:
        return None
    out: dict[str, Any] = {"value": number}
    if m["op"]:
        out["comparator"] = _COMPARATOR[m["op"]]
    if unit:
        out["unit"] = unit
        if code := ucum_code(unit):
            out |= {"system": system("ucum"), "code": code}
    return out


def _bound(number: str, unit: str | None) -> dict[str, Any] | None:
    value = _decimal(number)
    if value is None:
        return None
    out: dict[str, Any] = {"value": value}
    if unit:
        out["unit"] = unit
        if code := ucum_code(unit):
            out |= {"system": system("ucum"), "code": code}
    return out


def reference_range(printed: str | None, unit: str | None) -> list[dict[str, Any]]:
    """The printed range as a referenceRange: low and high where it is numeric ("3.5-5.0",
    "<100" has a high only, ">39" a low only), always its text as printed. A strict bound
    ("<100") is written as the limit itself: FHIR ranges are inclusive, and the text keeps
    the printed form."""
    text = (printed or "").strip()
    if not text:
        return []
    out: dict[str, Any] = {"text": text}
    if m := _RANGE.match(text):
        low, high = _bound(m["low"], unit), _bound(m["high"], unit)
        if low and high:
            out |= {"low": low, "high": high}
    elif m := _BOUND.match(text):
        if (bound := _bound(m["num"], unit)) is not None:
            out["high" if m["op"] in ("<", "<=", "\u2264") else "low"] = bound
    return [out]


def interpretation(flag: str | None) -> dict[str, Any] | None:
    """The chart's abnormal flag as a v3 ObservationInterpretation (None for unknown)."""
    found = codes()["interpretation"].get(flag or "")
    if not found:
        return None
    return {"coding": [coding("interpretation", found[0], found[1])], "text": flag}


def printed_interpretation(flag: str) -> dict[str, Any]:
    """An HL7 v2 OBX-8 flag as printed: its v3 interpretation code where v3 has it, else
    the v2 table 0078 code."""
    name = "interpretation" if flag in codes()["v3_interpretation_codes"] else "v2_0078"
    return {"coding": [coding(name, flag)], "text": flag}


def fhir_date(text: str | None) -> str | None:
    """A chart date (YYYY-MM-DD, or YYYY-MM-DD HH:MM) as a FHIR date. A printed time has no
    time zone and FHIR requires one with a time, so only the date is written; the chart
    row's own text (time included) travels in the chart-row extension."""
    head = (text or "").strip()[:10]
    if not _DATE.match(head):
        return None
    try:
        date.fromisoformat(head)
    except ValueError:
        return None
    return head


def instant(moment: datetime | str | None) -> str | None:
    """A workbench timestamp (naive UTC: domain.clock) as a FHIR instant."""
    if moment is None:
        return None
    if isinstance(moment, str):
        try:
            moment = datetime.fromisoformat(moment)
        except ValueError:
            return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds")
