"""Stable fingerprints that stop duplicates.

fact fingerprint      source-scoped: the same fact from the same document, however
                      often the job runs, hashes the same;
clinical content      patient-scoped: the same clinical content from any document
                      (a re-upload under a new id) hashes the same;
clinical key          patient-scoped content minus the value: same test on the same
                      date with a different value is a conflict, not a new fact (a vital
                      sign: the same sign at the same date and time).

A lab result's test is its canonical analyte (``domain.policy.facts.analytes``: "HbA1c" and
"Hemoglobin A1c" are one test), falling back to the printed name when the vocabulary
does not know it. The key is computed from fields a chart row also holds (test name,
unit, LOINC code, date), because promotion recomputes it from the chart rows.

The content fingerprint hashes the value as printed; two results under one key whose
printed values differ may still state one quantity in two units (creatinine 88 umol/L
and 1.0 mg/dL): ``same_measurement`` compares them after unit conversion, so promotion
calls that a match, not a conflict.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from domain.policy.facts.analytes import canonical_analyte
from domain.policy.facts.unit_conversion import same_quantity
from domain.policy.facts.medication_schedule import comparable as medication_comparable

_KEY_FIELDS = {
    "lab_result": ("test_name", "collection_date"),
    "allergy": ("substance",),
    "medication": ("name",),
    "problem": ("description",),
    "vital_sign": ("kind", "measured_at"),
}
_VALUE_FIELDS = {
    "lab_result": ("value", "unit"),
    "allergy": ("reaction",),
    "medication": ("dose", "frequency"),
    "problem": ("code",),
    "vital_sign": ("value", "unit"),
}


def _norm(value: Any) -> str:
    return re.sub(r"[^0-9a-z.<>=%/+-]+", " ", str(value or "").lower()).strip()


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:32]


def fact_fingerprint(document_id: int, doc_type: str, fact_type: str, field_path: str, structured: dict) -> str:
    return _digest("fact", document_id, doc_type, fact_type, field_path, structured)


def _key_part(fact_type: str, name: str, structured: dict) -> str:
    if fact_type == "lab_result" and name == "test_name":
        analyte = _analyte_of(structured)
        if analyte:
            return f"analyte:{analyte}"
    return _norm(structured.get(name))


def clinical_key(patient_id: int, fact_type: str, structured: dict, fallback_text: str) -> str:
    fields = _KEY_FIELDS.get(fact_type)
    if not fields:
        return _digest("key", patient_id, fact_type, _norm(fallback_text))
    return _digest("key", patient_id, fact_type, *(_key_part(fact_type, f, structured) for f in fields))


def clinical_content_fingerprint(patient_id: int, fact_type: str, structured: dict, fallback_text: str) -> str:
    key = clinical_key(patient_id, fact_type, structured, fallback_text)
    values = _VALUE_FIELDS.get(fact_type, ())
    if fact_type == "medication":  # "BID" = "twice a day", "1 g" = "1000 mg" (medication_schedule)
        return _digest("content", key, *(_norm(medication_comparable(f, structured.get(f))) for f in values))
    return _digest("content", key, *(_norm(structured.get(f)) for f in values))


def _analyte_of(structured: dict) -> str | None:
    unit = structured.get("unit")
    return canonical_analyte(str(structured.get("test_name") or ""), loinc=structured.get("loinc") or None,
                             unit=None if unit is None else str(unit))


def same_measurement(fact_type: str, a: dict, b: dict) -> bool:
    """Whether two lab results under one clinical key state the same value once both
    are in one unit: 88 umol/L and 1.0
    mg/dL of creatinine do, 88 umol/L and 1.2 mg/dL do not. False whenever it cannot be
    told (text values, a unit the conversion table refuses, two different analytes):
    a doubt stays a conflict for a person to settle."""
    if fact_type != "lab_result":
        return False
    analyte = _analyte_of(a)
    if analyte is None or analyte != _analyte_of(b):
        return False
    return same_quantity(analyte, str(a.get("value") or ""), str(a.get("unit") or ""),
                         str(b.get("value") or ""), str(b.get("unit") or "")) is True
