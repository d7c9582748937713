"""What the MLLP listener reads of a received HL7 message to answer it (its header; the
MRN of each PID, to route it to a chart) and the original-mode ACK it answers with.

Pure functions over the message text: storing and listening are ``core.services.interfaces.mllp``.
"""

from __future__ import annotations

import itertools
import re
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Iterator

from domain.errors import ExtractionError
# The extractor's own PID reader: route by the MRN the identity gate checks.
from extract.hl7.identity import pid_mrn as identity_mrn
from extract.formats.hl7.parse import Encoding, component, find_header, read_encoding, segment_fields

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

    def comp(n: int, index: int = 0) -> str:  # unescaped, as build_ack escapes what it echoes
        return component(fields[n], enc, index + 1) if n < len(fields) else ""

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


def pid_fields(text: str, enc: Encoding) -> Iterator[list[str]]:
    """The fields of each PID segment, in order."""
    for seg in _segments(text):
        if seg.startswith("PID" + enc.field):
            yield segment_fields(seg, enc)


def pid_mrn(fields: list[str], enc: Encoding) -> str:
    picked = identity_mrn(lambda n: fields[n] if n < len(fields) else "", enc)
    return picked[0] if picked else ""


def pid_mrns(text: str, enc: Encoding) -> list[str]:
    """The MRN of each PID segment, chosen as the extractor chooses it (PID-3, else PID-2,
    PID-4); '' for a PID without one."""
    return [pid_mrn(fields, enc) for fields in pid_fields(text, enc)]


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
              "103": "Table value not found", "202": "Unsupported processing id", "207": "Application internal error"}


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
