"""HL7 v2 received over MLLP: store every message first, acknowledge after.

Framing (HL7 v2 MLLP, release 2 without the commit acknowledgement): each message is
sent as ``<VT> message <FS><CR>``, the answer (an HL7 ACK) framed the same way on the
same connection. Bytes outside a frame are skipped; a frame begun again before its end
(a sender that gave up and restarted) is read from its last start.

What each message gets (docs/decisions.md, "HL7 v2 over MLLP"):

* **AA** once it is durably stored: the original bytes (content-addressed, fsynced) and
  one ``inbound_messages`` row, plus, when PID-3 names exactly one chart patient, a
  document on that chart and a queued job, all in one transaction. A message whose
  patient is not on a chart (or not certainly one) is stored and **held** for review,
  and still answered AA: the clinic owns it now, and a refusal would make the sender
  resend it for ever or stop the interface queue for every other patient.
* The same message again (same sender, MSH-10 control id and bytes: a resend after a
  lost ACK) is answered AA again and stored once.
* **AE** for a message whose content cannot be accepted (no control id, too large, not
  text), **AR** when it fails basic validation (no MSH, a processing id other than
  production) or could not be stored just now (the sender should send it again later).

The identity gate still runs in the worker as for any upload: routing by MRN only
chooses the chart; the name and birth date decide whether the results count.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import socketserver
import sys
import threading
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Callable, Iterator

from core import telemetry
from core.errors import BadInput, ExtractionError
from core.models import DocType, IdentifierKind, IdentityCandidate
from core.policy.access import Permission
from core.policy.identity import check_identity, mrn_key, name_parts, same_mrn
from core.services.accounts import authorize
from core.services.ingestion import check_upload
from core.services.patients import get_patient, list_patients
from core.services.workbench import Workbench
# The extractor's own PID readers: route by the MRN the gate checks, and show a reviewer
# the name and birth date the gate will compare.
from extract.hl7_facts import pick_identifier, pid_name
from extract.hl7_parse import Encoding, decode_bytes, find_header, read_encoding, segment_fields, unescape
from extract.sniff import MIME_TYPES
from extract.values import hl7_date
from storage import audit_repo, documents_repo, inbound_repo, jobs_repo, patients_repo

ACTOR = "system:mllp"
CHANNEL = "mllp"
START_BLOCK, END_BLOCK = b"\x0b", b"\x1c\x0d"
IDLE_TIMEOUT = 300.0  # seconds a connection may stay silent before it is closed
MAX_CONNECTIONS = 32

# ============================================================================ framing


class FrameReader:
    """Splits a byte stream into MLLP frames. ``feed`` returns each complete frame's
    payload, or ``None`` for a frame that grew past ``max_bytes`` (its bytes are skipped
    up to its end, so one oversized message costs no more memory than the limit)."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._buf = bytearray()
        self._skipping = False

    def feed(self, chunk: bytes) -> list[bytes | None]:
        self._buf += chunk
        out: list[bytes | None] = []
        while True:
            if self._skipping:
                end = self._buf.find(END_BLOCK)
                if end < 0:
                    del self._buf[:-1]  # keep a last FS: its CR may be in the next chunk
                    return out
                del self._buf[:end + len(END_BLOCK)]
                self._skipping = False
                out.append(None)
                continue
            start = self._buf.find(START_BLOCK)
            if start < 0:
                self._buf.clear()  # noise between frames
                return out
            del self._buf[:start]
            end = self._buf.find(END_BLOCK)
            if end < 0:
                if len(self._buf) > self.max_bytes + 1:
                    self._skipping = True
                    continue
                return out
            payload = self._buf[1:end]
            restart = payload.rfind(START_BLOCK)
            out.append(bytes(payload[restart + 1:] if restart >= 0 else payload))
            del self._buf[:end + len(END_BLOCK)]


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


# ============================================================================ the message header


@dataclass(frozen=True)
class Header:
    """What acknowledging and recognising a message needs from its first header
    (MSH, or FHS/BHS for a batch: the control id is then field 11)."""

    enc: Encoding
    segment: str
    sending_application: str
    sending_facility: str
    receiving_application: str
    receiving_facility: str
    message_type: str
    trigger: str
    control_id: str
    processing_id: str
    version: str

    @property
    def sender(self) -> str:
        return f"{self.sending_application}^{self.sending_facility}"


class Refused(Exception):
    """A message that is not accepted: ``ack`` is AE or AR, ``err`` an HL7 table 0357 code."""

    def __init__(self, ack: str, err: str, text: str, code: str):
        super().__init__(text)
        self.ack, self.err, self.text, self.code = ack, err, text, code


def _segments(text: str) -> list[str]:
    return [s for s in re.split(r"[\r\n]+", text) if s.strip()]


def read_header(text: str) -> Header:
    found = find_header(text)
    if found is None:
        raise Refused("AR", "100", "Not an HL7 v2 message: no MSH segment.", "not_hl7")
    line = _segments(text[found.start():])[0]
    try:
        enc, _ = read_encoding(line)
    except ExtractionError:
        raise Refused("AR", "102", "The MSH segment has no usable field separator.", "hl7_parse_error") from None
    fields = segment_fields(line, enc)
    name, is_msh = fields[0], fields[0] == "MSH"
    id_field = 10 if is_msh else 11

    def comp(n: int, index: int = 0) -> str:
        value = fields[n] if n < len(fields) else ""
        parts = value.split(enc.component) if enc.component else [value]
        return parts[index].strip() if index < len(parts) else ""

    header = Header(
        enc=enc, segment=name, sending_application=comp(3), sending_facility=comp(4),
        receiving_application=comp(5), receiving_facility=comp(6),
        message_type=comp(9) if is_msh else "batch", trigger=comp(9, 1) if is_msh else "",
        # Kept as received (escapes and all): MSA-2 must echo it exactly.
        control_id=(fields[id_field] if id_field < len(fields) else "").strip(),
        processing_id=comp(11) if is_msh else "P", version=comp(12) if is_msh else "",
    )
    return header


def check_header(header: Header) -> None:
    """Refuse a message that cannot be recognised when resent, or is not for a chart."""
    if not header.control_id:
        field = "MSH-10" if header.segment == "MSH" else f"{header.segment}-11"
        raise Refused("AE", "101", f"{field} (message control id) is empty.", "hl7_no_control_id")
    if header.processing_id not in ("", "P"):
        raise Refused("AR", "202", f"Processing id {header.processing_id[:5]} is not accepted; "
                      "only production (P) messages reach a chart.", "hl7_not_production")


def _pids(text: str, enc: Encoding) -> Iterator[list[str]]:
    """The fields of each PID segment, in order."""
    for seg in _segments(text):
        if seg.startswith("PID" + enc.field):
            yield segment_fields(seg, enc)


def _pid_mrn(fields: list[str], enc: Encoding) -> str:
    picked = (pick_identifier(fields[n], enc) for n in (3, 2, 4) if n < len(fields))
    return next((m for m in picked if m), "")


def pid_mrns(text: str, enc: Encoding) -> list[str]:
    """The MRN of each PID segment, chosen as the extractor chooses it (PID-3, else PID-2,
    PID-4); '' for a PID without one."""
    return [_pid_mrn(fields, enc) for fields in _pids(text, enc)]


@dataclass(frozen=True)
class StatedPatient:
    """Who one PID segment says the patient is, read by the extractor's own PID readers,
    so a reviewer sees what the identity gate will compare once the message is on a chart."""

    name: str | None  # "FAMILY, GIVEN MIDDLE", as the extractor prints it for the gate
    placeholder_name: bool  # PID-5 holds "UNKNOWN", "XXX"...: the gate ignores it
    dob: str | None  # YYYY-MM-DD
    dob_printed: str | None  # PID-7 as sent when it is not a date
    mrn: str | None

    def candidates(self) -> list[IdentityCandidate]:
        found = [(IdentifierKind.NAME, None if self.placeholder_name else self.name),
                 (IdentifierKind.DOB, self.dob), (IdentifierKind.MRN, self.mrn)]
        return [IdentityCandidate(kind=kind, value=value) for kind, value in found if value]


def stated_patients(text: str, enc: Encoding) -> list[StatedPatient]:
    """One ``StatedPatient`` per PID segment (none for a message without PID)."""
    out = []
    for fields in _pids(text, enc):
        raw = lambda n: fields[n] if n < len(fields) else ""  # noqa: E731
        name = pid_name(raw(5), enc)
        dob_raw = unescape(raw(7), enc).strip()
        dob = hl7_date(dob_raw) if dob_raw else None
        out.append(StatedPatient(name=name.printed if name else None,
                                 placeholder_name=bool(name and name.placeholder), dob=dob,
                                 dob_printed=dob_raw if dob_raw and not dob else None,
                                 mrn=_pid_mrn(fields, enc) or None))
    return out


# ============================================================================ acknowledgements

_ack_ids = itertools.count(1)


def _escape(text: str, enc: Encoding) -> str:
    """HL7 escapes for the delimiters in a free-text field (escape character first)."""
    if not enc.escape:
        return text
    e = enc.escape
    pairs = [(e, f"{e}E{e}"), (enc.field, f"{e}F{e}"), (enc.component, f"{e}S{e}"),
             (enc.subcomponent, f"{e}T{e}"), (enc.repetition, f"{e}R{e}")]
    for char, escaped in pairs:
        if char:
            text = text.replace(char, escaped)
    return text


_ERR_WORDS = {"100": "Segment sequence error", "101": "Required field missing", "102": "Data type error",
              "202": "Unsupported processing id", "207": "Application internal error"}


def build_ack(header: Header | None, code: str, text: str, err: str | None = None) -> bytes:
    """An original-mode ACK: MSH, MSA (code, the message's control id, a short text) and,
    for AE/AR, ERR with the HL7 table 0357 code. It answers in the sender's delimiters,
    swapping its sending and receiving application/facility."""
    enc = header.enc if header else Encoding()
    fs, cs = enc.field, enc.component
    esc = lambda s: _escape(s or "", enc)  # noqa: E731
    h = header
    msh = [
        "MSH" + fs + enc.msh2,
        esc(h.receiving_application if h and h.receiving_application else "WORKBENCH"),
        esc(h.receiving_facility if h else ""), esc(h.sending_application if h else ""),
        esc(h.sending_facility if h else ""), datetime.now().strftime("%Y%m%d%H%M%S"), "",
        cs.join(["ACK", h.trigger, "ACK"]) if h and h.trigger else "ACK",
        f"WB{time.time_ns() // 1_000_000 % 10**10}{next(_ack_ids) % 1000:03d}", "P",
        (h.version if h else "") or "2.5.1",
    ]
    segments = [fs.join(msh), fs.join(["MSA", code, h.control_id if h else "", esc(text[:80])])]
    if err:
        segments.append(fs.join(["ERR", "", "", cs.join([err, esc(_ERR_WORDS[err]), "HL70357"]), "E",
                                 "", "", "", esc(text)]))
    return "\r".join(segments).encode("utf-8") + b"\r"


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
    with wb.db.cursor() as cur:
        for mrn in dict.fromkeys(mrns):
            exact = patients_repo.by_mrn(cur, mrn)
            ids = {exact["id"]} if exact else {p["id"] for p in patients_repo.all_patients(cur)
                                                   if same_mrn(mrn, p["mrn"])}
            if not ids:
                return None, "unknown_patient" if not found else "ambiguous_patient"
            found |= ids
    return (found.pop(), None) if len(found) == 1 else (None, "ambiguous_patient")


def _safe_name(control_id: str) -> str:
    return "mllp-" + (re.sub(r"[^A-Za-z0-9._-]", "_", control_id)[:40] or "message") + ".hl7"


def receive_message(wb: Workbench, data: bytes) -> tuple[Receipt, Header | None]:
    """Store one message (or recognise it as stored) and say how to acknowledge it."""
    header = None
    try:
        text, _ = decode_bytes(data)
        header = read_header(text)
        check_header(header)
        try:
            check_upload(data, _safe_name(header.control_id), DocType.HL7V2_MESSAGE, wb.settings.upload_max_bytes)
        except BadInput as exc:
            raise Refused("AE", "102", exc.message[:200], exc.code) from None
        return _store(wb, data, text, header), header
    except Refused as refused:
        return Receipt(refused.ack, refused.text, refused.code), header


def _store(wb: Workbench, data: bytes, text: str, header: Header) -> Receipt:
    mrns = pid_mrns(text, header.enc)
    patient_id, hold = _match_patient(wb, mrns)
    sha, stored = wb.blobs.put(data)  # the original first (fsynced; a resend finds it there) ...
    with wb.db.transaction() as cur:  # ... then its row, document and job together
        earlier = inbound_repo.same_control_id(cur, sender=header.sender, control_id=header.control_id)
        if same := next((row for row in earlier if row["sha256"] == sha), None):
            inbound_repo.note_resent(cur, same["id"])  # a resend after a lost ACK: answered again, stored once
            return Receipt("AA", "Already received; stored once.", "duplicate", same["id"], same["document_id"],
                           same["job_id"], same["hold_reason"])
        if hold is None and earlier:
            hold = "control_id_reused"
        cat = documents_repo.category_for_doc_type(cur, DocType.HL7V2_MESSAGE.value)
        if hold is None and cat is None:
            hold = "no_category"
        document = job = None
        if hold is None:
            document, job = _attach(cur, patient_id, cat["id"], header, sha, stored, len(data), ACTOR)
        row = inbound_repo.insert(
            cur, channel=CHANNEL, sender=header.sender, control_id=header.control_id,
            message_type=f"{header.message_type}^{header.trigger}".rstrip("^"), sha256=sha, size=len(data),
            stored_path=str(stored), status="held" if hold else "queued", hold_reason=hold,
            note=_HOLD_TEXT.get(hold or ""), patient_mrn=next((m for m in mrns if m), None),
            patient_id=patient_id if document else None,
            document_id=document["id"] if document else None, job_id=job.id if job else None,
        )
    receipt = Receipt("AA", _HOLD_TEXT[hold] if hold else "Stored; queued for reading.",
                      "held" if hold else "queued", row["id"], row["document_id"], row["job_id"], hold)
    telemetry.emit("mllp_message", settings=wb.settings, patient_id=row["patient_id"], channel=CHANNEL,
                   outcome=receipt.ack, status=receipt.code, error_code=hold, document_id=row["document_id"],
                   job_id=row["job_id"])
    return receipt


def _attach(cur, patient_id: int, category_id: int, header: Header, sha: str, stored, size: int, by: str):
    document = documents_repo.insert(
        cur, patient_id=patient_id, category_id=category_id, filename=_safe_name(header.control_id),
        mime=MIME_TYPES.get("hl7"), sha256=sha, size=size, stored_path=str(stored), uploaded_by=by)
    job = jobs_repo.enqueue(cur, patient_id=patient_id, document_id=document["id"],
                            doc_type=DocType.HL7V2_MESSAGE.value)
    return document, job


def acknowledge(wb: Workbench, data: bytes) -> tuple[bytes, Receipt]:
    """The ACK for one framed message. A failure to store is answered AR (send it again
    later), never a dropped connection: the sender must know the message is not ours."""
    try:
        receipt, header = receive_message(wb, data)
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
        "store_failed": "207"}


def _header_or_none(data: bytes) -> Header | None:
    try:
        return read_header(decode_bytes(data)[0])
    except Exception:  # noqa: BLE001 - only for addressing the ACK
        return None


# ============================================================================ held messages


def held_messages(wb: Workbench) -> list[dict]:
    """Messages stored but on no chart yet, oldest first, for a reviewer."""
    with wb.db.cursor() as cur:
        return inbound_repo.held(cur)


def held_count(wb: Workbench) -> int:
    with wb.db.cursor() as cur:
        return inbound_repo.counts(cur).get("held", 0)


def held_for_review(wb: Workbench, *, limit: int | None = None) -> list[dict]:
    """The held messages, oldest first, as a reviewer decides them: each row with what
    its PID segments say of the patient (``stated``: one ``StatedPatient`` as a dict per
    PID, read from the stored original) and ``suggested``: the chart patients who agree
    with it on at least one identifier by the identity gate's rules, most agreeing first
    (``[{"patient_id", "agrees": ["name", "dob"], "differs": ["mrn"]}]``). ``readable``
    is False when the stored original cannot be read back (then nothing is stated)."""
    rows = held_messages(wb)[:limit]
    charts = _ChartIndex(list_patients(wb)) if rows else None
    out = []
    for row in rows:
        try:
            text, _ = decode_bytes(wb.blobs.get(row["sha256"]))
            stated = stated_patients(text, read_header(text).enc)
            readable = True
        except (OSError, Refused):  # a blob gone from disk, or (never expected) no header
            stated, readable = [], False
        out.append(row | {"readable": readable, "stated": [asdict(p) for p in stated],
                          "suggested": charts.suggest(stated)})
    return out


class _ChartIndex:
    """Chart patients by birth date, MRN (as ``same_mrn`` compares them) and family-name
    word, so suggesting charts for a message runs the gate's full comparison only on the
    few that can agree, not on every chart for every message."""

    def __init__(self, patients: list[dict]):
        self.by_dob: dict[str, list[dict]] = {}
        self.by_mrn: dict[str, list[dict]] = {}
        self.by_family: dict[str, list[dict]] = {}
        for p in patients:
            self.by_dob.setdefault(str(p["dob"]), []).append(p)
            self.by_mrn.setdefault(mrn_key(p["mrn"]), []).append(p)
            for word in set(_name_words(f"{p['last_name']}, {p['first_name']}")[1]):
                self.by_family.setdefault(word, []).append(p)

    def _maybe(self, person: "StatedPatient") -> list[dict]:
        # A name agrees (identity.names_match) only through a family-name word, printed
        # as the family name or, the other way round, as the given name.
        given, family = ([], []) if person.placeholder_name else _name_words(person.name)
        found = [p for word in set(given + family) for p in self.by_family.get(word, [])]
        found += self.by_dob.get(person.dob or "", []) + (self.by_mrn.get(mrn_key(person.mrn)) or [] if person.mrn
                                                          else [])
        return list({p["id"]: p for p in found}.values())

    def suggest(self, stated: list["StatedPatient"]) -> list[dict]:
        agrees: dict[int, set[str]] = {}
        differs: dict[int, set[str]] = {}
        for person in stated:
            candidates = person.candidates()
            for patient in self._maybe(person):
                matched = check_identity(candidates, patient).matched
                if any(matched.values()):
                    agrees.setdefault(patient["id"], set()).update(k for k, same in matched.items() if same)
                    differs.setdefault(patient["id"], set()).update(k for k, same in matched.items() if not same)
        order = ("name", "dob", "mrn")
        ranked = sorted(agrees.items(), key=lambda item: (-len(item[1]), item[0]))
        return [{"patient_id": pid, "agrees": [k for k in order if k in same],
                 "differs": [k for k in order if k in differs[pid] - same]} for pid, same in ranked]


def _name_words(name: str | None) -> tuple[list[str], list[str]]:
    return (name_parts(name) if name else None) or ([], [])


def _still_held(row: dict | None, message_id: int) -> dict:
    """The row, or a refusal that says who decided it and when."""
    if row is None:
        raise BadInput(f"Message {message_id} is not held: there is no such message.", code="not_held")
    if row["status"] != "held":
        done = {"attached": "put it on a chart", "dismissed": "set it aside as not for this clinic"}.get(
            row["status"], "decided it")
        when = f" at {row['decided_at']:%Y-%m-%d %H:%M} UTC" if row.get("decided_at") else ""
        raise BadInput(f"Message {message_id} is not held: {row['decided_by'] or 'someone'} already {done}{when}.",
                       code="not_held")
    return row


def attach_held_message(wb: Workbench, message_id: int, *, patient_id: int, by: str) -> dict:
    """A reviewer puts a held message on a chart: a document and a queued job, like an
    upload (the identity gate then checks it as any other). The decision is audited."""
    actor = authorize(wb, by, Permission.DECIDE).name
    patient = get_patient(wb, patient_id=patient_id)
    with wb.db.transaction() as cur:
        row = _still_held(inbound_repo.by_id(cur, message_id), message_id)
        cat = documents_repo.category_for_doc_type(cur, DocType.HL7V2_MESSAGE.value)
        if cat is None:
            raise BadInput("No active category reads HL7 v2 messages.", code="unknown_category")
        document = documents_repo.insert(
            cur, patient_id=patient["id"], category_id=cat["id"], filename=_safe_name(row["control_id"]),
            mime=MIME_TYPES.get("hl7"), sha256=row["sha256"], size=row["size"], stored_path=row["stored_path"],
            uploaded_by=actor)
        job = jobs_repo.enqueue(cur, patient_id=patient["id"], document_id=document["id"],
                                doc_type=DocType.HL7V2_MESSAGE.value)
        done = inbound_repo.mark_attached(cur, message_id, patient_id=patient["id"], document_id=document["id"],
                                          job_id=job.id, by=actor)
        audit_repo.add_review_decision(
            cur, item_type=AUDIT_ITEM, item_id=message_id, decision="attach", actor=actor, reason=None,
            before={"status": "held", "hold_reason": row["hold_reason"]},
            after={"status": "attached", "patient_id": patient["id"], "document_id": document["id"],
                   "job_id": job.id})
    telemetry.emit("mllp_message_decided", settings=wb.settings, patient_id=patient["id"], channel=CHANNEL,
                   status="attached", document_id=document["id"], job_id=job.id, user=actor)
    return done


def dismiss_held_message(wb: Workbench, message_id: int, *, by: str, reason: str | None = None) -> dict:
    """A reviewer sets a held message aside as not for this clinic. The stored original
    and the row stay (a resend is still recognised and answered AA, stored once); only
    its status moves from held to dismissed, with who and when, and the decision is
    audited."""
    actor = authorize(wb, by, Permission.DECIDE).name
    with wb.db.transaction() as cur:
        row = _still_held(inbound_repo.by_id(cur, message_id), message_id)
        done = inbound_repo.mark_dismissed(cur, message_id, by=actor)
        audit_repo.add_review_decision(
            cur, item_type=AUDIT_ITEM, item_id=message_id, decision="dismiss", actor=actor,
            reason=(reason or "").strip() or DISMISS_REASON,
            before={"status": "held", "hold_reason": row["hold_reason"]}, after={"status": "dismissed"})
    telemetry.emit("mllp_message_decided", settings=wb.settings, channel=CHANNEL, status="dismissed", user=actor)
    return done


AUDIT_ITEM = "inbound_message"  # review_decisions.item_type of a decision on a held message
DISMISS_REASON = "not for this clinic"


# ============================================================================ the listener


class _Handler(socketserver.BaseRequestHandler):
    server: "_Server"

    def handle(self) -> None:
        if not self.server.slots.acquire(blocking=False):
            return  # too many connections: closed at once, the sender retries
        try:
            self.request.settimeout(IDLE_TIMEOUT)
            reader = FrameReader(self.server.wb.settings.upload_max_bytes)
            for payload in _payloads(self.request.recv, reader):
                if payload is None:
                    ack = build_ack(None, "AE", "The message is larger than the upload limit.", "102")
                else:
                    with self.server.working() as open_:
                        if not open_:
                            return  # stopping: unanswered, so the sender sends it again
                        ack, _ = acknowledge(self.server.wb, payload)
                self.request.sendall(frame(ack))
        except OSError:  # socket.timeout is one
            return  # the peer went away or fell silent; nothing acknowledged is lost
        finally:
            self.server.slots.release()


def _payloads(recv: Callable[[int], bytes], reader: FrameReader) -> Iterator[bytes | None]:
    while chunk := recv(65536):
        yield from reader.feed(chunk)


class _Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, address, wb: Workbench):
        self.wb = wb
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.received = 0
        self._busy = 0
        self._closing = False
        self._state = threading.Condition()
        super().__init__(address, _Handler)

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
    """An MLLP server on ``host:port`` (port 0: any free port) storing into ``wb``."""

    def __init__(self, wb: Workbench, host: str = "127.0.0.1", port: int = 2575):
        try:
            self._server = _Server((host, port), wb)
        except OSError as exc:
            raise BadInput(f"Cannot listen on {host}:{port} ({exc.strerror or exc}); is another listener "
                           "running there? Choose another --port or WORKBENCH_MLLP_PORT.",
                           code="port_unavailable") from None
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    @property
    def received(self) -> int:
        return self._server.received

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
