"""Undoing any review decision restores the chart exactly (issue 26): the facts'
statuses and values, a superseded chart value current again, the rows a decision added
retired, the item back in the queue; the decision rows stay and an "undo" row is added.
Undoing twice, undoing an undo, and undoing a decision a later change overtook are
refused with a reason, changing nothing."""

from __future__ import annotations

import dataclasses

import pytest

from domain.errors import BadInput
from core.services.review.corrections import correct_fact
from core.services.review.decisions import (approve_facts, decide_fact, decide_identity, keep_as_document_fact,
                                            review_queue)
from core.services.review.retraction import delete_document
from core.services.review.undo import undo_decision
from golden.fixtures import LAB_CASES, ExpectedLab, render_lab
from storage import audit_repo
from tests.support.pipeline import ambiguous, chart_patient, ingest, repeat_with_changed_value

CASE = LAB_CASES[0]


def chart_state(wb, patient_id):
    """What a reader of the chart and the queue sees: active chart rows by value, every
    fact's status and values, and the open queue."""
    with wb.db.cursor() as cur:
        labs = sorted(cur.execute("SELECT test_name, value, unit, collection_date, promotion_id FROM chart_lab_results "
                                  "WHERE active AND patient_id = ?", [patient_id]).fetchall())
        facts = sorted(cur.execute("SELECT id, certainty, active, promotion_status, review_reason, fact_text, "
                                   "CAST(structured_value AS VARCHAR) FROM document_facts WHERE patient_id = ?",
                                   [patient_id]).fetchall())
        pending = sorted(cur.execute("SELECT id, fact_id, outcome, review_status FROM promotions WHERE active AND "
                                     "patient_id = ?", [patient_id]).fetchall())
    queue = sorted(f["fact_id"] for f in review_queue(wb, patient_id)["facts"])
    return {"labs": labs, "facts": facts, "promotions": pending, "queue": queue}


def values_of(wb, patient_id, test_name):
    with wb.db.cursor() as cur:
        return sorted(v for (v,) in cur.execute("SELECT value FROM chart_lab_results WHERE active AND patient_id = ? "
                                                "AND test_name = ?", [patient_id, test_name]).fetchall())


def conflict_of(report):
    return next(f for f in report["facts"] if f["promotion_status"] == "conflict_needs_review")


def decisions_of(wb, fact_id):
    with wb.db.cursor() as cur:
        return [d["decision"] for d in audit_repo.review_decisions(cur, "fact", fact_id)]


@pytest.mark.parametrize("resolution", ["replace", "keep-both", "keep-chart"])
def test_undoing_a_conflict_resolution_restores_the_chart_exactly(wb, resolution):
    patient, row, report = repeat_with_changed_value(wb, "12.9")
    conflict = conflict_of(report)
    before = chart_state(wb, patient["id"])
    assert values_of(wb, patient["id"], row.test_name) == [row.value]

    done = decide_fact(wb, conflict["fact_id"], approve=True, by="dr.alice", resolution=resolution)
    expected = {"replace": ["12.9"], "keep-both": sorted([row.value, "12.9"]), "keep-chart": [row.value]}[resolution]
    assert values_of(wb, patient["id"], row.test_name) == expected
    assert chart_state(wb, patient["id"]) != before

    undone = undo_decision(wb, done["decision_id"], by="dr.bob", reason="chose the wrong option")
    assert chart_state(wb, patient["id"]) == before  # every row, status and queue item as it was
    assert undone["undone_decision_id"] == done["decision_id"]
    assert conflict["fact_id"] in {f["fact_id"] for f in review_queue(wb, patient["id"])["facts"]}
    assert "back in the review queue" in undone["summary"]
    if resolution == "replace":
        assert [r["label"] for r in undone["removed"]] == [f"{row.test_name} 12.9 {row.unit}"]
        assert [(r["label"], r["documents"]) for r in undone["restored"]] == \
            [(f"{row.test_name} {row.value} {row.unit}", ["first.pdf"])]
        assert f"{row.test_name} {row.value} {row.unit} from first.pdf is current again" in undone["summary"]
    # The decision stays in the audit, with the undo after it; the item can be decided afresh.
    assert decisions_of(wb, conflict["fact_id"])[-2:] == [
        "approve" if resolution != "keep-chart" else "keep-chart", "undo"]
    again = decide_fact(wb, conflict["fact_id"], approve=True, by="dr.alice", resolution="replace")
    assert values_of(wb, patient["id"], row.test_name) == ["12.9"] and again["promotion_status"] == "promoted"


def test_undoing_twice_or_undoing_an_undo_is_refused(wb):
    patient, row, report = repeat_with_changed_value(wb)
    done = decide_fact(wb, conflict_of(report)["fact_id"], approve=True, by="dr.alice", resolution="replace")
    undone = undo_decision(wb, done["decision_id"], by="dr.bob")
    after = chart_state(wb, patient["id"])
    with pytest.raises(BadInput, match=r"already undone by dr\.bob") as err:
        undo_decision(wb, done["decision_id"], by="dr.alice")
    assert err.value.code == "already_undone"
    with pytest.raises(BadInput, match="itself an undo"):
        undo_decision(wb, undone["decision_id"], by="dr.alice")
    assert chart_state(wb, patient["id"]) == after


def test_a_later_decision_on_the_same_chart_value_must_be_undone_first(wb):
    patient, row, report = repeat_with_changed_value(wb, "12.9")
    first = decide_fact(wb, conflict_of(report)["fact_id"], approve=True, by="dr.alice", resolution="replace")
    # A third report differs from the value the first decision put in the chart.
    panel, rows = CASE.panels[0]
    third = dataclasses.replace(CASE, panels=((panel, (dataclasses.replace(rows[0], value="11.1"), *rows[1:])),
                                              *CASE.panels[1:]))
    later_conflict = conflict_of(ingest(wb, patient, render_lab(third), "lab_pdf", "third.pdf"))
    second = decide_fact(wb, later_conflict["fact_id"], approve=True, by="dr.bob", resolution="replace")
    assert values_of(wb, patient["id"], row.test_name) == ["11.1"]
    state = chart_state(wb, patient["id"])

    with pytest.raises(BadInput, match=rf"decision {second['decision_id']} \(approve of a finding by dr\.bob\)") as err:
        undo_decision(wb, first["decision_id"], by="dr.alice")
    assert err.value.code == "overtaken"
    assert chart_state(wb, patient["id"]) == state  # nothing half-restored

    undo_decision(wb, second["decision_id"], by="dr.alice")
    assert values_of(wb, patient["id"], row.test_name) == ["12.9"]
    # The third report's finding differs from the value the first decision set again, and waits.
    with pytest.raises(BadInput, match="a finding of third.pdf, read afterwards, differs") as err:
        undo_decision(wb, first["decision_id"], by="dr.alice")
    decide_fact(wb, later_conflict["fact_id"], approve=False, by="dr.bob", reason="misprint on that report")
    undo_decision(wb, first["decision_id"], by="dr.alice")
    assert values_of(wb, patient["id"], row.test_name) == [row.value]


def test_a_decision_whose_document_was_deleted_is_not_undone(wb):
    patient, row, report = repeat_with_changed_value(wb)
    done = decide_fact(wb, conflict_of(report)["fact_id"], approve=True, by="dr.alice", resolution="replace")
    delete_document(wb, report["document_id"], by="dr.reviewer")
    with pytest.raises(BadInput, match="repeat.pdf was deleted") as err:
        undo_decision(wb, done["decision_id"], by="dr.alice")
    assert err.value.code == "document_deleted"


def test_deleting_the_superseded_values_document_overtakes_the_replacement(wb):
    patient, row, report = repeat_with_changed_value(wb)
    done = decide_fact(wb, conflict_of(report)["fact_id"], approve=True, by="dr.alice", resolution="replace")
    with wb.db.cursor() as cur:
        first_doc = cur.execute("SELECT id FROM documents WHERE filename = 'first.pdf'").fetchone()[0]
    delete_document(wb, first_doc, by="dr.reviewer")
    state = chart_state(wb, patient["id"])
    with pytest.raises(BadInput, match="first.pdf behind a chart value it changed was deleted") as err:
        undo_decision(wb, done["decision_id"], by="dr.alice")
    assert err.value.code == "overtaken" and chart_state(wb, patient["id"]) == state


def test_undoing_a_correction_puts_the_misread_value_back_in_review(wb):
    panels = tuple((name, tuple(ExpectedLab("Hemoglobin Aic", "79", "%", "<5.7", "high", "H")
                                if r.test_name == "Hemoglobin A1c" else r for r in rows))
                   for name, rows in CASE.panels)
    patient = chart_patient(wb, CASE.patient)
    report = ingest(wb, patient, render_lab(dataclasses.replace(CASE, panels=panels)), "lab_pdf")
    misread = next(f for f in report["facts"] if f["structured_value"]["test_name"] == "Hemoglobin Aic")
    before = chart_state(wb, patient["id"])
    done = correct_fact(wb, misread["fact_id"], by="dr.alice", value="7.9", reason="decimal point lost")
    assert values_of(wb, patient["id"], "Hemoglobin Aic") == ["7.9"]

    undone = undo_decision(wb, done["decision_id"], by="dr.bob", reason="the 79 was right")
    assert chart_state(wb, patient["id"]) == before
    assert undone["structured_value"]["value"] == "79" and "79" in undone["fact_text"]
    assert undone["removed"][0]["label"] == "Hemoglobin Aic 7.9 %"


def test_a_rejection_and_a_keep_are_undone_in_any_order(wb):
    patient = chart_patient(wb, CASE.patient)
    report = ingest(wb, patient, render_lab(CASE), "lab_pdf")
    promoted = [f for f in report["facts"] if f["promotion_status"] == "promoted"]
    before = chart_state(wb, patient["id"])
    rejected = decide_fact(wb, promoted[0]["fact_id"], approve=False, by="dr.alice", reason="wrong patient line")
    kept = keep_as_document_fact(wb, promoted[1]["fact_id"], by="dr.alice")
    assert chart_state(wb, patient["id"]) != before
    undo_decision(wb, kept["decision_id"], by="dr.bob")
    undo_decision(wb, rejected["decision_id"], by="dr.bob")
    assert chart_state(wb, patient["id"]) == before


def test_bulk_approval_is_undone_decision_by_decision(wb):
    patient, row, report = repeat_with_changed_value(wb, "12.9")
    conflict = conflict_of(report)
    before = chart_state(wb, patient["id"])
    results = approve_facts(wb, [conflict["fact_id"]], by="dr.alice", replace_chart_values=True)
    assert results[0]["ok"] and values_of(wb, patient["id"], row.test_name) == ["12.9"]
    undo_decision(wb, results[0]["decision_id"], by="dr.bob")
    assert chart_state(wb, patient["id"]) == before


def test_an_identity_decision_is_undone_through_the_patient_match(wb):
    patient, report = ambiguous(wb)
    approved = decide_identity(wb, report["identity"]["identity_check_id"], approve=True, by="dr.alice")
    assert approved["decision_id"]
    undone = undo_decision(wb, approved["decision_id"], by="dr.bob", reason="matched the wrong chart")
    assert undone["undone_decision_id"] == approved["decision_id"]
    assert undone["status"] == "identity_ambiguous_needs_review"
    with pytest.raises(BadInput) as err:
        undo_decision(wb, approved["decision_id"], by="dr.bob", reason="again please")
    assert err.value.code == "already_undone"


def test_undoing_a_drawn_box_does_not_reopen_a_decided_finding(wb):
    from domain.policy.facts.review_rules import closing_decision

    rows = [{"id": 1, "decision": "approve"}, {"id": 2, "decision": "box"},
            {"id": 3, "decision": "undo", "after_state": {"undoes": 2}}]
    assert closing_decision(rows)["id"] == 1
    assert closing_decision(rows + [{"id": 4, "decision": "undo", "after_state": {"undoes": 1}}]) is None
    # An undo recorded before undo rows named their decision reopens the item, as it did.
    assert closing_decision([{"id": 1, "decision": "approve"}, {"id": 2, "decision": "undo"}]) is None


def test_a_decision_recorded_before_effects_were_kept_is_refused(wb):
    patient, row, report = repeat_with_changed_value(wb)
    done = decide_fact(wb, conflict_of(report)["fact_id"], approve=True, by="dr.alice", resolution="replace")
    with wb.db.transaction() as cur:
        cur.execute("UPDATE review_decisions SET effects = NULL WHERE id = ?", [done["decision_id"]])
    state = chart_state(wb, patient["id"])
    with pytest.raises(BadInput, match="cannot be restored exactly") as err:
        undo_decision(wb, done["decision_id"], by="dr.bob")
    assert err.value.code == "not_undoable" and chart_state(wb, patient["id"]) == state


def test_a_document_read_after_the_decision_that_stands_on_its_value_overtakes_it(wb):
    from golden.fixtures import with_layout

    patient, row, report = repeat_with_changed_value(wb, "12.9")
    done = decide_fact(wb, conflict_of(report)["fact_id"], approve=True, by="dr.alice", resolution="replace")
    panel, rows = CASE.panels[0]
    same = dataclasses.replace(CASE, panels=((panel, (dataclasses.replace(rows[0], value="12.9"), *rows[1:])),
                                             *CASE.panels[1:]))
    later = ingest(wb, patient, render_lab(with_layout(same, "dotted")), "lab_pdf", "later.pdf")
    assert any(p["outcome"] == "already_exists" for p in later["promotions"])
    state = chart_state(wb, patient["id"])
    with pytest.raises(BadInput, match="a document read afterwards later.pdf stands on the same chart value") as err:
        undo_decision(wb, done["decision_id"], by="dr.bob")
    assert err.value.code == "overtaken" and chart_state(wb, patient["id"]) == state


def test_a_patient_match_decision_after_a_findings_approval_overtakes_it(wb):
    patient, report = ambiguous(wb)
    fact = next(f for f in report["facts"] if f["fact_type"] == "lab_result")
    approved = decide_fact(wb, fact["fact_id"], approve=True, by="dr.alice")
    assert approved["promotion_status"] == "approved_awaiting_identity"
    identity = decide_identity(wb, report["identity"]["identity_check_id"], approve=True, by="dr.bob")
    with pytest.raises(BadInput, match=rf"decision {identity['decision_id']} \(approve of a patient match by dr\.bob\)"):
        undo_decision(wb, approved["decision_id"], by="dr.alice")


def test_a_drawn_box_is_undone_box_by_box_without_reopening_the_decided_finding(wb):
    from core.services.review.corrections import set_fact_box

    patient, row, report = repeat_with_changed_value(wb, "12.9")
    conflict = conflict_of(report)
    original = conflict["citation"].get("bounding_box")
    first = set_fact_box(wb, conflict["fact_id"], box={"x": 0.9, "y": 0.95, "width": 0.05, "height": 0.03},
                         by="dr.alice", confirm_free_box=True)
    decided = decide_fact(wb, conflict["fact_id"], approve=True, by="dr.alice", resolution="keep-both")
    second = set_fact_box(wb, conflict["fact_id"], box={"x": 0.1, "y": 0.1, "width": 0.05, "height": 0.03},
                          by="dr.alice", confirm_free_box=True)

    with pytest.raises(BadInput, match=rf"decision {second['decision_id']} \(box of a finding"):
        undo_decision(wb, first["decision_id"], by="dr.bob")  # the later box holds the citation
    undo_decision(wb, second["decision_id"], by="dr.bob")
    with wb.db.cursor() as cur:
        from storage import facts_repo
        assert facts_repo.fact_by_id(cur, conflict["fact_id"]).citation["bounding_box"] == first["citation"][
            "bounding_box"]
    # The approval still closes the finding: undoing a box is no undo of the decision.
    assert conflict["fact_id"] not in {f["fact_id"] for f in review_queue(wb, patient["id"])["facts"]}
    undo_decision(wb, first["decision_id"], by="dr.bob")
    with wb.db.cursor() as cur:
        assert facts_repo.fact_by_id(cur, conflict["fact_id"]).citation.get("bounding_box") == original
    undo_decision(wb, decided["decision_id"], by="dr.bob")
    assert conflict["fact_id"] in {f["fact_id"] for f in review_queue(wb, patient["id"])["facts"]}
