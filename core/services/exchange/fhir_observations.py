"""Lab results and vital signs as FHIR R4 Observations (dicts; the export validates
them with the R4B models). HL7 v2 ORU results follow the v2-to-FHIR mapping: OBX-3 code,
OBX-5/6 value and unit, OBX-7 range, OBX-8 interpretation, OBX-14 or OBR-7 effective
date, OBX-11 status."""

from __future__ import annotations

from typing import Any

from core.services.exchange.chart_source import ExportItem
from core.services.exchange.fhir_values import (coding, codes, fhir_date, interpretation, printed_interpretation,
                                                quantity, reference_range, system)
from domain.policy.facts.analytes import analyte, canonical_analyte

_HL7 = "hl7v2_message"


# -- lab results -------------------------------------------------------------------------

def _lab_code(item: ExportItem, structured: dict[str, Any], from_hl7: bool) -> dict[str, Any]:
    """OBX-3 (HL7) or the printed name: the LOINC code the row carries, else the one the
    analyte vocabulary gives the name (its first, the analyte's usual code); a sender's
    own code (OBX-3 in another coding system) as a local coding."""
    name = item.values.get("test_name") or structured.get("test_name") or ""
    codings = []
    loinc = item.values.get("loinc") or structured.get("loinc")
    if not loinc:
        found = analyte(canonical_analyte(name, None, item.values.get("unit")) or "")
        loinc = found.loinc[0] if found and found.loinc else None
        display = found.display if found else None
    else:
        found = analyte(canonical_analyte(name, loinc) or "")
        display = found.display if found else None
    if loinc:
        codings.append(coding("loinc", loinc, display))
    local = structured.get("code") if from_hl7 else None
    if local and local != loinc:
        codings.append(coding("local_code", str(local), name or None))
    out: dict[str, Any] = {"text": name}
    return out | {"coding": codings} if codings else out


def _lab_status(item: ExportItem, structured: dict[str, Any], from_hl7: bool) -> str:
    if item.review:
        return "preliminary"
    if item.fact.corrected_by or any(s.fact.corrected_by for s in item.supports):
        return "corrected"  # a reviewer corrected the value
    if from_hl7:  # OBX-11
        mapped = codes()["hl7_result_status"].get(str(structured.get("result_status") or "").upper())
        if mapped in ("corrected", "amended"):
            return mapped
    return "final"


def lab_observation(item: ExportItem, subject: dict[str, str]) -> dict[str, Any]:
    v, fact = item.values, item.fact
    structured = fact.structured_value or {}
    from_hl7 = fact.doc_type == _HL7
    out: dict[str, Any] = {
        "resourceType": "Observation", "id": item.key, "status": _lab_status(item, structured, from_hl7),
        "category": [{"coding": [coding("observation_category", "laboratory", "Laboratory")]}],
        "code": _lab_code(item, structured, from_hl7), "subject": subject,
    }
    if when := fhir_date(v.get("collection_date")):
        out["effectiveDateTime"] = when
    value, unit = v.get("value") or "", v.get("unit") or ""
    if q := quantity(value, unit):
        out["valueQuantity"] = q
    elif value:
        out["valueString"] = value if not unit else f"{value} {unit}"
    else:  # a pending result (review items only): no value yet
        out["dataAbsentReason"] = {"coding": [coding("data_absent_reason", "temp-unknown", "Temporarily Unknown")]}
    interpretations = [i for i in (interpretation(v.get("abnormal_flag")),) if i]
    if from_hl7 and not fact.corrected_by:  # OBX-8 as the sender printed it, where it says more than the chart flag
        chart_codes = {c["code"] for i in interpretations for c in i["coding"]}
        interpretations += [printed_interpretation(str(f)) for f in structured.get("flags_as_printed") or []
                            if str(f) and str(f) not in chart_codes]
    if interpretations:
        out["interpretation"] = interpretations
    if ranges := reference_range(v.get("reference_range"), unit):
        out["referenceRange"] = ranges
    notes = [n for n in structured.get("notes") or [] if isinstance(n, str) and n.strip()]
    if notes:
        out["note"] = [{"text": n} for n in notes]
    return out


# -- vital signs -------------------------------------------------------------------------

def vital_sign_observation(item: ExportItem, subject: dict[str, str]) -> dict[str, Any]:
    """The vital-signs profile: category vital-signs, its LOINC code, a UCUM Quantity; a
    blood pressure is the 85354-9 panel with systolic and diastolic components."""
    v = item.values
    kind = v.get("kind") or ""
    spec = codes()["vital_signs"].get(kind)
    code = ({"coding": [coding("loinc", spec["loinc"], spec["display"])]
             + ([coding("loinc", *spec["also"])] if spec.get("also") else []), "text": spec["display"]}
            if spec else {"text": kind or "vital sign"})
    out: dict[str, Any] = {
        "resourceType": "Observation", "id": item.key, "status": "preliminary" if item.review else "final",
        "category": [{"coding": [coding("observation_category", "vital-signs", "Vital Signs")]}],
        "code": code, "subject": subject,
    }
    if spec:
        out["meta"] = {"profile": [system("vital_signs_profile")]}
    if when := fhir_date(v.get("measured_at")):
        out["effectiveDateTime"] = when
    unit = v.get("unit") or ""
    if kind == "blood_pressure" and spec:
        components = []
        for part in ("systolic", "diastolic"):
            loinc, display = spec["components"][part]
            comp: dict[str, Any] = {"code": {"coding": [coding("loinc", loinc, display)], "text": display}}
            if q := quantity(v.get(part), unit or "mmHg"):
                comp["valueQuantity"] = q
            else:
                comp["dataAbsentReason"] = {"coding": [coding("data_absent_reason", "unknown", "Unknown")]}
            components.append(comp)
        out["component"] = components
    elif q := quantity(v.get("value"), unit):
        out["valueQuantity"] = q
    elif v.get("value"):
        out["valueString"] = str(v["value"])
    return out
