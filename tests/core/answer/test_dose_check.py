"""Checking a recorded dose is a look-up (issue 24, defect 4): "Can you double-check her
metformin dose?" is answered with the dose as the record states it, cited, and a note
that no dose is judged; choosing or changing a dose is still declined."""

from __future__ import annotations

from datetime import date

from core.services.admin.patients import add_patient
from core.services.answer.answering import ask
from domain.policy.answers.supervisor import CHECK_A_DOSE_CAVEAT
from tests.support.pipeline import ingest
from tests.support.synthetic import docx_letter


def test_a_dose_check_answers_with_the_cited_dose_and_a_dose_decision_is_declined(wb):
    patient = add_patient(wb, mrn="UN-771045", first="Philippa", last="Trevanion", dob=date(1958, 8, 23), sex="F",
                          by="dr.reviewer")
    letter = docx_letter("Patient: Philippa TREVANION    Born: 23/08/1958    Unit no.: UN-771045", "Hello team,",
                         "Please review her diabetes.", "Medications: Metformin 1000 mg twice daily",
                         "Best wishes,", "Dr Caspian Oduya")
    report = ingest(wb, patient, letter, "referral_docx", "letter.docx")
    checked = ask(wb, patient["id"], "Can you double-check her metformin dose?").payload
    assert not checked["refused"] and checked["caveat"] == CHECK_A_DOSE_CAVEAT
    (line,) = [i for i in checked["sections"]["patient_findings"] if "Metformin" in i["text"]]
    assert "1000 mg" in line["text"] and line["citations"][0]["source_id"] == f"documents:{report['document_id']}"
    for question in ("What dose should I give her?", "Should I increase her metformin?"):
        declined = ask(wb, patient["id"], question).payload
        assert declined["refused"], question
