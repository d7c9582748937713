"""The intake-extractor worker: the only claimant of processing jobs.

The name is the one the spec requires; it extracts every doc_type, not only
intake forms. One job at a time: claim atomically (recording this process as the holder), beat
while working, end succeeded or failed with a code. A job whose worker died is
reclaimed until its attempts run out: at once when its process is gone from this host,
else once its heartbeat is older than the stale window. A bad document never stops
the loop. Told to stop (SIGTERM), the worker finishes its job or, when that takes
longer than a short grace, hands it back to the queue with the attempt not counted.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any, Callable, Iterator

import duckdb

from core import telemetry
from domain.errors import ExtractionError
from core.services.review.fact_vectors import index_pending
from core.services.ingest.processing import PipelineResult, run_pipeline
from core.services.workbench import Workbench
from storage import audit_repo, jobs_repo
from storage.heartbeat import process_gone, process_token, write_heartbeat
from storage.rows import JobRow

WORKER_NAME = "intake-extractor"
# Seconds a stopping worker waits for its job before handing it back: the app and the
# headless worker must be gone within 5 s of SIGTERM.
SHUTDOWN_GRACE = 3.0


class _QueueCounts:
    """The queue counts the heartbeat file carries (``health`` reads them while another
    process holds the database), without a count of every job row twice a job: counted
    afresh at most every ``every`` seconds and at every beat that is not a job's claim or
    end, and in between moved by this worker's own claims and ends, which it knows
    exactly. Other writers' changes (an upload, a retry) show at the next count, as the
    heartbeat itself does. Claim, end and the beat thread never run at the same time
    (the beat thread is joined before a job ends), so no lock."""

    def __init__(self, every: float):
        self.every = every
        self._counts: dict[str, int] | None = None
        self._at = 0.0

    def counted(self, cur) -> dict[str, int]:
        self._counts, self._at = jobs_repo.queue_counts(cur), time.monotonic()
        return dict(self._counts)

    def moved(self, cur, old: str, new: str) -> dict[str, int]:
        """The counts after this worker moved one job from ``old`` to ``new`` on ``cur``'s
        transaction: the last count moved likewise, or a new count when it is too old."""
        if self._counts is None or time.monotonic() - self._at >= self.every:
            return self.counted(cur)  # sees the move, made on the same transaction
        self._counts[old] = max(0, self._counts.get(old, 0) - 1)
        self._counts[new] = self._counts.get(new, 0) + 1
        return dict(self._counts)

    def forget(self) -> None:
        """The transaction that counted or moved did not commit: count afresh next time."""
        self._counts = None


class Worker:
    def __init__(self, wb: Workbench, *, worker_id: str | None = None, beat_every: float = 2.0,
                 heartbeat_file: bool = True):
        self.wb = wb
        # The heartbeat file speaks for the process's worker loop (health): an inline run
        # inside the app (a handed-over `ingest`) keeps only its row in the workers table.
        self.heartbeat_file = heartbeat_file
        self.worker_id = worker_id or f"{WORKER_NAME}:{os.getpid()}:{threading.get_ident() % 10000}"
        self.beat_every = beat_every
        self._queue = _QueueCounts(beat_every)
        self.processed = 0
        self.failed = 0
        self.current_job_id: int | None = None
        self.index_every = 5.0  # seconds between vector batches while busy
        self._last_indexed = time.monotonic()
        self.process = process_token()  # recorded with each claim (see jobs_repo.reclaim_stale)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- heartbeat ---------------------------------------------------------
    def beat(self, status: str, *, job_heartbeat: bool = True) -> None:
        """Record this worker's status (its row and the heartbeat file) and, with
        ``job_heartbeat``, its current job's heartbeat (a job just claimed has one)."""
        with self.wb.db.cursor() as cur:
            queue = self._beat_rows(cur, status, job_heartbeat=job_heartbeat)
        self._beat_file(status, queue)

    def _beat_rows(self, cur, status: str, *, job_heartbeat: bool = True,
                   moved: tuple[str, str] | None = None) -> dict[str, int]:
        """This worker's row (and its job's heartbeat) and the queue counts; ``moved``: this
        beat follows the claim or the end of a job, which moved it between these statuses."""
        jobs_repo.upsert_worker(cur, self.worker_id, status=status, current_job_id=self.current_job_id,
                                processed=self.processed, failed=self.failed)
        if job_heartbeat and self.current_job_id is not None:
            jobs_repo.heartbeat(cur, self.current_job_id)
        return self._queue.moved(cur, *moved) if moved else self._queue.counted(cur)

    def _beat_file(self, status: str, queue: dict[str, int]) -> None:
        if not self.heartbeat_file:
            return
        write_heartbeat(self.wb.settings.heartbeat_path, {
            # pid and start time ("process"): health tells a killed worker from a live one at
            # once, and from another process that was since given the same pid.
            "worker": WORKER_NAME, "worker_id": self.worker_id, "pid": os.getpid(), "process": self.process,
            "status": status,
            "heartbeat_at": datetime.now(timezone.utc).isoformat(), "current_job_id": self.current_job_id,
            "processed": self.processed, "failed": self.failed, "queue": queue,
            "idle_sleep": self.wb.settings.worker_idle_sleep,
        })

    def _beat_while(self, done: threading.Event) -> None:
        while not done.wait(self.beat_every):
            try:
                self.beat("busy")
            except duckdb.TransactionException:
                pass  # another write to the same row just now (a release at shutdown): beat next time

    # -- one job -----------------------------------------------------------
    def run_job(self, job: JobRow, pipeline: Callable[[Workbench, JobRow], PipelineResult] | None = None,
                *, busy_queue: dict[str, int] | None = None) -> dict[str, Any]:
        """Run a claimed job to a final state and return the job row (as a dict: the CLI
        and the pages read it). ``pipeline`` replaces ``run_pipeline`` for a job whose
        document was read elsewhere (the backfill persists a reading it already has).
        ``busy_queue``: the claim's transaction already marked this worker busy with the
        job (``_claim``), and these are the queue counts it saw."""
        self.current_job_id = job.id
        if busy_queue is None:
            self.beat("busy", job_heartbeat=False)  # the claim just stamped the job's heartbeat
        else:
            self._beat_file("busy", busy_queue)
        done = threading.Event()
        beater = threading.Thread(target=self._beat_while, args=(done,), daemon=True)
        beater.start()
        started = time.perf_counter()
        status, code, message, result = "succeeded", None, None, None
        try:
            result = (pipeline or run_pipeline)(self.wb, job)
        except ExtractionError as exc:
            status, code, message = "failed", exc.code, exc.message
        except Exception as exc:  # noqa: BLE001 - a defect must fail the job, not the worker
            status, code = "failed", "internal_error"
            # A defect in the workbench, not in the file: retrying runs the same code on the
            # same bytes, so the message does not promise that it helps.
            message = (f"The workbench met an unexpected problem ({type(exc).__name__}) while reading this document. "
                       "The original is kept. This is a fault in the workbench, not in your file: please tell an "
                       "administrator; retrying will not help until it is fixed.")
            # The traceback names code locations only; document text never goes to logs.
            # Ids only: a file name or an MRN never reaches a log line.
            print(f"[{WORKER_NAME}] job {job.id} (document {job.document_id}) defect: {type(exc).__name__}",
                  file=sys.stderr)
            traceback.print_tb(exc.__traceback__, file=sys.stderr)
        finally:
            done.set()
            beater.join()
        if status == "failed" and code == "internal_error" and self._stop.is_set() and self.release(job.id):
            # The app is stopping (Ctrl-C, a service stop) and the reading broke off with it,
            # e.g. its child or the forkserver got the same signal: that says nothing about
            # the document, so the job goes back to the queue instead of ending failed.
            self.current_job_id = None
            self.beat("stopped")
            with self.wb.db.cursor() as cur:
                return jobs_repo.by_id(cur, job.id).to_dict()
        latency = round((time.perf_counter() - started) * 1000, 2)
        timings = dict(result.timings) if result else {}
        timings["total"] = latency
        # The job's end, its audit row and this worker's idle beat: one commit.
        with self._forgetting_queue(), self.wb.db.transaction() as cur:
            # Only while the job is still ours: released at shutdown, it stays in the queue.
            written = jobs_repo.finished(cur, job.id, status=status, error_code=code, error_message=message,
                                         timings=timings, counts=result.counts if result else {},
                                         engine=result.engine if result else None,
                                         warnings=result.warnings if result else [], holder=self.worker_id)
            ours = written is not None
            if ours:
                audit_repo.add_handoff(cur, request_id=None, job_id=job.id, source_node="supervisor",
                                       destination_node=WORKER_NAME, decision_reason=f"{job.doc_type} job queued",
                                       task_type="document_extraction", outcome=status, latency_ms=latency,
                                       error_reason=code)
            final = written or jobs_repo.by_id(cur, job.id)  # the audit row does not change the job's
            self.current_job_id = None
            if ours and status == "succeeded":
                self.processed += 1
            elif ours:
                self.failed += 1
            beat_status = "idle" if ours or not self._stop.is_set() else "stopped"
            # Not ours: another hand moved the job (a release, a reclaim), so count afresh.
            queue = self._beat_rows(cur, beat_status, moved=("running", status) if ours else None)
        self._beat_file(beat_status, queue)
        if not ours:
            return final.to_dict()
        telemetry.emit("job_finished", settings=self.wb.settings, patient_id=job.patient_id, job_id=job.id,
                       document_id=job.document_id, doc_type=job.doc_type, worker=WORKER_NAME, status=status,
                       error_code=code, latency_ms=timings, counts=result.counts if result else {},
                       engine=result.engine if result else None, attempt=job.attempts)
        return final.to_dict()

    def run_once(self) -> dict[str, Any] | None:
        """Reclaim jobs of stopped workers, then claim and run the next pending one (if any)."""
        # Under the write lock (storage.db): a deletion retracting this document's pending
        # job writes the same row, and would otherwise fail with a write conflict.
        with self._claiming() as cur:
            reclaimed = jobs_repo.reclaim_stale(cur, stale_after=self.wb.settings.worker_stale_after,
                                                max_attempts=self.wb.settings.max_attempts, gone=process_gone)
            job, queue = self._claim(cur, recount=bool(reclaimed.get("jobs")))
        self._report_reclaimed(reclaimed)
        if job is None:
            self.index_vectors()  # embed facts of finished jobs while the queue is empty
            self.beat("idle")
            return None
        finished = self.run_job(job, busy_queue=queue)
        if time.monotonic() - self._last_indexed > self.index_every:
            self.index_vectors()  # a long busy spell must not starve the vector index
        return finished

    def index_vectors(self) -> int:
        self._last_indexed = time.monotonic()
        return index_pending(self.wb)

    def _report_reclaimed(self, reclaimed: dict[str, Any]) -> None:
        for job_id, reason in (reclaimed.get("jobs") or {}).items():
            # Ids and a reason code only (no PHI); the job row keeps the reclaim for Operations.
            print(f"[{WORKER_NAME}] reclaimed job {job_id}: {reason}", file=sys.stderr)

    @contextmanager
    def _claiming(self) -> Iterator[Any]:
        """The claim's transaction; a claim that does not commit leaves no current job."""
        try:
            with self._forgetting_queue(), self.wb.db.transaction() as cur:
                yield cur
        except BaseException:
            self.current_job_id = None
            raise

    @contextmanager
    def _forgetting_queue(self) -> Iterator[None]:
        try:
            yield
        except BaseException:
            self._queue.forget()
            raise

    def _claim(self, cur, job_id: int | None = None, *, recount: bool = False
               ) -> tuple[JobRow | None, dict[str, int] | None]:
        """Claim a job (the next pending one, or ``job_id``) on the caller's transaction
        and, when one is claimed, mark this worker busy with it in the same commit (a
        commit of its own cost every job ~3 ms): the job and the queue counts seen.
        ``recount``: the transaction moved other jobs too (reclaimed them)."""
        job = jobs_repo.claim_next(cur, self.worker_id, job_id=job_id, process=self.process)
        if job is None:
            return None, None
        self.current_job_id = job.id
        # The claim stamped the job's heartbeat.
        return job, self._beat_rows(cur, "busy", job_heartbeat=False, moved=None if recount else ("pending", "running"))

    def run_specific(self, job_id: int, pipeline: Callable[[Workbench, JobRow], PipelineResult] | None = None
                     ) -> dict[str, Any] | None:
        with self._claiming() as cur:
            job, queue = self._claim(cur, job_id)
        return self.run_job(job, pipeline, busy_queue=queue) if job else None

    def run_now(self, job_id: int, *, poll: float = 0.2) -> dict[str, Any] | None:
        """Run ``job_id`` here, or, when another worker of this database claimed it first
        (the app's own loop, for an ingest handed over by the CLI), wait until that one
        ends it. The claim is exclusive, so the job runs once either way; the answer is the
        final job row (None for a job that is not pending or running)."""
        finished = self.run_specific(job_id)
        if finished is not None:
            return finished
        while True:
            with self.wb.db.cursor() as cur:
                job = jobs_repo.by_id(cur, job_id)
            if job is None:
                return None
            if job.status not in ("pending", "running"):
                return job.to_dict()
            if job.status == "pending":  # handed back by a stopping worker: ours to run now
                finished = self.run_specific(job_id)
                if finished is not None:
                    return finished
            time.sleep(poll)

    # -- loop --------------------------------------------------------------
    def run_forever(self) -> None:
        while not self._stop.is_set():
            if self.run_once() is None:
                self._stop.wait(self.wb.settings.worker_idle_sleep)
        self.beat("stopped")

    def stop(self) -> None:
        self._stop.set()

    def start_thread(self) -> threading.Thread:
        self._thread = threading.Thread(target=self.run_forever, name=WORKER_NAME, daemon=True)
        self._thread.start()
        return self._thread

    def shutdown(self, grace: float = SHUTDOWN_GRACE) -> bool:
        """Stop the loop started by ``start_thread``: let the current job finish within
        ``grace`` seconds, else hand it back to the queue (attempt not counted) and leave
        the thread behind. Returns True when the thread ended; False means it is still
        inside a document, and the process should exit without waiting for it (its
        writes are transactions, and its job is pending again)."""
        self.stop()
        thread = self._thread
        if thread is None or not thread.is_alive():
            return True
        thread.join(grace)
        if not thread.is_alive():
            return True
        job_id = self.current_job_id
        if job_id is not None and self.release(job_id):
            self.current_job_id = None  # the beats that follow no longer claim it
        thread.join(0.2)  # it may have just finished
        return not thread.is_alive()

    def release(self, job_id: int) -> bool:
        """Hand ``job_id`` back to the queue if this worker still runs it."""
        for _ in range(5):  # the beat thread may write the same row at this moment
            try:
                with self.wb.db.cursor() as cur:
                    released = jobs_repo.release(cur, job_id, self.worker_id)
                break
            except duckdb.TransactionException:  # a write conflict: try again shortly
                time.sleep(0.05)
        else:
            return False
        if released:
            print(f"[{WORKER_NAME}] job {job_id} handed back to the queue at shutdown", file=sys.stderr)
        return released
