"""The chart checks end to end, as a user runs them: `core ingest` with the production
settings (jobs read in the forkserver child) on a patient built for it, then
`core review alerts` and `core review acknowledge-alert`."""

from __future__ import annotations

import dataclasses

import pytest

from golden.fixtures import INTAKE_CASES, render_intake, render_lab
from golden.ground_truth import ExpectedLab, ExpectedMedication, LabCase, Patient
from tests.support.cli_support import as_json, cli

# Invented for this test: on lisinopril and warfarin, potassium 6.9 and INR 3.9.
PATIENT = Patient("Ottilie", "Brackenridge", "1949-05-17", "CHK-24690", sex="F")
LAB = LabCase("checks_k_inr", "classic", PATIENT, "2026-05-04", (
    ("Basic Metabolic Panel", (
        ExpectedLab("Sodium", "137", "mmol/L", "134-144", "normal"),
        ExpectedLab("Potassium", "6.9", "mmol/L", "3.5-5.2", "critical_high", "HH"),
        ExpectedLab("Creatinine", "1.02", "mg/dL", "0.57-1.00", "high", "H"),
    )),
    ("Coagulation", (ExpectedLab("INR", "3.9", "", "0.8-1.2", "high", "H"),)),
))
INTAKE = dataclasses.replace(
    INTAKE_CASES[0], name="checks_intake", patient=PATIENT, notes=(), review_terms=(), margin_note=None,
    medications=(ExpectedMedication("Lisinopril", "20 mg", "once daily", "Lisinopril 20 mg once daily"),
                 ExpectedMedication("Warfarin", "5 mg", "daily", "Warfarin 5 mg daily")),
    allergies_printed="NKDA", allergies=(), past_history="")


@pytest.fixture(scope="module")
def ingested(tmp_path_factory, cli_init):
    work = tmp_path_factory.mktemp("checks")
    d = cli_init(work / "data")
    as_json(cli(d, "user", "add", "--username", "dr.checks", "--role", "reviewer", "--json",
                stdin="checks-reviewer-amber-heron\n"))
    as_json(cli(d, "patient", "add", "--mrn", PATIENT.mrn, "--first", PATIENT.first, "--last", PATIENT.last,
                "--dob", PATIENT.dob, "--sex", PATIENT.sex, "--json"))
    reports = {}
    for name, data, doc_type in (("intake.pdf", render_intake(INTAKE), "intake_form"),
                                 ("bmp.pdf", render_lab(LAB), "lab_pdf")):
        (work / name).write_bytes(data)
        reports[name] = as_json(cli(d, "ingest", str(work / name), "--patient", PATIENT.mrn, "--doc-type", doc_type,
                                    "--json"))
        assert reports[name]["job"]["status"] == "succeeded"
    return d, reports


def _fact(report, fact_type, word):
    return next(f["fact_id"] for f in report["facts"] if f["fact_type"] == fact_type and word in f["fact_text"])


def test_lisinopril_and_potassium_6_9_raise_an_alert_citing_both(ingested):
    d, reports = ingested
    out = as_json(cli(d, "review", "alerts", "--patient", PATIENT.mrn, "--json"))
    alerts = {a["rule_id"]: a for a in out["alerts"]}
    ras = alerts["drug-lab.ras-inhibitor-potassium-high"]
    assert sorted(f["fact_id"] for f in ras["facts"]) == sorted(
        [_fact(reports["intake.pdf"], "medication", "Lisinopril"), _fact(reports["bmp.pdf"], "lab_result", "Potassium")])
    assert "6.9" in ras["message"] and "Lisinopril" in ras["message"]
    inr = alerts["drug-lab.warfarin-inr-high"]
    assert sorted(f["fact_id"] for f in inr["facts"]) == sorted(
        [_fact(reports["intake.pdf"], "medication", "Warfarin"), _fact(reports["bmp.pdf"], "lab_result", "INR")])
    # No problem list on record: each medicine gets a low-priority note, listed last.
    notes = [a for a in out["alerts"] if a["kind"] == "missing-indication"]
    assert len(notes) == 2 and {a["priority"] for a in notes} == {"low"} and out["alerts"][-2:] == notes
    assert out["unacknowledged"] == len(out["alerts"])


def test_acknowledge_from_the_cli(ingested):
    d, _ = ingested
    alert = as_json(cli(d, "review", "alerts", "--patient", PATIENT.mrn, "--json"))["alerts"][0]
    refused = cli(d, "review", "acknowledge-alert", "--alert", str(alert["alert_id"]), "--by", "dr.checks", "--json",
                  check=False)
    assert refused.returncode == 2 and "note" in refused.stderr
    done = as_json(cli(d, "review", "acknowledge-alert", "--alert", str(alert["alert_id"]), "--by", "dr.checks",
                       "--note", "Seen, called the ward", "--json"))
    assert done["acknowledged"] and done["acknowledged_by"] == "dr.checks"
    listed = as_json(cli(d, "review", "alerts", "--patient", PATIENT.mrn, "--json"))
    assert next(a for a in listed["alerts"] if a["alert_id"] == alert["alert_id"])["acknowledgement_note"] == \
        "Seen, called the ward"
