"""Clinical context end to end: an intake PDF through attach_and_extract and the
worker. A hedged allergy ("shellfish?") stays a review item even after a person
approves the document's identity; a relative's illness written under past history
is family history, never a patient problem; a denied red flag raises none."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from domain.policy.context.mentions import red_flag
from core.services.review.facts import chart, document_report
from core.services.ingest.ingestion import attach_and_extract
from core.services.admin.patients import add_patient
from core.services.review.decisions import decide_identity
from core.services.ingest.worker import Worker
from golden.fixtures import ExpectedAllergy, intake_case, render_intake

CASE = replace(
    intake_case("two_column_pregnancy_note"), name="context_hedged_family_denied",
    allergies_printed="Penicillin (hives); shellfish?",
    allergies=(ExpectedAllergy("Penicillin", "hives"),),
    family_history=("mother had breast cancer",),
    past_history="Asthma, mother had breast cancer",
    chief_concern="Cough for 3 days, denies chest pain",
    notes=("Denies chest pain.",),
    review_terms=("shellfish",),
)


def _ingest_for_someone_else(wb):
    """The form names its own patient; filed under another chart it is quarantined
    until a person approves the identity."""
    other = add_patient(wb, mrn="CTX-0001", first="Rosalind", last="Featherstonehaugh", dob=date(1949, 2, 3),
                        by="dr.reviewer")
    attached = attach_and_extract(wb, patient_id=other["id"], source="intake.pdf", data=render_intake(CASE),
                                  filename="intake.pdf", doc_type="intake_form", by="dr.reviewer")
    job = Worker(wb).run_specific(attached.job["id"])
    assert job["status"] == "succeeded", (job["error_code"], job["error_message"])
    return other, document_report(wb, attached.document["id"])


def _by_subject(report, fact_type, key, word):
    return [f for f in report["facts"] if f["fact_type"] == fact_type
            and word in str((f["structured_value"] or {}).get(key) or f["fact_text"]).lower()]


def test_hedged_allergy_is_never_promoted_even_after_identity_approval(wb):
    patient, report = _ingest_for_someone_else(wb)
    assert report["identity"]["status"] == "identity_mismatch_quarantined"
    decide_identity(wb, report["identity"]["identity_check_id"], approve=True, by="dr.reviewer",
                    reason="reviewed: the form belongs in this chart")
    after = document_report(wb, report["document_id"])

    [shellfish] = _by_subject(after, "allergy", "substance", "shellfish")
    assert shellfish["certainty"] == "needs_review"
    assert shellfish["promotion_status"] not in ("promoted", "already_exists", "duplicate_skipped")
    assert shellfish["context"]["uncertain"] and "?" in shellfish["context"]["triggers"]
    allergies = {r["substance"].lower() for r in chart(wb, patient["id"])["chart_allergies"]}
    assert "penicillin" in allergies  # the unhedged allergy on the same form did go in
    assert not any("shellfish" in a for a in allergies)


def test_relatives_illness_is_family_history_and_denied_chest_pain_no_red_flag(wb):
    patient, report = _ingest_for_someone_else(wb)
    decide_identity(wb, report["identity"]["identity_check_id"], approve=True, by="dr.reviewer",
                    reason="reviewed: the form belongs in this chart")
    after = document_report(wb, report["document_id"])

    assert not _by_subject(after, "problem", "description", "breast cancer")
    family = _by_subject(after, "family_history", "condition", "breast cancer")
    assert family and all(f["certainty"] == "document_fact" for f in family)
    assert all(f["context"]["experiencer"] == "family" for f in family)
    problems = " ".join(str(r) for r in chart(wb, patient["id"])["chart_problems"]).lower()
    assert "breast cancer" not in problems

    chest = [f for f in after["facts"] if "chest pain" in f["citation"]["quote_or_value"].lower()]
    assert chest
    for fact in chest:
        assert red_flag(fact["citation"]["quote_or_value"]) is None
        assert "red-flag" not in (fact["review_reason"] or "") and "red flag" not in (fact["review_reason"] or "")
    [note] = [f for f in chest if "notes" in f["citation"]["field_or_chunk_id"] or f["fact_type"] == "problem"]
    assert note["context"]["negated"]
