"""The Ray engine: the same readings as Ray tasks, one CPU each, on a local Ray started
here (``ray.init`` with this machine's CPUs, no dashboard, worker logs kept out of this
terminal) or on an existing cluster (``address``). Each task runs the reading in the
worker's own job child, under the same time and memory ceilings. Ray is imported only
when this engine is built: nothing else pays its start-up.

On a cluster every node runs the same checkout and environment; the stored bytes travel
in the task's arguments (Ray's object store), so nodes need no access to the data dir.
A task answers with a Reading or ReadFailed; the database is never opened in a task."""

from __future__ import annotations

import logging
import os
import warnings
from typing import Iterable, Iterator

from core.services.backfill.reading import Ceilings, ReadFailed, ReadRequest, read_one
from core.services.ingest.processing import Reading

TASK_LOST = "task_lost"


class RayEngine:
    name = "ray"

    def __init__(self, ceilings: Ceilings, *, address: str | None = None, num_cpus: int | None = None):
        import ray

        self.ceilings = ceilings
        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            quiet = dict(log_to_driver=False, logging_level=logging.ERROR)
            with warnings.catch_warnings():
                # Ray starts its own processes by fork + exec, which runs nothing of this
                # process: LanceDB's warning about forking (loaded by the workbench) is moot.
                warnings.filterwarnings("ignore", message="lancedb fork support", category=RuntimeWarning)
                if address:
                    ray.init(address=address, **quiet)
                else:
                    ray.init(num_cpus=num_cpus or os.cpu_count() or 1, include_dashboard=False, **quiet)
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        # Retries are for a lost worker process or node only; a bad document is an answer.
        self._read = ray.remote(num_cpus=1, max_retries=1)(read_one)

    def map(self, requests: Iterable[ReadRequest]) -> Iterator[tuple[ReadRequest, Reading | ReadFailed]]:
        """Each request's outcome as it is ready; at most two tasks per CPU in flight,
        so the driver holds a bounded number of documents' bytes."""
        ray = self._ray
        pending = iter(requests)
        window = 2 * self.workers
        running: dict = {}
        while True:
            for request in pending:
                running[self._read.remote(request.args, self.ceilings)] = request
                if len(running) >= window:
                    break
            if not running:
                return
            ready, _ = ray.wait(list(running), num_returns=1)
            for ref in ready:
                request = running.pop(ref)
                try:
                    outcome = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    outcome = ReadFailed(TASK_LOST, f"The Ray task reading this document was lost "
                                                    f"({type(exc).__name__}); the original is kept. Run the "
                                                    "backfill again to read it.")
                yield request, outcome

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()
