"""Chart alerts (migration 16): the rows the chart checks raise, withdraw and a
clinician acknowledges. A row is found again by (patient, alert_key), so storing the
same alert twice changes nothing but its wording."""

from __future__ import annotations

from typing import Any

import duckdb

from domain.clock import utcnow
from storage.db import one, rows, to_json
from storage import record_version

OPEN = "open"
WITHDRAWN = "withdrawn"


def for_patient(cur: duckdb.DuckDBPyConnection, patient_id: int, *, include_withdrawn: bool = False) -> list[dict[str, Any]]:
    cur.execute(
        """SELECT * FROM chart_alerts WHERE patient_id = ? AND (? OR status = 'open')
           ORDER BY CASE priority WHEN 'high' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END, id""",
        [patient_id, include_withdrawn],
    )
    return rows(cur)


def by_id(cur: duckdb.DuckDBPyConnection, alert_id: int) -> dict[str, Any] | None:
    cur.execute("SELECT * FROM chart_alerts WHERE id = ?", [alert_id])
    return one(cur)


def save(cur: duckdb.DuckDBPyConnection, patient_id: int, alerts: list[dict[str, Any]]) -> dict[str, int]:
    """Store what the checks raised: a new key is a new open alert; a known key keeps
    its row (and its acknowledgement), is re-opened if it had been withdrawn, and takes
    the current wording. Returns how many were raised, re-opened and kept."""
    counts = {"raised": 0, "reopened": 0, "kept": 0}
    now = utcnow()
    for a in alerts:
        cur.execute("SELECT id, status FROM chart_alerts WHERE patient_id = ? AND alert_key = ?",
                    [patient_id, a["alert_key"]])
        found = cur.fetchone()
        if found is None:
            cur.execute(
                """INSERT INTO chart_alerts (patient_id, alert_key, rule_id, rule_version, rules_version, kind, priority,
                       message, fact_ids, "references", status, raised_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?)""",
                [patient_id, a["alert_key"], a["rule_id"], a["rule_version"], a["rules_version"], a["kind"],
                 a["priority"], a["message"], to_json(a["fact_ids"]), to_json(a["references"]), now])
            counts["raised"] += 1
            continue
        reopened = found[1] != OPEN
        cur.execute(
            """UPDATE chart_alerts SET message = ?, priority = ?, rule_version = ?, rules_version = ?, "references" = ?,
                   status = 'open', withdrawn_at = NULL, withdrawn_reason = NULL WHERE id = ?""",
            [a["message"], a["priority"], a["rule_version"], a["rules_version"], to_json(a["references"]), found[0]])
        counts["reopened" if reopened else "kept"] += 1
    if alerts:
        record_version.bump(cur, [patient_id], "alerts")
    return counts


def withdraw(cur: duckdb.DuckDBPyConnection, reasons: dict[int, str]) -> None:
    now = utcnow()
    for alert_id, reason in reasons.items():
        cur.execute("UPDATE chart_alerts SET status = 'withdrawn', withdrawn_at = ?, withdrawn_reason = ? WHERE id = ?",
                    [now, reason, alert_id])
    record_version.bump_rows(cur, "chart_alerts", reasons, "alerts_withdrawn")


def acknowledge(cur: duckdb.DuckDBPyConnection, alert_id: int, *, by: str, note: str) -> None:
    cur.execute("UPDATE chart_alerts SET acknowledged_by = ?, acknowledged_at = ?, acknowledgement_note = ? WHERE id = ?",
                [by, utcnow(), note, alert_id])
    record_version.bump_rows(cur, "chart_alerts", [alert_id], "alert_acknowledged")


def fact_states(cur: duckdb.DuckDBPyConnection, fact_ids: list[int]) -> dict[int, dict[str, Any]]:
    """What became of the facts alerts cite: active, retracted, promotion status, and
    the fact's words and citation with its document's name (for showing an alert)."""
    if not fact_ids:
        return {}
    cur.execute(
        """SELECT f.id, f.fact_type, f.fact_text, f.certainty, f.active, f.retracted_at, f.promotion_status,
                  f.citation, f.document_id, d.filename, d.deleted AS document_deleted
           FROM document_facts f JOIN documents d ON d.id = f.document_id WHERE f.id IN (SELECT unnest(?))""",
        [fact_ids])
    return {int(r["id"]): r for r in rows(cur)}
