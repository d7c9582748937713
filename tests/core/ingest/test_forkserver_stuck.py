"""A forkserver stuck in its start-up holds no job for ever (the `core demo` run seen
waiting past ten minutes once in CI): a launch that gets no child in time ends that
server; the next try starts a fresh one, and a second stuck start fails the job with a
plain error. Run in a child interpreter: the forkserver is one per process, and the
stuck preload must not reach the other tests' server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[3]

_SCRIPT = """
import json, os, time
from core.services.ingest import forkserver_internals, sandbox
from domain.errors import ExtractionError
forkserver_internals.START_SECONDS = 3.0
sandbox._PRELOAD = ["tests.support.stuck_preload"]
started = time.monotonic()
try:
    answer = {"pid": sandbox.run_isolated(os.getpid, (), timeout=60, memory_mb=512, method="forkserver")}
except ExtractionError as exc:
    answer = {"code": exc.code, "message": exc.message}
answer["seconds"] = time.monotonic() - started
answer["me"] = os.getpid()
print(json.dumps(answer))
"""


def _run(tmp_path: Path, **env: str) -> tuple[dict, list[int]]:
    pids = tmp_path / "servers"
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "STUCK_PRELOAD_PIDS": str(pids), **env})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), [int(p) for p in pids.read_text().split()]


def test_a_forkserver_stuck_once_is_replaced_and_the_job_is_read(tmp_path):
    answer, servers = _run(tmp_path, STUCK_PRELOAD_ONCE=str(tmp_path / "stuck-once"))
    assert "pid" in answer, answer
    assert answer["pid"] != answer["me"]
    assert len(servers) == 2  # the stuck server, then a fresh one that started the child
    assert not psutil.pid_exists(servers[0]), "the stuck forkserver was left running"
    assert answer["seconds"] < 60


def test_a_forkserver_stuck_every_time_fails_the_job_with_a_plain_error(tmp_path):
    answer, servers = _run(tmp_path, STUCK_PRELOAD_ALWAYS="1")
    assert answer.get("code") == "internal_error", answer
    assert "did not start" in answer["message"] and "not in the file" in answer["message"]
    assert "original is kept" in answer["message"]
    assert len(servers) == 2
    assert not any(psutil.pid_exists(pid) for pid in servers), "a stuck forkserver was left running"
    assert answer["seconds"] < 60
