"""FHIR R4 JSON written by hand in the standard shapes, for the FHIR reader's tests: an
EHR or Synthea export (Patient with several identifiers and extensions, laboratory
Observations with UCUM quantities, Conditions, MedicationRequests, AllergyIntolerances)
and the shape the workbench's own exporter writes (Patient identifier system + value,
LOINC codes, reference ranges, v3 interpretation codes, Provenance)."""

from __future__ import annotations

import json
from typing import Any

LOINC = "http://loinc.org"
UCUM = "http://unitsofmeasure.org"
SNOMED = "http://snomed.info/sct"
RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm"
INTERPRETATION = "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation"
OBS_CATEGORY = "http://terminology.hl7.org/CodeSystem/observation-category"


def patient(first: str, last: str, dob: str, mrn: str, *, pid: str = "pat-1", mrn_typed: bool = True,
            system: str = "urn:oid:2.16.840.1.113883.3.9999.1", others: bool = False) -> dict[str, Any]:
    identifier: dict[str, Any] = {"system": system, "value": mrn}
    if mrn_typed:
        identifier["type"] = {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/v2-0203", "code": "MR",
                                          "display": "Medical record number"}], "text": "Medical Record Number"}
    ids = [identifier]
    if others:  # as Synthea writes them: its own id first, a social security number after
        ids = [{"system": "https://github.com/synthetichealth/synthea", "value": "b1f0c7de-4c1e-4a8e-9f61-1d2a7e6c0a11"},
               identifier,
               {"type": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/v2-0203", "code": "SS"}]},
                "system": "http://hl7.org/fhir/sid/us-ssn", "value": "999-41-7755"}]
    return {"resourceType": "Patient", "id": pid,
            "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/patient-birthPlace",
                           "valueAddress": {"city": "Springfield", "country": "US"}}],
            "identifier": ids, "name": [{"use": "official", "family": last, "given": [first], "prefix": ["Ms."]}],
            "gender": "female", "birthDate": dob}


def coding(system: str, code: str, display: str | None = None) -> dict[str, Any]:
    out = {"system": system, "code": code}
    if display:
        out["display"] = display
    return out


def lab(loinc: str, name: str, value: float | str, unit: str, *, ucum: str | None = None, low=None, high=None,
        range_text: str | None = None, flag: str | None = None, status: str = "final",
        when: str = "2025-11-02T08:40:00-05:00", subject: str = "urn:uuid:pat-1", comparator: str | None = None,
        category: str | None = "laboratory") -> dict[str, Any]:
    quantity: dict[str, Any] = {"value": value, "unit": unit, "system": UCUM, "code": ucum or unit}
    if comparator:
        quantity["comparator"] = comparator
    obs: dict[str, Any] = {"resourceType": "Observation", "status": status}
    if category:
        obs["category"] = [{"coding": [coding(OBS_CATEGORY, category)]}]
    obs |= {"code": {"coding": [coding(LOINC, loinc, name)], "text": name}, "subject": {"reference": subject},
            "effectiveDateTime": when, "valueQuantity": quantity}
    if low is not None or high is not None or range_text:
        rng: dict[str, Any] = {}
        if low is not None:
            rng["low"] = {"value": low, "unit": unit, "system": UCUM, "code": ucum or unit}
        if high is not None:
            rng["high"] = {"value": high, "unit": unit, "system": UCUM, "code": ucum or unit}
        if range_text:
            rng["text"] = range_text
        obs["referenceRange"] = [rng]
    if flag:
        obs["interpretation"] = [{"coding": [coding(INTERPRETATION, flag)]}]
    return obs


def vital(loinc: str, name: str, value: float, unit: str, ucum: str, *, when: str = "2025-11-02T08:40:00Z",
          subject: str = "urn:uuid:pat-1") -> dict[str, Any]:
    return {"resourceType": "Observation", "status": "final",
            "category": [{"coding": [coding(OBS_CATEGORY, "vital-signs", "Vital Signs")]}],
            "code": {"coding": [coding(LOINC, loinc, name)], "text": name}, "subject": {"reference": subject},
            "effectiveDateTime": when, "valueQuantity": {"value": value, "unit": unit, "system": UCUM, "code": ucum}}


def blood_pressure(systolic: int, diastolic: int, *, when: str = "2025-11-02T08:40:00Z",
                   subject: str = "urn:uuid:pat-1") -> dict[str, Any]:
    def part(code: str, name: str, v: int) -> dict[str, Any]:
        return {"code": {"coding": [coding(LOINC, code, name)]},
                "valueQuantity": {"value": v, "unit": "mm[Hg]", "system": UCUM, "code": "mm[Hg]"}}

    return {"resourceType": "Observation", "status": "final",
            "category": [{"coding": [coding(OBS_CATEGORY, "vital-signs")]}],
            "code": {"coding": [coding(LOINC, "85354-9", "Blood pressure panel with all children optional")],
                     "text": "Blood pressure"},
            "subject": {"reference": subject}, "effectiveDateTime": when,
            "component": [part("8480-6", "Systolic blood pressure", systolic),
                          part("8462-4", "Diastolic blood pressure", diastolic)]}


def allergy(substance: str, code: str, *, reaction: str | None = None, verification: str = "confirmed",
            clinical: str = "active", category: str = "medication", subject: str = "urn:uuid:pat-1") -> dict[str, Any]:
    res: dict[str, Any] = {
        "resourceType": "AllergyIntolerance",
        "clinicalStatus": {"coding": [coding("http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical",
                                             clinical)]},
        "verificationStatus": {"coding": [coding(
            "http://terminology.hl7.org/CodeSystem/allergyintolerance-verification", verification)]},
        "type": "allergy", "category": [category], "criticality": "high",
        "code": {"coding": [coding(SNOMED, code, substance)], "text": substance},
        "patient": {"reference": subject}, "recordedDate": "2024-05-01"}
    if reaction:
        res["reaction"] = [{"manifestation": [{"coding": [coding(SNOMED, "247472004", reaction)], "text": reaction}],
                            "severity": "moderate"}]
    return res


def no_known_drug_allergy(subject: str = "urn:uuid:pat-1") -> dict[str, Any]:
    return {"resourceType": "AllergyIntolerance",
            "verificationStatus": {"coding": [coding(
                "http://terminology.hl7.org/CodeSystem/allergyintolerance-verification", "confirmed")]},
            "code": {"coding": [coding(SNOMED, "409137002", "No known drug allergy")]},
            "patient": {"reference": subject}}


def medication_statement(name: str, rxnorm: str, *, dose: float | None = None, dose_unit: str = "mg",
                         status: str = "active", subject: str = "urn:uuid:pat-1") -> dict[str, Any]:
    res: dict[str, Any] = {"resourceType": "MedicationStatement", "status": status,
                           "medicationCodeableConcept": {"coding": [coding(RXNORM, rxnorm, name)], "text": name},
                           "subject": {"reference": subject}, "effectiveDateTime": "2024-01-15"}
    if dose is not None:
        res["dosage"] = [{"text": f"{dose} {dose_unit} twice daily",
                          "timing": {"repeat": {"frequency": 2, "period": 1, "periodUnit": "d"}},
                          "route": {"coding": [coding(SNOMED, "26643006", "Oral route")]},
                          "doseAndRate": [{"doseQuantity": {"value": dose, "unit": dose_unit, "system": UCUM,
                                                            "code": dose_unit}}]}]
    return res


def medication_request(name: str, rxnorm: str, *, status: str = "active",
                       subject: str = "urn:uuid:pat-1") -> dict[str, Any]:
    return {"resourceType": "MedicationRequest", "status": status, "intent": "order",
            "medicationCodeableConcept": {"coding": [coding(RXNORM, rxnorm, name)], "text": name},
            "subject": {"reference": subject}, "authoredOn": "2023-06-20T10:00:00-04:00",
            "dosageInstruction": [{"sequence": 1, "timing": {"repeat": {"frequency": 1, "period": 1,
                                                                       "periodUnit": "d"}},
                                   "asNeededBoolean": False}]}


def condition(name: str, code: str, *, clinical: str = "active", verification: str = "confirmed",
              subject: str = "urn:uuid:pat-1") -> dict[str, Any]:
    return {"resourceType": "Condition",
            "clinicalStatus": {"coding": [coding("http://terminology.hl7.org/CodeSystem/condition-clinical",
                                                 clinical)]},
            "verificationStatus": {"coding": [coding("http://terminology.hl7.org/CodeSystem/condition-ver-status",
                                                     verification)]},
            "category": [{"coding": [coding("http://terminology.hl7.org/CodeSystem/condition-category",
                                            "problem-list-item")]}],
            "code": {"coding": [coding(SNOMED, code, name)], "text": name},
            "subject": {"reference": subject}, "onsetDateTime": "2019-04-11T00:00:00-04:00"}


def provenance(target: str, quote: str) -> dict[str, Any]:
    """As an exporter writes one per resource: not a finding, never read as one."""
    return {"resourceType": "Provenance", "target": [{"reference": target}], "recorded": "2025-11-03T09:00:00Z",
            "activity": {"coding": [coding("http://terminology.hl7.org/CodeSystem/v3-DataOperation", "UPDATE",
                                           "revise")], "text": "verified"},
            "agent": [{"who": {"display": "dr.reviewer"}}],
            "entity": [{"role": "source", "what": {"display": f"lab.pdf page 1: {quote}"}}]}


def bundle(*resources: dict[str, Any], kind: str = "collection", ids: bool = True) -> dict[str, Any]:
    """A Bundle of ``resources``; the Patient's fullUrl is ``urn:uuid:pat-1`` as the
    other resources' subjects say."""
    entries = []
    for i, res in enumerate(resources):
        rid = res.get("id") or f"res-{i}"
        entry: dict[str, Any] = {"fullUrl": f"urn:uuid:{rid}", "resource": res | ({"id": rid} if ids else {})}
        if kind == "transaction":
            entry["request"] = {"method": "POST", "url": res["resourceType"]}
        entries.append(entry)
    return {"resourceType": "Bundle", "id": "bundle-1", "type": kind, "entry": entries}


def as_bytes(doc: dict[str, Any], *, indent: int | None = 2) -> bytes:
    return json.dumps(doc, indent=indent, ensure_ascii=False).encode("utf-8")


def patient_bundle(first: str = "Odalys", last: str = "Brennerman", dob: str = "1961-07-19",
                   mrn: str = "WB-FH-3301", **patient_kw: Any) -> dict[str, Any]:
    """The exporter's shape for one patient: labs with ranges and flags, a blood pressure,
    an allergy, NKDA absent, a medication, a problem, and Provenance for the lab."""
    return bundle(
        patient(first, last, dob, mrn, **patient_kw),
        lab("2823-3", "Potassium", 6.1, "mmol/L", low=3.5, high=5.1, flag="H"),
        lab("4548-4", "Hemoglobin A1c", 7.9, "%", range_text="<5.7", flag="H"),
        lab("2345-7", "Glucose", 92, "mg/dL", low=70, high=99, flag="N"),
        blood_pressure(152, 94),
        allergy("Penicillin", "764146007", reaction="Hives"),
        medication_statement("Metformin 500 mg oral tablet", "861007", dose=500),
        condition("Type 2 diabetes mellitus", "44054006"),
        provenance("urn:uuid:res-1", "Potassium 6.1"),
    )


def family_history(relative: str, condition_name: str, code: str, *, status: str = "completed",
                   subject: str = "urn:uuid:pat-1") -> dict[str, Any]:
    return {"resourceType": "FamilyMemberHistory", "status": status, "patient": {"reference": subject},
            "relationship": {"coding": [coding("http://terminology.hl7.org/CodeSystem/v3-RoleCode", "MTH",
                                               relative)], "text": relative},
            "condition": [{"code": {"coding": [coding(SNOMED, code, condition_name)], "text": condition_name}}]}
