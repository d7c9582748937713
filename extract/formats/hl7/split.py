"""Cutting a large, clean HL7 v2 batch into parts of consecutive messages (issue 13).

A part is read as a document of its own, so a 2,000-message batch becomes ten jobs
that each fit the job ceilings and can be retried, gated and deleted alone. Only a file
the reader would take without a single warning is cut: anything it had to repair,
guess or count differently stays one document, read as a whole, so no repair is ever
made twice or differently. The decision runs the reader's own steps
(extract/formats/hl7/normalize.py ``scan_hl7``, which ``normalize_hl7`` starts with), not a second splitter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.errors import ExtractionError
from extract.formats.hl7.normalize import scan_hl7
from extract.formats.hl7.parse import ENVELOPE, read_encoding
from domain.limits import DEFAULT_LIMITS, Limits


@dataclass(frozen=True, slots=True)
class BatchPart:
    first: int  # 1-based number of its first message in the whole file
    last: int  # 1-based number of its last message
    data: bytes  # those messages' segments as received, joined by "\r"

    @property
    def messages(self) -> int:
        return self.last - self.first + 1


def split_batch(data: bytes, per_part: int, limits: Limits = DEFAULT_LIMITS) -> list[BatchPart] | None:
    """The parts of a clean batch holding more than ``per_part`` messages, each of up to
    ``per_part`` consecutive messages; None when the file is to be read whole (at or
    under the threshold, or anything about it is not clean: see the module doc). A file
    over the HL7 limits on one file (bytes, messages) is read whole too, so that its job
    fails with hl7_too_large as it would unsplit: parts must not slip past a limit."""
    if per_part < 1:
        return None
    try:
        scan = scan_hl7(data, limits)  # the reader's own steps, and its byte limit
    except ExtractionError:
        return None  # read whole: its job fails with the reader's code and sentence
    split, text = scan.split, scan.text
    if scan.warnings or not per_part < len(split.messages) <= limits.max_hl7_messages \
            or not _plain_envelope(scan.segments, split):
        return None
    if any(read_encoding(m.segments[0].text)[1] for m in split.messages):
        return None
    lines = re.split(r"\r\n|\n\r|\r|\n", text)
    verbatim: list[str] = []
    for message in split.messages:
        for seg in message.segments:
            line = lines[seg.line - 1]
            if line.rstrip() != seg.text:  # not one whole physical line: not a verbatim cut
                return None
        verbatim.append("\r".join(lines[seg.line - 1] for seg in message.segments))
    return [BatchPart(start + 1, min(start + per_part, len(verbatim)),
                      ("\r".join(verbatim[start:start + per_part]) + "\r").encode("utf-8"))
            for start in range(0, len(verbatim), per_part)]


def _plain_envelope(segments, split) -> bool:
    """At most one file and one batch header and trailer, headers before the first
    message and trailers after the last: a part then loses nothing by leaving them out."""
    names = [s.text[:3] for s in split.envelope]
    if any(names.count(n) > 1 for n in ENVELOPE):
        return False
    position = {id(s): i for i, s in enumerate(segments)}
    first = position[id(split.messages[0].segments[0])]
    last = position[id(split.messages[-1].segments[-1])]
    for seg in split.envelope:
        at = position[id(seg)]
        if seg.text[:3] in ("FHS", "BHS") and at > first or seg.text[:3] in ("BTS", "FTS") and at < last:
            return False
    return True
