"""HL7 v2 received over MLLP: store every message first, acknowledge after.

Framing (HL7 v2 MLLP, release 2 without the commit acknowledgement): each message is
sent as ``<VT> message <FS><CR>``, the answer (an HL7 ACK) framed the same way on the
same connection. A connection must begin with <VT>, and only CR/LF may come between
frames; anything else closes it (an HTTP request from a web page on this host is not
read as noise before a frame). A frame begun again before its end (a sender that gave
up and restarted) is read from its last start.

Who may send and how long a connection may take (issue 21): peers and senders
(MSH-3^MSH-4) on allow-lists (``domain.policy.access.mllp_peers``; required off loopback), a
deadline for each frame and for the silence between frames, connection slots per peer
address, and a cap on the messages held for review (a message that would be held past
it is refused AE, no held one is dropped). MLLP authenticates nobody: off this host it
belongs behind a VPN or TLS tunnel (README).

What each message gets (docs/decisions.md, "HL7 v2 over MLLP"):

* **AA** once it is durably stored: the original bytes (content-addressed, fsynced) and
  one ``inbound_messages`` row, plus, when PID-3 names exactly one chart patient, a
  document on that chart and a queued job, all in one transaction. While a listener
  runs, a message whose answer is certain without the database is answered once it is
  in the listener's fsynced journal, and those rows are written right after
  (``core.services.interfaces.mllp_journal``). A message whose
  patient is not on a chart (or not certainly one) is stored and **held** for review,
  and still answered AA: the clinic owns it now, and a refusal would make the sender
  resend it for ever or stop the interface queue for every other patient.
* The same message again (same sender, MSH-10 control id and bytes: a resend after a
  lost ACK) is answered AA again and stored once.
* **AE** for a message whose content cannot be accepted (no control id, too large, not
  text) or that would be held while the holding area is full, **AR** when it fails
  basic validation (no MSH, a processing id other than production, a sender not on the
  allow-list: stored nowhere) or could not be stored just now (the sender should send it
  again later).

The identity gate still runs in the worker as for any upload: routing by MRN only
chooses the chart; the name and birth date decide whether the results count.

Reading a message's header and writing its ACK: ``core.services.interfaces.mllp_ack``; the held
messages a reviewer decides: ``core.services.interfaces.held_messages``.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import socket
import socketserver
import sys
import threading
import time
from collections import Counter
from concurrent.futures import Future, wait as futures_wait
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Iterator

from core import telemetry
from domain.errors import BadInput
from domain.models import DocType
from domain.policy.identity.gate import same_mrn
from domain.policy.access.mllp_peers import AllowedSenders, ListenerAccess, listener_access
from core.services.ingest.ingestion import check_upload
from core.services.interfaces.group_commit import GroupCommit
from core.services.interfaces.mllp_ack import Header, Refused, build_ack, check_header, pid_mrns, read_header
from core.services.interfaces.mllp_journal import JOURNAL_DIR, Entry, MllpJournal, recover as recover_journals
from core.services.workbench import Workbench
from domain.settings import Settings
from extract.formats.hl7.parse import decode_bytes
from extract.sniff import MIME_TYPES
from storage import documents_repo, inbound_repo, jobs_repo, patients_repo

ACTOR = "system:mllp"
CHANNEL = "mllp"
START_BLOCK, END_BLOCK = b"\x0b", b"\x1c\x0d"

# ============================================================================ framing

_LINE_ENDS = re.compile(rb"[\r\n]*")  # allowed between frames: a sender's CR/LF after <FS><CR>


class FrameReader:
    """Splits a byte stream into MLLP frames, strictly. ``feed`` returns each complete
    frame's payload, or ``None`` for a frame that grew past ``max_bytes`` (its bytes are
    skipped up to its end, so one oversized message costs no more memory than the limit).

    The stream must begin with the start block; between frames only CR and LF may come
    (senders that end a frame with <FS><CR><LF>). Anything else sets ``error`` (and the
    reader takes nothing more): the connection is closed, since it is not an MLLP sender
    (an HTTP request from a web page on this host, say) or has lost its framing. Inside a
    frame, a start block again means the sender gave up and restarted: the frame is read
    from its last start (the frame's deadline still runs from its first).

    Each byte received is searched a bounded number of times (the new bytes only, plus one
    byte of overlap for an end block split across two reads), so a frame costs time in
    proportion to its size; ``bytes_scanned`` counts that work."""

    _START, _BETWEEN, _FRAME, _SKIP, _BROKEN = range(5)

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._buf = bytearray()  # the payload so far of the frame being read
        self._size = 0  # bytes since the frame's first start block, restarts included
        self._state = self._START
        self._fs_pending = False  # the last byte seen while skipping was <FS>
        self.error: str | None = None  # no_start_block | noise_between_frames
        self.frames_started = 0  # start blocks that began a frame (not a restart inside one)
        self.bytes_scanned = 0

    @property
    def in_frame(self) -> bool:
        return self._state in (self._FRAME, self._SKIP)

    def feed(self, chunk: bytes) -> list[bytes | None]:
        out: list[bytes | None] = []
        pos, n = 0, len(chunk)
        while pos < n and self._state != self._BROKEN:
            if self._state in (self._START, self._BETWEEN):
                if self._state == self._BETWEEN:
                    skipped = _LINE_ENDS.match(chunk, pos).end()
                    self.bytes_scanned += skipped - pos
                    pos = skipped
                    if pos == n:
                        break
                if chunk[pos] != START_BLOCK[0]:
                    self.error = "no_start_block" if self._state == self._START else "noise_between_frames"
                    self._state = self._BROKEN
                    self._buf.clear()
                    break
                self.frames_started += 1
                self._state = self._FRAME
                self._buf.clear()
                self._size = 0
                pos += 1
            elif self._state == self._FRAME:
                pos = self._read_frame(chunk, pos, out)
            else:
                pos = self._skip_frame(chunk, pos, out)
        return out

    def _find_end(self, chunk: bytes, pos: int) -> tuple[int, int]:
        """(where this frame's payload ends in ``chunk``, where the next input begins),
        or (-1, len) when its end is not in this chunk. A <FS> that ended the previous
        read and a <CR> that begins this one are an end block too (the byte of overlap)."""
        pending = self._fs_pending if self._state == self._SKIP else self._buf[-1:] == END_BLOCK[:1]
        if pending and chunk[pos] == END_BLOCK[1]:
            self.bytes_scanned += 1
            return pos, pos + 1
        end = chunk.find(END_BLOCK, pos)
        self.bytes_scanned += (end + len(END_BLOCK) if end >= 0 else len(chunk)) - pos
        return (end, end + len(END_BLOCK)) if end >= 0 else (-1, len(chunk))

    def _read_frame(self, chunk: bytes, pos: int, out: list[bytes | None]) -> int:
        end, after = self._find_end(chunk, pos)
        if end >= 0 and after == end + 1:  # an end block split across two reads: drop its <FS>
            del self._buf[-1:]
            self._size -= 1
        else:
            stop = end if end >= 0 else len(chunk)
            restart = chunk.rfind(START_BLOCK, pos, stop)  # in the new bytes only: the others were searched
            self.bytes_scanned += stop - pos
            self._size += stop - pos
            if restart >= 0:
                self._buf.clear()
                pos = restart + 1
            self._buf += memoryview(chunk)[pos:stop]
        # The size counts every byte since the frame's first start block (a restarted part too,
        # so the verdict does not depend on how the stream was split into reads); unfinished,
        # its last byte may be the <FS> of an end block split across two reads.
        if self._size > self.max_bytes + (end < 0):
            self._buf.clear()
            if end >= 0:
                out.append(None)
                self._state = self._BETWEEN
            else:
                self._state = self._SKIP
                self._fs_pending = chunk[-1:] == END_BLOCK[:1]
            return after
        if end >= 0:
            out.append(bytes(self._buf))
            self._buf.clear()
            self._state = self._BETWEEN
        return after

    def _skip_frame(self, chunk: bytes, pos: int, out: list[bytes | None]) -> int:
        end, after = self._find_end(chunk, pos)
        if end < 0:
            self._fs_pending = chunk[-1:] == END_BLOCK[:1]
            return after
        self._fs_pending = False
        self._state = self._BETWEEN
        out.append(None)
        return after


def frame(message: bytes) -> bytes:
    return START_BLOCK + message + END_BLOCK


def read_reply(sock) -> bytes:
    """A sender's side: the next framed reply (an ACK) on ``sock``, without its framing."""
    buf = b""
    while not buf.endswith(END_BLOCK):
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("the listener closed the connection before its reply")
        buf += chunk
    return buf[buf.rindex(START_BLOCK) + len(START_BLOCK):-len(END_BLOCK)]


# ============================================================================ receiving


@dataclass
class Receipt:
    ack: str  # AA | AE | AR
    text: str
    code: str  # queued | held | duplicate | a refusal's error code
    message_id: int | None = None
    document_id: int | None = None
    job_id: int | None = None
    hold_reason: str | None = None


_HOLD_TEXT = {
    "unknown_patient": "Stored; the patient is on no chart: held for review.",
    "ambiguous_patient": "Stored; the patient identifiers name no single chart: held for review.",
    "no_patient_id": "Stored; the message names no patient (no PID-3): held for review.",
    "control_id_reused": "Stored; this control id came before with other content: held for review.",
    "no_category": "Stored; no active category reads HL7 v2 messages: held for review.",
}


def _match_patient(wb: Workbench, mrns: list[str]) -> tuple[int | None, str | None]:
    """The one chart patient every PID names, or (None, why not)."""
    if not mrns or not all(mrns):
        return None, "no_patient_id"
    found: set[int] = set()
    # Chart patients are only ever added and an MRN never changes, so an MRN found once
    # names the same patient for as long as the database is open: kept, not read again
    # for every message (a miss is always read again).
    known = wb.extras.setdefault("mllp_patient_by_mrn", {})
    with wb.db.cursor() as cur:
        for mrn in dict.fromkeys(mrns):
            if mrn in known:
                found.add(known[mrn])
                continue
            exact = patients_repo.by_mrn(cur, mrn)
            if exact:
                known[mrn] = exact["id"]
            ids = {exact["id"]} if exact else {p["id"] for p in patients_repo.all_patients(cur)
                                                   if same_mrn(mrn, p["mrn"])}
            if not ids:
                return None, "unknown_patient" if not found else "ambiguous_patient"
            found |= ids
    return (found.pop(), None) if len(found) == 1 else (None, "ambiguous_patient")


def message_filename(control_id: str) -> str:
    return "mllp-" + (re.sub(r"[^A-Za-z0-9._-]", "_", control_id)[:40] or "message") + ".hl7"


def receive_message(wb: Workbench, data: bytes, senders: AllowedSenders | None = None) -> tuple[Receipt, Header | None]:
    """Store one message (or recognise it as stored) and say how to acknowledge it.
    ``senders``: the allow-list of MSH-3^MSH-4 (default: the settings')."""
    header = None
    try:
        text, _ = decode_bytes(data)
        header = read_header(text)
        check_sender(header, senders if senders is not None else allowed_senders(wb.settings))
        check_header(header)
        try:
            check_upload(data, message_filename(header.control_id), DocType.HL7V2_MESSAGE, wb.settings.upload_max_bytes)
        except BadInput as exc:
            raise Refused("AE", "102", exc.message[:200], exc.code) from None
        return _store(wb, data, text, header), header
    except Refused as refused:
        return Receipt(refused.ack, refused.text, refused.code), header


def allowed_senders(settings: Settings) -> AllowedSenders:
    try:
        return AllowedSenders.parse(settings.mllp_allowed_senders)
    except ValueError as exc:
        raise BadInput(str(exc), code="bad_setting") from None


def check_sender(header: Header, senders: AllowedSenders) -> None:
    """A sender not on the allow-list is refused before anything is stored: AR (the
    header fails the receiver's basic validation, as an unsupported processing id does;
    nothing about the content would change that) with ERR 103, table value not found
    (MSH-3 and MSH-4 are looked up in the receiver's tables of applications and
    facilities, HL7 tables 0361/0362, and are not there)."""
    if not senders.allows(header.sending_application, header.sending_facility):
        raise Refused("AR", "103", "Sender (MSH-3^MSH-4) not on this receiver's list of senders; nothing stored.",
                      "sender_not_allowed")


class _HoldingAreaFull(Refused):
    def __init__(self, cap: int):
        super().__init__("AE", "207", f"Not stored: the holding area for messages waiting for a chart is full "
                         f"({cap}); send it again once a reviewer has decided the waiting ones.",
                         "holding_area_full")


def _hold_decision(wb: Workbench, cur, header: Header, sha: str, hold: str | None,
                   earlier: list[dict] | None = None) -> tuple[dict | None, str | None, dict | None]:
    """(the same message already stored, or None; why the message is held, or None; the
    HL7 category). The same rule before the original is written and inside the
    transaction that writes its row. ``earlier``: the rows under its sender's control id,
    when read already (a batch reads them in one query)."""
    if earlier is None:
        earlier = inbound_repo.same_control_id(cur, sender=header.sender, control_id=header.control_id)
    if same := next((row for row in earlier if row["sha256"] == sha), None):
        return same, None, None
    if hold is None and earlier:
        hold = "control_id_reused"
    cat = _hl7_category(wb, cur)
    if hold is None and cat is None:
        hold = "no_category"
    return None, hold, cat


def _hl7_category(wb: Workbench, cur) -> dict | None:
    """The category HL7 messages are filed under, read again only after a category or
    mapping was written (``documents_repo.category_generation``), not per message."""
    generation = documents_repo.category_generation()
    cached = wb.extras.get("mllp_hl7_category")
    if cached is None or cached[0] != generation:
        cached = wb.extras["mllp_hl7_category"] = (
            generation, documents_repo.category_for_doc_type(cur, DocType.HL7V2_MESSAGE.value))
    return cached[1]


def _category_known(wb: Workbench) -> bool:
    """The HL7 category is cached for the current categories (``_hl7_category``)."""
    cached = wb.extras.get("mllp_hl7_category")
    return cached is not None and cached[0] == documents_repo.category_generation() and cached[1] is not None


def _check_room(cur, wb: Workbench, hold: str | None) -> None:
    """A message to be held when as many are held as allowed is refused (AE), so the
    sender keeps it; no held message is ever dropped to make room."""
    cap = wb.settings.mllp_max_held_messages
    if hold is not None and inbound_repo.counts(cur).get("held", 0) >= cap:
        raise _HoldingAreaFull(cap)


@dataclass(frozen=True)
class _Arrival:
    """A message whose original is stored, waiting for its rows to be committed."""

    header: Header
    sha: str
    stored: Path
    size: int
    mrns: list[str]
    patient_id: int | None
    hold: str | None
    durable: Future  # the original's fsync and rename (storage.blobs.BlobStore.put_then_sync)
    acknowledged: bool = False  # answered AA from the journal already: never refused now, never counted twice


def _store(wb: Workbench, data: bytes, text: str, header: Header) -> Receipt:
    mrns = pid_mrns(text, header.enc)
    journal: MllpJournal | None = wb.extras.get(_JOURNAL)
    if journal is not None:  # a listener runs: answer from its journal when the answer is certain
        if journal.accept(data, header, mrns, _routed_patient(wb, mrns) if _category_known(wb) else None):
            return Receipt("AA", "Stored; queued for reading.", "queued")
        journal.settle()  # the usual checks below must see every message acknowledged before this one
    receipt = _store_now(wb, data, mrns, header)
    if journal is not None:
        journal.remember(header)
    return receipt


def _routed_patient(wb: Workbench, mrns: list[str]) -> int | None:
    """The chart patient every MRN was already routed to (``_match_patient``'s memory),
    or None when that is not known without the database."""
    known = wb.extras.get("mllp_patient_by_mrn", {})
    found = {known.get(mrn) for mrn in mrns}
    return found.pop() if mrns and len(found) == 1 and None not in found else None


def _store_now(wb: Workbench, data: bytes, mrns: list[str], header: Header) -> Receipt:
    patient_id, hold = _match_patient(wb, mrns)
    if hold is not None:  # to be held: refused before its original is written when there is no room
        with wb.db.cursor() as cur:
            same, will_hold, _ = _hold_decision(wb, cur, header, hashlib.sha256(data).hexdigest(), hold)
            if same is None:
                _check_room(cur, wb, will_hold)
    # The original first: its fsync runs while its rows are written, and they are
    # committed only once it is durable and in place (a resend finds it there) ...
    sha, stored, durable = wb.blobs.put_then_sync(data)
    # ... then its row, document and job together, in one commit with the messages that
    # arrived beside it on other connections (core/services/interfaces/group_commit.py).
    try:
        receipt = _committer(wb).submit(_Arrival(header, sha, stored, len(data), mrns, patient_id, hold, durable))
    finally:
        durable.result()  # never left behind: a failed batch still waits for (or raises) its original's sync
    if receipt.code != "duplicate":
        telemetry.emit("mllp_message", settings=wb.settings, patient_id=patient_id if receipt.document_id else None,
                       channel=CHANNEL, outcome=receipt.ack, status=receipt.code, error_code=receipt.hold_reason,
                       document_id=receipt.document_id, job_id=receipt.job_id)
    return receipt


def _committer(wb: Workbench) -> GroupCommit:
    with _COMMITTERS_LOCK:
        committer = wb.extras.get("mllp_group_commit")
        if committer is None or committer.db is not wb.db:
            committer = wb.extras["mllp_group_commit"] = GroupCommit(wb.db, partial(_write_rows, wb),
                                                                     refusals=(Refused,))
        return committer


_COMMITTERS_LOCK = threading.Lock()


def _write_rows(wb: Workbench, cur, arrival: _Arrival) -> Receipt:
    """One message's rows on the group commit's open transaction."""
    return _write_rows_together(wb, cur, [arrival])[0]


def _write_rows_together(wb: Workbench, cur, arrivals: list[_Arrival]) -> list[Receipt]:
    """Messages' rows on an open transaction, one statement per table: one message of a
    group commit, or the journal writer's batch (acknowledged, each control id once).
    A refusal (the holding area is full) raises before anything is written."""
    earlier = inbound_repo.same_control_ids(cur, [(a.header.sender, a.header.control_id) for a in arrivals])
    decided = []
    for a in arrivals:
        same, hold, cat = _hold_decision(wb, cur, a.header, a.sha, a.hold,
                                         earlier.get((a.header.sender, a.header.control_id), []))
        # Under the write lock: another connection may have filled the holding area, or a
        # reused control id (known only here) may hold a message whose original is stored:
        # then only that content-addressed original remains, with no row. One answered AA
        # already (from the journal) is kept, held, whatever the count.
        if same is None and not a.acknowledged:
            _check_room(cur, wb, hold)
        decided.append((a, same, hold, cat))
    for a, same, _, _ in decided:
        if same and not a.acknowledged:  # (a journal's record written before a crash is no resend)
            inbound_repo.note_resent(cur, same["id"])  # a resend after a lost ACK: answered again, stored once
    attach = [(a, cat) for a, same, hold, cat in decided if same is None and hold is None]
    document_ids = documents_repo.insert_batch(cur, [_document_fields(a, cat) for a, cat in attach])
    job_ids = jobs_repo.enqueue_batch(cur, [_job_fields(a, d) for (a, _), d in zip(attach, document_ids)])
    attached = {id(a): ids for (a, _), *ids in zip(attach, document_ids, job_ids)}
    fresh = [(a, hold) for a, same, hold, _ in decided if same is None]
    message_ids = dict(zip((id(a) for a, _ in fresh), inbound_repo.insert_batch(
        cur, [_message_fields(a, hold, *attached.get(id(a), (None, None))) for a, hold in fresh])))
    # Nothing naming an original commits before it is durable: a failed sync fails the
    # write (answered AR, sent again), never a row without its original.
    for a in arrivals:
        a.durable.result()
    return [_duplicate(same) if same else _stored(message_ids[id(a)], hold, *attached.get(id(a), (None, None)))
            for a, same, hold, _ in decided]


def _document_fields(arrival: _Arrival, category: dict) -> dict:
    return dict(patient_id=arrival.patient_id, category_id=category["id"],
                filename=message_filename(arrival.header.control_id), mime=MIME_TYPES.get("hl7"),
                sha256=arrival.sha, size=arrival.size, stored_path=str(arrival.stored), uploaded_by=ACTOR)


def _job_fields(arrival: _Arrival, document_id: int) -> dict:
    return dict(patient_id=arrival.patient_id, document_id=document_id, doc_type=DocType.HL7V2_MESSAGE.value)


def _message_fields(arrival: _Arrival, hold: str | None, document_id: int | None, job_id: int | None) -> dict:
    header = arrival.header
    return dict(channel=CHANNEL, sender=header.sender, control_id=header.control_id,
                message_type=f"{header.message_type}^{header.trigger}".rstrip("^"), sha256=arrival.sha,
                size=arrival.size, stored_path=str(arrival.stored), status="held" if hold else "queued",
                hold_reason=hold, note=_HOLD_TEXT.get(hold or ""),
                patient_mrn=next((m for m in arrival.mrns if m), None),
                patient_id=arrival.patient_id if document_id else None, document_id=document_id, job_id=job_id)


def _stored(message_id: int, hold: str | None, document_id: int | None, job_id: int | None) -> Receipt:
    return Receipt("AA", _HOLD_TEXT[hold] if hold else "Stored; queued for reading.",
                   "held" if hold else "queued", message_id, document_id, job_id, hold)


def _duplicate(same: dict) -> Receipt:
    return Receipt("AA", "Already received; stored once.", "duplicate", same["id"], same["document_id"],
                   same["job_id"], same["hold_reason"])


# ---------------------------------------------------------------------------- the journal

_JOURNAL = "mllp_journal"


def _write_journalled(wb: Workbench, entries: list[Entry]) -> list[dict]:
    """Store journalled messages: originals, then all their rows in one transaction
    (should that fail, one message per transaction, so one bad message costs the others
    nothing). Raises when any failed: the writer tries the batch again, and those
    committed meanwhile are recognised then. What telemetry says of each, after."""
    arrivals = []
    try:
        for e in entries:
            sha, stored, durable = wb.blobs.put_then_sync(e.data)
            arrivals.append(_Arrival(e.header, sha, stored, len(e.data), e.mrns, e.patient_id, None, durable,
                                     acknowledged=True))
        try:
            with wb.db.transaction() as cur:
                outcomes = [(r, None) for r in _write_rows_together(wb, cur, arrivals)]
        except Exception:  # noqa: BLE001 - each message on its own, as the group commit does
            outcomes = _committer(wb).submit_many(arrivals)
    finally:
        futures_wait([a.durable for a in arrivals])  # none left syncing behind a failure
    if failed := next((error for _, error in outcomes if error is not None), None):
        raise failed
    return [dict(patient_id=r.document_id and a.patient_id, channel=CHANNEL, outcome=r.ack, status=r.code,
                 error_code=r.hold_reason, document_id=r.document_id, job_id=r.job_id)
            for a, (r, _) in zip(arrivals, outcomes) if r.code != "duplicate"]


def _replay(wb: Workbench, data: bytes) -> None:
    """One record of a journal a killed listener left: acknowledged then, stored now
    (the usual checks; never refused; a row committed before the kill is not written again)."""
    text, _ = decode_bytes(data)
    header = read_header(text)
    mrns = pid_mrns(text, header.enc)
    patient_id, hold = _match_patient(wb, mrns)
    sha, stored, durable = wb.blobs.put_then_sync(data)
    try:
        _committer(wb).submit(_Arrival(header, sha, stored, len(data), mrns, patient_id, hold, durable,
                                       acknowledged=True))
    finally:
        durable.result()


def open_journal(wb: Workbench) -> MllpJournal:
    """The listener's journal (a killed listener's written out first), used by every
    message stored through ``wb`` until ``close_journal``."""
    journal = MllpJournal(wb, partial(_write_journalled, wb), partial(_replay, wb))
    if journal.recovered:
        print(f"mllp: wrote out {journal.recovered} acknowledged message(s) a stopped listener had journalled",
              file=sys.stderr, flush=True)
    wb.extras[_JOURNAL] = journal
    return journal


def write_out_left_journals(wb: Workbench) -> int:
    """Messages a stopped listener acknowledged from its journal and had not written:
    written now, by a process that does not listen itself (the app at its start), so
    they reach their charts without waiting for the next listener."""
    done = recover_journals(wb.settings.data_dir / JOURNAL_DIR, partial(_replay, wb))
    if done:
        print(f"mllp: wrote out {done} acknowledged message(s) a stopped listener had journalled",
              file=sys.stderr, flush=True)
    return done


def close_journal(wb: Workbench, journal: MllpJournal) -> None:
    if wb.extras.get(_JOURNAL) is journal:
        del wb.extras[_JOURNAL]
    journal.close()


def acknowledge(wb: Workbench, data: bytes, senders: AllowedSenders | None = None) -> tuple[bytes, Receipt]:
    """The ACK for one framed message. A failure to store is answered AR (send it again
    later), never a dropped connection: the sender must know the message is not ours."""
    try:
        receipt, header = receive_message(wb, data, senders)
    except Exception as exc:  # noqa: BLE001 - storage trouble must become an answer, not silence
        receipt, header = Receipt("AR", "Could not store the message now; send it again later.",
                                  "store_failed"), _header_or_none(data)
        telemetry.emit("mllp_store_failed", settings=wb.settings, channel=CHANNEL, error_code=type(exc).__name__)
        # The type only: a library's message may quote the message's content.
        print(f"mllp: a message could not be stored ({type(exc).__name__}); answered AR", file=sys.stderr)
    if receipt.ack != "AA":
        telemetry.emit("mllp_message", settings=wb.settings, channel=CHANNEL, outcome=receipt.ack,
                       error_code=receipt.code)
    err = None if receipt.ack == "AA" else _ERR.get(receipt.code, "102")
    return build_ack(header, receipt.ack, receipt.text, err), receipt


# A refusal's code -> its HL7 table 0357 error code (anything else about the content: 102).
_ERR = {"not_hl7": "100", "hl7_parse_error": "102", "hl7_no_control_id": "101", "hl7_not_production": "202",
        "store_failed": "207", "sender_not_allowed": "103", "holding_area_full": "207"}


def _header_or_none(data: bytes) -> Header | None:
    try:
        return read_header(decode_bytes(data)[0])
    except Exception:  # noqa: BLE001 - only for addressing the ACK
        return None


# ============================================================================ the listener


@dataclass(frozen=True)
class ListenerLimits:
    """What one listener allows (README "Configuration"; docs/decisions.md, issue 21)."""

    max_connections: int = 32  # at once, from everyone
    max_connections_per_peer: int = 8  # at once, from one address: no peer takes every slot
    frame_timeout: float = 120.0  # seconds for a whole frame, from its start block
    idle_timeout: float = 300.0  # seconds of silence allowed before a frame (between frames)
    max_frame_bytes: int = 50 * 1024 * 1024  # a larger frame is skipped to its end and answered AE

    @classmethod
    def from_settings(cls, settings: Settings) -> "ListenerLimits":
        return cls(settings.mllp_max_connections, settings.mllp_max_connections_per_peer,
                   settings.mllp_frame_timeout_seconds, settings.mllp_idle_timeout_seconds,
                   settings.upload_max_bytes)


def bound_addresses(host: str) -> list[str]:
    """The IPv4 addresses a listener on ``host`` binds (the server is IPv4, as the first
    getaddrinfo answer is what it binds); a name that does not resolve stays as given."""
    if host in ("", "0.0.0.0"):
        return ["0.0.0.0"]
    try:
        return sorted({info[4][0] for info in socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)})
    except (OSError, UnicodeError):
        return [host]


def listener_access_for(settings: Settings, host: str) -> ListenerAccess:
    """The allow-lists for a listener on ``host``, or BadInput (one line) when a list
    cannot be read or is missing off loopback. `core mllp` asks before it opens the
    database; a listener given no ``access`` asks when it starts."""
    try:
        return listener_access(host, bound_addresses(host), settings.mllp_allowed_senders,
                               settings.mllp_allowed_peers)
    except ValueError as exc:
        raise BadInput(str(exc), code="mllp_not_allowed_here") from None


class _ConnectionEvents:
    """Connections refused or closed by the listener, counted by reason. Telemetry (and
    stderr) get the first of each reason, then at most one line a minute with the count
    since: a flood of connections must not become a flood of log lines."""

    EVERY = 60.0

    def __init__(self, settings: Settings):
        self.settings = settings
        self.counts: Counter[str] = Counter()
        self._unreported: Counter[str] = Counter()
        self._reported_at: dict[str, float] = {}
        self._lock = threading.Lock()

    def note(self, reason: str) -> None:
        with self._lock:
            self.counts[reason] += 1
            self._unreported[reason] += 1
            now = time.monotonic()
            if now - self._reported_at.get(reason, -self.EVERY) < self.EVERY:
                return
            self._reported_at[reason] = now
            n = self._unreported.pop(reason)
        telemetry.emit("mllp_connection", settings=self.settings, channel=CHANNEL, outcome="closed",
                       error_code=reason, counts={"connections": n})
        print(f"mllp: closed {n} connection(s): {_CLOSED_WHY.get(reason, reason)}", file=sys.stderr, flush=True)


_CLOSED_WHY = {
    "peer_not_allowed": "address not in WORKBENCH_MLLP_ALLOWED_PEERS",
    "too_many_connections": "WORKBENCH_MLLP_MAX_CONNECTIONS reached",
    "too_many_from_peer": "one address at WORKBENCH_MLLP_MAX_CONNECTIONS_PER_PEER",
    "no_start_block": "the first byte was not the MLLP start block (not an MLLP sender)",
    "noise_between_frames": "bytes other than CR/LF between frames (lost framing)",
    "frame_timeout": "a frame did not arrive whole within WORKBENCH_MLLP_FRAME_TIMEOUT_SECONDS",
    "idle_timeout": "silent for WORKBENCH_MLLP_IDLE_TIMEOUT_SECONDS",
}


class _Handler(socketserver.BaseRequestHandler):
    server: "_Server"

    def handle(self) -> None:
        server, sock, limits = self.server, self.request, self.server.limits
        reader = FrameReader(limits.max_frame_bytes)
        started = 0
        idle_deadline = time.monotonic() + limits.idle_timeout
        frame_deadline = 0.0
        try:
            while True:
                in_frame = reader.in_frame
                remaining = (frame_deadline if in_frame else idle_deadline) - time.monotonic()
                if remaining <= 0:
                    server.events.note("frame_timeout" if in_frame else "idle_timeout")
                    return
                sock.settimeout(remaining)
                try:
                    chunk = sock.recv(65536)
                except TimeoutError:
                    continue  # the deadline above closes it
                if not chunk:
                    return
                frames = reader.feed(chunk)
                for payload in frames:
                    if payload is None:
                        ack = build_ack(None, "AE", "The message is larger than the upload limit.", "102")
                    else:
                        with server.working() as open_:
                            if not open_:
                                return  # stopping: unanswered, so the sender sends it again
                            ack, _ = acknowledge(server.wb, payload, server.access.senders)
                    sock.settimeout(limits.frame_timeout)  # a sender that never reads its ACKs
                    sock.sendall(frame(ack))
                # Deadlines run from when the bytes were read and answered, not from the
                # time spent storing an earlier frame of the same read.
                now = time.monotonic()
                if frames:
                    idle_deadline = now + limits.idle_timeout
                if reader.frames_started != started:  # a frame began (a restart inside one does not count)
                    started = reader.frames_started
                    frame_deadline = now + limits.frame_timeout
                if reader.error:
                    server.events.note(reader.error)
                    return
        except OSError:  # socket.timeout is one
            return  # the peer went away or stopped reading; nothing acknowledged is lost


class _Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, address, wb: Workbench, limits: ListenerLimits, access: ListenerAccess):
        self.wb, self.limits, self.access = wb, limits, access
        self.events = _ConnectionEvents(wb.settings)
        self._admitted: dict[object, str] = {}  # open connection -> its peer address
        self._per_peer: Counter[str] = Counter()
        self._slots = threading.Lock()
        self.received = 0
        self._busy = 0
        self._closing = False
        self._state = threading.Condition()
        super().__init__(address, _Handler)

    def verify_request(self, request, client_address) -> bool:
        """Before a byte is read: a peer not on the allow-list, or one more connection
        than allowed in all or from this address, is closed at once (the sender retries)."""
        peer = str(client_address[0])
        if not self.access.peers.allows(peer):
            self.events.note("peer_not_allowed")
            return False
        with self._slots:
            if len(self._admitted) >= self.limits.max_connections:
                refused = "too_many_connections"
            elif self._per_peer[peer] >= self.limits.max_connections_per_peer:
                refused = "too_many_from_peer"
            else:
                self._admitted[request] = peer
                self._per_peer[peer] += 1
                return True
        self.events.note(refused)
        return False

    def shutdown_request(self, request) -> None:
        """Called once for every accepted connection, admitted or not, when it ends."""
        with self._slots:
            peer = self._admitted.pop(request, None)
            if peer is not None:
                self._per_peer[peer] -= 1
                if not self._per_peer[peer]:
                    del self._per_peer[peer]
        super().shutdown_request(request)

    @property
    def open_connections(self) -> dict[str, int]:
        with self._slots:
            return dict(self._per_peer)

    @contextlib.contextmanager
    def working(self) -> Iterator[bool]:
        """Around one message: False once stopping, and ``drain`` waits for those under way."""
        with self._state:
            admitted = not self._closing
            if admitted:
                self._busy += 1
        if not admitted:
            yield False
            return
        try:
            yield True
        finally:
            with self._state:
                self._busy -= 1
                self.received += 1
                self._state.notify_all()

    def drain(self, timeout: float) -> None:
        with self._state:
            self._closing = True
            self._state.wait_for(lambda: self._busy == 0, timeout=timeout)


class MllpListener:
    """An MLLP server on ``host:port`` (port 0: any free port) storing into ``wb``, with
    the settings' allow-lists and limits unless given (BadInput when the allow-lists are
    missing off loopback)."""

    def __init__(self, wb: Workbench, host: str = "127.0.0.1", port: int = 2575, *,
                 limits: ListenerLimits | None = None, access: ListenerAccess | None = None):
        access = access or listener_access_for(wb.settings, host)
        try:
            self._server = _Server((host, port), wb, limits or ListenerLimits.from_settings(wb.settings), access)
        except OSError as exc:
            raise BadInput(f"Cannot listen on {host}:{port} ({exc.strerror or exc}); is another listener "
                           "running there? Choose another --port or WORKBENCH_MLLP_PORT.",
                           code="port_unavailable") from None
        try:
            # Before the first message: a journal a killed listener left is written out first.
            self._journal = open_journal(wb)
        except BaseException:
            self._server.server_close()
            raise
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    @property
    def received(self) -> int:
        return self._server.received

    @property
    def closed_connections(self) -> dict[str, int]:
        """Connections refused or closed by the listener so far, by reason."""
        return dict(self._server.events.counts)

    @property
    def open_connections(self) -> dict[str, int]:
        """Connections open now, by peer address."""
        return self._server.open_connections

    def start_thread(self) -> "MllpListener":
        self._thread = threading.Thread(target=self._server.serve_forever, name="mllp-listener", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting, let the messages under way finish (their ACKs go out), close."""
        if self._thread is not None:  # shutdown() waits for a serve_forever that must be running
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.drain(timeout=5)
        self._server.server_close()
        close_journal(self._server.wb, self._journal)  # every acknowledged message's rows committed
