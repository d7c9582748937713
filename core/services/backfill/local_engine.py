"""The local engine: readings on this machine, each in the worker's own job child
(a forkserver child per document, under the job's ceilings), ``jobs`` at a time. With
one at a time it is the worker's pace: the baseline the Ray engine is measured against."""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Iterable, Iterator

from core.services.backfill.reading import Ceilings, ReadFailed, ReadRequest, read_one
from core.services.ingest.processing import Reading


class LocalEngine:
    name = "local"

    def __init__(self, ceilings: Ceilings, jobs: int = 1):
        self.ceilings = ceilings
        self.workers = max(1, jobs)

    def map(self, requests: Iterable[ReadRequest]) -> Iterator[tuple[ReadRequest, Reading | ReadFailed]]:
        """Each request's outcome as it is ready (not in order). ``requests`` is pulled
        only as readers free up, so the stored bytes are read from disk just in time."""
        pending = iter(requests)
        window = self.workers + 1  # one waiting, so a reader never idles while the writer persists
        with ThreadPoolExecutor(self.workers, thread_name_prefix="backfill-read") as pool:
            running: dict[Future, ReadRequest] = {}
            while True:
                for request in pending:
                    running[pool.submit(read_one, request.args, self.ceilings)] = request
                    if len(running) >= window:
                        break
                if not running:
                    return
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    yield running.pop(future), future.result()

    def close(self) -> None:
        pass
