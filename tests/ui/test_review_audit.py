"""The Review queue's Audit tab (ui/review_audit.py, AppTest): Undo beside every
decision that can be undone, not only patient matches; an undone conflict resolution
says in plain words what left the chart and what is current again, and the chart
shows the old value."""

from __future__ import annotations

import dataclasses

from core.services.review.decisions import decide_fact
from core.services.review.facts import chart_view
from storage import audit_repo
from tests.support.app_support import open_queue
from golden.fixtures import LAB_CASES, render_lab
from tests.support.pipeline import ingest, repeat_with_changed_value

CASE = LAB_CASES[0]


def live_values(wb, patient, test_name):
    return sorted(r["value"] for r in chart_view(wb, patient["id"])["labs"] if r["test_name"] == test_name)


def test_undoing_a_replaced_chart_value_from_the_audit_tab_brings_the_old_value_back(app_env):
    wb = app_env
    patient, row, report = repeat_with_changed_value(wb, "12.9")
    conflict = next(f for f in report["facts"] if f["promotion_status"] == "conflict_needs_review")
    done = decide_fact(wb, conflict["fact_id"], approve=True, by="dr.alice", resolution="replace")
    assert live_values(wb, patient, row.test_name) == ["12.9"]

    at = open_queue(patient["id"])
    decision = done["decision_id"]
    at.text_input(key=f"au_why_{decision}").input("replaced the wrong value")
    at.button(key=f"au_undo_{decision}").click().run()
    assert not at.exception, at.exception
    shown = [s.value for s in at.success]
    assert any(f"{row.test_name} 12.9 {row.unit} removed from the chart" in s and
               f"{row.test_name} {row.value} {row.unit} from first.pdf is current again" in s for s in shown), shown
    assert live_values(wb, patient, row.test_name) == [row.value]
    with wb.db.cursor() as cur:
        trail = audit_repo.review_decisions(cur, "fact", conflict["fact_id"])
    assert [d["decision"] for d in trail] == ["approve", "undo"] and trail[-1]["reason"] == "replaced the wrong value"
    # Undone, the decision offers no second undo; the finding is back in the queue with its three choices.
    assert not [b for b in at.button if b.key == f"au_undo_{decision}"]
    assert {"Replace the chart value", "Keep both", "Keep the chart value"} <= {b.label for b in at.button}


def test_an_overtaken_decision_is_refused_with_the_reason_and_changes_nothing(app_env):
    wb = app_env
    patient, row, report = repeat_with_changed_value(wb, "12.9")
    conflict = next(f for f in report["facts"] if f["promotion_status"] == "conflict_needs_review")
    first = decide_fact(wb, conflict["fact_id"], approve=True, by="dr.alice", resolution="replace")
    # A third report differs from the value the first decision put in the chart; it replaces it too.
    panel, rows = CASE.panels[0]
    third = dataclasses.replace(CASE, panels=((panel, (dataclasses.replace(rows[0], value="11.1"), *rows[1:])),
                                              *CASE.panels[1:]))
    later = ingest(wb, patient, render_lab(third), "lab_pdf", "third.pdf")
    second = decide_fact(wb, next(f for f in later["facts"] if f["promotion_status"] == "conflict_needs_review")
                         ["fact_id"], approve=True, by="dr.bob", resolution="replace")
    at = open_queue(patient["id"])
    at.button(key=f"au_undo_{first['decision_id']}").click().run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert any(f"decision {second['decision_id']}" in e and "Undo that decision first" in e for e in errors), errors
    assert live_values(wb, patient, row.test_name) == ["11.1"]
