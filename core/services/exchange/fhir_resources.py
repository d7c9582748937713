"""One exported item -> one FHIR R4 resource (as a dict; the export validates it with the
R4B models). Standard R4 shapes throughout; every value the chart row holds is also
written, as printed, in the chart-row extension, so an importer can rebuild the row
exactly (docs/decisions.md, "FHIR R4 export", the mapping for the importer). Observations
are built in fhir_observations."""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

from core.services.exchange.chart_source import ExportItem
from core.services.exchange.fhir_observations import lab_observation, vital_sign_observation
from core.services.exchange.fhir_values import coding, codes, instant, quantity, system
from domain.policy.facts.no_known_allergies import is_no_known_allergies, no_known_kind

GENDER = {"F": "female", "M": "male", "U": "unknown", "O": "other"}


def ref(resource_type: str, resource_id: str) -> dict[str, str]:
    return {"reference": f"{resource_type}/{resource_id}"}


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


# -- allergies, medications, problems, family history -------------------------------------

def _no_known_allergy(item: ExportItem) -> bool:
    return is_no_known_allergies(item.values)


def _nka_code(item: ExportItem) -> dict[str, Any]:
    """"No known drug allergies" (NKDA) as SNOMED CT 409137002, "no known food allergies"
    as 429625007, a statement that names no kind of allergy ("no known allergies") as
    716186003, the broader concept; the kind as the reader's status gives it
    (domain/policy/facts/no_known_allergies.py)."""
    table = codes()["no_known_allergy"]
    kind = no_known_kind(item.values) or "all"
    said = f"{item.fact.fact_text} {(item.fact.citation or {}).get('quote_or_value', '')}".lower()
    if kind == "all" and any(w in said for w in table["drug_words"]):
        kind = "drug"  # a row read before NKDA had its own status: never widened to "no allergy at all"
    code, display = table[kind]
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

