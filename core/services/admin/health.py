"""Health of the workbench: database, worker heartbeat, queue.

Answers whether or not another process (the UI) holds the database: the worker
writes its heartbeat, its process and queue counts to a small file that needs no
database. A worker whose process is gone is reported at once, whatever the age of
its last heartbeat.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from domain.errors import DatabaseBusy
from domain.settings import Settings
from storage import jobs_repo
from storage.db import Database
from storage.heartbeat import process_gone, read_heartbeat
from storage.migrations import LATEST_VERSION, current_version


def worker_fresh_within(settings: Settings, idle_sleep: float | None = None) -> float:
    """Seconds after its last heartbeat that a worker still counts as alive. A busy
    worker beats every few seconds; an idle one every idle_sleep."""
    return max(30.0, 5 * float(idle_sleep or settings.worker_idle_sleep))


def _worker_component(settings: Settings) -> dict[str, Any]:
    beat = read_heartbeat(settings.heartbeat_path)
    if beat is None:
        return {"status": "absent", "detail": "no worker heartbeat has been written yet"}
    at = datetime.fromisoformat(beat["heartbeat_at"])
    age = (datetime.now(timezone.utc) - at).total_seconds()
    fresh_within = worker_fresh_within(settings, beat.get("idle_sleep"))
    stopped = beat.get("status") == "stopped"
    # A heartbeat is only as good as the process behind it: one killed (SIGKILL, a crash,
    # the OOM killer) leaves its last beat behind, fresh for up to fresh_within seconds.
    # Its pid and start time (storage.heartbeat.process_token) tell at once that it has
    # gone, and a process given the same pid since is not taken for it.
    dead = not stopped and process_gone(beat.get("process"))
    status = "dead" if dead else ("fresh" if age <= fresh_within and not stopped else "stale")
    out = {
        "status": status, "age_seconds": round(age, 1), "worker_id": beat.get("worker_id"),
        "pid": beat.get("pid"), "state": beat.get("status"), "processed": beat.get("processed"),
        "failed": beat.get("failed"), "current_job_id": beat.get("current_job_id"), "queue": beat.get("queue"),
    }
    if dead:
        out["detail"] = f"the worker process (pid {beat.get('pid')}) has stopped"
    elif stopped:
        out["detail"] = f"the last worker (pid {beat.get('pid')}) said it stopped"
    elif status == "stale":
        out["detail"] = f"no worker heartbeat for {age:.0f} s (more than {fresh_within:.0f} s)"
    return out


def health(settings: Settings, db: Database | None = None) -> dict[str, Any]:
    components: dict[str, Any] = {"worker": _worker_component(settings)}
    if not settings.db_path.exists():
        components["database"] = {"status": "missing", "detail": f"run `python -m core init` ({settings.data_dir})"}
    else:
        own = db is None
        try:
            db = db or Database(settings.db_path)
            with db.cursor() as cur:
                version = current_version(cur)
                queue = jobs_repo.queue_counts(cur)
            components["database"] = {"status": "ok", "schema_version": version, "latest": LATEST_VERSION}
            components["queue"] = {"status": "ok", **queue}
        except DatabaseBusy:
            # The serving process owns the file; that is the normal running state.
            components["database"] = {"status": "ok", "detail": "held by the running workbench process"}
            queue = (components["worker"].get("queue") or {})
            components["queue"] = {"status": "ok" if queue else "unknown", **queue}
        finally:
            if own and db is not None:
                db.close()
    checks = {
        "database": components["database"]["status"] == "ok",
        "schema_current": components["database"].get("schema_version", LATEST_VERSION) == LATEST_VERSION,
        "worker_fresh": components["worker"]["status"] == "fresh",
    }
    status = "ok" if all(checks.values()) else ("error" if not checks["database"] else "degraded")
    return {"status": status, "checks": checks, "components": components}
