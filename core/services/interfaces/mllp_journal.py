"""Acknowledge an MLLP message once its bytes are in an fsynced journal; write its
rows from there (issue 27: MLLP at interface-engine speed).

Without it each message waits for five statements and a commit before its ACK (~6 ms);
an interface engine's durable inbound step is one append and one fsync. So while a
listener runs, a message whose answer is certain without the database goes this way:

* **Certain** means: its control id was never seen from its sender (an in-memory set of
  hashes of every (sender, control id) stored, loaded once when the listener starts;
  the listener's process alone writes that table while it holds the database), every
  MRN it names is one already routed to the same chart patient (patients are only ever
  added, and an MRN never changes), and the HL7 category is known. Its answer is then
  AA "queued" whatever the database holds, so the database need not be asked.
* It is appended to the journal (``storage.append_log``; appends arriving together share
  one fsync) and answered AA. A writer thread then stores its original in the blob
  store and writes its row, document and job in batches, through the same
  ``_write_rows`` as every message (so the same rules), and telemetry follows.
* Anything else (a possible resend, a patient not yet routed, a message to be held, the
  writer in trouble) waits until the journal is written out and then takes the usual
  path, so its duplicate and hold checks see every message acknowledged before it.
* Stopping writes the journal out and deletes it. A journal left by a killed process is
  written out by the next listener before it takes a message; rows already committed
  are recognised by sender, control id and content and not written twice. The
  writer's backlog is bounded (``MAX_BACKLOG``): past it, an ACK waits for the writer.

An acknowledged message is never refused later: the holding area's cap does not apply
to it (it was not to be held when answered; if it must be after all, it is held anyway).
"""

from __future__ import annotations

import hashlib
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from core import telemetry
from core.services.interfaces.mllp_ack import Header
from core.services.workbench import Workbench
from storage import append_log

JOURNAL_DIR = "mllp-journal"
MAX_BACKLOG = 5000  # messages acknowledged and not yet written: bounds memory and a restart's replay
BATCH = 64
LINGER = 0.02  # seconds the writer waits for a batch to fill before it writes what it has
SETTLE_TIMEOUT = 30.0  # seconds a message on the usual path waits for the journal to be written


def _key(sender: str, control_id: str) -> int:
    """A 64-bit digest of the pair: a collision only sends a message the usual way."""
    return int.from_bytes(hashlib.blake2b(f"{sender}\x00{control_id}".encode(), digest_size=8).digest(), "big")


@dataclass(frozen=True)
class Entry:
    data: bytes
    header: Header
    mrns: list[str]
    patient_id: int
    number: int  # in the order accepted


class Settling(Exception):
    """The journal could not be written out in time: the message is answered AR (send again)."""


class MllpJournal:
    """The journal of one listener. ``write_batch(entries)`` stores entries (originals,
    rows) and returns what telemetry needs of each; ``replay(data)`` stores one record
    of a journal left behind (the usual path, acknowledged already)."""

    def __init__(self, wb: Workbench, write_batch: Callable[[list[Entry]], list[dict]],
                 replay: Callable[[bytes], None]):
        self.wb = wb
        self._write_batch = write_batch
        directory = wb.settings.data_dir / JOURNAL_DIR
        self.recovered = recover(directory, replay)
        with wb.db.cursor() as cur:
            cur.execute("SELECT sender, control_id FROM inbound_messages")
            self._seen = {_key(s, c) for s, c in cur.fetchall()}
        self.log = append_log.AppendLog(directory)
        self._cond = threading.Condition()
        self._pending: deque[Entry] = deque()
        # Every message accepted and not yet written, by the number it was accepted as:
        # being appended, waiting, or being written (the backlog; what ``settle`` waits for).
        self._outstanding: set[int] = set()
        self._numbered = 0
        self._closing = False
        self.trouble: str | None = None  # the writer's last failure (type name), until it succeeds again
        self.accepted = 0  # messages answered from the journal
        self.written = 0  # of those, written out
        self._thread = threading.Thread(target=self._run, name="mllp-journal-writer", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ the fast path

    def accept(self, data: bytes, header: Header, mrns: list[str], patient_id: int | None) -> bool:
        """Journal the message and return True when its answer is certain (see the module
        docstring); False when it must take the usual path (after ``settle``)."""
        if patient_id is None or self.trouble is not None or self._closing:
            return False
        key = _key(header.sender, header.control_id)
        with self._cond:
            if key in self._seen:
                return False
            while len(self._outstanding) >= MAX_BACKLOG and not self._closing:
                self._cond.wait(1.0)  # back-pressure: the ACK waits for the writer
            if self._closing:
                return False
            self._seen.add(key)  # before the append: a resend arriving meanwhile goes the usual way
            self._numbered += 1
            number = self._numbered
            self._outstanding.add(number)
        try:
            self.log.append(data)
        except OSError:
            with self._cond:
                self._seen.discard(key)
                self._outstanding.discard(number)
                self._cond.notify_all()
            return False
        with self._cond:
            self._pending.append(Entry(data, header, mrns, patient_id, number))
            self.accepted += 1
            self._cond.notify_all()
        return True

    def remember(self, header: Header) -> None:
        """A message stored the usual way: its control id is seen from now on."""
        with self._cond:
            self._seen.add(_key(header.sender, header.control_id))

    def settle(self, timeout: float | None = None) -> None:
        """Wait until the rows of every message accepted so far are committed (those
        accepted later need not be: a steady stream on other connections cannot starve
        this one). Settling after ``SETTLE_TIMEOUT`` seconds: answered AR, sent again."""
        deadline = time.monotonic() + (SETTLE_TIMEOUT if timeout is None else timeout)
        with self._cond:
            upto = self._numbered
            while self._outstanding and min(self._outstanding) <= upto:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Settling("the journal of acknowledged messages is not yet written")
                self._cond.wait(left)

    # ------------------------------------------------------------------ the writer

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closing:
                    self._cond.wait()
                if not self._pending:
                    return
                # A moment for more to arrive: one sender's messages come one at a time, and
                # a batch of one would cost the commit's statements per message, in CPU the
                # acknowledgements need.
                until = time.monotonic() + LINGER
                while len(self._pending) < BATCH and not self._closing and (left := until - time.monotonic()) > 0:
                    self._cond.wait(left)
                batch = [self._pending.popleft() for _ in range(min(BATCH, len(self._pending)))]
            try:
                outcomes = self._write_batch(batch)
            except Exception as exc:  # noqa: BLE001 - kept in the journal; tried again
                with self._cond:
                    self._pending.extendleft(reversed(batch))
                    first = self.trouble is None
                    self.trouble = type(exc).__name__
                    self._cond.notify_all()
                if first:
                    telemetry.emit("mllp_store_failed", settings=self.wb.settings, channel="mllp",
                                   error_code=self.trouble)
                    print(f"mllp: acknowledged messages could not be written yet ({self.trouble}); "
                          "they stay in the journal and are tried again", file=sys.stderr, flush=True)
                with self._cond:
                    if self._closing:  # kept in the journal for the next start
                        return
                    self._cond.wait(0.5)
                continue
            with self._cond:
                self._outstanding.difference_update(e.number for e in batch)
                self.written += len(batch)
                self.trouble = None
                self._cond.notify_all()
            for outcome in outcomes:
                telemetry.emit("mllp_message", settings=self.wb.settings, **outcome)

    def close(self, timeout: float = 60.0) -> bool:
        """Write out the journal and delete it; True when it was. Otherwise (the database
        is failing) it is kept for the next listener to write out."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.settle(min(1.0, max(0.0, deadline - time.monotonic())))
                finished = True
                break
            except Settling:  # still writing: wait on, unless the writer is failing
                if self.trouble is not None or time.monotonic() >= deadline:
                    finished = False
                    break
        with self._cond:
            self._closing = True
            finished = finished and not self._outstanding
            self._cond.notify_all()
        self._thread.join(timeout=5)
        self.log.close(remove=finished)
        if not finished:
            print("mllp: the journal of acknowledged messages was kept for the next start", file=sys.stderr)
        return finished


def recover(directory: Path, replay: Callable[[bytes], None]) -> int:
    """Write out every journal a stopped listener left (``replay`` stores one record);
    how many messages. A failure keeps the journal whole for the next try."""
    done = 0
    for orphan in append_log.orphans(directory):
        try:
            for record in orphan.records:
                replay(record)
                done += 1
        except BaseException:
            orphan.release()
            raise
        orphan.discard()
        if orphan.torn_bytes:
            print(f"mllp: a journal ended in {orphan.torn_bytes} bytes of an unfinished record "
                  "(never acknowledged); dropped", file=sys.stderr)
    return done
