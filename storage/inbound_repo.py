"""HL7 v2 messages received from interfaces (``inbound_messages``, migration 11)."""

from __future__ import annotations

from typing import Any

import duckdb

from domain.clock import utcnow
from storage.db import insert_many, one, rows
from storage import record_version


def same_control_id(cur: duckdb.DuckDBPyConnection, *, sender: str, control_id: str) -> list[dict[str, Any]]:
    """Every message stored under this sender's control id (normally none or one)."""
    cur.execute("SELECT * FROM inbound_messages WHERE sender = ? AND control_id = ? ORDER BY id", [sender, control_id])
    return rows(cur)


def same_control_ids(cur: duckdb.DuckDBPyConnection,
                     pairs: list[tuple[str, str]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """``same_control_id`` for several (sender, control id) pairs in one query."""
    if not pairs:
        return {}
    cur.execute("SELECT * FROM inbound_messages WHERE control_id IN (SELECT unnest(?)) ORDER BY id",
                [sorted({c for _, c in pairs})])
    wanted = set(pairs)
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows(cur):
        if (row["sender"], row["control_id"]) in wanted:
            found.setdefault((row["sender"], row["control_id"]), []).append(row)
    return found


def insert_batch(cur: duckdb.DuckDBPyConnection, records: list[dict[str, Any]]) -> list[int]:
    """Several messages' rows (each with the same columns) in one statement; their ids,
    in order. Each (sender, control id) must come once in ``records``."""
    return insert_many(cur, "inbound_messages", records, key=("sender", "control_id"), stamp="received_at")


def note_resent(cur: duckdb.DuckDBPyConnection, message_id: int) -> None:
    cur.execute("UPDATE inbound_messages SET resent = resent + 1, last_received_at = ? WHERE id = ?",
                [utcnow(), message_id])


def by_id(cur: duckdb.DuckDBPyConnection, message_id: int) -> dict[str, Any] | None:
    cur.execute("SELECT * FROM inbound_messages WHERE id = ?", [message_id])
    return one(cur)


def held(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cur.execute("SELECT * FROM inbound_messages WHERE status = 'held' ORDER BY id")
    return rows(cur)


def mark_attached(cur: duckdb.DuckDBPyConnection, message_id: int, *, patient_id: int, document_id: int,
                  job_id: int | None, by: str) -> dict[str, Any]:
    cur.execute(
        """UPDATE inbound_messages SET status = 'attached', patient_id = ?, document_id = ?, job_id = ?,
               decided_by = ?, decided_at = ? WHERE id = ? AND status = 'held' RETURNING *""",
        [patient_id, document_id, job_id, by, utcnow(), message_id],
    )
    attached = one(cur)
    if attached is not None:
        record_version.bump(cur, [patient_id], "message_attached")
    return attached


def mark_dismissed(cur: duckdb.DuckDBPyConnection, message_id: int, *, by: str) -> dict[str, Any]:
    """Set aside as not for this clinic; the row and the stored original stay."""
    cur.execute(
        """UPDATE inbound_messages SET status = 'dismissed', decided_by = ?, decided_at = ?
           WHERE id = ? AND status = 'held' RETURNING *""",
        [by, utcnow(), message_id],
    )
    return one(cur)


def counts(cur: duckdb.DuckDBPyConnection) -> dict[str, int]:
    cur.execute("SELECT status, count(*) FROM inbound_messages GROUP BY status")
    return {status: int(n) for status, n in cur.fetchall()}

