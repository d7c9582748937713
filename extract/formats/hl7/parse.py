"""A tolerant HL7 v2 (ER7) reader, its lowest layer: bytes -> text, delimiters, escapes,
fields. Cutting the text into segments and messages is ``extract.formats.hl7.segments``.

Real senders break the standard in predictable ways; here: a UTF-8 BOM or MLLP framing
bytes, UTF-16, Latin-1 or invalid bytes, duplicated or extra encoding characters in
MSH-2. This module recovers what can be recovered and says what it did through
``ExtractionWarning``s; it never guesses values. hl7apy is used afterwards (see
``extract.formats.hl7.normalize``) to check message structure, not to split text, because its strictness
would drop real data.

Pure functions; no I/O, no project services.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import lru_cache

from domain.errors import ExtractionError
from domain.models import ExtractionWarning

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


def read_encoding(header: str) -> tuple[Encoding, list[ExtractionWarning]]:
    """Delimiters from an MSH/FHS/BHS segment's first two fields.

    Duplicated characters in MSH-2 (``^~\\\\&``) are de-duplicated; a fifth character is
    the v2.7 truncation character; missing ones fall back to the standard ``^~\\&``.
    """
    warnings: list[ExtractionWarning] = []
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
        warnings.append(ExtractionWarning(
            "hl7_encoding_chars_repaired",
            f"MSH-2 declares the encoding characters {declared!r}, which repeat or clash; "
            f"read them as {''.join(chars)!r}.",
        ))
    if len(chars) < 4:
        for ch in _DEFAULT_ENC[len(chars):]:
            if ch not in chars and ch != fs:
                chars.append(ch)
        warnings.append(ExtractionWarning(
            "hl7_encoding_chars_missing",
            f"MSH-2 declares only {declared!r}; the standard characters were assumed for the rest.",
        ))
    while len(chars) < 4:
        chars.append("")
    enc = Encoding(fs, chars[0], chars[1], chars[2], chars[3], chars[4] if len(chars) > 4 else "")
    return enc, warnings


# ---------------------------------------------------------------------------- decoding

_VALID_MULTIBYTE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


def decode_bytes(data: bytes) -> tuple[str, list[ExtractionWarning]]:
    """Text from bytes: UTF-8 (BOM stripped); UTF-16 when it carries a BOM; invalid
    UTF-8 bytes replaced when the file is otherwise UTF-8, Latin-1 when it has no UTF-8
    sequences at all. MLLP framing bytes and NULs are removed."""
    warnings: list[ExtractionWarning] = []
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", errors="replace")
        warnings.append(ExtractionWarning("hl7_decoded_utf16", "The file is UTF-16 encoded; decoded as such."))
    else:
        try:
            text = data.decode("utf-8")
            if "\ufffd" in text:
                warnings.append(ExtractionWarning(
                    "hl7_replacement_chars",
                    "The text already contains U+FFFD replacement characters: an earlier system "
                    "lost some characters (e.g. an accented letter or a micro sign).",
                ))
        except UnicodeDecodeError:
            if _VALID_MULTIBYTE.search(data):
                text = data.decode("utf-8", errors="replace")
                warnings.append(ExtractionWarning(
                    "hl7_invalid_utf8", "Some bytes are not valid UTF-8 and were replaced with U+FFFD."))
            else:
                text = data.decode("latin-1")
                warnings.append(ExtractionWarning(
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


def find_header(text: str) -> re.Match | None:
    """The first MSH (or batch header) at the start of a line or after whitespace."""
    return re.search(r"(?:^|(?<=[\s\x0b]))(MSH|FHS|BHS)(?=[^\w\s])", text)


def looks_like_segments(text: str) -> bool:
    """Several lines that start like HL7 segments (``PID|``), even without an MSH."""
    hits = re.findall(r"(?m)^[A-Z][A-Z0-9]{2}\|", text)
    return len(hits) >= 1 and any(is_known_segment(h[:3]) for h in hits)
