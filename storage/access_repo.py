"""The access audit: append-only rows of sign-ins, sign-outs and views of patient data.
Nothing here updates or deletes a row."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import duckdb

from storage.db import one, rows


def add(cur: duckdb.DuckDBPyConnection, *, actor: str, event: str, at: datetime, user_id: int | None = None,
        patient_id: int | None = None, object_type: str | None = None, object_id: str | None = None,
        channel: str = "ui", detail: str | None = None) -> dict[str, Any]:
    cur.execute(
        """INSERT INTO access_events (occurred_at, user_id, actor, event, patient_id, object_type, object_id, channel, detail)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *""",
        [at, user_id, actor, event, patient_id, object_type, object_id, channel, detail],
    )
    return one(cur)


def events(cur: duckdb.DuckDBPyConnection, *, actor: str | None = None, patient_id: int | None = None,
           event: str | None = None, limit: int = 5000) -> list[dict[str, Any]]:
    cur.execute(
        """SELECT e.*, p.mrn AS patient_mrn FROM access_events e LEFT JOIN patients p ON p.id = e.patient_id
           WHERE (? IS NULL OR e.actor = ?) AND (? IS NULL OR e.patient_id = ?) AND (? IS NULL OR e.event = ?)
           ORDER BY e.id DESC LIMIT ?""",
        [actor, actor, patient_id, patient_id, event, event, limit],
    )
    return rows(cur)


def actors(cur: duckdb.DuckDBPyConnection) -> list[str]:
    cur.execute("SELECT DISTINCT actor FROM access_events ORDER BY actor")
    return [r[0] for r in cur.fetchall()]
