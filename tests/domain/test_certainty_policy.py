"""Certainty buckets and duplicate fingerprints (pure policies)."""

import pytest

from domain.models import BoundingBox, Certainty, Citation, FactProposal
from domain.policy.facts.certainty import classify
from domain.policy.facts.fingerprints import clinical_content_fingerprint, clinical_key, fact_fingerprint

BOX = BoundingBox(x=0.1, y=0.2, width=0.3, height=0.02)


def lab(value="148", unit="mg/dL", date="2026-04-10", confidence=0.95, box=BOX, **kw):
    return FactProposal(
        fact_type="lab_result", fact_text="LDL 148",
        structured_value={"test_name": "LDL Cholesterol", "value": value, "unit": unit, "reference_range": "<100",
                          "collection_date": date, "abnormal_flag": "high"},
        citation=Citation(source_type="lab_pdf", source_id="documents:1", page_or_section="page 1",
                          field_or_chunk_id="results[0]", quote_or_value="LDL Cholesterol 148", page=1,
                          bounding_box=box),
        confidence=confidence, **kw)


def test_complete_confident_cited_lab_is_verified():
    assert classify(lab(), citation_verified=True, paged=True).certainty is Certainty.VERIFIED


@pytest.mark.parametrize("proposal, reason", [
    (lab(unit=""), "unit"), (lab(date=None), "collection_date"), (lab(confidence=0.5), "low confidence"),
    (lab(wants_review=True, review_reason="value partly illegible"), "illegible"),
])
def test_incomplete_or_uncertain_goes_to_review(proposal, reason):
    out = classify(proposal, citation_verified=True, paged=True)
    assert out.certainty is Certainty.NEEDS_REVIEW and reason in out.reason


@pytest.mark.parametrize("test_name, loinc, value", [
    ("INR", None, "2.8"), ("Specific Gravity", None, "1.020"), ("pH", None, "6.5"), ("Chol/HDL ratio", None, "4.1"),
    ("Coag ratio (local)", "34714-6", "3.4"),
])
def test_a_dimensionless_result_needs_no_unit_in_any_format(test_name, loinc, value):
    for source_type, paged in (("lab_pdf", True), ("hl7v2_message", False), ("clinical_workbook", False)):
        p = lab(value=value, unit="")
        sv = {**p.structured_value, "test_name": test_name, **({"loinc": loinc} if loinc else {})}
        p = p.model_copy(update={"structured_value": sv, "citation": p.citation.model_copy(
            update={"source_type": source_type} | ({} if paged else {"page": None, "bounding_box": None}))})
        assert classify(p, citation_verified=True, paged=paged).certainty is Certainty.VERIFIED, (test_name, source_type)


def test_a_number_with_a_dimension_still_needs_its_unit():
    for name in ("Potassium", "Urine protein", "Albumin/Creat Ratio", "Something unknown"):
        p = lab(unit="")
        p = p.model_copy(update={"structured_value": {**p.structured_value, "test_name": name}})
        out = classify(p, citation_verified=True, paged=True)
        assert out.certainty is Certainty.NEEDS_REVIEW and out.reason == "missing unit", name


def test_unverifiable_quote_is_never_verified():
    out = classify(lab(), citation_verified=False, paged=True)
    assert out.certainty is Certainty.NEEDS_REVIEW
    assert classify(lab(confidence=0.2), citation_verified=False, paged=True).certainty is None


def test_paged_fact_without_box_is_not_promotable():
    assert classify(lab(box=None), citation_verified=True, paged=True).certainty is Certainty.DOCUMENT_FACT


def test_qualitative_value_needs_no_unit_and_empty_value_is_rejected():
    assert classify(lab(value="Negative", unit=""), citation_verified=True, paged=True).certainty is Certainty.VERIFIED
    assert classify(lab(value=""), citation_verified=True, paged=True).certainty is None


def test_demographics_and_preferences_are_document_facts():
    p = lab().model_copy(update={"fact_type": "preference", "document_fact_only": True})
    assert classify(p, citation_verified=True, paged=True).certainty is Certainty.DOCUMENT_FACT


def test_fingerprints_separate_source_content_and_key():
    v = {"test_name": "LDL Cholesterol", "value": "148", "unit": "mg/dL", "collection_date": "2026-04-10"}
    assert fact_fingerprint(1, "lab_pdf", "lab_result", "results[0]", v) != fact_fingerprint(
        2, "lab_pdf", "lab_result", "results[0]", v)
    # the same clinical content from any document is one fingerprint, per patient
    assert clinical_content_fingerprint(7, "lab_result", v, "") == clinical_content_fingerprint(
        7, "lab_result", {**v, "test_name": "ldl  cholesterol", "reference_range": "<130"}, "")
    assert clinical_content_fingerprint(7, "lab_result", v, "") != clinical_content_fingerprint(8, "lab_result", v, "")
    changed = {**v, "value": "151"}
    assert clinical_key(7, "lab_result", v, "") == clinical_key(7, "lab_result", changed, "")
    assert clinical_content_fingerprint(7, "lab_result", v, "") != clinical_content_fingerprint(
        7, "lab_result", changed, "")


# --------------------------------------------------------------------------- clinical context

from domain.models import ClinicalContext  # noqa: E402
from domain.policy.context.mentions import apply_to  # noqa: E402


def free_text(fact_type, value, quote, confidence=0.99, **kw):
    return FactProposal(
        fact_type=fact_type, fact_text=f"{fact_type}: {quote}", structured_value=value,
        citation=Citation(source_type="referral_docx", source_id="documents:2", page_or_section="paragraph 4",
                          field_or_chunk_id="allergies[0]", quote_or_value=quote),
        confidence=confidence, **kw)


@pytest.mark.parametrize("confidence", [0.99, 0.9])
def test_hedged_allergy_needs_review_whatever_the_confidence(confidence):
    p = apply_to(free_text("allergy", {"substance": "shellfish"}, "shellfish?", confidence))
    out = classify(p, citation_verified=True, paged=False)
    assert out.certainty is Certainty.NEEDS_REVIEW and out.reason == 'hedged: "?"'


def test_hedge_reason_keeps_the_extractors_own_reason():
    p = apply_to(free_text("medication", {"name": "warfarin"}, "possibly warfarin", wants_review=True,
                           review_reason="written in the margin"))
    out = classify(p, citation_verified=True, paged=False)
    assert out.reason == 'hedged: "possibly"; written in the margin'


@pytest.mark.parametrize("fact_type, value, quote, reason", [
    ("allergy", {"substance": "latex"}, "denies latex allergy", 'negated ("denies")'),
    ("problem", {"description": "asthma"}, "no asthma", 'negated ("no")'),
    ("allergy", {"substance": "peanuts"}, "sister allergic to peanuts", "about the patient's family"),
    ("problem", {"description": "influenza"}, "husband has influenza", "about the patient's contacts"),
    ("problem", {"description": "chest pain"}, "return if chest pain", 'hypothetical ("return if")'),
    ("medication", {"name": "metformin"}, "stopped metformin last year", 'historical ("stopped"'),
    ("medication", {"name": "aspirin"}, "Aspirin - patient does not take", 'negated ("does not take")'),
])
def test_negated_someone_elses_hypothetical_or_past_medication_is_never_verified(fact_type, value, quote, reason):
    p = apply_to(free_text(fact_type, value, quote))
    out = classify(p, citation_verified=True, paged=False)
    assert out.certainty is Certainty.DOCUMENT_FACT and out.reason.startswith(reason), out.reason


def test_a_stopped_medicine_is_history_before_any_doubt_the_reader_had():
    # A letter's sentence is always held for review; approving "I stopped his amlodipine"
    # had put amlodipine in the chart as a current medicine.
    told = apply_to(free_text("medication", {"name": "amlodipine"}, "I stopped his amlodipine last month",
                              wants_review=True, review_reason="read from a sentence of the letter"))
    out = classify(told, citation_verified=True, paged=False)
    assert out.certainty is Certainty.DOCUMENT_FACT and out.reason.startswith('historical ("stopped"')
    listed = free_text("medication", {"name": "amlodipine", "status": "Stopped 03/2026"}, "amlodipine",
                       wants_review=True, review_reason="a row OCR read with low confidence")
    out = classify(listed, citation_verified=True, paged=False)
    assert out.certainty is Certainty.DOCUMENT_FACT and "not a current medication" in out.reason


@pytest.mark.parametrize("fact_type, value, quote", [
    ("problem", {"description": "stroke"}, "history of stroke in 2015"),
    ("allergy", {"substance": "codeine"}, "codeine reaction years ago"),
])
def test_historical_problem_and_allergy_stay_promotable(fact_type, value, quote):
    p = apply_to(free_text(fact_type, value, quote))
    assert p.context.temporality == "historical"
    assert classify(p, citation_verified=True, paged=False).certainty is Certainty.VERIFIED


@pytest.mark.parametrize("fact_type, value, quote", [
    ("problem", {"description": "PE"}, "PE cannot be ruled out"),  # not a negation
    ("allergy", {"substance": "penicillin"}, "penicillin, not sure"),  # a hedge alone in its item
])
def test_doubt_written_as_a_denial_or_an_afterthought_needs_review(fact_type, value, quote):
    p = apply_to(free_text(fact_type, value, quote))
    out = classify(p, citation_verified=True, paged=False)
    assert out.certainty is Certainty.NEEDS_REVIEW and out.reason.startswith("hedged"), out.reason


def test_a_relatives_problem_is_never_the_patients_even_when_abbreviated():
    p = apply_to(free_text("problem", {"description": "MI"}, "Family history: MI"))
    assert p.fact_type == "family_history"
    assert classify(p, citation_verified=True, paged=False).certainty is Certainty.DOCUMENT_FACT


def test_family_problem_is_family_history_and_a_document_fact():
    p = apply_to(free_text("problem", {"description": "mother had breast cancer"}, "mother had breast cancer"))
    assert p.fact_type == "family_history"
    assert classify(p, citation_verified=True, paged=False).certainty is Certainty.DOCUMENT_FACT


def test_context_decides_even_without_the_hook():
    p = free_text("allergy", {"substance": "sulfa"}, "sulfa",
                  context=ClinicalContext(negated=True, triggers=("NKDA",)))
    assert classify(p, citation_verified=True, paged=False).certainty is Certainty.DOCUMENT_FACT
    hedged = p.model_copy(update={"context": ClinicalContext(uncertain=True, triggers=("query",))})
    assert classify(hedged, citation_verified=True, paged=False).reason == 'hedged: "query"'


def test_a_hedged_preference_is_not_a_clinical_doubt():
    p = apply_to(free_text("preference", {"value": "mornings"}, "mornings if possible, maybe Tuesday",
                           document_fact_only=True))
    assert classify(p, citation_verified=True, paged=False).certainty is Certainty.DOCUMENT_FACT


def _problem(status: str | None) -> FactProposal:
    value = {"description": "Community-acquired pneumonia", "code": "J18.9", "coding_system": "ICD-10"}
    if status is not None:
        value["status"] = status
    return FactProposal(
        fact_type="problem", fact_text="Problem: Community-acquired pneumonia (J18.9)", structured_value=value,
        citation=Citation(source_type="referral_docx", source_id="documents:1", page_or_section="page 1",
                          field_or_chunk_id="problems[2]", quote_or_value="Community-acquired pneumonia J18.9",
                          page=1, bounding_box=BOX),
        confidence=0.95)


@pytest.mark.parametrize("status, certainty, reason", [
    (None, Certainty.VERIFIED, None), ("Active", Certainty.VERIFIED, None), ("Chronic", Certainty.VERIFIED, None),
    ("History", Certainty.VERIFIED, None),  # a past problem told as history stays the patient's history
    ("Resolved", Certainty.DOCUMENT_FACT, "a past problem"), ("In remission", Certainty.DOCUMENT_FACT, "a past problem"),
    ("Inactive", Certainty.DOCUMENT_FACT, "a past problem"), ("Ruled out", Certainty.DOCUMENT_FACT, "not the patient's"),
])
def test_a_problem_recorded_as_resolved_is_history_never_a_current_chart_problem(status, certainty, reason):
    """A problem list's "Status" column: "Community-acquired pneumonia | J18.9 | Resolved"
    was charted as a current problem (a FHIR Condition resolved already was not)."""
    out = classify(_problem(status), citation_verified=True, paged=True)
    assert out.certainty is certainty
    assert reason is None or reason in out.reason
