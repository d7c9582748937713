"""FHIR R4 facts: walks the resources ``extract.formats.fhir.normalize.normalize_fhir``
stored and hands each to the module that reads it (``identity``: Patient;
``observations``: Observation; ``clinical``: AllergyIntolerance, MedicationStatement,
MedicationRequest, Condition, FamilyMemberHistory).

* A resource that failed validation is not read: the normaliser's warning names it, and
  it waits for a person: an Observation through the coverage guard (a result by
  structure), an allergy, medication or condition as a review item naming what it could
  be; an invalid Patient's identity values are "printed but not read", so the gate sends
  the file to a person.
* A resource its sender marked entered-in-error is not charted; a job warning names it.
* Resources of other types (Provenance, Practitioner, Encounter, DocumentReference...)
  are not findings; clinical ones this reader does not read (Procedure, Immunization...)
  are counted in a warning.
* A bundle naming several patients sends every finding to review (all of them reach the
  identity gate, where differing ones quarantine the file); a finding whose subject is
  not the bundle's patient goes to review.
"""

from __future__ import annotations

from collections import Counter

from domain.content import NormalizedContent
from domain.errors import ExtractionError
from domain.models import DocType, ExtractionResult, ExtractionWarning, FactProposal
from domain.policy.facts.fhir_reading import FACT_RESOURCE_TYPES, NOT_FINDINGS
from extract.fhir.bundle import FhirFacts, Resource, concept_name, resources, text
from extract.fhir.clinical import read_allergy, read_condition, read_family_history, read_medication
from extract.fhir.identity import read_patient, unread_patient
from extract.fhir.observations import read_observation
from extract.values.review_reasons import Review
from extract.formats.fhir.normalize import ENGINE


def extract_fhir(content: NormalizedContent, source_id: str) -> ExtractionResult:
    """The registered extractor for ``fhir_bundle``: facts and identity candidates."""
    ctx = FhirFacts.for_fhir(content, source_id)
    all_resources = resources(content)
    valid = [r for r in all_resources if r.section.meta.get("valid")]
    by_reference = {ref: r for r in valid for ref in r.references()}
    patients = [r for r in valid if r.type == "Patient"]
    unread = [u for r in all_resources if r.type == "Patient" and not r.section.meta.get("valid")
              for u in unread_patient(ctx, r, None)]
    base = Review()
    named = sum(1 for r in all_resources if r.type == "Patient")
    if named > 1:
        base.add(f"the file holds {named} Patient resources; check whose findings these are", 0.5)
        ctx.warnings.append(ExtractionWarning("fhir_several_patients",
                                              "The file holds more than one Patient resource: it may name more "
                                              "than one patient."))
    for patient in patients:
        read_patient(ctx, patient, None)
    if not patients and not unread:
        ctx.warnings.append(ExtractionWarning("fhir_no_patient", "The file has no Patient resource: no patient "
                                              "identifiers were read."))
    for res in all_resources:
        if not res.section.meta.get("valid") and res.type in _INVALID_AS:
            _invalid_item(ctx, res)
    patient_refs = {ref for p in patients for ref in p.references()}
    not_read: Counter[str] = Counter()
    for res in valid:
        if res.section.meta.get("withdrawn") and res.type in FACT_RESOURCE_TYPES:
            ctx.warnings.append(ExtractionWarning(
                "fhir_entered_in_error", f"{res.path} ({res.type}) is marked entered-in-error by its sender; "
                "it was not charted."))
            continue
        review = _subject_review(res, base, patient_refs)
        if res.type == "Observation":
            read_observation(ctx, res, review, None, by_reference)
        elif res.type == "AllergyIntolerance":
            read_allergy(ctx, res, review, None)
        elif res.type in ("MedicationStatement", "MedicationRequest"):
            read_medication(ctx, res, review, None, by_reference)
        elif res.type == "Condition":
            read_condition(ctx, res, review, None)
        elif res.type == "FamilyMemberHistory":
            read_family_history(ctx, res, review, None)
        elif res.type != "Patient" and res.type not in NOT_FINDINGS:
            not_read[res.type] += 1
    if not_read:
        listed = ", ".join(f"{t} ×{n}" for t, n in sorted(not_read.items()))
        ctx.warnings.append(ExtractionWarning(
            "fhir_resources_not_read", f"{sum(not_read.values())} resources of types this reader does not read "
            f"were not read ({listed}); see them in the bundle."))
    if not ctx.facts and not ctx.identifiers and not unread and not content.meta.get("invalid"):
        raise ExtractionError("The FHIR file was read but holds no patient data (no Patient, Observation, "
                              "AllergyIntolerance, medication or Condition resources were found).",
                              code="no_clinical_content")
    return ExtractionResult(doc_type=DocType.FHIR_BUNDLE, facts=ctx.facts, identifiers=ctx.identifiers,
                            unread_identifiers=unread, warnings=ctx.warnings, engine=ENGINE)


def _subject_review(res: Resource, base: Review, patient_refs: set[str]) -> Review:
    """The file's review plus a doubt when the resource names a subject other than the
    file's patient."""
    review = base.copy()
    subject = res.get("subject") or res.get("patient")
    reference = text(subject.get("reference")) if subject is not None else ""
    if reference and patient_refs and reference not in patient_refs:
        review.add(f"the {res.type} is about {reference.split('/')[0] or 'another subject'}, not the file's "
                   "Patient", 0.5)
    return review


# Invalid resources a person reads instead: the fact type, the key naming its subject,
# the element naming it, the collection it is counted in.
_INVALID_AS = {
    "AllergyIntolerance": ("allergy", "substance", "code", "allergies"),
    "MedicationStatement": ("medication", "name", "medicationCodeableConcept", "medications"),
    "MedicationRequest": ("medication", "name", "medicationCodeableConcept", "medications"),
    "Condition": ("problem", "description", "code", "problems"),
    "FamilyMemberHistory": ("family_history", "relative", "relationship", "family_history"),
}


def _invalid_item(ctx: FhirFacts, res: Resource) -> None:
    """A review item for an allergy, medication or condition that failed validation,
    naming what it could be: not read, never charted unless a person says so."""
    fact_type, key, element, collection = _INVALID_AS[res.type]
    name, quoted = concept_name(res.get(element))
    steps = (element,) if quoted is not None else ()
    why = (f"the {res.type} at {res.path} failed FHIR R4 validation ({res.section.meta.get('problem')}); it was "
           "not read: check it in the file")
    ctx.facts.append(FactProposal(
        fact_type=fact_type, fact_text=f"{res.type} not read (failed FHIR R4 validation): {name or 'unnamed'}",
        structured_value={key: name or None, "not_read": True},
        citation=ctx.cite_at(res, steps, quoted if quoted is not None else res.get("resourceType"),
                             ctx.path(collection)),
        confidence=0.5, wants_review=True, review_reason=why))
