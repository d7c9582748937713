"""Critical limits by analyte: a result is critical by its value, not only by its print (pure).

A potassium of 6.9 mmol/L printed with only "H" (or with its flag lost to OCR) is still
critical. The limits are data, ``critical_limits.json`` beside this module (a version,
per canonical analyte a low and/or high limit with its unit and its source). The rule
(``apply_critical_limits``), applied once to every lab result whatever its format:

- a value at or past a limit (converted to the limit's unit first) is
  ``critical_high``/``critical_low``, whatever flag the report printed;
- a printed critical flag (or a value past critical limits the report itself printed)
  is kept even when the value lies inside these limits;
- ``critical_basis`` says which of the two made the result critical, in words the
  citation and the answer show ("printed flag", "critical limit >= 6.2 mmol/L (Kost,
  JAMA 1990)");
- a value that is not one plain number, or whose unit cannot be converted to the
  limit's, is not compared (it keeps its printed flag; an unusual unit goes to review
  by the usual-units rule).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from domain.models import FactProposal
from domain.policy.facts.analytes import analyte as analyte_entry
from domain.policy.facts.analytes import canonical_analyte, normalize_unit
from domain.policy.facts.chart_rules import CRITICAL_FLAGS
from domain.policy.facts.unit_conversion import display_number, factor, read_number

TABLE_PATH = Path(__file__).with_name("critical_limits.json")
PRINTED_FLAG = "printed flag"
PRINTED_LIMITS = "printed critical limits"


@dataclass(frozen=True)
class CriticalLimit:
    analyte: str
    unit: str
    low: float | None
    high: float | None
    source: str  # the reference's short name
    citation: str  # the reference in full

    def describe(self, direction: str, result_unit: str | None = None) -> str:
        """"critical limit >= 6.2 mmol/L (Kost, JAMA 1990)" for the high side; with the
        limit in the result's unit too when the result was printed in another one
        ("critical limit >= 654 umol/L = 7.40 mg/dL (...)")."""
        value = self.high if direction == "high" else self.low
        assert value is not None
        sign = ">=" if direction == "high" else "<="
        text = f"critical limit {sign} {value}" + (f" {self.unit}" if self.unit else "")
        if result_unit and normalize_unit(result_unit) != normalize_unit(self.unit):
            f = factor(self.analyte, self.unit, result_unit)
            if f is not None:
                text += f" = {display_number(value * f)} {result_unit}"
        return f"{text} ({self.source})"


@dataclass(frozen=True)
class _Table:
    version: str
    limits: dict[str, CriticalLimit]


@lru_cache(maxsize=1)
def _table() -> _Table:
    data = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
    refs = data["references"]
    limits: dict[str, CriticalLimit] = {}
    for row in data["limits"]:
        analyte_id = row["analyte"]
        if analyte_entry(analyte_id) is None:
            raise ValueError(f"{TABLE_PATH.name}: {analyte_id!r} is not an analyte of analytes.json")
        if analyte_id in limits:
            raise ValueError(f"{TABLE_PATH.name}: {analyte_id!r} is listed twice")
        if row.get("low") is None and row.get("high") is None:
            raise ValueError(f"{TABLE_PATH.name}: {analyte_id!r} has no limit")
        ref = refs[row["source"]]
        limits[analyte_id] = CriticalLimit(analyte_id, row["unit"], row.get("low"), row.get("high"),
                                           ref["short"], ref["citation"])
    return _Table(data["version"], limits)


def table_version() -> str:
    return _table().version


def critical_limit(analyte_id: str | None) -> CriticalLimit | None:
    return _table().limits.get(analyte_id or "")


def all_limits() -> list[CriticalLimit]:
    return list(_table().limits.values())


@dataclass(frozen=True)
class LimitCrossing:
    flag: str  # critical_high / critical_low
    limit: CriticalLimit
    unit: str  # the result's unit, as printed

    @property
    def basis(self) -> str:
        return self.limit.describe("high" if self.flag == "critical_high" else "low", self.unit)


def limit_crossed(value: str | None, unit: str | None, analyte_id: str | None) -> LimitCrossing | None:
    """Which critical limit a printed value is at or past, or None (inside the limits,
    no limit for the analyte, not one plain number, a unit that does not convert).
    A comparator counts only where it leaves no doubt: ">10" is past a high limit of 6.2,
    "<0.5" past a low limit of 0.5; "<10" says nothing about a high limit."""
    limit = critical_limit(analyte_id)
    number = read_number(value)
    if limit is None or number is None:
        return None
    f = factor(analyte_id, unit, limit.unit)
    if f is None:
        return None
    v = number.value * f
    if limit.high is not None and v >= limit.high and number.comparator in ("", ">", ">="):
        return LimitCrossing("critical_high", limit, str(unit or ""))
    if limit.low is not None and v <= limit.low and number.comparator in ("", "<", "<="):
        return LimitCrossing("critical_low", limit, str(unit or ""))
    return None


def _printed_basis(structured: Mapping[str, Any]) -> str:
    """Why a result the report itself marked critical is critical."""
    if structured.get("flag_derived") and structured.get("critical_range"):
        return f"{PRINTED_LIMITS} {structured['critical_range']}"
    return PRINTED_FLAG


def apply_critical_limits(structured: Mapping[str, Any]) -> dict[str, Any]:
    """A lab result's value with the critical rule applied: ``abnormal_flag`` raised to
    critical when the value is past a limit of the table, and ``critical_basis`` set on
    every critical result. Never lowers a flag. A result already carrying a basis (read
    again) is returned as it is."""
    out = dict(structured)
    if out.get("critical_basis"):
        return out
    flag = out.get("abnormal_flag")
    unit = out.get("unit")
    analyte_id = canonical_analyte(str(out.get("test_name") or ""), loinc=out.get("loinc") or None,
                                   unit=None if unit is None else str(unit))
    crossing = limit_crossed(str(out.get("value") or ""), str(unit or ""), analyte_id)
    if flag in CRITICAL_FLAGS:
        out["critical_basis"] = _printed_basis(out)
    elif crossing is not None:
        if flag and flag != "unknown" and not out.get("flag_derived"):
            out["printed_flag"] = flag  # what the report said before the limit raised it
        out["abnormal_flag"] = crossing.flag
        out["flag_derived"] = True
        out["critical_basis"] = crossing.basis
    return out


def critical_basis_text(structured: Mapping[str, Any] | None) -> str:
    """The words a citation or an answer shows for a critical result: "critical by
    printed flag" or "critical by critical limit >= 6.2 mmol/L (Kost, JAMA 1990); the
    report printed high"; empty for a result that is not critical or has no basis."""
    v = structured or {}
    basis = v.get("critical_basis")
    if v.get("abnormal_flag") not in CRITICAL_FLAGS or not basis:
        return ""
    text = f"critical by {basis}"
    if v.get("printed_flag"):
        text += f"; the report printed {str(v['printed_flag']).replace('_', ' ')}"
    elif v.get("reviewer_flag"):
        text += f"; a reviewer set {str(v['reviewer_flag']).replace('_', ' ')}"
    elif str(basis).startswith("critical limit"):
        text += "; the report printed no critical flag"
    return text


def with_critical_limits(proposal: FactProposal) -> FactProposal:
    """A proposed lab result with the critical rule applied (other facts unchanged).
    A result the limit raised says so in its text too, so the review queue, the search
    index and every answer that quotes it show why it is critical."""
    if proposal.fact_type != "lab_result":
        return proposal
    before = proposal.structured_value or {}
    structured = apply_critical_limits(before)
    update: dict[str, Any] = {"structured_value": structured}
    if structured.get("abnormal_flag") != before.get("abnormal_flag"):
        update["fact_text"] = f"{proposal.fact_text} ({critical_basis_text(structured)})"
    return proposal.model_copy(update=update)


REVIEWER_FLAG = "flag set by a reviewer"
_RULE_FIELDS = ("critical_basis", "printed_flag")


def after_correction(structured: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """A corrected lab result judged again. A flag the reviewer set is theirs (a critical
    one has that as its basis), but a value past a limit is still raised; a corrected
    value or unit undoes what the limit did to the old one (the flag goes back to what
    the report printed, or "unknown") and is judged afresh."""
    out = dict(structured)
    by_limit = str(out.get("critical_basis") or "").startswith("critical limit")
    if "abnormal_flag" in changes:
        for key in (*_RULE_FIELDS, "reviewer_flag"):
            out.pop(key, None)
        out["flag_derived"] = False  # a person stated it
        if out.get("abnormal_flag") in CRITICAL_FLAGS:
            out["critical_basis"] = REVIEWER_FLAG
            return out
        judged = apply_critical_limits(out)
        if "printed_flag" in judged:  # the flag the limit overrode was the reviewer's, not the report's
            judged["reviewer_flag"] = judged.pop("printed_flag")
        return judged
    elif ("value" in changes or "unit" in changes or "test_name" in changes) and by_limit:
        out["abnormal_flag"] = out.pop("printed_flag", None) or "unknown"
        out["flag_derived"] = False
        out.pop("critical_basis", None)
    elif out.get("critical_basis"):
        return out
    return apply_critical_limits(out)
