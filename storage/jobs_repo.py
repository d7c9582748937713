"""Processing jobs: enqueue, exclusive claim, heartbeat, finish, stale reclaim."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import duckdb

from storage.db import one, rows, to_json


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def enqueue(cur: duckdb.DuckDBPyConnection, *, patient_id: int, document_id: int, doc_type: str) -> dict[str, Any]:
    cur.execute(
        "INSERT INTO processing_jobs (patient_id, document_id, doc_type, created_at) VALUES (?, ?, ?, ?) RETURNING *",
        [patient_id, document_id, doc_type, utcnow()],
    )
    return one(cur)


def claim_next(cur: duckdb.DuckDBPyConnection, worker_id: str, job_id: int | None = None) -> dict[str, Any] | None:
    """Atomically move one pending job to running for ``worker_id``.

    The ``status = 'pending'`` guard in the UPDATE plus DuckDB's optimistic
    concurrency make the claim exclusive: a second claimant either sees the row
    already running or gets a write conflict, and walks away empty-handed.
    """
    now = utcnow()
    pick = "SELECT id FROM processing_jobs WHERE status = 'pending' ORDER BY id LIMIT 1"
    params: list[Any] = [worker_id, now, now]
    if job_id is not None:
        pick = "SELECT ?::BIGINT"
        params.append(job_id)
    try:
        cur.execute(
            f"""UPDATE processing_jobs SET status = 'running', attempts = attempts + 1, worker_id = ?,
                    started_at = ?, heartbeat_at = ?, finished_at = NULL, error_code = NULL,
                    error_message = NULL
                WHERE id = ({pick}) AND status = 'pending'
                RETURNING *""",
            params,
        )
        return one(cur)
    except duckdb.TransactionException:
        return None


def heartbeat(cur: duckdb.DuckDBPyConnection, job_id: int) -> None:
    cur.execute("UPDATE processing_jobs SET heartbeat_at = ? WHERE id = ? AND status = 'running'", [utcnow(), job_id])


def finish(cur: duckdb.DuckDBPyConnection, job_id: int, *, status: str, error_code: str | None = None,
           error_message: str | None = None, timings: dict | None = None, counts: dict | None = None,
           engine: str | None = None, warnings: list[dict] | None = None) -> None:
    cur.execute(
        """UPDATE processing_jobs SET status = ?, finished_at = ?, heartbeat_at = ?, error_code = ?,
               error_message = ?, timings = ?, counts = ?, engine = ?, warnings = ? WHERE id = ?""",
        [status, utcnow(), utcnow(), error_code, error_message, to_json(timings or {}),
         to_json(counts or {}), engine, to_json(warnings or []), job_id],
    )


def reclaim_stale(cur: duckdb.DuckDBPyConnection, *, stale_after: float, max_attempts: int) -> dict[str, int]:
    """Return running jobs whose worker stopped beating to the queue (or fail them
    once their attempts are used up)."""
    cutoff = utcnow() - timedelta(seconds=stale_after)
    cur.execute(
        """UPDATE processing_jobs SET status = 'failed', finished_at = ?, error_code = 'attempts_exhausted',
               error_message = 'The worker stopped while processing this document ' || attempts ||
                               ' times; it will not be retried automatically.'
           WHERE status = 'running' AND heartbeat_at < ? AND attempts >= ? RETURNING id""",
        [utcnow(), cutoff, max_attempts],
    )
    failed = len(cur.fetchall())
    cur.execute(
        """UPDATE processing_jobs SET status = 'pending', worker_id = NULL
           WHERE status = 'running' AND heartbeat_at < ? AND attempts < ? RETURNING id""",
        [cutoff, max_attempts],
    )
    requeued = len(cur.fetchall())
    return {"requeued": requeued, "failed": failed}


def by_id(cur: duckdb.DuckDBPyConnection, job_id: int) -> dict[str, Any] | None:
    cur.execute("SELECT * FROM processing_jobs WHERE id = ?", [job_id])
    return one(cur)


def for_document(cur: duckdb.DuckDBPyConnection, document_id: int) -> list[dict[str, Any]]:
    cur.execute("SELECT * FROM processing_jobs WHERE document_id = ? ORDER BY id", [document_id])
    return rows(cur)


def queue_counts(cur: duckdb.DuckDBPyConnection) -> dict[str, int]:
    cur.execute("SELECT status, count(*) FROM processing_jobs GROUP BY status")
    counts = {s: 0 for s in ("pending", "running", "succeeded", "failed", "retracted")}
    counts.update({status: int(n) for status, n in cur.fetchall()})
    return counts


def requeue(cur: duckdb.DuckDBPyConnection, job_id: int, *, only_failed: bool = False) -> dict[str, Any] | None:
    """Put a job back in the queue as the same job (reprocessing is idempotent): worker,
    error and finish time cleared, attempts kept (they count real tries). With
    ``only_failed`` a job that is no longer failed is left alone and None returned, so a
    second, racing retry is a no-op."""
    cur.execute(
        """UPDATE processing_jobs SET status = 'pending', worker_id = NULL, error_code = NULL,
               error_message = NULL, finished_at = NULL, heartbeat_at = NULL
           WHERE id = ? AND (NOT ? OR status = 'failed') RETURNING *""",
        [job_id, only_failed],
    )
    return one(cur)


def mark_retracted(cur: duckdb.DuckDBPyConnection, document_id: int) -> int:
    cur.execute(
        "UPDATE processing_jobs SET status = 'retracted' WHERE document_id = ? AND status <> 'running' RETURNING id",
        [document_id],
    )
    return len(cur.fetchall())


def upsert_worker(cur: duckdb.DuckDBPyConnection, worker_id: str, *, status: str, current_job_id: int | None,
                  processed: int, failed: int) -> None:
    cur.execute(
        """INSERT INTO worker_heartbeats (worker_id, status, heartbeat_at, current_job_id, processed, failed)
           VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (worker_id) DO UPDATE SET status = excluded.status, heartbeat_at = excluded.heartbeat_at,
               current_job_id = excluded.current_job_id, processed = excluded.processed, failed = excluded.failed""",
        [worker_id, status, utcnow(), current_job_id, processed, failed],
    )


# --- read side for the Operations page and document lists ------------------------------

def recent_jobs(cur: duckdb.DuckDBPyConnection, *, limit: int = 200, status: str | None = None) -> list[dict[str, Any]]:
    """Newest jobs first, with whether their document is deleted (no file names: the
    Operations page is PHI-free)."""
    cur.execute(
        """SELECT j.id, j.document_id, j.doc_type, j.status, j.attempts, j.created_at, j.started_at,
                  j.finished_at, j.heartbeat_at, j.worker_id, j.error_code, j.error_message, j.timings, j.counts,
                  j.engine, coalesce(d.deleted, TRUE) AS document_deleted
           FROM processing_jobs j LEFT JOIN documents d ON d.id = j.document_id
           WHERE (? IS NULL OR j.status = ?) ORDER BY j.id DESC LIMIT ?""",
        [status, status, limit],
    )
    return rows(cur)


def finished_timings(cur: duckdb.DuckDBPyConnection, *, limit: int = 1000) -> list[dict[str, Any]]:
    """Stage timings (ms) of the latest succeeded jobs."""
    cur.execute(
        "SELECT timings FROM processing_jobs WHERE status = 'succeeded' AND timings IS NOT NULL "
        "ORDER BY id DESC LIMIT ?",
        [limit],
    )
    return [r["timings"] or {} for r in rows(cur)]


def latest_for_documents(cur: duckdb.DuckDBPyConnection, document_ids: list[int]) -> dict[int, dict[str, Any]]:
    """The newest job of each document, keyed by document id."""
    if not document_ids:
        return {}
    cur.execute(
        """SELECT * FROM processing_jobs WHERE id IN (
               SELECT max(id) FROM processing_jobs WHERE document_id IN (SELECT unnest(?)) GROUP BY document_id)""",
        [list(document_ids)],
    )
    return {r["document_id"]: r for r in rows(cur)}


def workers(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cur.execute("SELECT * FROM worker_heartbeats ORDER BY heartbeat_at DESC")
    return rows(cur)
