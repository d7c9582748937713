"""A fact the chart cannot hold is ``promotion_failed`` (issue 24, defect 6): the fact
says so, with why, and the review queue shows it; the other findings of the document
still go in."""

from __future__ import annotations

import json

import pytest

from core.services.review.decisions import decide_fact, queue_items
from domain.errors import BadInput
from domain.policy.facts.chart_row_checks import chart_row_problem
from golden.fixtures import render_intake
from storage import facts_repo
from tests.support.pipeline import chart_patient, count, hedged_intake, ingest


@pytest.mark.parametrize("fact_type, value, problem", [
    ("lab_result", {"test_name": "Potassium", "value": "5.1", "collection_date": "2024-02-30"}, "not a calendar date"),
    ("lab_result", {"test_name": "Potassium", "value": None}, "no value"),
    ("medication", {"name": "Metformin", "dose": ["500 mg", "1 g"]}, "not a single value"),
])
def test_values_the_chart_cannot_hold(fact_type, value, problem):
    assert problem in chart_row_problem(fact_type, value)


@pytest.mark.parametrize("fact_type, value", [
    ("lab_result", {"test_name": "Potassium", "value": "5.1", "collection_date": "2024-02-29"}),
    ("allergy", {"substance": "Penicillin", "reaction": None}), ("other", {"text": ["a", "b"]})])
def test_values_the_chart_holds(fact_type, value):
    assert chart_row_problem(fact_type, value) is None


def test_a_finding_the_chart_cannot_hold_is_refused_before_it_is_decided(wb):
    case = hedged_intake()  # "shellfish?" is held for review, so a person decides it
    patient = chart_patient(wb, case.patient)
    report = ingest(wb, patient, render_intake(case), "intake_form")
    held = next(f for f in report["facts"] if "shellfish" in f["fact_text"].lower())
    assert held["promotion_status"] == "needs_review"
    value = dict(held["structured_value"], reaction=["hives", "lip swelling"])  # no column holds a list
    with wb.db.transaction() as cur:
        facts_repo.update_fact(cur, held["fact_id"], structured_value=json.dumps(value))
    rows_before = count(wb, f"SELECT count(*) FROM chart_allergies WHERE patient_id = {patient['id']}")

    # Refused before anything is decided (approved and then failed, it would stay decided,
    # out of the chart, with nothing left to decide), and it stays in the queue.
    with pytest.raises(BadInput) as refused:
        decide_fact(wb, held["fact_id"], approve=True, by="dr.reviewer")
    assert refused.value.code == "not_chartable"
    assert "The chart cannot hold this finding as it is (reaction is not a single value" in refused.value.message
    with wb.db.cursor() as cur:
        fact = facts_repo.fact_by_id(cur, held["fact_id"])
    assert fact.promotion_status == "needs_review"
    assert count(wb, f"SELECT count(*) FROM chart_allergies WHERE patient_id = {patient['id']}") == rows_before
    assert any(i["item_id"] == held["fact_id"] for i in queue_items(wb, patient["id"]))
    kept = decide_fact(wb, held["fact_id"], approve=True, by="dr.reviewer", resolution="keep-chart")
    assert kept["fact_id"] == held["fact_id"]  # it can still be kept with its document
