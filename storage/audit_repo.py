"""Append-only audit: retractions, review decisions and supervisor handoffs."""

from __future__ import annotations

from typing import Any

import duckdb

from domain.clock import utcnow
from storage.db import rows, to_json
from storage import record_version


def add_retraction(cur: duckdb.DuckDBPyConnection, **r: Any) -> None:
    cur.execute(
        """INSERT INTO retractions (patient_id, document_id, job_id, fact_id, promotion_id, promoted_table,
               promoted_record_id, prior_state, new_state, action, actor_type, actor_id, reason, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        [r["patient_id"], r.get("document_id"), r.get("job_id"), r.get("fact_id"), r.get("promotion_id"),
         r.get("promoted_table"), r.get("promoted_record_id"), r.get("prior_state"), r.get("new_state"),
         r["action"], r.get("actor_type", "user"), r.get("actor_id"), r.get("reason"), utcnow()],
    )
    record_version.bump(cur, [r["patient_id"]], "retraction")


def retractions_for_document(cur: duckdb.DuckDBPyConnection, document_id: int) -> list[dict[str, Any]]:
    cur.execute("SELECT * FROM retractions WHERE document_id = ? ORDER BY id", [document_id])
    return rows(cur)


# The record tables a review decision's item lives in.
_DECIDED_TABLES = {"fact": "document_facts", "identity_check": "identity_checks"}


def add_review_decision(cur: duckdb.DuckDBPyConnection, *, item_type: str, item_id: int, decision: str, actor: str,
                        reason: str | None, before: Any, after: Any, effects: Any = None) -> int:
    """Returns the new decision's id. ``effects``: what it changed row by row, for undo."""
    cur.execute(
        # The account's id is looked up as the row is written: a decision names a real
        # account (NULL for the shell operator or the system, whose actor says so).
        """INSERT INTO review_decisions (item_type, item_id, decision, actor, reason, before_state, after_state,
               created_at, user_id, effects)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, (SELECT id FROM users WHERE username = ?), ?) RETURNING id""",
        [item_type, item_id, decision, actor, reason, to_json(before), to_json(after), utcnow(), actor,
         None if effects is None else to_json(effects)],
    )
    decision_id = int(cur.fetchone()[0])
    if item_type in _DECIDED_TABLES:  # a category's or a job's decision is not a patient's record
        record_version.bump_rows(cur, _DECIDED_TABLES[item_type], [item_id], "review_decision")
    return decision_id


def review_decision_by_id(cur: duckdb.DuckDBPyConnection, decision_id: int) -> dict[str, Any] | None:
    cur.execute("SELECT * FROM review_decisions WHERE id = ?", [decision_id])
    found = rows(cur)
    return found[0] if found else None


def review_decisions_after(cur: duckdb.DuckDBPyConnection, decision_id: int) -> list[dict[str, Any]]:
    """Every decision recorded after this one, oldest first (what may have overtaken it)."""
    cur.execute("SELECT * FROM review_decisions WHERE id > ? ORDER BY id", [decision_id])
    return rows(cur)


def review_decisions(cur: duckdb.DuckDBPyConnection, item_type: str, item_id: int) -> list[dict[str, Any]]:
    cur.execute("SELECT * FROM review_decisions WHERE item_type = ? AND item_id = ? ORDER BY id", [item_type, item_id])
    return rows(cur)


def add_handoff(cur: duckdb.DuckDBPyConnection, *, request_id: str | None, job_id: int | None, source_node: str,
                destination_node: str, decision_reason: str, task_type: str, outcome: str,
                latency_ms: float | None = None, error_reason: str | None = None) -> None:
    cur.execute(
        """INSERT INTO supervisor_handoffs (request_id, job_id, source_node, destination_node, decision_reason,
               task_type, outcome, latency_ms, error_reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        [request_id, job_id, source_node, destination_node, decision_reason, task_type, outcome, latency_ms,
         error_reason, utcnow()],
    )


def handoffs(cur: duckdb.DuckDBPyConnection, *, request_id: str | None = None, job_id: int | None = None) -> list[dict[str, Any]]:
    cur.execute(
        "SELECT * FROM supervisor_handoffs WHERE (? IS NULL OR request_id = ?) AND (? IS NULL OR job_id = ?) ORDER BY id",
        [request_id, request_id, job_id, job_id],
    )
    return rows(cur)


def decisions_for_items(cur: duckdb.DuckDBPyConnection, item_type: str, item_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Every decision on these items, oldest first, by item id (one query for a queue)."""
    if not item_ids:
        return {}
    cur.execute("SELECT * FROM review_decisions WHERE item_type = ? AND item_id IN (SELECT unnest(?)) ORDER BY id",
                [item_type, item_ids])
    found: dict[int, list[dict[str, Any]]] = {}
    for row in rows(cur):
        found.setdefault(int(row["item_id"]), []).append(row)
    return found


def review_decision_log(cur: duckdb.DuckDBPyConnection, *, patient_id: int | None = None, actor: str | None = None,
                        item_type: str | None = None, decision: str | None = None,
                        since: Any = None) -> list[dict[str, Any]]:
    """Review decisions newest first, with the patient and document each item belongs to."""
    cur.execute(
        """SELECT r.*, coalesce(f.patient_id, i.patient_id, m.patient_id) AS patient_id,
                  coalesce(f.document_id, i.document_id, m.document_id) AS document_id, d.filename,
                  f.fact_type, f.fact_text, f.structured_value, f.citation, i.scope,
                  m.control_id AS message_control_id, m.sender AS message_sender
           FROM review_decisions r
           LEFT JOIN document_facts f ON r.item_type = 'fact' AND f.id = r.item_id
           LEFT JOIN identity_checks i ON r.item_type = 'identity_check' AND i.id = r.item_id
           LEFT JOIN inbound_messages m ON r.item_type = 'inbound_message' AND m.id = r.item_id
           LEFT JOIN documents d ON d.id = coalesce(f.document_id, i.document_id, m.document_id)
           WHERE (? IS NULL OR coalesce(f.patient_id, i.patient_id, m.patient_id) = ?) AND (? IS NULL OR r.actor = ?)
             AND (? IS NULL OR r.item_type = ?) AND (? IS NULL OR r.decision = ?)
             AND (CAST(? AS TIMESTAMP) IS NULL OR r.created_at >= CAST(? AS TIMESTAMP))
           ORDER BY r.id DESC""",
        [patient_id, patient_id, actor, actor, item_type, item_type, decision, decision, since, since],
    )
    return rows(cur)


def recent_handoffs(cur: duckdb.DuckDBPyConnection, *, limit: int = 50, answers_only: bool = False) -> list[dict[str, Any]]:
    """Newest supervisor handoffs first (``answers_only``: those of chat requests)."""
    cur.execute(
        "SELECT * FROM supervisor_handoffs WHERE (NOT ? OR request_id IS NOT NULL) ORDER BY id DESC LIMIT ?",
        [answers_only, limit],
    )
    return rows(cur)
