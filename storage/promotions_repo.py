"""Promotion provenance and the chart tables it writes to."""

from __future__ import annotations

from typing import Any

import duckdb

from storage.db import one, rows, to_json
from storage.jobs_repo import utcnow

# fact_type -> (chart table, columns taken from structured_value)
CHART_DESTINATIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "lab_result": ("chart_lab_results", ("test_name", "value", "unit", "reference_range", "collection_date", "abnormal_flag")),
    "allergy": ("chart_allergies", ("substance", "reaction", "severity")),
    "medication": ("chart_medications", ("name", "dose", "frequency")),
    "problem": ("chart_problems", ("description", "code")),
}


def insert_promotion(cur: duckdb.DuckDBPyConnection, **p: Any) -> dict[str, Any]:
    cur.execute(
        """INSERT INTO promotions (patient_id, document_id, job_id, fact_id, fact_fingerprint,
               clinical_content_fingerprint, promoted_table, promoted_record_id, outcome, duplicate_key,
               conflict_reason, citation, confidence, review_status, active, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *""",
        [p["patient_id"], p["document_id"], p.get("job_id"), p["fact_id"], p["fact_fingerprint"],
         p["clinical_content_fingerprint"], p.get("promoted_table"), p.get("promoted_record_id"), p["outcome"],
         p.get("duplicate_key"), p.get("conflict_reason"), to_json(p.get("citation")), p.get("confidence"),
         p.get("review_status"), p.get("active", True), utcnow()],
    )
    return one(cur)


def promotions_for_fact(cur: duckdb.DuckDBPyConnection, fact_id: int) -> list[dict[str, Any]]:
    cur.execute("SELECT * FROM promotions WHERE fact_id = ? ORDER BY id", [fact_id])
    return rows(cur)


def promotions_for_document(cur: duckdb.DuckDBPyConnection, document_id: int) -> list[dict[str, Any]]:
    cur.execute("SELECT * FROM promotions WHERE document_id = ? ORDER BY id", [document_id])
    return rows(cur)


def active_supporting(cur: duckdb.DuckDBPyConnection, *, table: str, record_id: int,
                      excluding_document: int) -> list[dict[str, Any]]:
    """Active promotions from other live documents that back the same chart row."""
    cur.execute(
        """SELECT p.* FROM promotions p JOIN documents d ON d.id = p.document_id
           WHERE p.promoted_table = ? AND p.promoted_record_id = ? AND p.active AND p.document_id <> ?
             AND p.outcome IN ('promoted', 'already_exists', 'duplicate_skipped') AND NOT d.deleted
           ORDER BY p.id""",
        [table, record_id, excluding_document],
    )
    return rows(cur)


def retract_promotion(cur: duckdb.DuckDBPyConnection, promotion_id: int, reason: str) -> None:
    cur.execute(
        """UPDATE promotions SET outcome = 'retracted', active = FALSE, retracted_at = ?, retraction_reason = ?,
               updated_at = ? WHERE id = ?""",
        [utcnow(), reason, utcnow(), promotion_id],
    )


def insert_chart_row(cur: duckdb.DuckDBPyConnection, fact_type: str, patient_id: int, value: dict[str, Any]) -> tuple[str, int]:
    table, columns = CHART_DESTINATIONS[fact_type]
    names = ", ".join(("patient_id", "source", *columns))
    marks = ", ".join("?" for _ in range(len(columns) + 2))
    cur.execute(
        f"INSERT INTO {table} ({names}) VALUES ({marks}) RETURNING id",
        [patient_id, "promoted", *[value.get(c) for c in columns]],
    )
    return table, int(cur.fetchone()[0])


def link_chart_row(cur: duckdb.DuckDBPyConnection, table: str, record_id: int, promotion_id: int, note: str | None = None) -> None:
    cur.execute(
        f"UPDATE {table} SET promotion_id = ?, note = coalesce(?, note), updated_at = ? WHERE id = ?",
        [promotion_id, note, utcnow(), record_id],
    )


def deactivate_chart_row(cur: duckdb.DuckDBPyConnection, table: str, record_id: int, note: str) -> bool:
    cur.execute(
        f"""UPDATE {table} SET active = FALSE, note = trim(coalesce(note || ' ', '') || ?), updated_at = ?
            WHERE id = ? AND active RETURNING id""",
        [note, utcnow(), record_id],
    )
    return bool(cur.fetchall())


def chart_row(cur: duckdb.DuckDBPyConnection, table: str, record_id: int) -> dict[str, Any] | None:
    cur.execute(f"SELECT * FROM {table} WHERE id = ?", [record_id])
    return one(cur)


def chart_rows(cur: duckdb.DuckDBPyConnection, table: str, patient_id: int, *, active_only: bool = True) -> list[dict[str, Any]]:
    cur.execute(f"SELECT * FROM {table} WHERE patient_id = ? AND (active OR NOT ?) ORDER BY id", [patient_id, active_only])
    return rows(cur)


def promotion_for_content(cur: duckdb.DuckDBPyConnection, patient_id: int, content_fp: str) -> dict[str, Any] | None:
    """The live promotion (chart row still active) holding this exact clinical content."""
    cur.execute(
        """SELECT p.*, d.sha256 AS document_sha256 FROM promotions p JOIN documents d ON d.id = p.document_id
           WHERE p.patient_id = ? AND p.clinical_content_fingerprint = ? AND p.active
             AND p.outcome = 'promoted' ORDER BY p.id LIMIT 1""",
        [patient_id, content_fp],
    )
    return one(cur)
