"""Promotion of verified facts into chart tables, with provenance.

Every decision leaves a ``promotions`` row. The chart itself is the reference for
duplicates: the same clinical content already active in the chart resolves to
``duplicate_skipped`` (same bytes uploaded again) or ``already_exists`` (another
document, or a manual entry); the same test on the same date with another value
is ``conflict_needs_review`` and writes nothing to the chart.
"""

from __future__ import annotations

from typing import Any

import duckdb

from core.models import Certainty, PromotionOutcome
from core.policy.fingerprints import clinical_content_fingerprint, clinical_key
from storage import promotions_repo
from storage.promotions_repo import CHART_DESTINATIONS

_DONE = {o.value for o in (PromotionOutcome.PROMOTED, PromotionOutcome.ALREADY_EXISTS,
                           PromotionOutcome.DUPLICATE_SKIPPED, PromotionOutcome.CONFLICT_NEEDS_REVIEW,
                           PromotionOutcome.NOT_PROMOTABLE, PromotionOutcome.NEEDS_REVIEW)}


def _row_value(fact_type: str, row: dict[str, Any]) -> dict[str, Any]:
    _, columns = CHART_DESTINATIONS[fact_type]
    value = {c: row.get(c) for c in columns}
    if "collection_date" in value and value["collection_date"] is not None:
        value["collection_date"] = str(value["collection_date"])
    return value


def _record(cur, fact: dict, document: dict, outcome: PromotionOutcome, **extra: Any) -> str:
    promotions_repo.insert_promotion(
        cur, patient_id=fact["patient_id"], document_id=fact["document_id"], job_id=fact.get("job_id"),
        fact_id=fact["id"], fact_fingerprint=fact["fact_fingerprint"],
        clinical_content_fingerprint=fact["clinical_content_fingerprint"], outcome=outcome.value,
        citation=fact["citation"], confidence=fact["confidence"], **extra,
    )
    return outcome.value


def promote_fact(cur: duckdb.DuckDBPyConnection, fact: dict[str, Any], document: dict[str, Any]) -> str:
    """Decide and record the promotion outcome for one stored fact (idempotent)."""
    existing = [p for p in promotions_repo.promotions_for_fact(cur, fact["id"]) if p["active"] and p["outcome"] in _DONE]
    if existing:
        return existing[0]["outcome"]
    fact_type = fact["fact_type"]
    certainty = Certainty(fact["certainty"])
    if certainty is Certainty.NEEDS_REVIEW:
        return _record(cur, fact, document, PromotionOutcome.NEEDS_REVIEW, review_status="pending")
    if certainty is Certainty.DOCUMENT_FACT or fact_type not in CHART_DESTINATIONS:
        return _record(cur, fact, document, PromotionOutcome.NOT_PROMOTABLE)

    patient_id = fact["patient_id"]
    value = fact["structured_value"] or {}
    table, columns = CHART_DESTINATIONS[fact_type]
    if not str(value.get(columns[0]) or "").strip():
        # The chart row would have no subject (no test name, substance, drug, problem).
        return _record(cur, fact, document, PromotionOutcome.NOT_PROMOTABLE,
                       conflict_reason=f"no {columns[0]} for {table}")
    content_fp = fact["clinical_content_fingerprint"]
    key = clinical_key(patient_id, fact_type, value, fact["fact_text"])
    same_content = same_key = None
    for row in promotions_repo.chart_rows(cur, table, patient_id):
        row_value = _row_value(fact_type, row)
        if clinical_content_fingerprint(patient_id, fact_type, row_value, "") == content_fp:
            same_content = row
            break
        if same_key is None and clinical_key(patient_id, fact_type, row_value, "") == key:
            same_key = row

    if same_content is not None:
        outcome = PromotionOutcome.ALREADY_EXISTS
        if same_content["promotion_id"] is not None:
            origin = cur.execute(
                "SELECT d.sha256 FROM promotions p JOIN documents d ON d.id = p.document_id WHERE p.id = ?",
                [same_content["promotion_id"]],
            ).fetchone()
            if origin and origin[0] == document["sha256"]:
                outcome = PromotionOutcome.DUPLICATE_SKIPPED
        return _record(cur, fact, document, outcome, promoted_table=table, promoted_record_id=same_content["id"],
                       duplicate_key=content_fp)
    if same_key is not None:
        shown = _row_value(fact_type, same_key)
        reason = "chart already holds " + ", ".join(f"{k}={v}" for k, v in shown.items() if v not in (None, ""))
        return _record(cur, fact, document, PromotionOutcome.CONFLICT_NEEDS_REVIEW, promoted_table=table,
                       promoted_record_id=same_key["id"], conflict_reason=reason, review_status="pending")

    table, record_id = promotions_repo.insert_chart_row(cur, fact_type, patient_id, value)
    promotion = promotions_repo.insert_promotion(
        cur, patient_id=patient_id, document_id=fact["document_id"], job_id=fact.get("job_id"), fact_id=fact["id"],
        fact_fingerprint=fact["fact_fingerprint"], clinical_content_fingerprint=content_fp,
        promoted_table=table, promoted_record_id=record_id, outcome=PromotionOutcome.PROMOTED.value,
        citation=fact["citation"], confidence=fact["confidence"],
    )
    promotions_repo.link_chart_row(cur, table, record_id, promotion["id"])
    return PromotionOutcome.PROMOTED.value
