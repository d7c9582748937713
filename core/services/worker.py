"""The intake-extractor worker: the only claimant of processing jobs.

The name is the one the spec requires; it extracts every doc_type, not only
intake forms. One job at a time: claim atomically, beat while working, end
succeeded or failed with a code. A job whose worker died (stale heartbeat) is
reclaimed until its attempts run out. A bad document never stops the loop.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from datetime import datetime, timezone
from typing import Any

from core import telemetry
from core.errors import ExtractionError
from core.services.fact_vectors import index_pending
from core.services.processing import run_pipeline
from core.services.workbench import Workbench
from storage import audit_repo, jobs_repo
from storage.heartbeat import write_heartbeat

WORKER_NAME = "intake-extractor"


class Worker:
    def __init__(self, wb: Workbench, *, worker_id: str | None = None, beat_every: float = 2.0):
        self.wb = wb
        self.worker_id = worker_id or f"{WORKER_NAME}:{os.getpid()}:{threading.get_ident() % 10000}"
        self.beat_every = beat_every
        self.processed = 0
        self.failed = 0
        self.current_job_id: int | None = None
        self.index_every = 5.0  # seconds between vector batches while busy
        self._last_indexed = time.monotonic()
        self._stop = threading.Event()

    # -- heartbeat ---------------------------------------------------------
    def beat(self, status: str) -> None:
        with self.wb.db.cursor() as cur:
            jobs_repo.upsert_worker(cur, self.worker_id, status=status, current_job_id=self.current_job_id,
                                    processed=self.processed, failed=self.failed)
            if self.current_job_id is not None:
                jobs_repo.heartbeat(cur, self.current_job_id)
            queue = jobs_repo.queue_counts(cur)
        write_heartbeat(self.wb.settings.heartbeat_path, {
            "worker": WORKER_NAME, "worker_id": self.worker_id, "pid": os.getpid(), "status": status,
            "heartbeat_at": datetime.now(timezone.utc).isoformat(), "current_job_id": self.current_job_id,
            "processed": self.processed, "failed": self.failed, "queue": queue,
            "idle_sleep": self.wb.settings.worker_idle_sleep,
        })

    def _beat_while(self, done: threading.Event) -> None:
        while not done.wait(self.beat_every):
            self.beat("busy")

    # -- one job -----------------------------------------------------------
    def run_job(self, job: dict[str, Any]) -> dict[str, Any]:
        """Run a claimed job to a final state and return the job row."""
        self.current_job_id = job["id"]
        self.beat("busy")
        done = threading.Event()
        beater = threading.Thread(target=self._beat_while, args=(done,), daemon=True)
        beater.start()
        started = time.perf_counter()
        status, code, message, result = "succeeded", None, None, None
        try:
            result = run_pipeline(self.wb, job)
        except ExtractionError as exc:
            status, code, message = "failed", exc.code, exc.message
        except Exception as exc:  # noqa: BLE001 - a defect must fail the job, not the worker
            status, code = "failed", "internal_error"
            message = f"Unexpected {type(exc).__name__} while processing; the original is kept and the job can be retried."
            # The traceback names code locations only; document text never goes to logs.
            # Ids only: a file name or an MRN never reaches a log line.
            print(f"[{WORKER_NAME}] job {job['id']} (document {job['document_id']}) defect: {type(exc).__name__}",
                  file=sys.stderr)
            traceback.print_tb(exc.__traceback__, file=sys.stderr)
        finally:
            done.set()
            beater.join()
        latency = round((time.perf_counter() - started) * 1000, 2)
        timings = dict(result.timings) if result else {}
        timings["total"] = latency
        with self.wb.db.cursor() as cur:
            jobs_repo.finish(cur, job["id"], status=status, error_code=code, error_message=message, timings=timings,
                             counts=result.counts if result else {}, engine=result.engine if result else None,
                             warnings=result.warnings if result else [])
            audit_repo.add_handoff(cur, request_id=None, job_id=job["id"], source_node="supervisor",
                                   destination_node=WORKER_NAME, decision_reason=f"{job['doc_type']} job queued",
                                   task_type="document_extraction", outcome=status, latency_ms=latency,
                                   error_reason=code)
            final = jobs_repo.by_id(cur, job["id"])
        if status == "succeeded":
            self.processed += 1
        else:
            self.failed += 1
        telemetry.emit("job_finished", settings=self.wb.settings, patient_id=job["patient_id"], job_id=job["id"],
                       document_id=job["document_id"], doc_type=job["doc_type"], worker=WORKER_NAME, status=status,
                       error_code=code, latency_ms=timings, counts=result.counts if result else {},
                       engine=result.engine if result else None, attempt=job["attempts"])
        self.current_job_id = None
        self.beat("idle")
        return final

    def run_once(self) -> dict[str, Any] | None:
        """Reclaim stale jobs, then claim and run the next pending one (if any)."""
        # Under the write lock (storage.db): a deletion retracting this document's pending
        # job writes the same row, and would otherwise fail with a write conflict.
        with self.wb.db.transaction() as cur:
            jobs_repo.reclaim_stale(cur, stale_after=self.wb.settings.worker_stale_after,
                                    max_attempts=self.wb.settings.max_attempts)
            job = jobs_repo.claim_next(cur, self.worker_id)
        if job is None:
            self.index_vectors()  # embed facts of finished jobs while the queue is empty
            self.beat("idle")
            return None
        finished = self.run_job(job)
        if time.monotonic() - self._last_indexed > self.index_every:
            self.index_vectors()  # a long busy spell must not starve the vector index
        return finished

    def index_vectors(self) -> int:
        self._last_indexed = time.monotonic()
        return index_pending(self.wb)

    def run_specific(self, job_id: int) -> dict[str, Any] | None:
        with self.wb.db.transaction() as cur:
            job = jobs_repo.claim_next(cur, self.worker_id, job_id=job_id)
        return self.run_job(job) if job else None

    # -- loop --------------------------------------------------------------
    def run_forever(self) -> None:
        while not self._stop.is_set():
            if self.run_once() is None:
                self._stop.wait(self.wb.settings.worker_idle_sleep)
        self.beat("stopped")

    def stop(self) -> None:
        self._stop.set()

    def start_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.run_forever, name=WORKER_NAME, daemon=True)
        thread.start()
        return thread
