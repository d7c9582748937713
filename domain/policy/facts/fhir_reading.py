"""How a FHIR R4 resource's codes and statuses bear on the chart (pure data and rules):
which LOINC codes are vital signs, how UCUM writes their units, the SNOMED CT codes
that state "no known allergy", and what each status the sender gives means for a fact
read from the resource (charted, to review, a document fact only, or withdrawn).

The statuses are FHIR's own value sets (ObservationStatus, AllergyIntolerance and
Condition verification and clinical status, MedicationStatement and MedicationRequest
status). A status this table does not know goes to review: in doubt, never the chart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LOINC = "http://loinc.org"
SNOMED = "http://snomed.info/sct"
UCUM = "http://unitsofmeasure.org"
VITAL_SIGNS_CATEGORY = "vital-signs"

# The vital-signs profile's LOINC codes -> the canonical sign (domain.policy.facts.vital_signs).
VITAL_SIGN_LOINC: dict[str, str] = {
    "85354-9": "blood_pressure", "55284-4": "blood_pressure", "35094-2": "blood_pressure",
    "8867-4": "heart_rate", "8889-8": "heart_rate",
    "8310-5": "temperature", "8331-1": "temperature", "8328-7": "temperature",
    "9279-1": "respiratory_rate",
    "59408-5": "spo2", "2708-6": "spo2",
    "29463-7": "weight", "3141-9": "weight",
    "8302-2": "height", "8306-3": "height",
    "39156-5": "bmi",
}
# A blood pressure's two numbers, as components of its panel.
BP_COMPONENT_LOINC: dict[str, str] = {"8480-6": "systolic", "8462-4": "diastolic"}
# UCUM codes of vital-sign units -> the spelling the vital-sign table uses.
UCUM_VITAL_UNITS: dict[str, str] = {
    "mm[Hg]": "mmHg", "/min": "/min", "{beats}/min": "/min", "{breaths}/min": "/min", "Cel": "°C",
    "[degF]": "°F", "%": "%", "kg": "kg", "[lb_av]": "lb", "cm": "cm", "m": "m", "[in_i]": "in",
    "kg/m2": "kg/m2",
}
# SNOMED CT codes whose meaning is a statement that the patient has no known allergy of a kind.
NO_KNOWN_ALLERGY: dict[str, str] = {
    "409137002": "No known drug allergies",
    "716186003": "No known allergies",
    "429625007": "No known food allergies",
    "428607008": "No known environmental allergies",
}
# ... and the status each gives the statement (domain/policy/facts/no_known_allergies.py):
# NKDA stays about drugs, never widened to "no allergy at all".
NO_KNOWN_ALLERGY_STATUS: dict[str, str] = {
    "409137002": "no_known_drug_allergies",
    "716186003": "no_known_allergies",
    "429625007": "no_known_food_allergies",
    "428607008": "no_known_environmental_allergies",
}
# Observation categories whose results are laboratory findings; an observation with no
# category is read as one when it has a value (most lab feeds send it).
LAB_CATEGORIES = frozenset({"laboratory"})
# Observation categories that are not results: kept as document facts.
OTHER_CATEGORIES = frozenset({"social-history", "survey", "exam", "therapy", "activity", "procedure", "imaging"})

# The resources read as findings (a withdrawn one is named in a warning).
FACT_RESOURCE_TYPES = frozenset({"Observation", "AllergyIntolerance", "MedicationStatement", "MedicationRequest",
                                 "Condition", "FamilyMemberHistory"})
# Resources that carry no finding of their own: who, where, how and why a record exists.
NOT_FINDINGS = frozenset({
    "Patient", "Provenance", "Practitioner", "PractitionerRole", "Organization", "Location", "Encounter",
    "DocumentReference", "Device", "Medication", "Bundle", "Composition", "AuditEvent", "RelatedPerson",
    "Coverage", "Claim", "ExplanationOfBenefit", "Binary", "Basic", "Group", "Endpoint", "HealthcareService",
    "CareTeam", "Specimen", "ServiceRequest", "MessageHeader", "OperationOutcome", "Consent", "Account",
})

Treatment = Literal["chart", "review", "document", "withdrawn", "not_done"]


@dataclass(frozen=True)
class StatusReading:
    treatment: Treatment
    reason: str | None = None  # why, in a reviewer's words (None for "chart")


WITHDRAWN = StatusReading("withdrawn", "marked entered-in-error by its sender")

# (resource type, status element, code) -> what a fact read from it may become.
_STATUS: dict[tuple[str, str, str], StatusReading] = {
    **{("Observation", "status", s): StatusReading("chart") for s in ("final", "amended", "corrected")},
    ("Observation", "status", "preliminary"): StatusReading("review", "preliminary result: not known to be final"),
    ("Observation", "status", "registered"): StatusReading("not_done", "result pending (registered, no result yet)"),
    ("Observation", "status", "cancelled"): StatusReading("not_done", "observation cancelled by the sender"),
    ("Observation", "status", "entered-in-error"): WITHDRAWN,
    ("AllergyIntolerance", "verificationStatus", "confirmed"): StatusReading("chart"),
    ("AllergyIntolerance", "verificationStatus", "unconfirmed"): StatusReading(
        "review", "allergy not confirmed (verification status unconfirmed)"),
    ("AllergyIntolerance", "verificationStatus", "presumed"): StatusReading(
        "review", "allergy presumed, not confirmed"),
    ("AllergyIntolerance", "verificationStatus", "refuted"): StatusReading(
        "document", "the sender records this allergy as refuted"),
    ("AllergyIntolerance", "verificationStatus", "entered-in-error"): WITHDRAWN,
    ("AllergyIntolerance", "clinicalStatus", "active"): StatusReading("chart"),
    ("AllergyIntolerance", "clinicalStatus", "inactive"): StatusReading("review", "allergy recorded as inactive"),
    ("AllergyIntolerance", "clinicalStatus", "resolved"): StatusReading("review", "allergy recorded as resolved"),
    ("Condition", "verificationStatus", "confirmed"): StatusReading("chart"),
    **{("Condition", "verificationStatus", s): StatusReading("review", f"diagnosis not confirmed ({s})")
       for s in ("unconfirmed", "provisional", "differential")},
    ("Condition", "verificationStatus", "refuted"): StatusReading("document", "the sender records this diagnosis "
                                                                                "as refuted"),
    ("Condition", "verificationStatus", "entered-in-error"): WITHDRAWN,
    **{("Condition", "clinicalStatus", s): StatusReading("chart") for s in ("active", "recurrence", "relapse")},
    **{("Condition", "clinicalStatus", s): StatusReading("document", f"a past problem (clinical status {s})")
       for s in ("inactive", "remission", "resolved")},
    **{("MedicationStatement", "status", s): StatusReading("chart") for s in ("active", "intended")},
    ("MedicationStatement", "status", "on-hold"): StatusReading("review", "medication on hold"),
    **{("MedicationStatement", "status", s): StatusReading("document", f"not a current medication ({s})")
       for s in ("completed", "stopped", "not-taken")},
    ("MedicationStatement", "status", "entered-in-error"): WITHDRAWN,
    ("MedicationRequest", "status", "active"): StatusReading("chart"),
    ("MedicationRequest", "status", "on-hold"): StatusReading("review", "prescription on hold"),
    ("MedicationRequest", "status", "draft"): StatusReading("review", "prescription still a draft"),
    **{("MedicationRequest", "status", s): StatusReading("document", f"not a current prescription ({s})")
       for s in ("completed", "stopped", "cancelled")},
    ("MedicationRequest", "status", "entered-in-error"): WITHDRAWN,
    **{("MedicationRequest", "intent", s): StatusReading("chart")
       for s in ("order", "original-order", "reflex-order", "filler-order", "instance-order")},
    **{("MedicationRequest", "intent", s): StatusReading("review", f"a prescription not yet ordered (intent {s})")
       for s in ("proposal", "plan", "option")},
}
# Status elements a resource must give (an absent required one makes it invalid R4, and
# the validator reports it); optional ones are only judged when present.
_REQUIRED = {("Observation", "status"), ("MedicationStatement", "status"), ("MedicationRequest", "status"),
             ("MedicationRequest", "intent")}


def status_reading(resource_type: str, element: str, code: str | None) -> StatusReading:
    """What a fact read from a resource with this status may become. An optional
    status left out says nothing; an unknown one is a doubt."""
    if not code:
        if (resource_type, element) in _REQUIRED:
            return StatusReading("review", f"no {element} given")
        return StatusReading("chart")
    return _STATUS.get((resource_type, element, code),
                       StatusReading("review", f"{element} {code!r} is not one this reader knows"))


def strictest(*readings: StatusReading) -> StatusReading:
    """The reading that keeps a fact furthest from the chart."""
    order = ("withdrawn", "not_done", "document", "review", "chart")
    return min(readings, key=lambda r: order.index(r.treatment))
