"""An answer's "not found" checked before it is said (issue 24).

Every absence line an answer writes ("No “penicillin” found among this patient's
allergies…", "No LDL result found…") is first checked against everything the record
holds for the patient: chart rows, document facts of every certainty (verified,
document-only, held for review, rejected by a reviewer), context-negated mentions and
the text of every stored fact and its cited quote (the sentences of letters and the
lines of notes), on every live document, whatever its identity state. What the search
finds that the answer does not already show is said, with where it is:

- an entry of a trusted document (cited): listed as a related entry, with its context
  ("denied", "a relative's") when it is not the patient's own;
- a finding held for review: listed under Needs Human Review;
- an entry the answer may not use (its document's identity is not confirmed, or a
  reviewer rejected it): named by kind, document and page, never quoted, so a
  wrong-patient document's content never appears in another patient's answer.

Each search is recorded (``AbsenceCheck.record``: what was searched for, how many
entries of each kind were searched, what was found) and returned with the answer, so
a test and the eval can see that the absence was checked, and by what.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from domain.models import Citation
from domain.policy.answers.relevance import context_of
from domain.policy.facts.analytes import result_is_of
from domain.policy.facts.chart_rules import (CLOSED_PROMOTION_STATES, SUPPORTING_OUTCOMES, TRUSTED_IDENTITY_STATES)
from domain.policy.questions.topics import TOPIC_BY_NAME, about_the_patient, mentions_term
from core.services.answer.topic_memo import evidence_topics
from core.services.workbench import Workbench
from storage import evidence_repo, record_version

# Words of a free term that say what kind of entry it is, not what to look for
# ("penicillin allergy" is searched as "penicillin" too).
_KIND_WORDS = frozenset({"allergy", "allergies", "allergic", "reaction", "intolerance", "history", "medication",
                         "medications", "medicine", "drug", "tablets", "tablet", "result", "results", "level", "levels",
                         "test", "problem", "condition", "diagnosis", "disease", "dose", "dosage"})
RELATED_NOTE = " Related entries the record holds are shown in this answer (with where they are)."


@dataclass
class AbsenceClaim:
    """One absence line and what it says is absent: free terms, a topic, named tests."""

    topic: str | None
    text: str
    terms: tuple[str, ...] = ()
    analytes: tuple[str, ...] = ()

    def search_words(self) -> tuple[str, ...]:
        words: list[str] = []
        for term in self.terms:
            words.append(term)
            parts = [w for w in re.findall(r"[a-z][a-z0-9-]+", term.lower()) if w not in _KIND_WORDS]
            if len(parts) < len(term.split()):
                words += [w for w in parts if len(w) >= 4]
        return tuple(dict.fromkeys(words))


@dataclass
class AbsenceCheck:
    claim: AbsenceClaim
    searched: dict[str, int] = field(default_factory=dict)
    related: list[dict[str, Any]] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        return {"claim": self.claim.text, "topic": self.claim.topic, "terms": list(self.claim.search_words()),
                "analytes": list(self.claim.analytes), "searched": dict(self.searched), "related": self.related,
                "verdict": "related_found" if self.related else "none_found"}


def _matches(claim: AbsenceClaim, fact_type: str, value: dict[str, Any], text: str, topics: set[str]) -> str | None:
    """What of the claim an entry holds (a word, the topic, a named test), or None."""
    for word in claim.search_words():
        if mentions_term(word, text):
            return word
    if claim.analytes and fact_type == "lab_result" and result_is_of(
            claim.analytes, str(value.get("test_name") or ""), loinc=value.get("loinc") or None,
            unit=value.get("unit") or None):
        return str(value.get("test_name"))
    if not claim.terms and claim.topic and claim.topic in topics:
        return TOPIC_BY_NAME[claim.topic].label
    return None


def _where(citation: Citation | dict[str, Any] | None, document_id: Any) -> str:
    c = Citation.model_validate(citation) if isinstance(citation, dict) else citation
    page = f", {c.page_or_section}" if c is not None and c.page_or_section else ""
    return f"document {document_id}{page}"


def _held_reason(fact: dict[str, Any]) -> str | None:
    """Why an entry the answer could not use was held out of it, or None when it was usable."""
    if fact.get("identity_status") not in TRUSTED_IDENTITY_STATES:
        return "its document's patient identity is not confirmed, so it is not used"
    if fact.get("promotion_status") in CLOSED_PROMOTION_STATES:
        return f"a reviewer closed it ({str(fact['promotion_status']).replace('_', ' ')})"
    return None


def _held_entries(wb: Workbench, patient_id: int, candidates: list[Any],
                  reviews: list[Any]) -> list[tuple[dict[str, Any], str, dict[str, Any], str, set[str]]]:
    """The record's entries an answer does not hold as candidates (held, rejected or not
    active), each with why, its value, searchable text and topics. ``candidates`` and
    ``reviews`` are the record's, so this too is kept per record version."""
    with wb.db.cursor() as cur:
        every_fact = evidence_repo.facts_for_absence_search(cur, patient_id)
    seen_ids = {c.item.evidence_id for c in [*candidates, *reviews]}
    held = []
    for f in every_fact:
        if f"fact:{f['id']}" in seen_ids:
            continue
        reason = _held_reason(f)
        if reason is None and f.get("promotion_status") in SUPPORTING_OUTCOMES:
            continue  # in the chart: its chart row is a candidate
        value = f.get("structured_value") or {}
        text = f"{f['fact_text']} {(f.get('citation') or {}).get('quote_or_value', '')}"
        context = context_of(f["fact_type"], f.get("context"))
        held.append((f, reason or "not active in this patient's record", value, text,
                     evidence_topics(f["fact_type"], value, f["fact_text"], context)))
    return held


def check_absences(wb: Workbench, patient_id: int, bundle: Any, candidates: list[Any], reviews: list[Any]) -> None:
    """Search the record for every absence claim of ``bundle``; add what is related and
    not yet shown (cited entries, review findings, held entries named by place) and
    record each search in ``bundle.absence_checks``."""
    if not bundle.claims:
        return
    held = record_version.kept(wb.db, patient_id, "answer.held_entries",
                               lambda: _held_entries(wb, patient_id, candidates, reviews))
    shown = {i.evidence_id for i in bundle.all_items()}
    for claim in bundle.claims:
        check = AbsenceCheck(claim)
        negated = sum(1 for c in candidates if not about_the_patient(c.item.fact_type, c.context))
        check.searched = {"chart_rows": sum(1 for c in candidates if c.item.kind == "chart"),
                          "document_facts": sum(1 for c in candidates if c.item.kind != "chart"),
                          "review_items": len(reviews), "negated_or_not_the_patients": negated,
                          "held_or_rejected": len(held)}
        for c in candidates:
            hit = _matches(claim, c.item.fact_type, c.item.structured, c.source_text, c.topics)
            if hit is None:
                continue
            own = about_the_patient(c.item.fact_type, c.context)
            status = "on record" if own else "not the patient's own (denied, a relative's or hypothetical)"
            check.related.append({"evidence_id": c.item.evidence_id, "status": status, "matched": hit,
                                  "where": _where(c.item.citations[0], c.item.citations[0].source_id)})
            if c.item.evidence_id not in shown:
                bundle.related.append((status, c.item))
                shown.add(c.item.evidence_id)
        for c in reviews:
            hit = _matches(claim, c.item.fact_type, c.item.structured, c.source_text, c.topics)
            if hit is None:
                continue
            check.related.append({"evidence_id": c.item.evidence_id, "status": "held for review", "matched": hit,
                                  "where": _where(c.item.citations[0], c.item.citations[0].source_id)})
            if c.item.evidence_id not in shown:
                bundle.review.append(c.item)
                shown.add(c.item.evidence_id)
        for f, reason, value, text, topics in held:
            hit = _matches(claim, f["fact_type"], value, text, topics)
            if hit is None:
                continue
            where = _where(f.get("citation"), f["document_id"])
            check.related.append({"fact_id": f["id"], "status": reason, "matched": hit, "where": where})
            kind = str(f["fact_type"]).replace("_", " ")
            bundle.held_notes.append(f"An entry that mentions “{hit}” ({kind}, {where}) is held outside this "
                                     f"answer: {reason}.")
        bundle.absence_checks.append(check)
