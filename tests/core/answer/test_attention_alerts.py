"""An attention answer lists the chart checks' alerts first, beside the critical
results, each citing the evidence of the facts it rests on; a look-up does not."""

from __future__ import annotations

import dataclasses

import pytest

from core.services.answer.answering import ask
from core.services.workbench import open_workbench
from domain.settings import Settings
from golden.fixtures import INTAKE_CASES, lab_case, render_intake, render_lab
from golden.ground_truth import ExpectedMedication
from tests.support.accounts import seed_test_accounts
from tests.support.pipeline import chart_patient, ingest

LAB = lab_case("split_range_cmp")  # potassium 6.8 mmol/L, critical


@pytest.fixture(scope="module")
def charted(tmp_path_factory):
    from core.services.answer.corpus import index_guideline_corpus

    wb = open_workbench(Settings(data_dir=tmp_path_factory.mktemp("alerts")))
    seed_test_accounts(wb)
    index_guideline_corpus(wb)  # an attention question searches the guidelines too
    patient = chart_patient(wb, LAB.patient)
    intake = dataclasses.replace(
        INTAKE_CASES[0], name="attention_alerts", patient=LAB.patient, notes=(), review_terms=(), margin_note=None,
        past_history="", medications=(ExpectedMedication("Losartan", "50 mg", "daily", "Losartan 50 mg daily"),),
        allergies_printed="NKDA", allergies=())
    meds = ingest(wb, patient, render_intake(intake), "intake_form", "meds.pdf")
    labs = ingest(wb, patient, render_lab(LAB), "lab_pdf", "cmp.pdf")
    yield wb, patient, meds, labs
    wb.close()


def test_attention_answer_lists_alerts_first_citing_their_facts(charted):
    wb, patient, meds, labs = charted
    payload = ask(wb, patient["id"], "What needs attention for this patient?").payload
    findings = payload["sections"]["patient_findings"]
    first = findings[0]
    assert first["text"].startswith("Chart alert: ") and "Losartan" in first["text"] and "6.8" in first["text"]
    quotes = {c["quote_or_value"] for c in first["citations"]}
    lab_quote = next(f["citation"]["quote_or_value"] for f in labs["facts"] if f["fact_text"].startswith("Potassium"))
    med_quote = next(f["citation"]["quote_or_value"] for f in meds["facts"] if "Losartan" in f["fact_text"])
    assert {lab_quote, med_quote} <= quotes
    critical = next(i for i, f in enumerate(findings) if f["text"].startswith("Critical") and "Potassium" in f["text"])
    # No problem list on record: losartan's low-priority note comes after the critical result.
    note = next(i for i, f in enumerate(findings) if f["text"].startswith("Chart note: ") and "Losartan" in f["text"])
    assert 0 < critical < note
    assert payload["verifier"]["removed"] == 0


def test_a_look_up_is_not_an_attention_answer(charted):
    wb, patient, _, _ = charted
    payload = ask(wb, patient["id"], "What is his latest potassium?").payload
    assert not [f for f in payload["sections"]["patient_findings"] if f["text"].startswith("Chart alert")]
