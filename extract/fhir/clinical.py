"""FHIR AllergyIntolerance, MedicationStatement / MedicationRequest, Condition and
FamilyMemberHistory -> allergy, medication and problem facts (``AllergyValue``,
``MedicationValue``, ``ProblemValue``), their statuses judged by
domain.policy.facts.fhir_reading, and family_history document facts.

An AllergyIntolerance coded with a SNOMED CT "no known allergy" concept (409137002 no
known drug allergy, and its food, environment and general siblings) is a statement,
not an allergy: a cited document fact, never a chart row."""

from __future__ import annotations

from domain.models import AllergyValue, FactProposal, MedicationValue, ProblemValue
from domain.policy.facts.fhir_reading import (NO_KNOWN_ALLERGY, NO_KNOWN_ALLERGY_STATUS, SNOMED, StatusReading,
                                              status_reading, strictest)
from extract.fhir.bundle import FhirFacts, Node, Resource, code_in, codings, concept_codes, concept_name, \
    first_date, text
from extract.values.review_reasons import Review
from extract.values import numbers as V

_SYSTEMS = {
    "http://snomed.info/sct": "SNOMED CT", "http://hl7.org/fhir/sid/icd-10": "ICD-10",
    "http://hl7.org/fhir/sid/icd-10-cm": "ICD-10-CM", "http://hl7.org/fhir/sid/icd-9-cm": "ICD-9-CM",
    "http://www.nlm.nih.gov/research/umls/rxnorm": "RxNorm",
}


def _status_of(res: Resource, element: str) -> str | None:
    node = res.get(element)
    if node is None:
        return None
    if isinstance(node.value, str):
        return node.value.strip() or None
    codes = concept_codes(node)
    return codes[0] if codes else None


def _statuses(res: Resource, *elements: str) -> StatusReading:
    return strictest(*(status_reading(res.type, e, _status_of(res, e)) for e in elements))


def _fact(ctx: FhirFacts, fact_type: str, text_: str, value: dict, citation, status: StatusReading, review: Review,
          scope: str | None, base_conf: float = 0.93, document_only: bool = False) -> None:
    review.add(status.reason if status.treatment == "review" else None, 0.8)
    ctx.facts.append(FactProposal(
        fact_type=fact_type, fact_text=text_ + (f" ({status.reason})" if status.treatment == "document" else ""),
        structured_value=value, citation=citation, confidence=V.confidence(base_conf, review.factors),
        wants_review=bool(review.reasons), review_reason=review.reason,
        document_fact_only=document_only or status.treatment == "document", scope=scope))


def read_allergy(ctx: FhirFacts, res: Resource, base: Review, scope: str | None) -> None:
    status = _statuses(res, "verificationStatus", "clinicalStatus")
    if status.treatment in ("withdrawn", "not_done"):
        return
    review = base.copy()
    code = res.get("code")
    none_code = next((c for c in concept_codes(code) if c in NO_KNOWN_ALLERGY), None) \
        if code_in(code, SNOMED) else None
    name, quoted = concept_name(code)
    if none_code:
        value = AllergyValue(substance="", status=NO_KNOWN_ALLERGY_STATUS[none_code], no_known_allergies=True,
                             code=none_code).model_dump(exclude_none=True)
        _fact(ctx, "allergy", name or NO_KNOWN_ALLERGY[none_code], value,
              ctx.cite_at(res, ("code",), quoted, ctx.path("allergies")), status, review, scope, 0.95,
              document_only=True)
        return
    if quoted is None:
        review.add("the allergy names no substance", 0.5)
        quoted, name = res.get("resourceType"), "unnamed substance"
    reactions, severity = [], None
    reaction_list = res.get("reaction")
    for item in reaction_list.items if reaction_list is not None else []:
        manifestations = item.get("manifestation")
        reactions += [n for n, _ in map(concept_name, manifestations.items if manifestations else []) if n]
        severity = severity or text(item.get("severity")) or None
    category = res.get("category")
    value = AllergyValue(
        substance=name, reaction=", ".join(dict.fromkeys(reactions)) or None,
        severity=severity or text(res.get("criticality")) or None,
        allergen_type=text(category.items[0]) if category is not None and category.items else None,
        code=(concept_codes(code) or [None])[0], no_known_allergies=False,
    ).model_dump()
    value["verification_status"] = _status_of(res, "verificationStatus")
    value["clinical_status"] = _status_of(res, "clinicalStatus")
    parts = [f"Allergy: {name}"]
    if value["reaction"]:
        parts.append(f"reaction {value['reaction']}")
    if value["severity"]:
        parts.append(f"severity {value['severity']}")
    _fact(ctx, "allergy", ", ".join(parts), value, ctx.cite_at(res, ("code",), quoted, ctx.path("allergies")),
          status, review, scope)


def read_medication(ctx: FhirFacts, res: Resource, base: Review, scope: str | None,
                    by_reference: dict[str, Resource]) -> None:
    status = _statuses(res, "status", *(("intent",) if res.type == "MedicationRequest" else ()))
    if status.treatment in ("withdrawn", "not_done"):
        return
    review = base.copy()
    steps: tuple = ("medicationCodeableConcept",)
    concept = res.get("medicationCodeableConcept")
    name, quoted = concept_name(concept)
    if quoted is None and res.get("medicationReference") is not None:
        ref = res.get("medicationReference")
        steps = ("medicationReference",)
        reference = text(ref.get("reference"))
        target_code = by_reference[reference].get("code") if reference in by_reference else _contained_code(res,
                                                                                                          reference)
        if target_code is not None:
            name, _ = concept_name(target_code)
            concept = target_code
        quoted = ref.get("display") if text(ref.get("display")) else ref.get("reference")
        if not name:
            name = text(ref.get("display"))
        if not name or quoted is None:
            review.add("the medication is named only by a reference this file does not resolve", 0.5)
            name = name or text(ref.get("reference")) or "unnamed medication"
    if quoted is None:
        review.add("the medication names no drug", 0.5)
        quoted, name, steps = res.get("resourceType"), "unnamed medication", ()
    dosage_list = res.get("dosage") or res.get("dosageInstruction")
    dosage = dosage_list.items[0] if dosage_list is not None and dosage_list.items else None
    dose = frequency = route = None
    if dosage is not None and isinstance(dosage.value, dict):
        quantity = dosage.get("doseAndRate", 0, "doseQuantity")
        if quantity is not None and quantity.get("value") is not None:
            unit = text(quantity.get("unit")) or text(quantity.get("code"))
            dose = f"{res.raw(quantity.get('value'))} {unit}".strip()
        route = concept_name(dosage.get("route"))[0] or None
        timing_name = concept_name(dosage.get("timing", "code"))[0]
        repeat = dosage.get("timing", "repeat")
        if timing_name:
            frequency = timing_name
        elif repeat is not None and repeat.get("frequency") is not None and repeat.get("period") is not None:
            frequency = (f"{res.raw(repeat.get('frequency'))} times per {res.raw(repeat.get('period'))} "
                         f"{text(repeat.get('periodUnit'))}").strip()
        dose = dose or text(dosage.get("text")) or None
    start = (text(res.get("effectiveDateTime")) or text(res.get("effectivePeriod", "start"))
             or text(res.get("authoredOn")))
    value = MedicationValue(name=name, dose=dose, frequency=frequency, route=route,
                            start_date=first_date(start) if start else None).model_dump()
    value["code"] = (concept_codes(concept) or [None])[0]
    value["status"] = _status_of(res, "status")
    value["source_resource"] = res.type
    parts = [f"Takes {name}" if res.type == "MedicationStatement" else f"Prescribed {name}",
             dose or "", frequency or "", route or ""]
    _fact(ctx, "medication", " ".join(p for p in parts if p), value,
          ctx.cite_at(res, steps, quoted, ctx.path("medications")), status, review, scope)


def _contained_code(res: Resource, reference: str) -> Node | None:
    """The code of a Medication contained in the resource itself (``#med1``)."""
    contained = res.get("contained")
    if not reference.startswith("#") or contained is None:
        return None
    return next((c.get("code") for c in contained.items if isinstance(c.value, dict)
                 and c.value.get("id") == reference[1:]), None)


def read_condition(ctx: FhirFacts, res: Resource, base: Review, scope: str | None) -> None:
    status = _statuses(res, "verificationStatus", "clinicalStatus")
    if status.treatment in ("withdrawn", "not_done"):
        return
    review = base.copy()
    code = res.get("code")
    name, quoted = concept_name(code)
    if quoted is None:
        review.add("the condition names no diagnosis", 0.5)
        quoted, name = res.get("resourceType"), "unnamed condition"
    first: Node | None = next(iter(codings(code)), None)
    value = ProblemValue(description=name, code=text(first.get("code")) or None if first else None,
                         coding_system=_SYSTEMS.get(text(first.get("system")), text(first.get("system")) or None)
                         if first else None).model_dump()
    value["onset_date"] = first_date(text(res.get("onsetDateTime")))
    value["clinical_status"] = _status_of(res, "clinicalStatus")
    value["verification_status"] = _status_of(res, "verificationStatus")
    _fact(ctx, "problem", f"Problem: {name}" + (f" (since {value['onset_date']})" if value["onset_date"] else ""),
          value, ctx.cite_at(res, ("code",), quoted, ctx.path("problems")), status, review, scope)


def read_family_history(ctx: FhirFacts, res: Resource, base: Review, scope: str | None) -> None:
    """FamilyMemberHistory -> one family_history document fact per condition of the relative."""
    relative, _ = concept_name(res.get("relationship"))
    conditions = res.get("condition")
    items = [c for c in (conditions.items if conditions is not None else []) if isinstance(c.value, dict)]
    for i, item in enumerate(items):
        name, quoted = concept_name(item.get("code"))
        if quoted is None:
            continue
        review = base.copy()
        text_ = f"Family history: {relative or 'a relative'} - {name}"
        ctx.facts.append(FactProposal(
            fact_type="family_history", fact_text=text_,
            structured_value={"relative": relative or None, "condition": name,
                              "code": (concept_codes(item.get("code")) or [None])[0]},
            citation=ctx.cite_at(res, ("condition", i, "code"), quoted, ctx.path("family_history")),
            confidence=V.confidence(0.9, review.factors), wants_review=bool(review.reasons),
            review_reason=review.reason, document_fact_only=True, scope=scope))
