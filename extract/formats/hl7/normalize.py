"""HL7 v2 messages: the normalizer (bytes -> field sections); the extractor is ``extract.hl7.facts``.

Locators (what citations point at, one ``Section`` each):

* ``OBX[3]`` - the third OBX segment of the message (1-based occurrence across the
  message, not OBX-1), text = the segment as received;
* ``OBX[3]-5`` - field 5 of that segment, text = the field as printed after unescaping
  (delimiters inside the field are kept, e.g. ``EVERYWOMAN^EVE^E^^^^L``);
* files holding several messages (batches, concatenations) prefix both with
  ``message 2 `` and every fact/identifier from that message carries ``scope="message 2"``.

Only fields with visible text get a section, so every citation quote is a substring of
an existing section's text. The raw field sits in ``Section.meta["raw"]`` so the
extractor (``extract.hl7.facts``) can split components without re-reading the file.
Decoding and fields live in ``extract.formats.hl7.parse``, splitting and repair in
``extract.formats.hl7.segments``; hl7apy checks each message's structure afterwards and a
failure there is reported as a warning, never fatal. A file that looks cut off before
its end carries ``file_repaired`` (its facts wait for review).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from domain.content import NormalizedContent, Section
from domain.errors import ExtractionError
from domain.models import ExtractionWarning
from domain.policy.facts.certainty import FILE_REPAIRED
from domain.limits import DEFAULT_LIMITS, HL7_TOO_LARGE, Limits, exceeded
from extract.formats.hl7.parse import (
    Encoding,
    component,
    decode_bytes,
    find_header,
    looks_binary,
    looks_like_segments,
    read_encoding,
    segment_fields,
    unescape,
)
from extract.formats.hl7.segments import RawMessage, RawSegment, Split, cut_short, recover_segments, split_messages

ENGINE = "hl7 tolerant splitter + hl7apy 1.3.5 structure check"

# ============================================================================ normalizer


@dataclass(slots=True)
class Scan:
    """An HL7 file cut into segments and messages, before anything is read from them."""

    text: str  # decoded, from the first header on
    enc: Encoding  # the file's delimiters (MSH-1/2 of its first header)
    segments: list[RawSegment]  # every segment, envelope included, after repair
    split: Split
    warnings: list[ExtractionWarning]  # all the repairs and guesses made on the way
    enc_warnings: list[ExtractionWarning]  # those about the first header's delimiters


def scan_hl7(data: bytes, limits: Limits = DEFAULT_LIMITS) -> Scan:
    """Decode, find the first header, read the delimiters, recover the segments and group
    them into messages: the reader's own steps, used by ``normalize_hl7`` and by the batch
    splitter (extract/formats/hl7/split.py), which cuts only a file these steps take without a
    warning. Raises ``ExtractionError`` as ``normalize_hl7`` documents."""
    if len(data) > limits.max_hl7_bytes:  # before any copy of the bytes is made
        raise exceeded(HL7_TOO_LARGE, f"The HL7 file is {len(data) / 2**20:,.1f} MB; at most "
                       f"{limits.max_hl7_bytes / 2**20:,.0f} MB are read in one file.", "max_hl7_bytes")
    if not data or not data.strip(b" \t\r\n\x00\x0b\x1c\xef\xbb\xbf"):
        raise ExtractionError("The HL7 file is empty.", code="empty_file")
    if looks_binary(data):
        raise ExtractionError(
            "The file is binary data, not an HL7 v2 text message.", code="not_hl7")
    text, warnings = decode_bytes(data)
    header = find_header(text)
    if header is None:
        if looks_like_segments(text):
            raise ExtractionError(
                "MSH segment missing: the file has HL7-style segments but no MSH header, so "
                "its delimiters, message type and version are unknown.",
                code="hl7_parse_error",
            )
        raise ExtractionError(
            "The file does not look like an HL7 v2 message: no MSH segment was found.",
            code="not_hl7",
        )
    if text[: header.start()].strip():
        warnings.append(ExtractionWarning(
            "hl7_leading_text", "Text before the first MSH/batch header was ignored."))
        text = text[header.start():]
    first_line = re.split(r"[\r\n]", text, maxsplit=1)[0]
    file_enc, enc_warnings = read_encoding(first_line)
    warnings += enc_warnings

    recovery = recover_segments(text, file_enc)
    warnings += recovery.warnings
    if cut := cut_short(data, text, recovery.segments, file_enc):
        warnings.append(ExtractionWarning(
            FILE_REPAIRED,
            f"The HL7 file looks cut off before its end ({cut}); what arrived was read, but a value "
            f"may be incomplete, so its findings wait for a person to check them.",
        ))
    split = split_messages(recovery.segments, file_enc)
    warnings += split.warnings
    if not split.messages:
        raise ExtractionError(
            "MSH segment missing: the file has a batch header but no message inside it.",
            code="hl7_parse_error",
        )
    return Scan(text, file_enc, recovery.segments, split, warnings, enc_warnings)


def normalize_hl7(data: bytes, limits: Limits = DEFAULT_LIMITS) -> NormalizedContent:
    """Read an HL7 v2 file (one message, a batch, or several concatenated) into sections.

    Raises ``ExtractionError`` with code ``empty_file``, ``not_hl7``, ``hl7_too_large``
    or ``hl7_parse_error`` (the message names the reason, e.g. "MSH segment missing").
    """
    scan = scan_hl7(data, limits)
    split, file_enc, warnings = scan.split, scan.enc, scan.warnings
    _check_sizes(split.messages, file_enc, limits)

    multi = len(split.messages) > 1
    sections: list[Section] = []
    messages_meta: list[dict] = []
    seen_enc_warnings = {w.message for w in scan.enc_warnings}
    for index, msg in enumerate(split.messages, start=1):
        enc, msg_warnings = read_encoding(msg.segments[0].text)
        for w in msg_warnings:
            if w.message not in seen_enc_warnings:
                warnings.append(ExtractionWarning(w.code, f"Message {index}: {w.message}"))
                seen_enc_warnings.add(w.message)
        prefix = f"message {index} " if multi else ""
        sections += _sections_for(msg, index, prefix, enc)
        meta = _message_meta(msg, index, prefix, enc)
        meta["structure_check"] = _check_structure(msg, enc, meta["version"])
        if not meta["structure_check"]["ok"]:
            warnings.append(ExtractionWarning(
                "hl7apy_parse_failed",
                f"Message {index}: hl7apy could not parse its structure "
                f"({meta['structure_check']['error']}); fields were read by the tolerant splitter.",
            ))
        messages_meta.append(meta)

    return NormalizedContent(
        source_kind="hl7",
        sections=sections,
        warnings=warnings,
        engine=ENGINE,
        meta={
            "encoding": file_enc.as_meta(),
            "messages": messages_meta,
            "batch": bool(split.envelope),
            "recovered": any(s.reassembled or s.split_inline for s in scan.segments),
        },
    )


def _check_sizes(messages: list[RawMessage], enc: Encoding, limits: Limits) -> None:
    """Messages per file, segments per message and repetitions per field, before any
    field is split out or handed to hl7apy (whose cost grows with each of them)."""
    if len(messages) > limits.max_hl7_messages:
        raise exceeded(HL7_TOO_LARGE, f"The HL7 file holds {len(messages):,} messages; at most "
                       f"{limits.max_hl7_messages:,} are read from one file.", "max_hl7_messages")
    for index, msg in enumerate(messages, start=1):
        if len(msg.segments) > limits.max_hl7_segments_per_message:
            raise exceeded(HL7_TOO_LARGE, f"Message {index} has {len(msg.segments):,} segments; at most "
                           f"{limits.max_hl7_segments_per_message:,} are read in one message.",
                           "max_hl7_segments_per_message")
        if not enc.repetition:
            continue
        for seg in msg.segments:
            if seg.text.count(enc.repetition) < limits.max_hl7_field_repetitions:
                continue  # cheap test first: no field of this segment can be over
            for n, raw in enumerate(segment_fields(seg.text, enc)):
                if raw.count(enc.repetition) + 1 > limits.max_hl7_field_repetitions:
                    raise exceeded(HL7_TOO_LARGE, f"Message {index}: field {seg.name}-{n} repeats "
                                   f"{raw.count(enc.repetition) + 1:,} times; at most "
                                   f"{limits.max_hl7_field_repetitions:,} repetitions are read.",
                                   "max_hl7_field_repetitions")


def _sections_for(msg: RawMessage, index: int, prefix: str, enc: Encoding) -> list[Section]:
    out: list[Section] = []
    counts: Counter[str] = Counter()
    for seg in msg.segments:
        name = seg.name
        counts[name] += 1
        occ = counts[name]
        base = {"message": index, "segment": name, "occurrence": occ}
        out.append(Section(
            f"{prefix}{name}[{occ}]", seg.text, "segment",
            {**base, "raw": seg.text, "reassembled": seg.reassembled,
             "split_inline": seg.split_inline, "unknown": seg.unknown, "line": seg.line},
        ))
        if seg.unknown:
            continue
        fields = segment_fields(seg.text, enc)
        for n in range(1, len(fields)):
            raw = fields[n]
            text = raw if (name in ("MSH", "FHS", "BHS") and n <= 2) else unescape(raw, enc)
            if not text.strip():
                continue
            out.append(Section(f"{prefix}{name}[{occ}]-{n}", text, "field", {**base, "field": n, "raw": raw}))
    return out


def _message_meta(msg: RawMessage, index: int, prefix: str, enc: Encoding) -> dict:
    msh = segment_fields(msg.segments[0].text, enc)

    def f(n: int) -> str:
        return msh[n] if n < len(msh) else ""

    return {
        "index": index,
        "prefix": prefix,
        "type": component(f(9), enc, 1),
        "trigger": component(f(9), enc, 2),
        "structure": component(f(9), enc, 3),
        "control_id": unescape(f(10), enc).strip(),
        "version": component(f(12), enc, 1),
        "sending_application": component(f(3), enc, 1),
        "encoding": enc.as_meta(),
        "batch": msg.batch,
        "segment_count": len(msg.segments),
    }


# Fields whose value, not only its shape, can steer hl7apy's parse: MSH-2 (the delimiters),
# MSH-9 (message type: the structure), MSH-12 (version), OBX-2 (the type of OBX-5).
_VALUE_FIELDS = {"MSH": (1, 8, 11), "OBX": (2,)}
_PASSED: dict[tuple, dict] = {}  # shape -> a passed check; lives in one job's child process
_PASSED_MAX = 4_096


def _shape(texts: list[str], enc: Encoding) -> tuple:
    """What hl7apy's tolerant parse of a message can depend on: the segment ids in order,
    the steering values above, and for every other field its layout (repetitions,
    components, subcomponents, which are empty, which hold an escape) but not its text.
    Messages of one batch from one sender share a few shapes; a shape that passed once
    passes again (tests/extract/formats/test_hl7_structure_cache.py checks this on mutated messages)."""
    out = []
    for text in texts:
        fields = text.split(enc.field)
        keep = _VALUE_FIELDS.get(fields[0], ())
        out.append(tuple(
            f if i in keep or i == 0 else tuple(
                tuple(tuple((bool(sub), enc.escape in sub) for sub in comp.split(enc.subcomponent))
                      for comp in rep.split(enc.component))
                for rep in f.split(enc.repetition))
            for i, f in enumerate(fields)))
    return tuple(out)


def _check_structure(msg: RawMessage, enc: Encoding, version: str) -> dict:
    """Ask hl7apy to parse the message (tolerant validation, groups found).

    The MSH-2 handed to hl7apy is the repaired one; a v2.7 truncation character in an
    older message is dropped because hl7apy rejects it. Failures are reported, not fatal.
    hl7apy costs ~20 ms a message, nearly all of a large batch's reading, so a pass is
    remembered by the message's shape (``_shape``); a failure is always parsed afresh,
    its message naming what this message holds.
    """
    texts = [s.text for s in msg.segments if not s.unknown]
    msh = texts[0].split(enc.field)
    keep_trunc = bool(enc.truncation) and version >= "2.7"
    if len(msh) > 1:
        msh[1] = enc.msh2 if keep_trunc else enc.msh2[:4]
    texts[0] = enc.field.join(msh)
    shape = _shape(texts, enc)
    if shape in _PASSED:
        return {**_PASSED[shape], "children": list(_PASSED[shape]["children"])}
    result = _parse_structure("\r".join(texts))
    if result["ok"]:
        if len(_PASSED) >= _PASSED_MAX:
            _PASSED.clear()
        _PASSED[shape] = result
        return {**result, "children": list(result["children"])}
    return result


def _parse_structure(text: str) -> dict:
    from hl7apy.consts import VALIDATION_LEVEL
    from hl7apy.exceptions import HL7apyException
    from hl7apy.parser import parse_message

    try:
        parsed = parse_message(text, validation_level=VALIDATION_LEVEL.TOLERANT, find_groups=True)
    except HL7apyException as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:200]}
    except (ValueError, IndexError, KeyError, TypeError, AttributeError) as exc:
        # hl7apy has its own bugs on unusual input; they say nothing about our data.
        return {"ok": False, "error": f"{type(exc).__name__} inside hl7apy: {exc}"[:200]}
    return {"ok": True, "structure": parsed.name, "children": [c.name for c in parsed.children]}
