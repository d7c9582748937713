"""The chart checks on a real DuckDB workbench: documents read through the pipeline
raise alerts citing their facts, re-running changes nothing, deleting a document
withdraws what rested on it (kept for the audit), and acknowledgement records who,
when and why."""

from __future__ import annotations

import dataclasses

import pytest

from domain.errors import BadInput
from core.services.checks.alerts import acknowledge_alert, patient_alerts, run_checks
from core.services.review.decisions import decide_fact
from core.services.review.retraction import delete_document
from golden.fixtures import INTAKE_CASES, lab_case, render_intake, render_lab
from golden.ground_truth import ExpectedAllergy, ExpectedMedication
from tests.support.pipeline import chart_patient, count, ingest

LAB = lab_case("split_range_cmp")  # Tobias: potassium 6.8 mmol/L (HH) on a CMP, no INR
M = ExpectedMedication


def intake(medications, allergies_printed="NKDA", allergies=()):
    # Written for these tests: the same patient as the lab, the medicines the checks are about.
    return dataclasses.replace(
        INTAKE_CASES[0], name="checks_intake", patient=LAB.patient, medications=tuple(medications),
        allergies_printed=allergies_printed, allergies=tuple(allergies), notes=(), review_terms=(),
        margin_note=None, past_history="")


def fact_id(report, fact_type, word):
    return next(f["fact_id"] for f in report["facts"]
                if f["fact_type"] == fact_type and word.lower() in f["fact_text"].lower())


@pytest.fixture
def charted(wb):
    patient = chart_patient(wb, LAB.patient)
    meds = ingest(wb, patient, render_intake(intake([M("Lisinopril", "20 mg", "daily", "Lisinopril 20 mg daily"),
                                                     M("Warfarin", "5 mg", "daily", "Warfarin 5 mg daily")])),
                  "intake_form", "intake.pdf")
    labs = ingest(wb, patient, render_lab(LAB), "lab_pdf", "cmp.pdf")
    return patient, meds, labs


def by_rule(alerts):
    return {a["rule_id"]: a for a in alerts}


def test_reading_documents_raises_alerts_citing_every_fact(wb, charted):
    patient, meds, labs = charted
    alerts = by_rule(patient_alerts(wb, patient["id"]))
    ras = alerts["drug-lab.ras-inhibitor-potassium-high"]
    assert sorted(f["fact_id"] for f in ras["facts"]) == sorted([fact_id(meds, "medication", "lisinopril"),
                                                                 fact_id(labs, "lab_result", "potassium")])
    assert {f["filename"] for f in ras["facts"]} == {"intake.pdf", "cmp.pdf"}
    assert "6.8" in ras["message"] and ras["priority"] == "high" and not ras["acknowledged"]
    assert [f["fact_id"] for f in alerts["drug-lab.warfarin-inr-absent"]["facts"]] == \
        [fact_id(meds, "medication", "warfarin")]
    # High priority first.
    assert [a["priority"] for a in patient_alerts(wb, patient["id"])][0] == "high"


def test_running_again_changes_nothing(wb, charted):
    patient, _, _ = charted
    before = count(wb, "SELECT count(*) FROM chart_alerts")
    counts = run_checks(wb, patient["id"])
    assert counts["raised"] == 0 and counts["withdrawn"] == 0 and counts["kept"] == before
    assert count(wb, "SELECT count(*) FROM chart_alerts") == before


def test_deleting_the_lab_withdraws_its_alert_and_keeps_it_for_the_audit(wb, charted):
    patient, _, labs = charted
    ras = by_rule(patient_alerts(wb, patient["id"]))["drug-lab.ras-inhibitor-potassium-high"]
    acknowledge_alert(wb, ras["alert_id"], by="dr.reviewer", note="Seen; repeat sample drawn")
    delete_document(wb, labs["document_id"], by="dr.reviewer")
    assert "drug-lab.ras-inhibitor-potassium-high" not in by_rule(patient_alerts(wb, patient["id"]))
    kept = by_rule(patient_alerts(wb, patient["id"], include_withdrawn=True))["drug-lab.ras-inhibitor-potassium-high"]
    assert kept["status"] == "withdrawn" and "taken out of the chart" in kept["withdrawn_reason"]
    assert kept["acknowledged_by"] == "dr.reviewer" and kept["acknowledgement_note"] == "Seen; repeat sample drawn"
    assert not [f for f in kept["facts"] if f["fact_type"] == "lab_result" and f["live"]]


def test_rejecting_the_medication_withdraws_its_alerts(wb, charted):
    patient, meds, _ = charted
    decide_fact(wb, fact_id(meds, "medication", "warfarin"), approve=False, by="dr.reviewer",
                reason="not her medicine")
    assert "drug-lab.warfarin-inr-absent" not in by_rule(patient_alerts(wb, patient["id"]))
    assert "drug-lab.ras-inhibitor-potassium-high" in by_rule(patient_alerts(wb, patient["id"]))


def test_acknowledgement_names_who_when_and_a_note(wb, charted):
    patient, _, _ = charted
    alert = patient_alerts(wb, patient["id"])[0]
    with pytest.raises(BadInput) as refused:
        acknowledge_alert(wb, alert["alert_id"], by="dr.reviewer", note=" ")
    assert refused.value.code == "note_required"
    done = acknowledge_alert(wb, alert["alert_id"], by="dr.reviewer", note="Discussed with the team")
    assert done["acknowledged"] and done["acknowledged_by"] == "dr.reviewer" and done["acknowledged_at"]
    assert alert["alert_id"] not in {a["alert_id"] for a in patient_alerts(wb, patient["id"], unacknowledged_only=True)}
    with pytest.raises(BadInput) as twice:
        acknowledge_alert(wb, alert["alert_id"], by="dr.reviewer", note="again")
    assert twice.value.code == "already_decided"
    run_checks(wb, patient["id"])  # the same facts: the acknowledgement stands
    assert next(a for a in patient_alerts(wb, patient["id"]) if a["alert_id"] == alert["alert_id"])["acknowledged"]


def test_a_viewer_cannot_acknowledge(wb, charted):
    patient, _, _ = charted
    alert = patient_alerts(wb, patient["id"])[0]
    with pytest.raises(Exception) as refused:
        acknowledge_alert(wb, alert["alert_id"], by="dr.viewer", note="seen it")
    assert getattr(refused.value, "code", "") == "forbidden"


def test_allergy_and_no_known_allergies_across_documents(wb):
    patient = chart_patient(wb, LAB.patient)
    ingest(wb, patient, render_intake(intake([M("Amoxicillin", "500 mg", "three times daily",
                                                "Amoxicillin 500 mg three times daily")])),
           "intake_form", "first.pdf")
    assert not [a for a in patient_alerts(wb, patient["id"]) if a["kind"] in ("drug-allergy", "record-consistency")]
    second = dataclasses.replace(intake([M("Amoxicillin", "500 mg", "three times daily",
                                           "Amoxicillin 500 mg three times daily")],
                                        "Penicillin (rash)", [ExpectedAllergy("Penicillin", "rash")]),
                                 phone="(541) 555-0142")
    ingest(wb, patient, render_intake(second), "intake_form", "second.pdf")
    alerts = by_rule(patient_alerts(wb, patient["id"]))
    assert "drug-allergy.penicillins" in alerts
    assert {f["filename"] for f in alerts["record-consistency.no-known-allergies-vs-allergy"]["facts"]} == \
        {"first.pdf", "second.pdf"}
