"""One HL7 v2 message as the fact readers (``extract.hl7.identity``, ``results``,
``clinical``) walk it: its segments split into fields, what they collect into (the
shared ``SectionFacts``, citing a segment field's section), and the review reasons and
confidence factors a fact gathers on its way."""

from __future__ import annotations

from dataclasses import dataclass, field

from domain.content import Section
from domain.models import Citation, DocType
from extract.values.review_reasons import Review
from extract.values import numbers as V
from extract.formats.hl7.parse import Encoding
from extract.section_facts import SectionFacts

SOURCE_TYPE = DocType.HL7V2_MESSAGE.value

_RESULT_TYPES = {"ORU", "OUL", "ORF", "OUR"}


@dataclass(slots=True)
class Seg:
    """One stored segment, split into fields (``fields[0]`` is its name)."""

    name: str
    occ: int
    fields: list[str]
    loc: str  # "message 2 OBX[3]" or "OBX[3]"
    reassembled: bool
    split_inline: bool
    unknown: bool

    def raw(self, n: int) -> str:
        return self.fields[n] if n < len(self.fields) else ""


@dataclass(slots=True)
class Msg:
    """One message: its meta from ``normalize_hl7``, delimiters, segments, and its identity
    scope ("message 2" in a file of several messages, else None)."""

    meta: dict
    enc: Encoding
    segs: list[Seg]
    scope: str | None

    @property
    def message_class(self) -> str:
        t = self.meta.get("type", "").upper()
        if t in _RESULT_TYPES:
            return "result"
        if t == "ADT":
            return "adt"
        if t in ("ORM", "OML", "OMG", "OMB", "OMD"):
            return "order"
        if t == "MDM":
            return "document"
        if t in ("VXU", "VXR"):
            return "vaccination"
        return "other"


@dataclass(slots=True)
class MessageFacts(SectionFacts):
    """The shared collector, citing by segment field: ``sections`` by locator
    (``OBX[3]-5``), and the identifiers kept so far."""

    sections: dict[str, Section] = field(default_factory=dict)
    # (kind, value, scope) of every identifier kept: a scan of ``identifiers`` per PID
    # made a batch of n messages cost n^2.
    identifier_keys: set = field(default_factory=set)

    def cite_field(self, seg: Seg, n: int, candidates: list[str], path: str) -> Citation | None:
        """A citation to field ``n`` of ``seg`` quoting the first candidate found in it."""
        section = self.sections.get(f"{seg.loc}-{n}")
        if section is None:
            return None
        quote = next((c for c in candidates if c and c.strip() and V.contains_normalized(section.text, c)), "")
        return self.cite(section, quote, path)


def message_review(msg: Msg) -> Review:
    """Confidence factors that apply to every fact of a message."""
    r = Review()
    if not msg.meta.get("structure_check", {}).get("ok", True):
        r.penalise(0.97)
    return r


def seg_review(seg: Seg, base: Review) -> Review:
    """The message's review plus what repairing this segment cost."""
    r = Review(list(base.reasons), list(base.factors))
    if seg.reassembled:
        r.add("the segment was re-assembled from wrapped lines; check the source text", 0.8)
    elif seg.split_inline:
        r.penalise(0.9)
    return r
