"""An answer's two opening lines, its flags of records that disagree, and the questions
suggested for the patient on screen, on real ingested intake forms."""

from __future__ import annotations

import dataclasses

import pytest

from domain.models import AnswerItem, AnswerSections, Citation
from domain.policy.answers.verifier import RetrievedEvidence, citation_key, verify_answer
from core.services.answer.answering import ask
from core.services.answer.contradictions import record_contradictions
from core.services.answer.summary import summarize, summary_problems
from core.services.answer.suggestions import suggested_questions, would_answer
from core.services.workbench import open_workbench
from domain.settings import Settings
from golden.fixtures import INTAKE_CASES, render_intake
from golden.ground_truth import ExpectedAllergy, ExpectedMedication
from tests.support.accounts import seed_test_accounts
from tests.support.pipeline import chart_patient, ingest

BASE = INTAKE_CASES[0]


def _form(name, *, allergies_printed, allergies=(), meds=(), phone=None):
    return dataclasses.replace(BASE, name=name, notes=(), review_terms=(), margin_note=None, past_history="",
                               allergies_printed=allergies_printed, allergies=allergies, phone=phone or BASE.phone,
                               medications=tuple(ExpectedMedication(*m) for m in meds))


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    """One intake says NKDA; a later one documents a penicillin allergy."""
    wb = open_workbench(Settings(data_dir=tmp_path_factory.mktemp("contradictions")))
    seed_test_accounts(wb)
    patient = chart_patient(wb, BASE.patient)
    lisinopril = ("Lisinopril", "10 mg", "daily", "Lisinopril 10 mg daily")
    first = ingest(wb, patient, render_intake(_form("nkda", allergies_printed="NKDA", meds=(lisinopril,))),
                   "intake_form", "first.pdf")
    second = ingest(wb, patient, render_intake(_form("pcn", allergies_printed="Penicillin (hives)",
                                                     allergies=(ExpectedAllergy("Penicillin", "hives"),),
                                                     meds=(lisinopril,), phone="(541) 555-0142")),
                    "intake_form", "second.pdf")
    yield wb, patient, first, second
    wb.close()


def _documents(item: dict) -> set[str]:
    return {c["source_id"] for c in item["citations"]}


def test_an_allergy_answer_flags_nkda_beside_the_penicillin_allergy_citing_both(record):
    wb, patient, first, second = record
    payload = ask(wb, patient["id"], "What allergies does she have?").payload
    (flag,) = payload["contradictions"]
    assert flag["text"].startswith("Records disagree: the record says “no known drug allergies”, and it also lists an allergy")
    assert "Penicillin" in flag["text"] and "No known drug allergies" in flag["text"]
    assert _documents(flag) == {f"documents:{first['document_id']}", f"documents:{second['document_id']}"}
    assert payload["verifier"]["contradictions_removed"] == 0
    assert "Records disagree" in payload["text"]


def test_the_summary_is_two_lines_copied_from_the_answer_and_passes_the_verifier(record):
    wb, patient, _, _ = record
    payload = ask(wb, patient["id"], "What allergies does she have?").payload
    first, second = payload["summary"]
    findings = payload["sections"]["patient_findings"]
    assert first["text"].startswith(findings[0]["text"].rstrip("."))  # the answer's own first finding
    assert second["text"] == "Also: 1 disagreement in the record to check."
    answer = [AnswerItem.model_validate(i) for name in ("patient_findings", "needs_review", "guideline_evidence",
                                                         "missing") for i in payload["sections"][name]]
    answer += [AnswerItem.model_validate(f) for f in payload["contradictions"]]
    for line in payload["summary"]:
        assert summary_problems(AnswerItem.model_validate(line), answer) is None
        assert line["citations"]  # every line that states something cites it
    # The first line stands as a patient finding before the answer verifier, on the evidence
    # the answer cites.
    evidence = RetrievedEvidence(verified={citation_key(Citation.model_validate(c)) for i in findings
                                           for c in i["citations"]})
    kept, removed = verify_answer(AnswerSections(patient_findings=[AnswerItem.model_validate(first)]), evidence)
    assert not removed and kept.patient_findings
    assert payload["text"].startswith(first["text"] + "\n" + second["text"])


def test_a_refusal_summary_says_it_is_a_refusal_and_why_and_still_flags(record):
    wb, patient, _, _ = record
    payload = ask(wb, patient["id"], "Which antibiotic should I prescribe her?").payload
    assert payload["refused"]
    first, second = payload["summary"]
    assert first["text"] == "This is a refusal: I can't recommend treatment." and not first["citations"]
    assert second["text"].startswith("1 disagreement in the record to check; shown instead, from the record: ")
    assert payload["contradictions"]  # the allergies bear on any treatment: the flag comes with them
    out = ask(wb, patient["id"], "Write me a poem about the sea").payload
    assert [line["text"] for line in out["summary"]][1] == "Nothing from the record is shown for it."
    assert out["summary"][0]["text"].startswith("This is a refusal: ") and not out["contradictions"]


def test_a_question_the_flag_does_not_bear_on_carries_none(record):
    wb, patient, _, _ = record
    payload = ask(wb, patient["id"], "What is her family history?").payload
    assert payload["contradictions"] == []
    assert "disagree" not in " ".join(line["text"] for line in payload["summary"])


def test_the_record_holds_the_contradiction_whatever_was_asked(record):
    wb, patient, _, _ = record
    found, by_id = record_contradictions(wb, patient["id"])
    assert [c.pair for c in found] == ["no-known-allergies-vs-allergy"]
    assert all(i in by_id for c in found for i in (*c.first, *c.second))


def test_a_summary_line_citing_what_the_answer_does_not_cite_is_dropped():
    shown = Citation(source_type="document", source_id="documents:1", page_or_section="page 1",
                     field_or_chunk_id="allergies[0]", quote_or_value="Penicillin (hives)")
    other = shown.model_copy(update={"source_id": "documents:9"})
    sections = AnswerSections(patient_findings=[AnswerItem(text="Allergy: Penicillin (reaction: hives)",
                                                           citations=[shown], evidence_ids=["fact:1"])])
    lines, dropped = summarize(sections, [])
    assert [line.text for line in lines] == ["Allergy: Penicillin (reaction: hives).",
                                             "Nothing needs review and nothing was reported missing."]
    assert dropped == 0
    forged = AnswerItem(text="Allergy: Penicillin", citations=[other], evidence_ids=["fact:1"])
    assert summary_problems(forged, sections.patient_findings) == "cites a source the answer does not cite"
    assert summary_problems(AnswerItem(text="x", evidence_ids=["fact:7"]), sections.patient_findings)


def test_an_answer_of_nothing_found_opens_with_what_is_missing():
    sections = AnswerSections(missing=[AnswerItem(text="No TSH result on record.", kind="missing")])
    lines, _ = summarize(sections, [])
    assert [line.text for line in lines] == ["No TSH result on record.",
                                             "Nothing needs review and nothing else was reported missing."]


def test_suggested_questions_follow_what_the_record_holds_and_are_all_answered(record):
    wb, patient, _, _ = record
    suggestions = suggested_questions(wb, patient["id"])
    questions = [s.question for s in suggestions]
    assert "What allergies are on record?" in questions and "What medications is she taking?" in questions
    assert not any("labs" in q for q in questions)  # no lab result on record
    for s in suggestions:
        payload = ask(wb, patient["id"], s.question).payload
        assert not payload["refused"], s.question
        assert payload["sections"]["patient_findings"], s.question
        assert s.why and "_" not in s.why


def test_no_suggestion_for_an_empty_record_and_none_the_product_would_refuse(tmp_path):
    wb = open_workbench(Settings(data_dir=tmp_path))
    seed_test_accounts(wb)
    patient = chart_patient(wb, BASE.patient)
    assert suggested_questions(wb, patient["id"]) == []
    wb.close()
    assert would_answer("What allergies are on record?")
    assert not would_answer("Can I send her home?")  # a decision: refused
    assert not would_answer("How much metformin should I give her?")
    assert not would_answer("Write me a poem")


def test_the_newest_documents_questions_come_first(tmp_path):
    from golden.fixtures import LAB_CASES, render_lab

    wb = open_workbench(Settings(data_dir=tmp_path))
    seed_test_accounts(wb)
    lab = LAB_CASES[2]  # the same person as the intake form
    patient = chart_patient(wb, lab.patient)
    ingest(wb, patient, render_intake(_form("form", allergies_printed="NKDA",
                                            meds=(("Lisinopril", "10 mg", "daily", "Lisinopril 10 mg daily"),))),
           "intake_form", "form.pdf")
    assert suggested_questions(wb, patient["id"])[0].question != "What deserves attention in her labs?"
    ingest(wb, patient, render_lab(lab), "lab_pdf", "lab.pdf")  # newer: its question leads
    assert suggested_questions(wb, patient["id"])[0].question == "What deserves attention in her labs?"
    wb.close()


def test_contradictions_are_found_once_per_record_version_and_again_after_a_write(tmp_path, monkeypatch):
    from core.services.answer import contradictions

    calls = []
    real = contradictions._record_contradictions
    monkeypatch.setattr(contradictions, "_record_contradictions", lambda wb, pid: calls.append(pid) or real(wb, pid))
    wb = open_workbench(Settings(data_dir=tmp_path / "data"))
    try:
        seed_test_accounts(wb)
        patient = chart_patient(wb, BASE.patient)
        ingest(wb, patient, render_intake(_form("nkda", allergies_printed="NKDA")), "intake_form", "first.pdf")
        ask(wb, patient_id=patient["id"], question="Any allergies?")
        ask(wb, patient_id=patient["id"], question="What deserves attention?")
        assert calls == [patient["id"]]  # two questions, one search of the record
        ingest(wb, patient, render_intake(_form("pcn", allergies_printed="Penicillin (hives)",
                                                allergies=(ExpectedAllergy("Penicillin", "hives"),))),
               "intake_form", "second.pdf")
        found, _ = record_contradictions(wb, patient["id"])
        assert len(calls) == 2 and [c.pair for c in found] == ["no-known-allergies-vs-allergy"]  # the write is seen
    finally:
        wb.close()
