"""HL7 v2 text -> segments -> messages, as real senders damage it: CR, LF or CRLF segment
separators, the two characters ``\\r`` typed where a carriage return was meant, lines
wrapped mid-field by a PDF or e-mail client, stray page footers, segments pasted onto one
line separated by spaces, corrupted segment ids, batch envelopes (FHS/BHS/BTS/FTS) and
messages simply concatenated; and whether a file was cut off before its end. What had to
be done is said through ``ExtractionWarning``s; no value is guessed.

Pure functions; no I/O. Delimiters, escapes and fields are ``extract.formats.hl7.parse``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from domain.models import ExtractionWarning
from extract.formats.hl7.parse import ENVELOPE, Encoding, is_known_segment, segment_fields


@dataclass(slots=True)
class RawSegment:
    text: str
    line: int  # first physical line, 1-based
    reassembled: bool = False  # continuation lines were joined onto it
    split_inline: bool = False  # cut out of a line that held several segments
    unknown: bool = False  # id is not a known HL7 segment

    @property
    def name(self) -> str:
        return self.text[:3] if not self.unknown else re.split(r"[^A-Z0-9]", self.text, 1)[0]


@dataclass(slots=True)
class Recovery:
    """Segments found in a file plus what had to be done to find them."""

    segments: list[RawSegment] = field(default_factory=list)
    warnings: list[ExtractionWarning] = field(default_factory=list)


def _starts_segment(line: str, fs: str) -> bool:
    return len(line) > 3 and line[3] == fs and is_known_segment(line[:3])


def recover_segments(text: str, enc: Encoding) -> Recovery:
    """Cut text into segments, repairing separators and wrapped lines.

    1. Physical lines: CR, LF, CRLF; the two characters ``\\r``/``\\n`` typed where a
       separator was meant (before a segment id, or at the end of a line) count too.
    2. A line that does not start with a known segment id continues the previous
       segment (it was wrapped). A line without any field separator that follows a
       complete segment is stray text (a page footer) and is dropped. An unknown
       upper-case id (``WHOOPS|``, a truncated ``ID|``) stays a segment of its own
       unless the previous line stopped inside a component.
    3. Several segments on one line separated by whitespace are split before each known
       segment id followed by the field separator.
    """
    fs = enc.field
    rec = Recovery()
    delims = tuple(c for c in (fs, enc.component, enc.repetition, enc.subcomponent) if c)

    literal = 0
    lines: list[tuple[int, str]] = []
    for no, physical in enumerate(re.split(r"\r\n|\n\r|\r|\n", text), start=1):
        pieces = re.split(r"\\[rn](?=[A-Z][A-Z0-9]{2}" + re.escape(fs) + ")", physical)
        literal += len(pieces) - 1
        for piece in pieces:
            trimmed = re.sub(r"(?:\\[rn])+\s*$", "", piece)
            literal += trimmed != piece
            lines.append((no, trimmed.rstrip()))
    if literal:
        rec.warnings.append(ExtractionWarning(
            "hl7_literal_separator",
            f"The text holds the two characters '\\r' or '\\n' where a segment separator was meant "
            f"({literal} place(s)); treated as separators.",
        ))

    wrapped = stray = unknown = 0
    for no, line in lines:
        if not line.strip():
            continue
        if not rec.segments or _starts_segment(line, fs):
            unknown_id = not _starts_segment(line, fs)
            rec.segments.append(RawSegment(line, no, unknown=unknown_id and bool(re.match(r"[A-Z][A-Z0-9]{1,5}" + re.escape(fs), line))))
            continue
        prev = rec.segments[-1]
        if fs not in line and prev.text.endswith(fs):
            stray += 1
            rec.warnings.append(ExtractionWarning(
                "hl7_stray_line", f"Line {no} is not part of any segment and was ignored: {line[:60]!r}"))
            continue
        if re.match(r"[A-Z][A-Z0-9]{1,5}" + re.escape(fs), line) and not prev.text.endswith(
            tuple(c for c in (enc.component, enc.subcomponent) if c)
        ):
            unknown += 1
            rec.segments.append(RawSegment(line, no, unknown=True))
            seg_id = line.split(fs, 1)[0]
            rec.warnings.append(ExtractionWarning(
                "hl7_unknown_segment",
                f"Line {no} starts with {seg_id!r}, which is not an HL7 segment id "
                f"(corrupted or truncated?); its content was not used.",
            ))
            continue
        joiner = "" if prev.text.endswith(delims + ("-",)) or line.startswith(delims) else " "
        prev.text = prev.text + joiner + line.strip()
        prev.reassembled = True
        wrapped += 1
    if wrapped:
        rec.warnings.append(ExtractionWarning(
            "hl7_wrapped_lines_joined",
            f"{wrapped} line(s) did not start a segment and were joined to the segment before "
            f"them (the message was wrapped by another program).",
        ))

    splitter = inline_splitter(enc)
    out: list[RawSegment] = []
    inline = 0
    for seg in rec.segments:
        parts = splitter.split(seg.text) if not seg.unknown else [seg.text]
        if len(parts) == 1:
            out.append(seg)
            continue
        inline += len(parts) - 1
        for k, part in enumerate(parts):
            out.append(RawSegment(part.rstrip(), seg.line, seg.reassembled, split_inline=True, unknown=seg.unknown and k == 0))
    if inline:
        rec.warnings.append(ExtractionWarning(
            "hl7_segments_split_inline",
            f"{inline} segment(s) were found on the same line as another, separated by spaces; "
            f"they were split apart.",
        ))
    rec.segments = out
    return rec


# Segments common enough to be split out of a line they were pasted onto. Rare ids (PCR,
# ROL...) and Z-segments are left out on purpose: "BLOOD CULTURE PCR|2.1" is a test name
# followed by a field, not a PCR segment.
_INLINE_IDS = (
    "EVN", "PID", "PD1", "NK1", "PV1", "PV2", "GT1", "DG1", "DRG", "PR1", "IN1", "IN2", "IN3", "AL1",
    "OBR", "OBX", "ORC", "NTE", "SPM", "SFT", "TQ1", "TXA", "RXA", "RXR", "RXE", "RXO", "MRG", "ACC",
    "UB1", "UB2", "PRB", "FT1", "MSA", "ERR", "SCH", "AIS", "AIG", "AIL", "AIP", "BTS", "FTS",
)


def inline_splitter(enc: Encoding) -> re.Pattern:
    """Whitespace followed by a common segment id, the field separator and a short first
    field (a set id or event code), or by a header with its encoding characters."""
    fs = re.escape(enc.field)
    return re.compile(
        r"\s+(?=(?:(?:" + "|".join(_INLINE_IDS) + ")" + fs + r"[A-Za-z0-9.]{0,8}(?:" + fs + r"|$)"
        r"|(?:MSH|FHS|BHS)" + fs + r"[^\w\s]{3,5}" + fs + "))"
    )


@dataclass(slots=True)
class RawMessage:
    segments: list[RawSegment]
    batch: int | None = None  # 1-based BHS batch it sits in, if any


@dataclass(slots=True)
class Split:
    messages: list[RawMessage] = field(default_factory=list)
    envelope: list[RawSegment] = field(default_factory=list)
    warnings: list[ExtractionWarning] = field(default_factory=list)


def split_messages(segments: list[RawSegment], enc: Encoding) -> Split:
    """Group segments into messages at each MSH; check batch envelope counts."""
    out = Split()
    current: RawMessage | None = None
    batch_no = 0
    batch_msgs: dict[int, int] = {}
    junk = 0
    for seg in segments:
        name = seg.text[:3]
        if name in ENVELOPE and not seg.unknown:
            out.envelope.append(seg)
            current = None
            if name == "BHS":
                batch_no += 1
                batch_msgs[batch_no] = 0
            elif name == "BTS":
                declared = seg.text.split(enc.field)[1:2]
                count = batch_msgs.get(batch_no, len(out.messages))
                if declared and declared[0].strip().isdigit() and int(declared[0]) != count:
                    out.warnings.append(ExtractionWarning(
                        "hl7_batch_count_mismatch",
                        f"BTS says batch {batch_no or 1} holds {declared[0].strip()} message(s) but "
                        f"{count} were found.",
                    ))
            elif name == "FTS":
                declared = seg.text.split(enc.field)[1:2]
                if declared and declared[0].strip().isdigit() and batch_no and int(declared[0]) != batch_no:
                    out.warnings.append(ExtractionWarning(
                        "hl7_batch_count_mismatch",
                        f"FTS says the file holds {declared[0].strip()} batch(es) but {batch_no} were found.",
                    ))
            continue
        if name == "MSH" and not seg.unknown:
            current = RawMessage([seg], batch_no or None)
            out.messages.append(current)
            if batch_no:
                batch_msgs[batch_no] += 1
            continue
        if current is None:
            junk += 1
            continue
        current.segments.append(seg)
    if junk:
        out.warnings.append(ExtractionWarning(
            "hl7_segments_outside_message",
            f"{junk} segment(s) were outside any message (before an MSH) and were ignored.",
        ))
    return out


# ---------------------------------------------------------------------------- truncation

# OBX-11 (observation result status) is required in every v2 version: an OBX that ends
# before it, at the very end of a file, was most likely cut off in transfer.
_OBX_STATUS_FIELD = 11


def cut_short(raw: bytes, text: str, segments: list[RawSegment], enc: Encoding) -> str | None:
    """Why a file looks cut off before its end (a transfer or copy that stopped early),
    or None. Only the end of the file is judged, and only by signs a complete file never
    shows: an MLLP start byte without its end byte, a batch header without its trailer,
    or a last line, not ended by a segment separator, that is a segment cut within its
    name, a segment shorter than every earlier one of its kind, or an OBX that stops
    before its result status. A cut at a segment boundary, or inside the last field of
    a segment as long as its siblings, leaves no such sign and is not detected."""
    if raw.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"\x0b") and b"\x1c" not in raw:
        return "the MLLP frame has its start byte but not its end byte"
    names = [s.text[:3] for s in segments if not s.unknown]
    for header, trailer in (("BHS", "BTS"), ("FHS", "FTS")):
        if names.count(header) > names.count(trailer):
            return f"a batch header ({header}) has no closing {trailer} segment"
    if not segments or text.rstrip(" \t").endswith(("\r", "\n")):
        return None
    last = segments[-1]
    last_line = re.split(r"\r\n|\n\r|\r|\n", text.rstrip(" \t"))[-1].strip()
    if re.fullmatch(r"[A-Z][A-Z0-9]{0,3}", last_line):
        return "its last line is a segment cut off within its name"
    if last.unknown or not _starts_segment(last_line, enc.field) or not last.text.endswith(last_line):
        return None  # the continuation of a wrapped line, or stray text: no whole segment to judge
    name, count = last.name, len(segment_fields(last.text, enc)) - 1
    earlier = [len(segment_fields(s.text, enc)) - 1 for s in segments[:-1] if s.name == name and not s.unknown]
    if earlier and count < min(earlier):
        return f"its last segment ({name}) stops after field {count}, earlier {name} segments go on"
    if name == "OBX" and not earlier and count < _OBX_STATUS_FIELD:
        return f"its last segment (OBX) stops after field {count}, before the result status (OBX-11)"
    return None
