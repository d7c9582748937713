"""Approving a whole document's remaining findings in one step: the preview says what
changes, conflicts with the chart are left for a choice each, a waiting patient match
stops it, and a preview that no longer holds writes nothing."""

from __future__ import annotations

import pytest

from core.services.review.decisions import queue_items
from core.services.review.document_approval import approve_document, document_preview
from core.services.review.facts import chart_view
from domain.errors import BadInput
from golden.fixtures import render_intake
from storage import audit_repo
from tests.support.pipeline import ambiguous, chart_patient, hedged_intake, ingest, repeat_with_changed_value


def open_keys(wb, patient_id: int, document_id: int) -> set[str]:
    return {i["key"] for i in queue_items(wb, patient_id) if i["document_id"] == document_id}


def test_a_document_s_findings_are_approved_in_one_step_each_audited(wb):
    case = hedged_intake()
    patient = chart_patient(wb, case.patient)
    intake = ingest(wb, patient, render_intake(case), "intake_form", "intake.pdf")
    waiting = open_keys(wb, patient["id"], intake["document_id"])
    assert len(waiting) >= 2
    preview = document_preview(wb, patient["id"], intake["document_id"])
    assert {f"fact:{i}" for i in preview["approve"]} == waiting
    assert not preview["conflicts"] and not preview["patient_match_waits"]
    allergies_before = len(chart_view(wb, patient["id"])["allergies"])

    done = approve_document(wb, patient["id"], intake["document_id"], by="dr.alice", expected=preview["approve"])
    assert done["approved"] == len(waiting) and all(r["ok"] for r in done["results"])
    assert open_keys(wb, patient["id"], intake["document_id"]) == set()
    assert len(chart_view(wb, patient["id"])["allergies"]) > allergies_before  # "shellfish?" went to the chart
    with wb.db.cursor() as cur:
        for fact_id in preview["approve"]:
            assert [(d["decision"], d["actor"]) for d in audit_repo.review_decisions(cur, "fact", fact_id)] == \
                [("approve", "dr.alice")]


def test_a_conflict_is_named_and_left_for_its_own_choice(wb):
    patient, row, repeat = repeat_with_changed_value(wb)
    preview = document_preview(wb, patient["id"], repeat["document_id"])
    assert len(preview["conflicts"]) == 1 and preview["approve"] == []
    done = approve_document(wb, patient["id"], repeat["document_id"], by="dr.alice", expected=[])
    assert done["approved"] == 0 and done["conflicts_left"] == 1
    assert [r["value"] for r in chart_view(wb, patient["id"])["labs"] if r["test_name"] == row.test_name] == [row.value]
    assert len(open_keys(wb, patient["id"], repeat["document_id"])) == 1


def test_a_preview_that_no_longer_holds_writes_nothing(wb):
    case = hedged_intake()
    patient = chart_patient(wb, case.patient)
    intake = ingest(wb, patient, render_intake(case), "intake_form", "intake.pdf")
    preview = document_preview(wb, patient["id"], intake["document_id"])
    with pytest.raises(BadInput) as refused:
        approve_document(wb, patient["id"], intake["document_id"], by="dr.alice", expected=preview["approve"][:-1])
    assert refused.value.code == "preview_changed"
    assert len(open_keys(wb, patient["id"], intake["document_id"])) == len(preview["approve"])


def test_a_waiting_patient_match_is_decided_first(wb):
    patient, report = ambiguous(wb)
    preview = document_preview(wb, patient["id"], report["document_id"])
    assert preview["patient_match_waits"] and preview["approve"] == []
    with pytest.raises(BadInput) as refused:
        approve_document(wb, patient["id"], report["document_id"], by="dr.alice")
    assert refused.value.code == "identity_pending"
