"""The answer verifier (pure): no claim without a citation, no citation to evidence
this request did not retrieve.

- Patient findings cite verified patient evidence (chart rows or active document
  facts) retrieved for this request; a needs-review finding is never accepted as
  support for a finding.
- "Deserves attention" lines cite both a patient finding and a guideline chunk.
- Needs-review items cite needs-review evidence retrieved for this request.
- Guideline items cite chunk ids this request retrieved.
- Missing items claim an absence and need no citation (any they carry must check).
Everything else is removed and counted, never repaired.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from domain.models import AnswerItem, AnswerSections, Citation, EvidenceItem


def citation_key(c: Citation) -> tuple[str, str, str]:
    return (c.source_id, c.field_or_chunk_id, c.quote_or_value)


@dataclass
class RetrievedEvidence:
    verified: set[tuple[str, str, str]] = field(default_factory=set)
    review: set[tuple[str, str, str]] = field(default_factory=set)
    chunk_ids: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, items: list[EvidenceItem]) -> "RetrievedEvidence":
        out = cls()
        for item in items:
            for c in item.citations:
                if item.kind == "guideline":
                    out.chunk_ids.add(c.field_or_chunk_id)
                elif item.kind == "needs_review":
                    out.review.add(citation_key(c))
                else:
                    out.verified.add(citation_key(c))
        return out


@dataclass
class Removal:
    section: str
    text: str
    reason: str


def _is_guideline(c: Citation) -> bool:
    return c.source_type == "guideline"


def _check(section: str, item: AnswerItem, ev: RetrievedEvidence) -> str | None:
    """Return why the item must go, or None when it stands."""
    cites = item.citations
    for c in cites:
        if _is_guideline(c):
            if c.field_or_chunk_id not in ev.chunk_ids:
                return f"cites guideline chunk {c.field_or_chunk_id} that this request did not retrieve"
        elif section == "needs_review":
            if citation_key(c) not in ev.review:
                return "cites a source that was not retrieved as a review finding"
        elif citation_key(c) not in ev.verified:
            return "cites patient evidence that this request did not retrieve (or that is not verified)"
    if section == "missing":
        return None
    if not cites:
        return "no citation"
    patient = [c for c in cites if not _is_guideline(c)]
    guideline = [c for c in cites if _is_guideline(c)]
    if section in ("patient_findings", "needs_review") and not patient:
        return "a patient claim needs a patient citation"
    if section == "guideline_evidence" and not guideline:
        return "a guideline claim needs a guideline citation"
    if item.kind == "attention" and not (patient and guideline):
        return "an attention line needs both a patient finding and a guideline chunk"
    return None


def verify_answer(sections: AnswerSections, ev: RetrievedEvidence) -> tuple[AnswerSections, list[Removal]]:
    removed: list[Removal] = []
    kept: dict[str, list[AnswerItem]] = {}
    for name in ("patient_findings", "needs_review", "guideline_evidence", "missing"):
        kept[name] = []
        for item in getattr(sections, name):
            reason = _check(name, item, ev)
            if reason:
                removed.append(Removal(name, item.text, reason))
            else:
                kept[name].append(item)
    return AnswerSections(**kept), removed


_NUMBER = re.compile(r"(?<![\w.])[<>]?\d+(?:\.\d+)?")
_MARKER = re.compile(r"\[(E\d+)\]")


def check_drafted_sentence(sentence: str, evidence_text: dict[str, str]) -> str | None:
    """A drafted sentence stands only if it carries valid evidence markers and every
    number in it appears in the evidence it cites (a model may not invent a value)."""
    markers = _MARKER.findall(sentence)
    if not markers:
        return "sentence without an evidence marker"
    unknown = [m for m in markers if m not in evidence_text]
    if unknown:
        return f"marker {unknown[0]} names no evidence of this request"
    cited = " ".join(evidence_text[m] for m in markers)
    bare = _MARKER.sub("", sentence)
    for number in _NUMBER.findall(bare):
        if number.lstrip("<>") not in cited:
            return f"value {number} is not in the cited evidence"
    return None
