"""The backfill's one writer: every reading is persisted here, in the driver process,
one job at a time, through the worker's own job lifecycle (claim, finish, audit
handoff, telemetry) and the upload's own persistence (``persist_reading``: identity
gate, classification, promotion, chart checks). Vectors are embedded in batches every
few seconds and at the end, as the worker does.

Why one writer: DuckDB allows one read-write process per file, and a single writer
keeps the rules exactly those of an upload. The readers scale out; this does not (see
bench/backfill.py for how many readers it can feed)."""

from __future__ import annotations

import os
import time
from typing import Any

from core.services.backfill.reading import ReadFailed
from core.services.ingest.processing import PipelineResult, Reading, job_document, persist_reading
from core.services.ingest.worker import Worker
from core.services.workbench import Workbench
from domain.errors import ExtractionError
from storage import jobs_repo
from storage.heartbeat import process_gone
from storage.rows import JobRow

WRITER_NAME = "backfill"
NOT_PENDING = "job_not_pending"


class Writer:
    def __init__(self, wb: Workbench, *, index_every: float = 5.0):
        self.wb = wb
        # Its own worker id; the heartbeat file stays the worker loop's (health).
        self.worker = Worker(wb, worker_id=f"{WRITER_NAME}:{os.getpid()}", heartbeat_file=False)
        self.index_every = index_every
        self._last_indexed = time.monotonic()

    def reclaim(self) -> dict[str, Any]:
        """Jobs a killed run (or worker) left running go back to the queue, as the worker
        loop does before each claim: their process is gone, so this run reads them."""
        with self.wb.db.transaction() as cur:
            return jobs_repo.reclaim_stale(cur, stale_after=self.wb.settings.worker_stale_after,
                                           max_attempts=self.wb.settings.max_attempts, gone=process_gone)

    def persist(self, job_id: int, outcome: Reading | ReadFailed) -> dict[str, Any]:
        """Claim the job, store the reading (or fail the job with the reading's code) and
        return the finished job row."""
        def pipeline(wb: Workbench, job: JobRow) -> PipelineResult:
            if isinstance(outcome, ReadFailed):
                raise ExtractionError(outcome.message, code=outcome.code)
            document, patient = job_document(wb, job)
            return persist_reading(wb, job, document, patient, outcome)

        final = self.worker.run_specific(job_id, pipeline)
        if final is None:  # not pending: another process holds it, or it was retracted meanwhile
            final = {"id": job_id, "status": "failed", "error_code": NOT_PENDING, "counts": {},
                     "error_message": "This document's job was not waiting to be read (another process has it, "
                                      "or the document was deleted); nothing was written for it."}
        if time.monotonic() - self._last_indexed > self.index_every:
            self._last_indexed = time.monotonic()
            self.worker.index_vectors()
        return final

    def close(self) -> None:
        """Embed every vector still pending, batch by batch, and mark the writer stopped."""
        try:
            while self.worker.index_vectors() > 0:
                pass
        finally:
            self.worker.beat("stopped")
