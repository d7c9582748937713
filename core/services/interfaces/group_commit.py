"""Group commit for messages arriving together on different MLLP connections.

Each connection's thread stores its message's original itself (fsynced, in parallel
with the others), then hands the rows to write to ``GroupCommit.submit`` and waits.
The first waiting thread becomes the leader: it takes every message queued so far and
writes all their rows in one transaction, so one durable commit (DuckDB's write-ahead
log flush) serves them all; threads arriving meanwhile queue for the next leader. No
ACK goes out before its own message's commit has returned. A batch that fails as a
whole (one message's row breaks a constraint) is written again one message per
transaction, so one bad message never costs the others their AA.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from storage.db import Database

# A sender of a few thousand messages a second on 4-8 connections fills batches of a
# few; a cap keeps one leader from holding the write lock for long.
MAX_BATCH = 64


@dataclass
class Pending:
    """One message's rows waiting for a commit, and its outcome once written."""

    payload: Any
    result: Any = None
    error: BaseException | None = None
    done: bool = False


@dataclass
class GroupCommit:
    """``write(cur, payload)`` writes one message's rows on an open transaction's cursor
    and returns its outcome; it may raise an exception that refuses that message only
    (``refusals``), leaving the transaction usable for the others."""

    db: Database
    write: Callable[[Any, Any], Any]
    refusals: tuple[type[BaseException], ...] = ()
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _queue: list[Pending] = field(default_factory=list)
    _leading: bool = False
    batches: int = 0  # commits made (bench and tests read it)

    def submit(self, payload: Any) -> Any:
        """Write ``payload``'s rows durably, in a batch with whatever else is waiting;
        its outcome, or the exception that refused or failed it."""
        (result, error), = self.submit_many([payload])
        if error is not None:
            raise error
        return result

    def submit_many(self, payloads: list[Any]) -> list[tuple[Any, BaseException | None]]:
        """Write several payloads' rows (in as few commits as the cap allows, beside
        whatever else is waiting); each one's (outcome, exception or None)."""
        items = [Pending(p) for p in payloads]
        with self._cond:
            self._queue.extend(items)
            while not all(item.done for item in items):
                if self._leading:
                    self._cond.wait()
                    continue
                self._leading = True  # this thread writes the next batch (its own items among them, FIFO)
                batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
                self._cond.release()
                try:
                    self._commit(batch)
                finally:
                    self._cond.acquire()
                    self._leading = False
                    self._cond.notify_all()
        return [(item.result, item.error) for item in items]

    def _commit(self, batch: list[Pending]) -> None:
        try:
            with self.db.transaction() as cur:
                outcomes = [self._write_one(cur, item) for item in batch]
        except Exception as exc:  # noqa: BLE001 - the batch as a whole failed: each on its own
            if len(batch) == 1:
                self._finish(batch[0], error=exc)
            else:
                for item in batch:
                    self._commit([item])
            return
        self.batches += 1
        for item, (result, error) in zip(batch, outcomes):
            self._finish(item, result=result, error=error)

    def _write_one(self, cur, item: Pending) -> tuple[Any, BaseException | None]:
        try:
            return self.write(cur, item.payload), None
        except self.refusals as refused:  # refused before it wrote anything: the others go on
            return None, refused

    def _finish(self, item: Pending, *, result: Any = None, error: BaseException | None = None) -> None:
        with self._cond:
            item.result, item.error, item.done = result, error, True
            self._cond.notify_all()

