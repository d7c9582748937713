"""Operations: jobs, queue, worker freshness, supervisor handoffs and stage latency.

PHI-free by construction: nothing here reads file names, quotes, fact text or
questions, so the Operations page can be shown to anyone who runs the service.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from domain.errors import BadInput, NotFound
from domain.latency import percentile, stages_of_event
from domain.policy.access.permissions import Permission
from core.services.admin.accounts import authorize
from core.services.admin.health import worker_fresh_within
from core.services.ingest.processing import JOB_STAGES
from core.services.workbench import Workbench
from storage import audit_repo, documents_repo, jobs_repo

# A chat request's handoffs, named as stages (source node, destination node) -> stage.
ANSWER_STAGES = {
    ("supervisor", "evidence-retriever"): "route",
    ("evidence-retriever", "supervisor"): "retrieve",
    ("supervisor", "answer-composer"): "compose",
    ("answer-composer", "answer-verifier"): "verify answer",
    ("answer-verifier", "answer-drafter"): "draft",
}
# A job's timings as the Operations page lists them (ms).
TIMING_COLUMNS = (*JOB_STAGES, "total")
_JOB_COLUMNS = ("id", "document_id", "doc_type", "status", "attempts", "created_at", "started_at", "finished_at",
                "worker_id", "error_code", "error_message", "timings", "engine", "reclaims", "reclaimed_at",
                "reclaim_reason", "document_deleted")


def jobs(wb: Workbench, *, limit: int = 200, status: str | None = None) -> list[dict[str, Any]]:
    """Newest jobs first: ids, doc type, status, attempts, times, stage timings (ms), error,
    and how often (when, why) the job was taken back from a worker that stopped."""
    with wb.db.cursor() as cur:
        found = jobs_repo.recent_jobs(cur, limit=limit, status=status)
    return [{k: getattr(r, k) for k in _JOB_COLUMNS} | {"timings": r.timings or {}} for r in found]


def retry_job(wb: Workbench, job_id: int, *, by: str) -> dict[str, Any]:
    """Requeue a failed job as the same job (status pending, error cleared, attempts
    reset: a person's retry gives it the full set of attempts again) and audit it, the
    attempts used before included. Retrying a job that a retry already put back in the
    queue returns it unchanged, so a double click queues it once."""
    by = authorize(wb, by, Permission.RETRY_JOB).name
    with wb.db.transaction() as cur:
        job = jobs_repo.by_id(cur, job_id)
        if job is None:
            raise NotFound(f"No job {job_id}.", code="unknown_job")
        document = documents_repo.by_id(cur, job.document_id)
        if document is None or document["deleted"]:
            raise BadInput(f"Job {job_id} belongs to a deleted document; it cannot be retried.",
                           code="document_deleted")
        if job.status == "pending" and _last_retry(cur, job_id):
            return job.to_dict()
        if job.status != "failed":
            raise BadInput(f"Job {job_id} is {job.status}, not failed; only a failed job can be retried.",
                           code="job_not_failed")
        requeued = jobs_repo.requeue(cur, job_id, only_failed=True, reset_attempts=True)
        if requeued is None:  # another retry or the worker got there first
            raise BadInput(f"Job {job_id} changed while retrying; reload to see its state.", code="job_not_failed")
        audit_repo.add_review_decision(
            cur, item_type="job", item_id=job_id, decision="retry", actor=by, reason=None,
            before={"status": job.status, "attempts": job.attempts, "error_code": job.error_code},
            after={"status": requeued.status, "attempts": requeued.attempts, "error_code": None})
    return requeued.to_dict()


def reclaimed_jobs(wb: Workbench, *, limit: int = 50) -> list[dict[str, Any]]:
    """Jobs taken back from a worker that stopped (its process gone or its heartbeat
    silent) or handed back at shutdown, the latest first."""
    with wb.db.cursor() as cur:
        found = jobs_repo.reclaimed_jobs(cur, limit=limit)
    return [{k: getattr(r, k) for k in ("id", "document_id", "doc_type", "status", "attempts", "reclaims",
                                        "reclaimed_at", "reclaim_reason")} for r in found]


def _last_retry(cur, job_id: int) -> bool:
    decisions = audit_repo.review_decisions(cur, "job", job_id)
    return bool(decisions) and decisions[-1]["decision"] == "retry"


def queue_depth(wb: Workbench) -> dict[str, int]:
    """Jobs per status (pending, running, succeeded, failed, retracted)."""
    with wb.db.cursor() as cur:
        return jobs_repo.queue_counts(cur)


def workers(wb: Workbench, *, now: datetime | None = None) -> list[dict[str, Any]]:
    """Each worker's last heartbeat: ``age_seconds`` and ``fresh`` by the same threshold
    as ``health`` (a stopped worker is never fresh)."""
    now = now or datetime.now(timezone.utc).replace(tzinfo=None)
    threshold = worker_fresh_within(wb.settings)
    with wb.db.cursor() as cur:
        found = jobs_repo.workers(cur)
    out = []
    for w in found:
        age = max(0.0, (now - w["heartbeat_at"]).total_seconds())
        out.append({"worker_id": w["worker_id"], "state": w["status"], "age_seconds": round(age, 1),
                    "fresh": age <= threshold and w["status"] != "stopped", "stale_after_seconds": threshold,
                    "current_job_id": w["current_job_id"], "processed": w["processed"], "failed": w["failed"]})
    return out


def recent_handoffs(wb: Workbench, *, limit: int = 50) -> list[dict[str, Any]]:
    """Newest supervisor handoffs: nodes, reason, outcome, latency (the reason is
    generated by the router, never the question)."""
    with wb.db.cursor() as cur:
        found = audit_repo.recent_handoffs(cur, limit=limit)
    return [{"id": h["id"], "at": h["created_at"], "job_id": h["job_id"], "request_id": h["request_id"],
             "source": h["source_node"], "destination": h["destination_node"], "task": h["task_type"],
             "reason": h["decision_reason"], "outcome": h["outcome"], "latency_ms": h["latency_ms"],
             "error": h["error_reason"]} for h in found]


def stage_latency(wb: Workbench, *, limit: int = 1000) -> list[dict[str, Any]]:
    """``{stage, kind, p50_ms, p95_ms, n}``: document job stages from the timings of the
    latest succeeded jobs, then answer stages from chat requests' handoffs."""
    with wb.db.cursor() as cur:
        timings = jobs_repo.finished_timings(cur, limit=limit)
        handoffs = audit_repo.recent_handoffs(cur, limit=limit, answers_only=True)
    samples: dict[str, list[float]] = {}
    for t in timings:  # the same reading of a job's timings as the eval gate's latency report
        for stage, ms in stages_of_event({"event": "job_finished", "latency_ms": t}).items():
            samples.setdefault(stage, []).append(ms)
    out = [_row(stage, "document job", samples[stage]) for stage in JOB_STAGES if stage in samples]
    answer: dict[str, list[float]] = {}
    for h in handoffs:
        if h["latency_ms"] is None:
            continue
        stage = ANSWER_STAGES.get((h["source_node"], h["destination_node"]),
                                  f"{h['source_node']} → {h['destination_node']}")
        answer.setdefault(stage, []).append(float(h["latency_ms"]))
    order = list(ANSWER_STAGES.values())
    for stage in sorted(answer, key=lambda s: order.index(s) if s in order else len(order)):
        out.append(_row(stage, "answer", answer[stage]))
    return out


def _row(stage: str, kind: str, values: list[float]) -> dict[str, Any]:
    return {"stage": stage, "kind": kind, "p50_ms": percentile(values, 50), "p95_ms": percentile(values, 95),
            "n": len(values)}
