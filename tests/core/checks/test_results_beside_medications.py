"""The chart checks read a chart's lab results only beside a medication: the rules read
results only for a medication of their classes, so leaving them out of a chart without
one changes no alert and nothing reported as not checked; a rule of another kind makes
the checks read them always."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from core.services.checks import alerts
from domain.policy.checks.evaluate import ChartFact, evaluate, results_only_beside_a_medication
from domain.policy.checks.rules import all_rules
from golden.fixtures import INTAKE_CASES, lab_case, render_intake, render_lab
from golden.ground_truth import ExpectedMedication
from tests.support.pipeline import chart_patient, ingest

import domain.policy.checks as checks_package

CLASSES = json.loads((Path(checks_package.__file__).parent / "medication_classes.json").read_text())


def _ingredient_of(medication_class: str) -> str:
    return next(name for name, classes in sorted(CLASSES["ingredients"].items()) if medication_class in classes)


def _chart(with_medications: bool) -> list[ChartFact]:
    """Results past every drug-lab threshold (and inside it), an allergy, a denial, a
    problem; with one medication of each drug-lab rule's classes when asked."""
    facts, n = [], iter(range(1, 1000))
    for rule in all_rules():
        if rule.kind != "drug-lab" or rule.threshold is None:
            continue
        past = rule.threshold * (1.5 if rule.comparison in ("ge", "gt") else 0.5)
        for value in (past, rule.threshold * 1.0001 if rule.comparison in ("lt", "le") else rule.threshold * 0.9):
            facts.append(ChartFact(next(n), "lab_result", {"test_name": rule.analyte, "value": f"{value:.2f}",
                                                           "unit": rule.unit or None, "collection_date": "2026-03-01"},
                                   "result"))
        if with_medications:
            name = _ingredient_of(sorted(rule.medication_classes)[0])
            facts.append(ChartFact(next(n), "medication", {"name": name.title()}, name))
    facts += [ChartFact(next(n), "allergy", {"substance": "Penicillin"}, "Penicillin"),
              ChartFact(next(n), "allergy", {"substance": ""}, "NKDA"),
              ChartFact(next(n), "problem", {"description": "Type 2 diabetes"}, "Type 2 diabetes")]
    return facts


def _without_results(facts):
    return [f for f in facts if f.fact_type != "lab_result"]


def test_without_a_medication_the_results_change_nothing_the_rules_say():
    chart = _chart(with_medications=False)
    assert evaluate(chart) == evaluate(_without_results(chart))


def test_beside_a_medication_the_results_are_read():
    chart = _chart(with_medications=True)
    found = evaluate(chart)
    results = {f.fact_id for f in chart if f.fact_type == "lab_result"}
    assert found != evaluate(_without_results(chart))
    assert any(results & set(a.fact_ids) for a in found.alerts)


def test_a_rule_of_another_kind_makes_the_checks_read_every_result():
    assert results_only_beside_a_medication()
    other = dataclasses.replace(all_rules()[0], id="lab-alone.test", kind="lab-alone")
    assert not results_only_beside_a_medication((*all_rules(), other))


LAB = lab_case("split_range_cmp")  # potassium 6.8 mmol/L (HH)


def test_a_chart_read_without_its_results_gives_the_alerts_of_the_whole_chart(wb, monkeypatch):
    patient = chart_patient(wb, LAB.patient)
    ingest(wb, patient, render_lab(LAB), "lab_pdf", "lab.pdf")

    def both():
        with wb.db.cursor() as cur:
            read = alerts._chart_facts(cur, patient["id"])
            with monkeypatch.context() as m:
                m.setattr(alerts, "results_only_beside_a_medication", lambda: False)
                whole = alerts._chart_facts(cur, patient["id"])
        return read, whole

    read, whole = both()
    assert read == [] and any(f.fact_type == "lab_result" for f in whole)  # results alone: none read
    assert evaluate(read) == evaluate(whole)
    intake = dataclasses.replace(  # written for this test: the lab's patient, on lisinopril
        INTAKE_CASES[0], name="results_beside", patient=LAB.patient, notes=(), review_terms=(), margin_note=None,
        medications=(ExpectedMedication("Lisinopril", "20 mg", "daily", "Lisinopril 20 mg daily"),), past_history="")
    ingest(wb, patient, render_intake(intake), "intake_form", "intake.pdf")
    read, whole = both()
    assert read == whole and any(f.fact_type == "lab_result" for f in read)
    assert any(a.rule_id == "drug-lab.ras-inhibitor-potassium-high" for a in evaluate(read).alerts)
