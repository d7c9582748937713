"""The queue grouped for one look: reasons that differ only by a confidence number are
one group, approved together through the ordinary bulk approval; two groups are refused
whole, writing nothing."""

from __future__ import annotations

import pytest

from core.services.review.decisions import queue_items
from core.services.review.queue_groups import approve_group, group_counts, keep, with_groups
from domain.errors import BadInput
from golden.fixtures import LAB_CASES, render_lab
from storage import audit_repo, facts_repo
from tests.support.pipeline import chart_patient, ingest


def held_for(wb, reasons: list[tuple[str, float]]):
    patient = chart_patient(wb, LAB_CASES[0].patient)
    report = ingest(wb, patient, render_lab(LAB_CASES[0]), "lab_pdf", "scan.pdf")
    with wb.db.transaction() as cur:
        for fact, (reason, confidence) in zip(facts_repo.facts_for_document(cur, report["document_id"]), reasons):
            facts_repo.update_fact(cur, fact.id, certainty="needs_review", active=False,
                                   promotion_status="needs_review", confidence=confidence, review_reason=reason)
    return patient, with_groups(queue_items(wb, patient["id"]))


def test_one_group_is_approved_together_each_reason_through_bulk_approval(wb):
    patient, items = held_for(wb, [("value read by OCR with low confidence (0.41)", 0.41),
                                   ("value read by OCR with low confidence (0.38)", 0.38),
                                   ("unit not recognised", 0.9)])
    counts = group_counts(items)
    assert counts["reason_group"] == {"value read by OCR with low confidence": 2, "unit not recognised": 1}
    assert counts["band"] == {"low": 2, "high": 1}
    group = keep(items, reason_group="value read by OCR with low confidence")
    assert len(group) == 2 and keep(items, band="low") == group
    results = approve_group(wb, group, by="dr.alice")
    assert [r["ok"] for r in results] == [True, True]
    with wb.db.cursor() as cur:
        assert all(audit_repo.review_decisions(cur, "fact", i["item_id"])[-1]["actor"] == "dr.alice" for i in group)
    assert [i["reason"] for i in queue_items(wb, patient["id"])] == ["unit not recognised"]


def test_two_groups_are_refused_whole(wb):
    patient, items = held_for(wb, [("value read by OCR with low confidence (0.41)", 0.41),
                                   ("unit not recognised", 0.9)])
    with pytest.raises(BadInput) as refused:
        approve_group(wb, items, by="dr.alice")
    assert refused.value.code == "mixed_reasons"
    assert len(queue_items(wb, patient["id"])) == 2
