"""Promotion provenance and the chart tables it writes to."""

from __future__ import annotations

from typing import Any

import duckdb

from domain.clock import utcnow
from domain.policy.facts.chart_rules import (CHART_DESTINATIONS, FACT_TYPE_OF_TABLE, SUPPORTING_OUTCOMES,
                                     TRUSTED_IDENTITY_STATES)
from storage.db import insert_rows, rows, to_json
from storage.rows import PromotionRow, fetch_all
from storage import record_version

# A promotion stands behind a chart row while it is active, says the same thing as the
# row, and its fact is live: unretracted, active, from an undeleted document whose
# identity (for the fact's part) is trusted. The chart-row lifetime rule is written
# once, here, in SQL over the constants of domain.policy.facts.chart_rules.
_LIVE_SUPPORT = """
    FROM promotions p
    JOIN document_facts f ON f.id = p.fact_id
    JOIN documents d ON d.id = p.document_id
    JOIN current_identity_checks ci ON ci.document_id = f.document_id AND ci.scope IS NOT DISTINCT FROM f.scope
    WHERE p.active AND list_contains(?, p.outcome) AND f.active AND f.retracted_at IS NULL
      AND NOT d.deleted AND d.active AND list_contains(?, ci.identity_status)"""


def promotions_for_fact(cur: duckdb.DuckDBPyConnection, fact_id: int) -> list[PromotionRow]:
    cur.execute("SELECT * FROM promotions WHERE fact_id = ? ORDER BY id", [fact_id])
    return fetch_all(cur, PromotionRow)


def promotions_for_document(cur: duckdb.DuckDBPyConnection, document_id: int) -> list[PromotionRow]:
    cur.execute("SELECT * FROM promotions WHERE document_id = ? ORDER BY id", [document_id])
    return fetch_all(cur, PromotionRow)


def live_supporters(cur: duckdb.DuckDBPyConnection, table: str, record_ids: list[int]) -> dict[int, list[PromotionRow]]:
    """record_id -> the live promotions that stand behind it (oldest first)."""
    if not record_ids:
        return {}
    cur.execute(
        f"SELECT p.* {_LIVE_SUPPORT} AND p.promoted_table = ? AND list_contains(?, p.promoted_record_id) "
        "ORDER BY p.id",
        [list(SUPPORTING_OUTCOMES), list(TRUSTED_IDENTITY_STATES), table, record_ids],
    )
    found: dict[int, list[PromotionRow]] = {}
    for promo in fetch_all(cur, PromotionRow):
        found.setdefault(int(promo.promoted_record_id), []).append(promo)
    return found


def chart_row_state(cur: duckdb.DuckDBPyConnection, table: str, record_ids: list[int]) -> list[dict[str, Any]]:
    """id, active, source and promotion_id of the given chart rows."""
    if not record_ids:
        return []
    cur.execute(f"SELECT id, patient_id, active, source, promotion_id FROM {table} WHERE list_contains(?, id) "
                "ORDER BY id", [record_ids])
    return rows(cur)


def supported_rows(cur: duckdb.DuckDBPyConnection, table: str, patient_id: int) -> dict[int, list[int]]:
    """record_id -> ids of the live documents that support each active promoted row of a patient."""
    cur.execute(
        f"""SELECT p.promoted_record_id, list(DISTINCT p.document_id ORDER BY p.document_id) {_LIVE_SUPPORT}
            AND p.promoted_table = ? AND p.patient_id = ? GROUP BY p.promoted_record_id""",
        [list(SUPPORTING_OUTCOMES), list(TRUSTED_IDENTITY_STATES), table, patient_id],
    )
    return {int(r[0]): [int(x) for x in r[1]] for r in cur.fetchall()}


def retract_promotion(cur: duckdb.DuckDBPyConnection, promotion_id: int, reason: str) -> None:
    cur.execute(
        """UPDATE promotions SET outcome = 'retracted', active = FALSE, retracted_at = ?, retraction_reason = ?,
               updated_at = ? WHERE id = ?""",
        [utcnow(), reason, utcnow(), promotion_id],
    )
    record_version.bump_rows(cur, "promotions", [promotion_id], "promotion_retracted")



def link_chart_row(cur: duckdb.DuckDBPyConnection, table: str, record_id: int, promotion_id: int, note: str | None = None) -> None:
    cur.execute(
        f"UPDATE {table} SET promotion_id = ?, note = coalesce(?, note), updated_at = ? WHERE id = ?",
        [promotion_id, note, utcnow(), record_id],
    )
    record_version.bump_rows(cur, table, [record_id], "chart_row")


def deactivate_chart_row(cur: duckdb.DuckDBPyConnection, table: str, record_id: int, note: str) -> bool:
    cur.execute(
        f"""UPDATE {table} SET active = FALSE, note = trim(coalesce(note || ' ', '') || ?), updated_at = ?
            WHERE id = ? AND active RETURNING id""",
        [note, utcnow(), record_id],
    )
    changed = bool(cur.fetchall())
    if changed:
        record_version.bump_rows(cur, table, [record_id], "chart_row")
    return changed


def patient_chart_rows(cur: duckdb.DuckDBPyConnection, table: str, patient_id: int, *,
                       active_only: bool = True) -> list[dict[str, Any]]:
    """A patient's rows of one chart table as stored (the evidence view's rows, with
    their citations, are evidence_repo.chart_rows_with_citations)."""
    cur.execute(f"SELECT * FROM {table} WHERE patient_id = ? AND (active OR NOT ?) ORDER BY id", [patient_id, active_only])
    return rows(cur)



def next_ids(cur: duckdb.DuckDBPyConnection, table: str, n: int) -> list[int]:
    """Reserve ``n`` ids from a table's sequence in one statement."""
    if n <= 0:
        return []
    cur.execute(f"SELECT nextval('seq_{table}') FROM range(?)", [n])
    return [int(r[0]) for r in cur.fetchall()]


def chart_rows_with_origin(cur: duckdb.DuckDBPyConnection, table: str, patient_id: int) -> list[dict[str, Any]]:
    """Active chart rows with the sha256 of the document that promoted each (None for manual rows)."""
    cur.execute(
        f"""SELECT c.*, d.sha256 AS origin_sha256 FROM {table} c
            LEFT JOIN promotions p ON p.id = c.promotion_id LEFT JOIN documents d ON d.id = p.document_id
            WHERE c.patient_id = ? AND c.active ORDER BY c.id""",
        [patient_id],
    )
    return rows(cur)


def insert_chart_rows(cur: duckdb.DuckDBPyConnection, table: str, patient_id: int,
                      items: list[tuple[dict[str, Any], int]]) -> None:
    """Multi-row insert of promoted chart rows; each item is (row with id, promotion id)."""
    columns = CHART_DESTINATIONS[FACT_TYPE_OF_TABLE[table]][1]
    insert_rows(cur, table, ("id", "patient_id", "source", "promotion_id", *columns),
                [[row["id"], patient_id, "promoted", promotion_id, *[row.get(c) for c in columns]]
                 for row, promotion_id in items])
    if items:
        record_version.bump(cur, [patient_id], "chart_rows")


_PROMOTION_COLUMNS = ("id", "patient_id", "document_id", "job_id", "fact_id", "fact_fingerprint",
                      "clinical_content_fingerprint", "promoted_table", "promoted_record_id", "outcome",
                      "duplicate_key", "conflict_reason", "citation", "confidence", "review_status", "active",
                      "created_at")


def insert_promotions(cur: duckdb.DuckDBPyConnection, promotions: list[dict[str, Any]]) -> None:
    """Multi-row insert; rows without an ``id`` get one from the sequence."""
    if not promotions:
        return
    missing = [p for p in promotions if "id" not in p]
    for p, new_id in zip(missing, next_ids(cur, "promotions", len(missing))):
        p["id"] = new_id
    now = utcnow()
    insert_rows(cur, "promotions", _PROMOTION_COLUMNS, [
        [p["id"], p["patient_id"], p["document_id"], p.get("job_id"), p["fact_id"], p["fact_fingerprint"],
         p["clinical_content_fingerprint"], p.get("promoted_table"), p.get("promoted_record_id"),
         p["outcome"], p.get("duplicate_key"), p.get("conflict_reason"), to_json(p.get("citation")),
         p.get("confidence"), p.get("review_status"), p.get("active", True), now]
        for p in promotions])
    record_version.bump(cur, [p["patient_id"] for p in promotions], "promotions")


def settled_outcomes(cur: duckdb.DuckDBPyConnection, fact_ids: list[int], outcomes: set[str]) -> dict[int, str]:
    """fact_id -> outcome for facts that already have an active, settled promotion row."""
    if not fact_ids:
        return {}
    cur.execute(
        "SELECT fact_id, outcome FROM promotions WHERE active AND fact_id IN (SELECT unnest(?)) "
        "AND outcome IN (SELECT unnest(?)) ORDER BY id",
        [fact_ids, sorted(outcomes)],
    )
    found: dict[int, str] = {}
    for fact_id, outcome in cur.fetchall():
        found.setdefault(int(fact_id), outcome)
    return found


def close_pending_reviews(cur: duckdb.DuckDBPyConnection, fact_id: int, decision: str) -> None:
    """A reviewer decided: the fact's open review / conflict promotion rows are closed."""
    cur.execute(
        """UPDATE promotions SET active = FALSE, review_status = ?, updated_at = ?
           WHERE fact_id = ? AND active AND outcome IN ('needs_review', 'conflict_needs_review')""",
        [decision, utcnow(), fact_id],
    )
    record_version.bump_rows(cur, "document_facts", [fact_id], "review_closed")
