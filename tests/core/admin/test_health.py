"""`health` and the worker's heartbeat file: a worker whose process is gone is reported
at once, not once its last heartbeat has aged (issue 21: a `kill -9` looked fresh for
up to 30 s). Real processes killed for real: tests/core/ingest/test_crash_safety.py."""

from __future__ import annotations

import os

from core.services.admin.health import health
from core.services.ingest.worker import Worker
from storage.heartbeat import process_token, read_heartbeat
from tests.support.heartbeats import beat_from, ended_process


def test_the_heartbeat_names_the_workers_process(wb):
    Worker(wb).beat("idle")
    beat = read_heartbeat(wb.settings.heartbeat_path)
    assert beat["pid"] == os.getpid() and beat["process"] == process_token()
    assert beat["process"].split(":")[-1], "the process's start time is recorded"


def test_a_live_worker_is_fresh(wb):
    Worker(wb).beat("idle")  # this process: alive
    report = health(wb.settings, db=wb.db)
    assert report["components"]["worker"]["status"] == "fresh"
    assert report["checks"]["worker_fresh"] is True and report["status"] == "ok"
    assert "detail" not in report["components"]["worker"]


def test_a_worker_whose_process_is_gone_is_dead_at_once(wb):
    # The same beat, from a worker whose process lives, passes for fresh: only the process differs.
    beat_from(wb, pid=os.getpid(), process=process_token(), status="busy")
    assert health(wb.settings, db=wb.db)["components"]["worker"]["status"] == "fresh"
    pid, token = ended_process()
    beat_from(wb, pid=pid, process=token, status="busy")
    report = health(wb.settings, db=wb.db)
    worker = report["components"]["worker"]
    assert worker["status"] == "dead"
    assert worker["detail"] == f"the worker process (pid {pid}) has stopped"
    assert report["checks"]["worker_fresh"] is False and report["status"] == "degraded"


def test_another_process_given_the_workers_pid_is_not_taken_for_it(wb):
    # This process's pid is alive, but started at another time than the worker's did.
    host, pid, start = process_token().rsplit(":", 2)
    beat_from(wb, pid=int(pid), process=f"{host}:{pid}:{int(start) - 1}")
    worker = health(wb.settings, db=wb.db)["components"]["worker"]
    assert worker["status"] == "dead" and worker["detail"] == f"the worker process (pid {pid}) has stopped"


def test_a_worker_on_another_host_is_judged_by_its_heartbeat_only(wb):
    beat_from(wb, pid=1, process="another-host.example:1:1")
    assert health(wb.settings, db=wb.db)["components"]["worker"]["status"] == "fresh"


def test_a_heartbeat_without_its_process_is_judged_by_its_age(wb):
    pid, _ = ended_process()
    beat_from(wb, pid=pid, process=None)  # written by a version before the process was recorded
    assert health(wb.settings, db=wb.db)["components"]["worker"]["status"] == "fresh"


def test_a_worker_that_said_it_stopped_stays_stale_and_says_so(wb):
    pid, token = ended_process()
    beat_from(wb, pid=pid, process=token, status="stopped")
    worker = health(wb.settings, db=wb.db)["components"]["worker"]
    assert worker["status"] == "stale" and worker["detail"] == f"the last worker (pid {pid}) said it stopped"
