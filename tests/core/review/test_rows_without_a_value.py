"""A lab row that prints no single value ("haemolysed", a count as a span "10-20") is held
for review, and approving it as it is writes nothing: the approval is refused before
anything is decided, so the row stays open for a correction with the value, or to be kept
with its document. (Before, approving charted the word "haemolysed" as a potassium.)"""

from __future__ import annotations

import pytest

from core.services.review.decisions import approval_preview, decide_fact
from core.services.review.corrections import correct_fact
from core.services.review.facts import chart_view
from domain.errors import BadInput
from domain.policy.facts.chart_row_checks import VALUE_PROBLEM, approval_refusal, chart_row_problem
from golden.fixtures import Patient
from golden.drawing import placed_text_pdf
from tests.support.pipeline import chart_patient, ingest

PATIENT = Patient(first="Tomasz", last="Wielgosz", dob="1957-09-03", mrn="UH-448120", sex="M")


def _report() -> bytes:
    rows = [(50, 50, "Upland Hospital Pathology", 12, "hebo"),
            (50, 72, f"Name: WIELGOSZ, Tomasz    DOB: 03-Sep-1957    Hosp No: {PATIENT.mrn}"),
            (50, 86, "Collected: 01/12/2026 07:40")]
    for x, head in ((50, "Test"), (200, "Result"), (280, "Units"), (360, "Ref. range")):
        rows.append((x, 110, head, 10, "hebo"))
    for y, cells in ((126, ("Sodium", "139", "mmol/L", "133-146")), (140, ("Potassium", "clotted", "mmol/L", "3.5-5.3")),
                     (154, ("Casts", "2-5", "/LPF", "0-2"))):
        rows += [(x, y, c) for x, c in zip((50, 200, 280, 360), cells)]
    return placed_text_pdf(rows)


def test_the_policy_says_why_before_and_the_chart_check_after():
    held = {"test_name": "Potassium", "value": "clotted", VALUE_PROBLEM: "the report gives no result (clotted)"}
    assert "no single result value" in approval_refusal("lab_result", held)
    assert "no single result value to write" in chart_row_problem("lab_result", held)
    assert approval_refusal("lab_result", {"test_name": "Potassium", "value": "5.1"}) is None


def test_approval_is_refused_and_a_correction_charts_the_value(wb):
    patient = chart_patient(wb, PATIENT)
    report = ingest(wb, patient, _report(), "lab_pdf", "chem.pdf")
    held = {f["structured_value"]["test_name"]: f for f in report["facts"] if f["certainty"] == "needs_review"}
    assert set(held) == {"Potassium", "Casts"}
    for fact in held.values():
        with pytest.raises(BadInput) as refused:
            decide_fact(wb, fact["fact_id"], approve=True, by="dr.reviewer")
        assert refused.value.code == "not_chartable"
    preview = approval_preview(wb, [f["fact_id"] for f in held.values()])
    assert preview["approvable"] == 0 and len(preview["refused"]) == 2
    labs = chart_view(wb, patient["id"])["labs"]
    assert [r["test_name"] for r in labs] == ["Sodium"]  # nothing else was charted

    correct_fact(wb, held["Potassium"]["fact_id"], by="dr.reviewer", value="4.4", unit="mmol/L",
                 reason="repeat sample, result phoned through")
    labs = {r["test_name"]: r for r in chart_view(wb, patient["id"])["labs"]}
    assert labs["Potassium"]["value"] == "4.4"
