"""The chart-alert expectations of promotion_expectations fail when an alert is
missing, cites a fact too many or too few, or a forbidden one is open."""

from __future__ import annotations

from types import SimpleNamespace

from golden.expectation_rubrics import promotion_expectations
from golden.observation import Observation

MED = {"fact_id": 1, "fact_type": "medication", "fact_text": "Medication: Lisinopril 20 mg"}
LAB = {"fact_id": 2, "fact_type": "lab_result", "fact_text": "Potassium 6.9 mmol/L"}
OTHER = {"fact_id": 3, "fact_type": "lab_result", "fact_text": "Sodium 137 mmol/L"}
RULE = "drug-lab.ras-inhibitor-potassium-high"
WANT = {"patient": "p", "rule": RULE, "contains": ["6.9"],
        "cites": [{"document": "form", "fact_type": "medication", "text_contains": "Lisinopril"},
                  {"document": "lab", "fact_type": "lab_result", "text_contains": "Potassium"}]}


def _obs(alerts: list[dict], expect: dict) -> Observation:
    obs = Observation(case=SimpleNamespace(expect=expect), wb=None, data_dir=None)
    obs.reports = {"form": {"facts": [MED]}, "lab": {"facts": [LAB, OTHER]}}
    obs.alerts = {"p": alerts}
    return obs


def _alert(fact_ids, status="open", rule=RULE):
    return {"rule_id": rule, "status": status, "message": "Potassium 6.9 mmol/L with Lisinopril",
            "facts": [{"fact_id": i} for i in fact_ids]}


def test_an_alert_citing_exactly_its_facts_passes():
    assert promotion_expectations(_obs([_alert([1, 2])], {"alerts": [WANT]}))[0]


def test_a_missing_withdrawn_or_wrongly_cited_alert_fails():
    for alerts, why in (([], "no open alert"), ([_alert([1, 2], "withdrawn")], "no open alert"),
                        ([_alert([1, 3])], "does not cite"), ([_alert([1, 2, 3])], "cites 3 facts")):
        passed, reason = promotion_expectations(_obs(alerts, {"alerts": [WANT]}))
        assert not passed and why in reason, reason


def test_a_forbidden_open_alert_fails_and_a_withdrawn_one_does_not():
    forbid = {"no_alerts": [{"patient": "p", "rule": RULE}]}
    assert not promotion_expectations(_obs([_alert([1, 2])], forbid))[0]
    assert promotion_expectations(_obs([_alert([1, 2], "withdrawn")], forbid))[0]
