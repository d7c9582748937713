"""A question about one antibiotic is answered with that antibiotic's susceptibility, not
the whole antibiogram: a held-out urine culture asked "Is the E. coli resistant to
trimethoprim?" listed all eleven results of two reports."""

from __future__ import annotations

from datetime import date

from core.services.admin.patients import add_patient
from core.services.answer.answering import ask
from golden.drawing import placed_text_pdf
from tests.support.pipeline import ingest

ROWS = [("Ampicillin", "R", ">=32"), ("Cefuroxime", "S", "4"), ("Gentamicin (high level)", "S", "<=1"),
        ("Ciprofloxacin", "I", "1")]


def _culture() -> bytes:
    lines = [(40, 40, "MICROBIOLOGY REPORT", 12, "hebo"),
             (40, 58, "Patient: ABERNETHY-COLE, Rufus   DOB: 1950-10-04   MRN: RA-55102   Collected: 2026-11-26"),
             (40, 76, "Specimen: Catheter urine"), (40, 90, "Organism isolated: Klebsiella oxytoca"),
             (40, 108, "Antibiotic"), (230, 108, "S/I/R"), (300, 108, "MIC (mg/L)")]
    for i, (name, code, mic) in enumerate(ROWS):
        lines += [(40, 122 + 14 * i, name), (230, 122 + 14 * i, code), (300, 122 + 14 * i, mic)]
    return placed_text_pdf(lines)


def _texts(payload) -> list[str]:
    return [i["text"] for s in ("patient_findings", "needs_review") for i in payload["sections"][s]]


def test_a_question_naming_an_antibiotic_gets_that_antibiotics_result(wb):
    patient = add_patient(wb, mrn="RA-55102", first="Rufus", last="Abernethy-Cole", dob=date(1950, 10, 4), sex="M",
                          by="dr.reviewer")
    ingest(wb, patient, _culture(), "lab_pdf", "culture.pdf")
    named = _texts(ask(wb, patient["id"], "Is the Klebsiella resistant to gentamicin?").payload)
    # "Gentamicin (high level)" is gentamicin's result (found in the review with a layout written there)
    assert [t.split(",")[0] for t in named if "[Susceptibility]" in t] == [
        "Gentamicin (high level) [Susceptibility] <=1 mg/L (susceptible)"]
    every = _texts(ask(wb, patient["id"], "Which antibiotics is the organism resistant to?").payload)
    assert sum("[Susceptibility]" in t for t in every) == len(ROWS)
    # An antibiotic the record has no result of narrows nothing: what is held is shown.
    other = _texts(ask(wb, patient["id"], "Is it sensitive to meropenem?").payload)
    assert sum("[Susceptibility]" in t for t in other) == len(ROWS)
