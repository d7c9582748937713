"""Deleting a document retracts everything derived from it.

Facts go inactive, promotions are retracted, and every chart row they stood behind
is reconciled with the lifetime rule: it stays active only while another live,
identity-trusted fact supports it (then it is re-linked to that fact's promotion).
The vectors are removed, and every step leaves an append-only retraction row.
"""

from __future__ import annotations

from typing import Any

from core import telemetry
from domain.clock import utcnow
from domain.errors import BadInput, NotFound
from domain.policy.access.permissions import Permission
from domain.policy.facts.chart_rules import SUPPORTING_OUTCOMES
from core.services.admin.accounts import authorize
from core.services.checks.alerts import refresh_alerts
from core.services.review.fact_vectors import remove_vectors
from core.services.workbench import Workbench
from storage import audit_repo, documents_repo, facts_repo, jobs_repo, promotions_repo
from storage.rows import PromotionRow


def delete_document(wb: Workbench, document_id: int, *, by: str,
                    reason: str = "source document deleted") -> dict[str, Any]:
    """``by``: an account that may delete documents, or the shell operator (``os:<login>``).

    A batch read in parts takes its live parts with it, each deleted and retracted as
    deleting it alone would (its own rows in the audit); the counts are their sum."""
    by = authorize(wb, by, Permission.DELETE_DOCUMENT).name
    counts = {"facts": 0, "promotions": 0, "chart_rows": 0, "vectors": 0}
    with wb.db.transaction() as cur:
        patient_id = _live_document(cur, document_id)["patient_id"]
        parts = [d["id"] for d in documents_repo.parts_of(cur, document_id) if not d["deleted"]]
        fact_ids: list[int] = []
        for doc_id in [document_id, *parts]:
            fact_ids += _retract_one(cur, doc_id, patient_id, by=by, reason=reason, counts=counts)
        refresh_alerts(cur, patient_id)  # alerts resting on what was retracted are withdrawn
    counts["vectors"] = remove_vectors(wb, fact_ids)
    for doc_id in [document_id, *parts]:
        telemetry.emit("document_deleted", settings=wb.settings, patient_id=patient_id, document_id=doc_id,
                       counts=counts if doc_id == document_id else {})
    result: dict[str, Any] = {"document_id": document_id, "retracted": counts}
    if parts:
        result["parts"] = parts
    return result


def _retract_one(cur, document_id: int, patient_id: int, *, by: str, reason: str, counts: dict[str, int]) -> list[int]:
    """Delete one document and retract what it stood behind; adds to ``counts`` and
    returns the retracted fact ids (their vectors go after the transaction)."""
    documents_repo.mark_deleted(cur, document_id, by)
    jobs_repo.mark_retracted(cur, document_id)
    audit_repo.add_retraction(cur, patient_id=patient_id, document_id=document_id, action="document_deleted",
                              prior_state="active", new_state="deleted", actor_id=by, reason=reason)
    fact_ids: list[int] = []
    for fact in facts_repo.facts_for_document(cur, document_id):
        if fact.retracted_at is not None:
            continue
        prior = "active" if fact.active else f"inactive:{fact.certainty}"
        facts_repo.update_fact(cur, fact.id, active=False, retracted_at=utcnow(), deactivated_at=utcnow(),
                               retraction_reason=reason)
        audit_repo.add_retraction(cur, patient_id=patient_id, document_id=document_id, job_id=fact.job_id,
                                  fact_id=fact.id, prior_state=prior, new_state="retracted",
                                  action="fact_retracted", actor_id=by, reason=reason)
        fact_ids.append(fact.id)
        counts["facts"] += 1
    promo_counts = retract_promotions(cur, promotions_repo.promotions_for_document(cur, document_id),
                                      by=by, reason=reason)
    counts["promotions"] += promo_counts["promotions"]
    counts["chart_rows"] += promo_counts["chart_rows"]
    return fact_ids


def retract_promotions(cur, promotions: list[PromotionRow], *, by: str, reason: str) -> dict[str, int]:
    """Retract active promotions, then apply the chart-row lifetime rule to every row
    they stood behind (whatever their outcome: a ``duplicate_skipped`` promotion
    supports its row as much as the one that created it)."""
    counts = {"promotions": 0, "chart_rows": 0}
    promotions = [p for p in promotions if p.active]
    for promo in promotions:
        promotions_repo.retract_promotion(cur, promo.id, reason)
        counts["promotions"] += 1
        audit_repo.add_retraction(cur, patient_id=promo.patient_id, document_id=promo.document_id,
                                  job_id=promo.job_id, fact_id=promo.fact_id, promotion_id=promo.id,
                                  promoted_table=promo.promoted_table, promoted_record_id=promo.promoted_record_id,
                                  prior_state=promo.outcome, new_state="retracted", action="promotion_retracted",
                                  actor_id=by, reason=reason)
    counts["chart_rows"] = reconcile_chart_rows(cur, _rows_behind(promotions), by=by, reason=reason)
    return counts


def _rows_behind(promotions: list[PromotionRow]) -> dict[str, dict[int, int]]:
    """table -> chart row id -> the document of a promotion that stands behind it."""
    touched: dict[str, dict[int, int]] = {}
    for promo in promotions:
        if promo.outcome in SUPPORTING_OUTCOMES and promo.promoted_table:
            touched.setdefault(promo.promoted_table, {})[int(promo.promoted_record_id)] = promo.document_id
    return touched


def _governed_rows(cur, touched: dict[str, dict[int, int | None]], *, without_documents: frozenset[int] = frozenset()):
    """The chart-row lifetime rule's reading, shared by ``reconcile_chart_rows`` and the
    read-only ``deletion_impact``: (table, row, live supporting promotions) for every
    touched row the rule governs (active and promoted; rows a person entered by hand
    are not touched). ``without_documents`` counts those documents' promotions as gone."""
    for table, record_ids in touched.items():
        ids = sorted(record_ids)
        support = promotions_repo.live_supporters(cur, table, ids)
        for row in promotions_repo.chart_row_state(cur, table, ids):
            if not row["active"] or row["source"] != "promoted":
                continue
            yield table, row, [b for b in support.get(row["id"], []) if b.document_id not in without_documents]


def reconcile_chart_rows(cur, touched: dict[str, dict[int, int | None]], *, by: str, reason: str) -> int:
    """The chart-row lifetime rule: a promoted row is active exactly while at least one
    live, identity-trusted, active fact supports it (rows a person entered by hand are
    not touched). A row that lost its last support goes inactive with a note; a row
    whose linked promotion no longer counts is re-linked to one that does. Returns
    how many rows went inactive."""
    deactivated = 0
    # touched: table -> row id -> the document that triggered the check (for the audit)
    for table, row, backers in _governed_rows(cur, touched):
        if not backers:
            promotions_repo.deactivate_chart_row(cur, table, row["id"], f"[retracted: no live source ({reason})]")
            audit_repo.add_retraction(cur, patient_id=row["patient_id"], document_id=touched[table][row["id"]],
                                      promotion_id=row["promotion_id"], promoted_table=table,
                                      promoted_record_id=row["id"], prior_state="active", new_state="inactive",
                                      action="chart_row_deactivated", actor_id=by, reason=reason)
            deactivated += 1
        elif row["promotion_id"] not in {b.id for b in backers}:
            keeper = backers[0]
            promotions_repo.link_chart_row(cur, table, row["id"], keeper.id,
                                           note=f"now supported by document {keeper.document_id}")
            audit_repo.add_retraction(cur, patient_id=row["patient_id"], document_id=keeper.document_id,
                                      promotion_id=keeper.id, promoted_table=table,
                                      promoted_record_id=row["id"], prior_state="active",
                                      new_state="active:relinked", action="chart_row_relinked", actor_id=by,
                                      reason=reason)
    return deactivated


def deletion_impact(wb: Workbench, document_id: int) -> dict[str, Any]:
    """What ``delete_document`` would retract, read-only: the live facts, the active
    promotions, the chart rows that would go inactive, and the rows that stay because
    another live document supports them (the lifetime rule of ``reconcile_chart_rows``,
    applied as if this document's promotions were already gone)."""
    from domain.policy.facts.chart_rules import CHART_DESTINATIONS, FACT_TYPE_OF_TABLE
    from domain.policy.facts.vital_signs import summary

    with wb.db.cursor() as cur:
        document = _live_document(cur, document_id)
        # A batch read in parts goes with its live parts (see delete_document).
        gone = [document_id] + [d["id"] for d in documents_repo.parts_of(cur, document_id) if not d["deleted"]]
        facts = [f for d in gone for f in facts_repo.facts_for_document(cur, d) if f.retracted_at is None]
        promotions = [p for d in gone for p in promotions_repo.promotions_for_document(cur, d) if p.active]
        touched = _rows_behind(promotions)
        described = {table: {r["id"]: r for r in promotions_repo.patient_chart_rows(cur, table, document["patient_id"])}
                     for table in touched}
        retracted_rows: list[dict[str, Any]] = []
        kept_rows: list[dict[str, Any]] = []
        for table, row, backers in _governed_rows(cur, touched, without_documents=frozenset(gone)):
            subject = CHART_DESTINATIONS[FACT_TYPE_OF_TABLE[table]][1][0]
            others = sorted({b.document_id for b in backers})
            shown = described[table].get(row["id"]) or {}
            label = str(shown.get(subject) or f"row {row['id']}")
            if FACT_TYPE_OF_TABLE[table] == "vital_sign" and shown.get("value"):
                label = summary(str(shown["kind"]), str(shown["value"]), str(shown.get("unit") or ""))
            item = {"table": table, "row_id": row["id"], "label": label,
                    "kept_by_documents": others}
            (kept_rows if others else retracted_rows).append(item)
    return {"document_id": document_id, "filename": document["filename"], "facts": len(facts),
            "promotions": len(promotions), "chart_rows": len(retracted_rows),
            "chart_rows_retracted": retracted_rows, "chart_rows_kept": kept_rows}


def _live_document(cur, document_id: int) -> dict[str, Any]:
    document = documents_repo.by_id(cur, document_id)
    if document is None:
        raise NotFound(f"No document with id {document_id}.", code="unknown_document")
    if document["deleted"]:
        raise BadInput(f"Document {document_id} is already deleted.", code="document_deleted")
    return document
