"""Questions about vital signs answered with the cited readings, as lab questions are:
newest first, each cited to its sheet and row; a reading held for review shown as such;
another sign's readings not mixed in; a deleted document's readings gone."""

from __future__ import annotations

from datetime import date

import pytest

from core.services.admin.patients import add_patient
from core.services.answer.answering import ask
from core.services.review.retraction import delete_document
from tests.support.file_builders import letter_with_tables, pdf, sheets_workbook
from tests.support.pipeline import ingest

BOOK = {
    "Front sheet": [["Name", "Augustin Moreau-Halloran"], ["Date of birth", "1962-03-08"], ["MRN", "AM-90312"]],
    "Observations": [["Date", "Time", "B/P", "HR", "Temp (C)", "SpO2"],
                     ["2026-05-01", "06:00", "152/94", 112, 38.2, "93%"],
                     ["2026-05-01", "14:00", "146/90", 1120, 37.6, "95%"]],
}


@pytest.fixture
def chart(wb):
    patient = add_patient(wb, mrn="AM-90312", first="Augustin", last="Moreau-Halloran", dob=date(1962, 3, 8), sex="M",
                          by="dr.reviewer")
    report = ingest(wb, patient, sheets_workbook(BOOK), "clinical_workbook", "obs.xlsx")
    return patient, report["document_id"]


def texts(payload, section) -> list[str]:
    return [i["text"] for i in payload["sections"][section]]


def test_blood_pressure_is_answered_with_the_cited_readings_newest_first(wb, chart):
    patient, document_id = chart
    out = ask(wb, patient["id"], "What is his blood pressure?").payload
    assert not out["refused"]
    assert texts(out, "patient_findings") == ["Blood pressure 146/90 mmHg, measured 2026-05-01 14:00",
                                              "Blood pressure 152/94 mmHg, measured 2026-05-01 06:00"]
    cit = out["sections"]["patient_findings"][1]["citations"][0]
    assert cit["source_id"] == f"documents:{document_id}" and cit["page_or_section"] == "Observations!A2:F2"
    assert cit["quote_or_value"] == "152/94"
    assert not any("Pulse" in t or "Temperature" in t for t in texts(out, "patient_findings"))


def test_a_pulse_held_for_review_is_shown_for_review_never_as_a_finding(wb, chart):
    patient, _ = chart
    out = ask(wb, patient["id"], "What was his pulse?").payload
    assert texts(out, "patient_findings") == ["Pulse 112 /min, measured 2026-05-01 06:00"]
    assert any("1120" in t and "plausible range" in t for t in texts(out, "needs_review"))


def test_a_question_about_his_vitals_lists_every_sign(wb, chart):
    patient, _ = chart
    said = " | ".join(texts(ask(wb, patient["id"], "What are his vital signs?").payload, "patient_findings"))
    for piece in ("146/90", "152/94", "112 /min", "38.2 °C", "37.6 °C", "93 %", "95 %"):
        assert piece in said


def test_a_sign_not_on_record_is_said_to_be_missing(wb, chart):
    patient, _ = chart
    out = ask(wb, patient["id"], "What is his weight?").payload
    assert out["sections"]["patient_findings"] == []
    assert any("weight" in t.lower() for t in texts(out, "missing"))


def test_deleting_the_workbook_takes_its_readings_out_of_answers(wb, chart):
    patient, document_id = chart
    delete_document(wb, document_id, by="dr.reviewer")
    out = ask(wb, patient["id"], "What is his blood pressure?").payload
    assert out["sections"]["patient_findings"] == [] and out["sections"]["needs_review"] == []
    assert any("blood pressure" in t.lower() for t in texts(out, "missing"))


@pytest.mark.parametrize("question", ["What labs does he have?", "Any critical results?", "Show me his lab results"])
def test_a_question_about_labs_or_results_is_not_answered_with_vital_signs(wb, chart, question):
    from core.services.answer.corpus import index_guideline_corpus

    index_guideline_corpus(wb)  # a critical result brings its guidance along
    patient, _ = chart
    ingest(wb, patient, pdf(text="\n".join([
        "CITY LAB   Patient: Moreau-Halloran, Augustin   DOB: 03/08/1962   MRN: AM-90312",
        "Collected: 05/02/2026",
        "Potassium 6.9 mmol/L (3.5-5.1) HH",
        "Sodium 139 mmol/L (135-145)",
    ])), "lab_pdf", "lab.pdf")
    said = " | ".join(texts(ask(wb, patient["id"], question).payload, "patient_findings"))
    assert "Potassium" in said
    assert "Blood pressure" not in said and "146/90" not in said


def test_readings_held_for_review_are_listed_newest_first(wb):
    # A clinic letter's table of visits (written after the rule), every reading held for
    # review: "What is her blood pressure?" led with the oldest of the three.
    patient = add_patient(wb, mrn="HF-22041", first="Elspeth", last="Marchbank-Oyelaran", dob=date(1972, 10, 17),
                          sex="F", by="dr.reviewer")
    ingest(wb, patient, letter_with_tables([["Date", "BP (mmHg)", "Pulse"], ["03/11/2026", "128/76", "72"],
                                ["01/12/2026", "124/70", "68"], ["17/11/2026", "141/88", "96"]]),
           "referral_docx", "clinic-letter.docx")
    out = ask(wb, patient["id"], "What is her blood pressure?").payload
    assert [t.split(" — ")[0] for t in texts(out, "needs_review")] == [
        "Blood pressure 124/70 mmHg, measured 2026-12-01", "Blood pressure 141/88 mmHg, measured 2026-11-17",
        "Blood pressure 128/76 mmHg, measured 2026-11-03"]
