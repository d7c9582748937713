"""The one glossary (ui/glossary.py): internal words in, plain words out; a document's
outcome said as a clinician reads it; confidence in bands; documents by name."""

from __future__ import annotations

import pytest

from core.services.review.outcome import DocumentOutcome, document_outcome
from ui import glossary, labels


def test_plain_words_replace_every_internal_word_and_never_print_an_unknown_code():
    for word in ("document_fact", "promoted", "superseded", "retracted", "identity_mismatch_quarantined",
                 "keep_as_document_fact", "free_box", "golden_gate", "handoffs", "page_cover"):
        said = glossary.plain(word)
        assert said and "_" not in said and said != word
    assert glossary.plain("brand_new_code") == "brand new code"
    assert glossary.plain(None) == glossary.plain("") == "—"
    # the words pages read through labels come from the glossary
    assert labels.certainty("document_fact") == glossary.TERMS["document_fact"]
    assert "not chart truth" not in labels.certainty("document_fact")
    assert "held back" not in labels.identity_status("identity_mismatch_quarantined")


@pytest.mark.parametrize("outcome, words, level", [
    (DocumentOutcome("other_patient", held=28), "held: names another patient", "error"),
    (DocumentOutcome("read", added=10), "read, 10 added to the chart", "success"),
    (DocumentOutcome("read", added=10, conflicts=4, need_review=3),
     "4 conflicts with the chart · 3 need review · 10 added to the chart", "warning"),
    (DocumentOutcome("read", conflicts=1, need_review=1), "1 conflict with the chart · 1 needs review", "warning"),
    (DocumentOutcome("read"), "read, nothing found", "warning"),
    (DocumentOutcome("read", added=10, held=9, other_patient_parts=("page 3",)),
     "page 3 names another patient · 10 added to the chart · 9 on hold", "error"),
    (DocumentOutcome("read", added=2, kept_with_document=5), "read, 2 added to the chart · 5 kept with the document",
     "success"),
    (DocumentOutcome("read", unread=3), "3 results were not read", "warning"),
    (DocumentOutcome("match_unclear", held=4, unread=2), "held: patient match needs review · 2 results were not read",
     "warning"),
    (DocumentOutcome("failed"), "could not be read", "error"),
    (DocumentOutcome("not_this_patient"), "rejected: not this patient", "warning"),
])
def test_outcome_words_say_what_happened(outcome, words, level):
    assert glossary.outcome_words(outcome) == words
    assert glossary.outcome_words(outcome.to_dict()) == words
    assert glossary.outcome_level(outcome) == level


def test_a_held_document_never_reads_as_verified():
    held = document_outcome("succeeded", "identity_mismatch_quarantined",
                            [{"fact_type": "lab_result", "certainty": "verified", "promotion_status": "awaiting_identity",
                              "identity_status": "identity_mismatch_quarantined"}] * 28)
    assert "verified" not in glossary.outcome_words(held) and "28" not in glossary.outcome_words(held)


@pytest.mark.parametrize("x, words", [(0.93, "read with high confidence"), (0.85, "read with high confidence"),
                                      (0.7, "read with fair confidence"), (0.33, "read with very low confidence"),
                                      (0.5, "read with low confidence"), (None, "confidence not stated")])
def test_confidence_in_words_not_numbers(x, words):
    assert glossary.confidence_words(x) == words


def test_documents_by_name_not_by_number():
    names = {1: "lab.pdf", 7: "fax.pdf"}
    assert glossary.document_names([1, 7], names) == "lab.pdf, fax.pdf"
    assert glossary.document_names([1, 1, 9], names) == "lab.pdf, a deleted document"
    assert glossary.document_names([], names) == "—"


def test_stages_and_hl7_places_in_words():
    assert glossary.stage("normalize", "document job") == "opening the file (reading a document)"
    assert glossary.stage("retrieve", "answer") == "searching the record (answering a question)"
    assert glossary.hl7_place("OBX", 1, 5) == "result 1, value"
    assert glossary.hl7_place("OBX", 1, 5, "Potassium") == "result 1 (Potassium)"
    assert "OBX" not in labels.location({"page_or_section": "OBX[1]-5"})


def test_a_reason_keeps_its_words_but_not_the_raw_confidence_number():
    assert glossary.reason("value read by OCR with low confidence (0.33)") == "value read by OCR with low confidence"
    assert glossary.reason("low confidence (0.61)") == "low confidence"
    # The review queue's words for it: the chart's bar (85 % for a problem) lies above what
    # the queue calls high (80 %), so "low confidence" beside "high (80 %)" contradicted itself.
    assert labels.review_reason("low confidence (0.80)") == (
        "not sure enough to enter the chart without a person's check")
    assert labels.review_reason("value read by OCR with low confidence (0.33)") == (
        "value read by OCR with low confidence")
    assert glossary.reason("unit 'mg/dL.' is not a known unit") == "unit 'mg/dL.' is not a known unit"
    assert glossary.reason("conflict_needs_review") == "differs from the chart: needs review"
    assert glossary.reason(None) == "—"
    assert glossary.patient_match_title("page 3") == "Is page 3 this patient's?"
