"""Answers over a record kept per record version (``storage.record_version.kept``): the
same answers as when everything is rebuilt per question, in any order of questions,
and never a stale one after a write."""

from __future__ import annotations

import dataclasses

import pytest

from core.services.answer import evidence_items
from core.services.answer.answering import ask
from core.services.review.corrections import correct_fact
from core.services.review.retraction import delete_document
from golden.fixtures import INTAKE_CASES, render_intake, render_lab
from storage import record_version
from tests.support.pipeline import CASE, ingest, repeat_with_changed_value

QUESTIONS = [
    "What is her latest A1c?", "List her medications", "Any allergies?", "What deserves attention in her labs?",
    "Should I increase her atorvastatin dose?", "cough and fever", "Show all her cholesterol results",
    "Is she on apixaban?", "Does she have gout?", "What was her TSH?", "What is her hemoglobin?",
]


def comparable(payload: dict) -> dict:
    """The answer without what differs per request (its id and timings)."""
    out = {k: v for k, v in payload.items() if k not in ("request_id", "latency_ms")}
    out["handoffs"] = [{k: v for k, v in h.items() if k != "latency_ms"} for h in payload["handoffs"]]
    return out


def rebuilt(wb, patient_id, question, previous=None):
    record_version._kept.pop(wb.db, None)  # nothing kept: everything read and built for this question
    wb.extras.pop("guideline_results", None)  # and every guideline search run again
    return ask(wb, patient_id, question, previous=previous)


@pytest.fixture
def record(wb):
    from core.services.answer.corpus import index_guideline_corpus

    index_guideline_corpus(wb)
    patient, _, repeat = repeat_with_changed_value(wb)  # a chart, a document and a conflict held for review
    intake = dataclasses.replace(INTAKE_CASES[0], patient=CASE.patient)
    ingest(wb, patient, render_intake(intake), "intake_form", "intake.pdf")
    return patient, repeat


def test_kept_answers_are_the_rebuilt_answers_in_any_order(wb, record, monkeypatch):
    patient, _ = record
    expected = {q: comparable(rebuilt(wb, patient["id"], q).payload) for q in QUESTIONS}
    loads = []
    load = evidence_items._load_candidates
    monkeypatch.setattr(evidence_items, "_load_candidates", lambda *a: loads.append(1) or load(*a))
    record_version._kept.pop(wb.db, None)
    for q in [*QUESTIONS, *reversed(QUESTIONS)]:  # each question after every other, kept records shared
        assert comparable(ask(wb, patient["id"], q).payload) == expected[q], q
    assert len(loads) == 1  # the record was read once for all these questions
    searched = []
    searcher = wb.extras["guideline_searcher"]
    monkeypatch.setattr(searcher, "search", lambda *a, _s=searcher.search, **k: searched.append(a) or _s(*a, **k))
    assert comparable(ask(wb, patient["id"], "What deserves attention in her labs?").payload) == \
        expected["What deserves attention in her labs?"]
    assert not searched  # the same searches by the same searcher: their results kept
    follow = rebuilt(wb, patient["id"], "and her LDL?", previous="What is her latest A1c?")
    ask(wb, patient["id"], "What deserves attention in her labs?")
    again = ask(wb, patient["id"], "and her LDL?", previous="What is her latest A1c?")
    assert comparable(again.payload) == comparable(follow.payload)


def test_a_write_is_seen_by_the_next_question(wb, record):
    patient, repeat = record
    first = ask(wb, patient["id"], "What is her latest A1c?").payload["text"]
    a1c = next(f for f in repeat["facts"] if f["structured_value"].get("test_name") == "Hemoglobin A1c")
    assert "8.4" not in first
    correct_fact(wb, a1c["fact_id"], by="dr.reviewer", value="8.4", reason="misread", resolution="replace")
    assert "8.4" in ask(wb, patient["id"], "What is her latest A1c?").payload["text"]
    later = render_lab(dataclasses.replace(CASE, collection_date="2031-02-03"))
    added = ingest(wb, patient, later, "lab_pdf", "later.pdf")
    assert "2031-02-03" in ask(wb, patient["id"], "What is her latest A1c?").payload["text"]
    delete_document(wb, added["document_id"], by="dr.reviewer")
    assert "2031-02-03" not in ask(wb, patient["id"], "What is her latest A1c?").payload["text"]


def test_what_is_kept_is_bounded(wb, monkeypatch):
    patient, _, _ = repeat_with_changed_value(wb)
    monkeypatch.setattr(record_version, "KEPT_PER_DATABASE", 2)
    for q in ("What is her latest A1c?", "List her medications", "What is her hemoglobin?"):
        ask(wb, patient["id"], q)
    assert len(record_version._kept[wb.db]) <= 2
    seen = []
    for n in range(3):  # one result per (patient, what): a newer version replaces the older
        seen.append(record_version.kept(wb.db, patient["id"], "test", lambda: n))
        with wb.db.cursor() as cur:
            record_version.bump(cur, [patient["id"]], "test")
    assert seen == [0, 1, 2]
    assert sum(1 for key in record_version._kept[wb.db] if key[1] == "test") == 1
