"""``run_backfill``: a manifest read into the charts. Store every original first
(``originals``), then read every pending job on the engine's readers and persist each
reading, as it comes, through the one writer (``writer``); the report counts every row's
outcome. Killed at any point, a rerun skips what is finished and reads the rest: the
originals are content-addressed and found again, the jobs a dead run held go back to
the queue, and facts are keyed by fingerprint."""

from __future__ import annotations

import time
from typing import Any, Iterator, Protocol, TextIO

from core.services.backfill.manifest import ManifestRow
from core.services.backfill.originals import Item, store_originals
from core.services.backfill.progress import Progress
from core.services.backfill.reading import ReadFailed, ReadRequest
from core.services.backfill.report import build_report, settle
from core.services.backfill.writer import Writer
from core.services.ingest.processing import Reading, reading_args
from core.services.workbench import Workbench
from domain.models import DocType
from storage import documents_repo, jobs_repo


class Engine(Protocol):
    name: str
    workers: int

    def map(self, requests: Iterator[ReadRequest]) -> Iterator[tuple[ReadRequest, Reading | ReadFailed]]: ...

    def close(self) -> None: ...


def _requests(wb: Workbench, job_ids: list[int]) -> Iterator[ReadRequest]:
    """Each job's reading request, its stored bytes read from the blob store as the
    engine asks for the next one."""
    for job_id in job_ids:
        with wb.db.cursor() as cur:
            job = jobs_repo.by_id(cur, job_id)
            document = documents_repo.by_id(cur, job.document_id)
        yield ReadRequest(job_id, reading_args(wb.settings, wb.blobs.get(document["sha256"]), DocType(job.doc_type),
                                               document))


def run_backfill(wb: Workbench, rows: list[ManifestRow], engine: Engine, *, by: str,
                 progress: TextIO | None = None) -> dict[str, Any]:
    """Read the manifest's ``rows`` into the charts on ``engine``; the report (see
    report.build_report). ``progress``: where the progress goes (stderr), or None."""
    started = time.monotonic()
    writer = Writer(wb)
    reclaimed = writer.reclaim()  # a killed run's jobs are pending again before we look
    items = store_originals(wb, rows, by=by)
    owner: dict[int, Item] = {job_id: item for item in items for job_id in item.jobs}
    bar = Progress(len(owner), progress)
    stored = sum(item.stored for item in items)
    bar.note(f"{len(rows)} rows; {stored} originals stored now, {len(owner)} documents to read "
             f"on {engine.workers} {engine.name} reader(s)")
    read_started = read_ended = time.monotonic()
    try:
        for request, outcome in engine.map(_requests(wb, list(owner))):
            final = writer.persist(request.job_id, outcome)
            item = owner[request.job_id]
            item.finals[request.job_id] = final
            if len(item.finals) == len(item.jobs):
                settle(item)
            bar.tick(failed=final["status"] == "failed")
        read_ended = time.monotonic()
    finally:
        writer.close()
        bar.finish()
    return build_report(items, engine=engine, reclaimed=reclaimed.get("requeued", 0) + reclaimed.get("failed", 0),
                        documents=len(owner), read_seconds=read_ended - read_started,
                        seconds=time.monotonic() - started)
