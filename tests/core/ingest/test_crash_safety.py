"""A worker killed at any moment loses and duplicates nothing, and its job is taken back at
once; SIGTERM ends the worker mid-job without losing its job; a failed job can be retried
from the CLI. The full 50-kill run is bench/kill_worker.py.

Nothing here is timed: what shows a stop or a reclaim came at once is what it recorded (a
job handed back, a reclaim's reason, the process's exit and its last word). The waits below
have deadlines only so that a broken build fails instead of hanging. How soon the worker and
the app are gone after SIGTERM is printed by bench/sigterm_exit.py."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bench import kill_worker
from bench.sigterm_exit import SLOW_WORKER, scanned_pages, wait_for_beat
from domain.errors import ExtractionError
from core.services.ingest.worker import Worker
from storage import jobs_repo
from storage.jobs_repo import HEARTBEAT_STOPPED, RELEASED_AT_SHUTDOWN
from storage.heartbeat import process_gone, process_token
from tests.support.file_builders import FAKE_PDF

ROOT = Path(__file__).resolve().parents[3]
def dead_process() -> str:
    """The token of a process that has ended (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    token = process_token(proc.pid)
    proc.wait()
    return token


# --- reclaim ------------------------------------------------------------------------------------

def test_a_job_whose_worker_process_is_gone_is_reclaimed_at_once(wb, queued):
    job_id = queued.job["id"]
    with wb.db.cursor() as cur:
        jobs_repo.claim_next(cur, "intake-extractor:cli", process=dead_process())
        # Its heartbeat is fresh, so only the dead process tells that the worker stopped.
        out = jobs_repo.reclaim_stale(cur, stale_after=120, max_attempts=3, gone=process_gone)
        job = jobs_repo.by_id(cur, job_id)
    assert out == {"requeued": 1, "failed": 0, "jobs": {job_id: "worker_gone"}}
    assert (job.status, job.attempts, job.reclaims, job.reclaim_reason) == ("pending", 1, 1, "worker_gone")
    assert job.worker_process is None and job.reclaimed_at is not None


def test_a_job_of_a_live_worker_is_left_alone(wb, queued):
    with wb.db.cursor() as cur:
        jobs_repo.claim_next(cur, "intake-extractor:ui", process=process_token())
        assert jobs_repo.reclaim_stale(cur, stale_after=120, max_attempts=3, gone=process_gone) == {
            "requeued": 0, "failed": 0}
        assert jobs_repo.by_id(cur, queued.job["id"]).status == "running"
    assert not process_gone(None) and not process_gone("another-host:1:1")  # only the heartbeat can tell


def test_a_document_that_kills_its_worker_every_time_fails_after_max_attempts(wb, queued):
    job_id = queued.job["id"]
    with wb.db.cursor() as cur:
        for _ in range(3):
            assert jobs_repo.claim_next(cur, "intake-extractor:cli", process=dead_process()).id == job_id
            jobs_repo.reclaim_stale(cur, stale_after=120, max_attempts=3, gone=process_gone)
        job = jobs_repo.by_id(cur, job_id)
    assert (job.status, job.error_code, job.reclaims) == ("failed", "attempts_exhausted", 3)
    assert "3 times" in job.error_message


def test_operations_lists_reclaimed_jobs(wb, queued):
    from core.services.ingest import operations

    with wb.db.cursor() as cur:
        jobs_repo.claim_next(cur, "intake-extractor:cli", process=dead_process())
    Worker(wb, worker_id="intake-extractor:test").run_once()  # reclaims it, then reads it (and fails it)
    [row] = operations.reclaimed_jobs(wb)
    assert (row["id"], row["reclaims"], row["reclaim_reason"]) == (queued.job["id"], 1, "worker_gone")
    listed = next(j for j in operations.jobs(wb) if j["id"] == queued.job["id"])
    assert listed["reclaims"] == 1 and listed["status"] == "failed" and listed["attempts"] == 2


# --- SIGTERM -------------------------------------------------------------------------------------

def test_shutdown_hands_back_a_job_that_outlasts_the_grace(wb, queued, monkeypatch):
    reading, release, ended = threading.Event(), threading.Event(), threading.Event()

    def slow(wb, job):
        reading.set()
        release.wait(30)  # the document ends only when the test says so (30 s: no hang if it never does)
        ended.set()
        raise ExtractionError("The document ended after its job was handed back.", code="corrupt_file")

    monkeypatch.setattr("core.services.ingest.worker.run_pipeline", slow)
    worker = Worker(wb, worker_id="intake-extractor:slow", beat_every=0.1)
    worker.start_thread()
    assert reading.wait(10), "the worker never started the document"  # a deadline against a hang only
    assert worker.shutdown(grace=0.5) is False  # still inside the document
    # shutdown returned without waiting for the document: it is still being read.
    assert worker._thread.is_alive() and not ended.is_set()
    with wb.db.cursor() as cur:
        job = jobs_repo.by_id(cur, queued.job["id"])
    assert (job.status, job.attempts, job.reclaim_reason) == ("pending", 0, "released_at_shutdown")
    release.set()  # the document ends after all: its result must not overwrite the released job
    worker._thread.join(5)
    assert ended.is_set()
    with wb.db.cursor() as cur:
        assert jobs_repo.by_id(cur, queued.job["id"]).status == "pending"


def _cli_env(data_dir: Path) -> dict[str, str]:
    from tests.support.browser_support import make_run_env

    return make_run_env(data_dir)  # the production defaults, the worker's idle sleep too


def test_sigterm_ends_the_worker_mid_job_and_its_job_is_released_not_lost(tmp_path):
    """SLOW_WORKER's document takes a minute. A worker that waited for it would end the job
    succeeded; one that stops at once (after its short grace) hands it back, unread."""
    data_dir = tmp_path / "data"
    [doc_id] = kill_worker.queue_documents(data_dir, kill_worker.corpus(1))
    proc = subprocess.Popen([sys.executable, "-c", SLOW_WORKER], cwd=ROOT, env=_cli_env(data_dir),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        beat = wait_for_beat(data_dir, proc, job=True)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)  # a deadline against a hang only, not a speed
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert json.loads(out)["stopped"] is True
    assert f"job {beat['current_job_id']} handed back" in err
    state = _job_state(data_dir, beat["current_job_id"])
    assert state == ("pending", 0, RELEASED_AT_SHUTDOWN)  # not lost, not read, attempt not counted


def _job_state(data_dir: Path, job_id: int) -> tuple:
    import duckdb

    con = duckdb.connect(str(data_dir / "workbench.duckdb"), read_only=True)
    try:
        return con.execute("SELECT status, attempts, reclaim_reason FROM processing_jobs WHERE id = ?",
                           [job_id]).fetchone()
    finally:
        con.close()


# --- SIGKILL at random moments ------------------------------------------------------------------

def test_killing_the_worker_at_random_moments_loses_and_duplicates_nothing(tmp_path):
    """Four SIGKILLs across eight documents of six kinds (no scans: OCR would make it slow)."""
    data_dir = tmp_path / "data"
    documents = kill_worker.corpus(8, scans=False)
    ids = kill_worker.queue_documents(data_dir, documents)
    run = kill_worker.run_with_kills(data_dir, kills=4, rng=random.Random(7), timeout=150)
    state = kill_worker.database_state(data_dir, ids)
    assert kill_worker.problems(state) == [], state
    # The last worker, idle once the queue is drained, ends cleanly on SIGTERM: exit 0 and
    # its last beat says so (how soon: bench/kill_worker.py and bench/sigterm_exit.py print it).
    assert run.kills == 4 and run.kills_mid_job >= 2 and run.sigterm_exit_code == 0
    assert kill_worker.read_beat(data_dir)["status"] == "stopped"
    assert state["outcomes"].get("succeeded", 0) + state["outcomes"].get("failed", 0) == len(ids)
    assert state["active_facts"] > 0 and state["vectors"] == state["vector_marked_facts"]
    if run.kills_mid_job:
        # The restarted worker took the jobs back at once, because their worker's process was
        # gone, never by waiting out the 120 s heartbeat window (the longest stall from a kill
        # to the job running again is printed by bench/kill_worker.py).
        assert state["reclaim_reasons"].get("worker_gone", 0) >= 1
        assert HEARTBEAT_STOPPED not in state["reclaim_reasons"], state["reclaim_reasons"]


# --- retry from the CLI ---------------------------------------------------------------------------

def test_retry_from_the_cli_resets_the_attempts_and_keeps_the_audit(tmp_path):
    data_dir = tmp_path / "data"
    env = _cli_env(data_dir)
    kill_worker.queue_documents(data_dir, [])
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(FAKE_PDF)

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "core", *args, "--json"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)

    ingested = cli("ingest", str(bad), "--patient", "DEMO-1001", "--doc-type", "lab_pdf")
    assert ingested.returncode == 3 and json.loads(ingested.stdout)["job"]["error_code"] == "corrupt_file"
    job_id = _only_job(data_dir)
    queued = cli("retry", str(job_id), "--queue")
    assert queued.returncode == 0, queued.stderr
    assert {k: json.loads(queued.stdout)[k] for k in ("job_id", "status", "attempts")} == {
        "job_id": job_id, "status": "pending", "attempts": 0}
    again = cli("retry", str(job_id))  # already queued by the retry above: it is read now, and fails again
    assert again.returncode == 3 and "failed again" in again.stderr
    out = json.loads(again.stdout)
    assert (out["status"], out["attempts"], out["error_code"]) == ("failed", 1, "corrupt_file")
    missing = cli("retry", "987654")
    assert missing.returncode == 2 and "No job 987654" in missing.stderr
    import duckdb

    con = duckdb.connect(str(data_dir / "workbench.duckdb"), read_only=True)
    try:
        audit = con.execute("SELECT decision, actor, before_state FROM review_decisions WHERE item_type = 'job' "
                            "AND item_id = ?", [job_id]).fetchall()
    finally:
        con.close()
    assert len(audit) == 1 and audit[0][0] == "retry" and audit[0][1].startswith("os:")
    assert json.loads(audit[0][2])["attempts"] == 1  # the attempts used before the reset are kept


def _only_job(data_dir: Path) -> int:
    import duckdb

    con = duckdb.connect(str(data_dir / "workbench.duckdb"), read_only=True)
    try:
        return con.execute("SELECT max(id) FROM processing_jobs").fetchone()[0]
    finally:
        con.close()


# --- the pages ------------------------------------------------------------------------------------

def test_the_documents_page_retries_a_failed_document(app_env, demo_patient):
    from tests.support.app_support import documents_page, failed_job as _failed_job

    job = _failed_job(app_env, demo_patient["id"])
    at = documents_page(demo_patient["id"])
    next(b for b in at.button if b.key == f"retry-doc-{job['document_id']}").click().run()
    assert not at.exception, at.exception
    assert any("back in the queue" in s.value for s in at.success)
    with app_env.db.cursor() as cur:
        row = jobs_repo.by_id(cur, job["id"])
    assert (row.status, row.attempts) == ("pending", 0)
    viewer = documents_page(demo_patient["id"], user="dr.viewer")  # a viewer may not retry
    assert not [b for b in viewer.button if b.key == f"retry-doc-{job['document_id']}"]


def test_the_operations_page_shows_reclaimed_jobs(app_env, queued):
    from tests.support.app_support import operations_page

    with app_env.db.cursor() as cur:
        jobs_repo.claim_next(cur, "intake-extractor:cli", process=dead_process())
        jobs_repo.reclaim_stale(cur, stale_after=120, max_attempts=3, gone=process_gone)
    at = operations_page()
    table = next(d.value for d in at.dataframe if "times reclaimed" in d.value.columns)
    assert list(table["job"]) == [queued.job["id"]]
    assert table["why"].iloc[0] == "its worker's process had stopped"


# --- the app, mid-job ----------------------------------------------------------------------------

def test_sigterm_stops_the_app_mid_job_and_its_job_is_released(tmp_path):
    import psutil

    from tests.support.browser_support import serving, server_env

    data_dir = tmp_path / "data"
    [doc_id] = kill_worker.queue_documents(data_dir, [("DEMO-1001", "scan.pdf", "lab_pdf", scanned_pages(40))])
    with serving(server_env(data_dir)) as (_, proc):  # make run's environment: jobs in the forkserver child
        beat = wait_for_beat(data_dir, proc, job=True, timeout=120)
        time.sleep(1.0)  # well inside the document: its child is reading (OCR)
        readers = psutil.Process(proc.pid).children(recursive=True)
        assert readers, "no child process is reading the document"
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)  # a deadline against a hang only, not a speed
        err = proc.stderr.read().decode()
    assert f"job {beat['current_job_id']} handed back" in err
    gone, alive = psutil.wait_procs(readers, timeout=5)  # the job's child ends with its worker
    assert not alive, [p.pid for p in alive]
    assert _job_state(data_dir, beat["current_job_id"]) == ("pending", 0, RELEASED_AT_SHUTDOWN)


# --- health sees a killed worker at once ----------------------------------------------------------

def _health(env: dict[str, str]) -> dict:
    proc = subprocess.run([sys.executable, "-m", "core", "health", "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    return json.loads(proc.stdout)


@pytest.mark.parametrize("runs_the_worker", ["core worker", "ui.serve"])
def test_health_reports_a_killed_worker_at_once(tmp_path, runs_the_worker):
    """`kill -9` of the process running the worker (the headless CLI worker, or the app
    with its worker thread, same pid) is seen by the next `health`, not 30 s later."""
    from tests.support.browser_support import serving, server_env

    data_dir = tmp_path / "data"
    kill_worker.queue_documents(data_dir, [])  # a migrated data dir with the demo patients
    if runs_the_worker == "ui.serve":
        env = server_env(data_dir)
        running = serving(env)
    else:
        env = _cli_env(data_dir)
        running = contextlib.nullcontext((None, subprocess.Popen(
            [sys.executable, "-m", "core", "worker"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)))
    with running as (_, proc):
        try:
            wait_for_beat(data_dir, proc, job=False)
            alive = _health(env)
            assert alive["components"]["worker"]["status"] == "fresh", alive
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
            report = _health(env)  # the next health, right after the kill
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
    worker = report["components"]["worker"]
    # "dead" is the verdict of the process check alone (a beat that is merely old reads
    # "stale", with its age in the detail): the dead process told, not the beat's age.
    assert worker["status"] == "dead", report
    assert worker["detail"] == f"the worker process (pid {proc.pid}) has stopped"
    assert report["checks"]["worker_fresh"] is False and report["status"] == "degraded"
