"""The chart checks' alerts in the app: the overview shows them first, beside the
critical results, with the facts they cite; the review queue lists the ones not yet
acknowledged, and a reviewer acknowledges one with a note and a click, after which the
overview says who did, when, and the note. A viewer sees them without the control."""

from __future__ import annotations

import dataclasses

from core.services.checks.alerts import patient_alerts
from golden.fixtures import INTAKE_CASES, lab_case, render_intake, render_lab
from golden.ground_truth import ExpectedMedication
from tests.support.app_support import run_home
from tests.support.pipeline import chart_patient, ingest

LAB = lab_case("split_range_cmp")  # potassium 6.8 mmol/L on a CMP


def seeded(wb):
    patient = chart_patient(wb, LAB.patient)
    intake = dataclasses.replace(
        INTAKE_CASES[0], name="alerts_page", patient=LAB.patient, notes=(), review_terms=(), margin_note=None,
        past_history="", medications=(ExpectedMedication("Spironolactone", "25 mg", "daily", "Spironolactone 25 mg daily"),),
        allergies_printed="NKDA", allergies=())
    ingest(wb, patient, render_intake(intake), "intake_form", "meds.pdf")
    ingest(wb, patient, render_lab(LAB), "lab_pdf", "cmp.pdf")
    return patient


def _alert_boxes(at):
    return [e.value for e in [*at.error, *at.warning, *at.info] if e.value.startswith("**Alert")]


def test_overview_shows_alerts_first_with_their_facts_and_the_queue_acknowledges_them(app_env):
    patient = seeded(app_env)
    at = run_home(patient_id=patient["id"])
    assert not at.exception, at.exception
    boxes = _alert_boxes(at)
    k_sparing = next(b for b in boxes if "Spironolactone" in b and "6.8" in b)
    assert "cmp.pdf" in k_sparing and "meds.pdf" in k_sparing and "not acknowledged yet" in k_sparing
    errors = [e.value for e in at.error]
    assert errors.index(k_sparing) < next(i for i, e in enumerate(errors) if e.startswith("Critical:"))

    at.switch_page("app_pages/review_queue.py").run()
    assert not at.exception, at.exception
    alert = next(a for a in patient_alerts(app_env, patient["id"]) if a["rule_id"].startswith("drug-lab.potassium-sparing"))
    key = f"rq-alert-{alert['alert_id']}"
    at.button(key=f"{key}-ack").click().run()  # no note yet: refused, nothing recorded
    assert any("note" in e.value for e in at.error)
    assert not next(a for a in patient_alerts(app_env, patient["id"]) if a["alert_id"] == alert["alert_id"])["acknowledged"]
    at.text_input(key=f"{key}-note").input("Potassium repeated, spironolactone noted").run()
    at.button(key=f"{key}-ack").click().run()
    assert not at.exception, at.exception
    done = next(a for a in patient_alerts(app_env, patient["id"]) if a["alert_id"] == alert["alert_id"])
    assert done["acknowledged_by"] == "dr.reviewer" and done["acknowledgement_note"].startswith("Potassium repeated")
    assert not [b for b in at.button if b.key == f"{key}-ack"]  # it has left the list

    again = run_home(patient_id=patient["id"])
    shown = next(b for b in _alert_boxes(again) if "Spironolactone" in b)
    assert "acknowledged by dr.reviewer" in shown and "Potassium repeated" in shown


def test_a_viewer_reads_the_alerts_without_the_control(app_env):
    patient = seeded(app_env)
    at = run_home(patient_id=patient["id"], user="dr.viewer")
    at.switch_page("app_pages/review_queue.py").run()
    assert not at.exception, at.exception
    assert any("Spironolactone" in m.value for m in at.markdown if m.value.startswith("**Alert"))
    assert not [b for b in at.button if (b.key or "").startswith("rq-alert-")]
