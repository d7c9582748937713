"""Worker heartbeats as the health checks read them: one just written by a worker in a
given process, and the pid and token of a process that has ended."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone

from storage.heartbeat import process_token, write_heartbeat


def ended_process() -> tuple[int, str]:
    """The pid and token of a process that has ended (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    token = process_token(proc.pid)
    proc.wait()
    return proc.pid, token


def beat_from(wb, *, pid: int, process: str | None, status: str = "idle") -> None:
    """A heartbeat just written (so fresh by its age) by the worker in ``process``."""
    payload = {"worker": "intake-extractor", "worker_id": f"intake-extractor:{pid}:1", "pid": pid,
               "status": status, "heartbeat_at": datetime.now(timezone.utc).isoformat(), "current_job_id": None,
               "processed": 0, "failed": 0, "queue": {}, "idle_sleep": 1.0}
    if process is not None:
        payload["process"] = process
    write_heartbeat(wb.settings.heartbeat_path, payload)
