"""One exported item -> one FHIR R4 resource (as a dict; the export validates it with the
R4B models). Standard R4 shapes throughout; every value the chart row holds is also
written, as printed, in the chart-row extension, so an importer can rebuild the row
exactly (docs/decisions.md, "FHIR R4 export: the mapping")."""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

from core.services.exchange.chart_source import ExportItem
from core.services.exchange.fhir_values import (coding, codes, fhir_date, instant, interpretation, printed_interpretation,
                                                quantity, reference_range, system)
from domain.policy.facts.analytes import analyte, canonical_analyte
from domain.policy.facts.no_known_allergies import is_no_known_allergies

_ID_UNSAFE = re.compile(r"[^A-Za-z0-9.\-]")
GENDER = {"F": "female", "M": "male", "U": "unknown", "O": "other"}
_HL7 = "hl7v2_message"


def ref(resource_type: str, resource_id: str) -> dict[str, str]:
    return {"reference": f"{resource_type}/{resource_id}"}


def safe_id(text: str) -> str:
    """A FHIR id ([A-Za-z0-9-.]{1,64}) made from any text."""
    cleaned = _ID_UNSAFE.sub("-", text).strip("-") or "x"
    return cleaned if len(cleaned) <= 64 else hashlib.sha256(text.encode()).hexdigest()[:64]


def chart_row_extension(item: ExportItem) -> dict[str, Any]:
    """The row's values as printed (``valueString`` per column; absent columns left out)."""
    parts = [{"url": key, "valueString": str(value)} for key, value in item.values.items()
             if value not in (None, "") and not isinstance(value, (dict, list))]
    if item.chart_table:
        parts.insert(0, {"url": "table", "valueString": item.chart_table})
    return {"url": system("chart_row_extension"), "extension": parts}


def review_meta(item: ExportItem) -> dict[str, Any] | None:
    if not item.review:
        return None
    return {"tag": [coding("review_tag", "unconfirmed", "Waiting for human review in the workbench")]}


def review_note(item: ExportItem) -> list[dict[str, str]]:
    """Why the export itself holds an item back (its review_reason), as a note."""
    return [{"text": f"Unconfirmed: {item.review_reason}."}] if item.review and item.review_reason else []


def patient_resource(patient: dict[str, Any]) -> dict[str, Any]:
    given = [n for n in (patient.get("first_name"), patient.get("middle_name")) if n]
    return {
        "resourceType": "Patient", "id": f"patient-{patient['id']}",
        "identifier": [{"use": "usual", "type": {"coding": [coding("v2_0203", "MR", "Medical record number")]},
                        "system": system("mrn"), "value": patient["mrn"]}],
        "name": [{"use": "official", "family": patient["last_name"], "given": given}],
        "gender": GENDER.get(str(patient.get("sex") or "U"), "unknown"),
        "birthDate": str(patient["dob"])[:10],
    }


def document_reference(doc: dict[str, Any], subject: dict[str, str], content: bytes | None,
                       status: str = "current") -> dict[str, Any]:
    """A source document: its type, file name, content type, size, and its sha256 as an
    identifier (R4's Attachment.hash is a base64 SHA-1, written too when the stored bytes
    can be read); the sha256 is also the masterIdentifier as an RFC 6920 ``ni`` URI."""
    sha256 = str(doc["sha256"])
    ni = "ni:///sha-256;" + base64.urlsafe_b64encode(bytes.fromhex(sha256)).decode().rstrip("=")
    attachment: dict[str, Any] = {"contentType": doc.get("mime") or "application/octet-stream",
                                  "title": doc["filename"], "size": int(doc["size"])}
    if content is not None and hashlib.sha256(content).hexdigest() == sha256:
        attachment["hash"] = base64.b64encode(hashlib.sha1(content).digest()).decode()
    if doc.get("uploaded_at") is not None:
        attachment["creation"] = instant(doc["uploaded_at"])
    doc_type = doc.get("doc_type")
    out: dict[str, Any] = {
        "resourceType": "DocumentReference", "id": f"document-{doc['id']}",
        "masterIdentifier": {"system": system("rfc3986"), "value": ni},
        "identifier": [{"system": system("sha256"), "value": sha256}],
        "status": status, "subject": subject, "description": doc["filename"],
        "content": [{"attachment": attachment}],
    }
    if doc_type:
        out["type"] = {"coding": [coding("doc_type", doc_type)], "text": doc_type}
    if doc.get("uploaded_at") is not None:
        out["date"] = instant(doc["uploaded_at"])
    return out


def clinical_resource(item: ExportItem, subject: dict[str, str]) -> dict[str, Any]:
    build = {"lab_result": lab_observation, "vital_sign": vital_sign_observation, "allergy": allergy_intolerance,
             "medication": medication_statement, "problem": condition,
             "family_history": family_member_history}[item.kind]
    resource = build(item, subject)
    resource["extension"] = [chart_row_extension(item)]
    if meta := review_meta(item):
        resource["meta"] = resource.get("meta", {}) | meta
    if note := review_note(item):
        resource["note"] = resource.get("note", []) + note
    return resource


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


# -- allergies, medications, problems, family history -------------------------------------

def _no_known_allergy(item: ExportItem) -> bool:
    return is_no_known_allergies(item.values)


def _nka_code(item: ExportItem) -> dict[str, Any]:
    """"No known drug allergies" (NKDA) as SNOMED CT 409137002; a statement that names no
    kind of allergy ("no known allergies") as 716186003, the broader concept."""
    table = codes()["no_known_allergy"]
    said = f"{item.fact.fact_text} {(item.fact.citation or {}).get('quote_or_value', '')}".lower()
    code, display = table["drug"] if any(w in said for w in table["drug_words"]) else table["any"]
    return {"coding": [coding("snomed", code, display)], "text": display}


def allergy_intolerance(item: ExportItem, subject: dict[str, str]) -> dict[str, Any]:
    v = item.values
    verification = "unconfirmed" if item.review else "confirmed"
    out: dict[str, Any] = {
        "resourceType": "AllergyIntolerance", "id": item.key,
        "clinicalStatus": {"coding": [coding("allergy_clinical", "active", "Active")]},
        "verificationStatus": {"coding": [coding("allergy_verification", verification, verification.title())]},
        "patient": subject,
    }
    if _no_known_allergy(item):
        out["code"] = _nka_code(item)
        return out
    out["code"] = {"text": v.get("substance") or "unnamed substance"}
    if v.get("code"):
        out["code"]["coding"] = [{"code": str(v["code"])}]
    severity = codes()["allergy_severity"].get(str(v.get("severity") or "").strip().lower())
    if v.get("reaction"):
        reaction: dict[str, Any] = {"manifestation": [{"text": v["reaction"]}]}
        if severity:
            reaction["severity"] = severity
        out["reaction"] = [reaction]
    if v.get("severity") and not (severity and v.get("reaction")):
        out["note"] = [{"text": f"Severity as recorded: {v['severity']}"}]
    return out


def medication_statement(item: ExportItem, subject: dict[str, str]) -> dict[str, Any]:
    v = item.values
    status = str((item.fact.structured_value or {}).get("status") or "").lower()
    out: dict[str, Any] = {
        "resourceType": "MedicationStatement", "id": item.key,
        "status": status if status in ("active", "completed", "stopped", "on-hold") else "active",
        "medicationCodeableConcept": {"text": v.get("name") or "unnamed medication"}, "subject": subject,
    }
    dose, frequency = v.get("dose"), v.get("frequency")
    if dose or frequency:
        dosage: dict[str, Any] = {"text": " ".join(x for x in (dose, frequency) if x)}
        if frequency:
            dosage["timing"] = {"code": {"text": frequency}}
        m = re.match(r"^\s*([\d.]+)\s*(\S.*)?$", dose or "")
        if m and (q := quantity(m[1], (m[2] or "").strip() or None)):
            dosage["doseAndRate"] = [{"doseQuantity": q}]
        out["dosage"] = [dosage]
    if item.review:
        out["note"] = [{"text": "Waiting for human review in the workbench: unconfirmed."}]
    return out


def condition(item: ExportItem, subject: dict[str, str]) -> dict[str, Any]:
    v = item.values
    verification = "unconfirmed" if item.review else "confirmed"
    code: dict[str, Any] = {"text": v.get("description") or "unnamed problem"}
    if v.get("code"):
        named = str((item.fact.structured_value or {}).get("coding_system") or "").strip().lower()
        uri = codes()["problem_coding_systems"].get(named)
        code["coding"] = [{"system": uri, "code": str(v["code"])} if uri else {"code": str(v["code"])}]
    return {
        "resourceType": "Condition", "id": item.key,
        "clinicalStatus": {"coding": [coding("condition_clinical", "active", "Active")]},
        "verificationStatus": {"coding": [coding("condition_verification", verification, verification.title())]},
        "category": [{"coding": [coding("condition_category", "problem-list-item", "Problem List Item")]}],
        "code": code, "subject": subject,
    }


def family_member_history(item: ExportItem, subject: dict[str, str]) -> dict[str, Any]:
    v = item.values
    relative = str(v.get("relative") or "").strip()
    table = codes()["relationship"]
    code, display = table.get(relative.lower(), table["family member"])
    out: dict[str, Any] = {
        "resourceType": "FamilyMemberHistory", "id": item.key,
        "status": "partial" if item.review else "completed", "patient": subject,
        "relationship": {"coding": [coding("role_code", code, display)], "text": relative or "family member"},
    }
    if v.get("condition"):
        out["condition"] = [{"code": {"text": str(v["condition"])}}]
    return out


def entered_in_error(resource: dict[str, Any]) -> dict[str, Any]:
    """A resource exported before under the same bundle id that has left the chart since:
    the same resource, its status entered-in-error."""
    out = dict(resource)
    kind = out["resourceType"]
    if kind in ("Observation", "MedicationStatement", "FamilyMemberHistory", "DocumentReference"):
        out["status"] = "entered-in-error"
    elif kind == "AllergyIntolerance":
        out["verificationStatus"] = {"coding": [coding("allergy_verification", "entered-in-error", "Entered in Error")]}
        out.pop("clinicalStatus", None)  # R4: no clinical status on an entered-in-error allergy
    elif kind == "Condition":
        out["verificationStatus"] = {"coding": [coding("condition_verification", "entered-in-error",
                                                        "Entered in Error")]}
        out.pop("clinicalStatus", None)
    return out

