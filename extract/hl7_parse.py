"""A tolerant HL7 v2 (ER7) reader: bytes -> messages -> segments -> fields.

Real senders break the standard in predictable ways: CR, LF or CRLF segment separators,
a UTF-8 BOM or MLLP framing bytes, trailing spaces, batch envelopes (FHS/BHS/BTS/FTS),
messages simply concatenated, segments pasted onto one line separated by spaces, lines
wrapped mid-field by a PDF or e-mail client, the two characters ``\\r`` typed where a
carriage return was meant, duplicated or extra encoding characters in MSH-2, invalid
bytes. This module recovers what can be recovered and says what it did through
``ContentWarning``s; it never guesses values. hl7apy is used afterwards (see
``extract.hl7``) to check message structure, not to split text, because its strictness
would drop real data.

Pure functions; no I/O, no project services.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from functools import lru_cache

from core.content import ContentWarning
from core.errors import ExtractionError

ENVELOPE = ("FHS", "BHS", "BTS", "FTS")
_DEFAULT_ENC = "^~\\&"
_HL7APY_VERSIONS = ("2_1", "2_2", "2_3", "2_3_1", "2_4", "2_5", "2_5_1", "2_6", "2_7", "2_8", "2_8_1", "2_8_2")


@lru_cache(maxsize=1)
def known_segments() -> frozenset[str]:
    """Every segment id hl7apy knows in any version (about 190), plus batch envelopes."""
    names: set[str] = set(ENVELOPE)
    for v in _HL7APY_VERSIONS:
        try:
            names |= set(importlib.import_module(f"hl7apy.v{v}.segments").SEGMENTS)
        except ImportError:  # a version missing from this hl7apy build
            continue
    names.discard("ANYHL7SEGMENT")
    return frozenset(names)


def is_known_segment(name: str) -> bool:
    return name in known_segments() or bool(re.fullmatch(r"Z[A-Z0-9]{2}", name))


# ---------------------------------------------------------------------------- encoding


@dataclass(frozen=True, slots=True)
class Encoding:
    """The delimiters a message declares in MSH-1/MSH-2."""

    field: str = "|"
    component: str = "^"
    repetition: str = "~"
    escape: str = "\\"
    subcomponent: str = "&"
    truncation: str = ""

    @property
    def msh2(self) -> str:
        return self.component + self.repetition + self.escape + self.subcomponent + self.truncation

    def as_meta(self) -> dict:
        return {
            "field": self.field, "component": self.component, "repetition": self.repetition,
            "escape": self.escape, "subcomponent": self.subcomponent, "truncation": self.truncation,
        }

    @classmethod
    def from_meta(cls, meta: dict) -> "Encoding":
        return cls(**{k: meta.get(k, getattr(cls, k)) for k in cls.__dataclass_fields__})


def read_encoding(header: str) -> tuple[Encoding, list[ContentWarning]]:
    """Delimiters from an MSH/FHS/BHS segment's first two fields.

    Duplicated characters in MSH-2 (``^~\\\\&``) are de-duplicated; a fifth character is
    the v2.7 truncation character; missing ones fall back to the standard ``^~\\&``.
    """
    warnings: list[ContentWarning] = []
    fs = header[3:4]
    if not fs or fs.isalnum() or fs.isspace():
        raise ExtractionError(
            "The MSH segment has no usable field separator after 'MSH', so the message cannot be read.",
            code="hl7_parse_error",
        )
    declared = header[4:].split(fs, 1)[0]
    chars: list[str] = []
    for ch in declared:
        if ch in chars or ch == fs or ch.isalnum() or ch.isspace():
            continue
        chars.append(ch)
    if len(chars) != len(declared):
        warnings.append(ContentWarning(
            "hl7_encoding_chars_repaired",
            f"MSH-2 declares the encoding characters {declared!r}, which repeat or clash; "
            f"read them as {''.join(chars)!r}.",
        ))
    if len(chars) < 4:
        for ch in _DEFAULT_ENC[len(chars):]:
            if ch not in chars and ch != fs:
                chars.append(ch)
        warnings.append(ContentWarning(
            "hl7_encoding_chars_missing",
            f"MSH-2 declares only {declared!r}; the standard characters were assumed for the rest.",
        ))
    while len(chars) < 4:
        chars.append("")
    enc = Encoding(fs, chars[0], chars[1], chars[2], chars[3], chars[4] if len(chars) > 4 else "")
    return enc, warnings


# ---------------------------------------------------------------------------- decoding

_VALID_MULTIBYTE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


def decode_bytes(data: bytes) -> tuple[str, list[ContentWarning]]:
    """Text from bytes: UTF-8 (BOM stripped); UTF-16 when it carries a BOM; invalid
    UTF-8 bytes replaced when the file is otherwise UTF-8, Latin-1 when it has no UTF-8
    sequences at all. MLLP framing bytes and NULs are removed."""
    warnings: list[ContentWarning] = []
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", errors="replace")
        warnings.append(ContentWarning("hl7_decoded_utf16", "The file is UTF-16 encoded; decoded as such."))
    else:
        try:
            text = data.decode("utf-8")
            if "\ufffd" in text:
                warnings.append(ContentWarning(
                    "hl7_replacement_chars",
                    "The text already contains U+FFFD replacement characters: an earlier system "
                    "lost some characters (e.g. an accented letter or a micro sign).",
                ))
        except UnicodeDecodeError:
            if _VALID_MULTIBYTE.search(data):
                text = data.decode("utf-8", errors="replace")
                warnings.append(ContentWarning(
                    "hl7_invalid_utf8", "Some bytes are not valid UTF-8 and were replaced with U+FFFD."))
            else:
                text = data.decode("latin-1")
                warnings.append(ContentWarning(
                    "hl7_decoded_latin1", "The file is not UTF-8; it was decoded as Latin-1 (ISO 8859-1)."))
    text = text.lstrip("\ufeff").replace("\x0b", "").replace("\x1c", "").replace("\x00", "")
    return text, warnings


def looks_binary(data: bytes) -> bool:
    sample = data[:4096]
    if not sample:
        return False
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 11, 13, 28))
    return controls / len(sample) > 0.02


# ---------------------------------------------------------------------------- escapes


def _escape_value(seq: str, enc: Encoding) -> str | None:
    simple = {"F": enc.field, "S": enc.component, "T": enc.subcomponent, "R": enc.repetition, "E": enc.escape}
    if seq in simple:
        return simple[seq]
    if seq == "P" and enc.truncation:
        return enc.truncation
    if seq == ".br":
        return "\n"
    m = re.fullmatch(r"\.sp\s*(\d*)", seq)
    if m:
        return "\n" * int(m[1] or 1)
    if re.fullmatch(r"\.(?:in|ti)\s*[+-]?\d*|\.(?:sk)\s*\d*|\.(?:ce|fi|nf)", seq):
        return ""
    if seq in ("H", "N"):
        return ""
    m = re.fullmatch(r"X((?:[0-9A-Fa-f]{2})+)", seq)
    if m:
        raw = bytes.fromhex(m[1])
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.decode("latin-1")
    if re.fullmatch(r"C[0-9A-Fa-f]{4}|M[0-9A-Fa-f]{6}|Z[^\s]*", seq):
        return ""
    return None


def unescape(text: str, enc: Encoding) -> str:
    """Resolve HL7 escape sequences (\\F\\ \\S\\ \\T\\ \\R\\ \\E\\ \\.br\\ \\Xhh\\ ...).

    An escape character that does not open a known sequence is kept as a literal, so
    free text such as a Windows path survives unchanged.
    """
    e = enc.escape
    if not e or e not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch != e:
            out.append(ch)
            i += 1
            continue
        j = text.find(e, i + 1)
        if j == -1:
            out.append(text[i:])
            break
        rep = _escape_value(text[i + 1 : j], enc)
        if rep is None:
            out.append(ch)
            i += 1
            continue
        out.append(rep)
        i = j + 1
    return "".join(out)


# ---------------------------------------------------------------------------- fields


def segment_fields(raw: str, enc: Encoding) -> list[str]:
    """Raw fields indexed by field number: ``fields[0]`` is the segment id and
    ``fields[n]`` is SEG-n. For MSH/FHS/BHS, MSH-1 is the field separator itself."""
    parts = raw.split(enc.field)
    if parts[0] in ("MSH", "FHS", "BHS"):
        return [parts[0], enc.field] + parts[1:]
    return parts


def repetitions(raw_field: str, enc: Encoding) -> list[str]:
    if not enc.repetition:
        return [raw_field]
    return raw_field.split(enc.repetition)


def components(raw_field: str, enc: Encoding, rep: int = 0) -> list[str]:
    """Unescaped components of one repetition (subcomponent separators kept)."""
    reps = repetitions(raw_field, enc)
    if rep >= len(reps):
        return []
    return [unescape(c, enc) for c in reps[rep].split(enc.component)]


def component(raw_field: str, enc: Encoding, index: int, rep: int = 0) -> str:
    """Component ``index`` (1-based) of one repetition, unescaped and stripped; '' if absent."""
    comps = components(raw_field, enc, rep)
    return comps[index - 1].strip() if 0 < index <= len(comps) else ""


def first_subcomponent(text: str, enc: Encoding) -> str:
    return text.split(enc.subcomponent, 1)[0].strip() if enc.subcomponent else text.strip()


def is_null(raw_field: str) -> bool:
    """Empty, blank, or HL7's explicit null ``""``."""
    return raw_field.strip() in ("", '""')


# ---------------------------------------------------------------------------- segments


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
    warnings: list[ContentWarning] = field(default_factory=list)


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
        rec.warnings.append(ContentWarning(
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
            rec.warnings.append(ContentWarning(
                "hl7_stray_line", f"Line {no} is not part of any segment and was ignored: {line[:60]!r}"))
            continue
        if re.match(r"[A-Z][A-Z0-9]{1,5}" + re.escape(fs), line) and not prev.text.endswith(
            tuple(c for c in (enc.component, enc.subcomponent) if c)
        ):
            unknown += 1
            rec.segments.append(RawSegment(line, no, unknown=True))
            seg_id = line.split(fs, 1)[0]
            rec.warnings.append(ContentWarning(
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
        rec.warnings.append(ContentWarning(
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
        rec.warnings.append(ContentWarning(
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
    warnings: list[ContentWarning] = field(default_factory=list)


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
                    out.warnings.append(ContentWarning(
                        "hl7_batch_count_mismatch",
                        f"BTS says batch {batch_no or 1} holds {declared[0].strip()} message(s) but "
                        f"{count} were found.",
                    ))
            elif name == "FTS":
                declared = seg.text.split(enc.field)[1:2]
                if declared and declared[0].strip().isdigit() and batch_no and int(declared[0]) != batch_no:
                    out.warnings.append(ContentWarning(
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
        out.warnings.append(ContentWarning(
            "hl7_segments_outside_message",
            f"{junk} segment(s) were outside any message (before an MSH) and were ignored.",
        ))
    return out


def find_header(text: str) -> re.Match | None:
    """The first MSH (or batch header) at the start of a line or after whitespace."""
    return re.search(r"(?:^|(?<=[\s\x0b]))(MSH|FHS|BHS)(?=[^\w\s])", text)


def looks_like_segments(text: str) -> bool:
    """Several lines that start like HL7 segments (``PID|``), even without an MSH."""
    hits = re.findall(r"(?m)^[A-Z][A-Z0-9]{2}\|", text)
    return len(hits) >= 1 and any(is_known_segment(h[:3]) for h in hits)


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
