"""Contradictory statements in the patient's record, flagged in an answer they bear on.

The whole record is read (usable document facts, findings held for review, chart rows
entered by hand), so a flag cites both sides even when the question retrieved only one.
A flag bears on an answer when the answer's evidence cites one of its sides, or when the
question asks what deserves attention. Its sides are evidence this request retrieved: the
verifier of the flags (``verified_flags``) accepts a flag only when every citation it
carries is one of those sides' citations. Which pairs contradict is policy
(``domain.policy.answers.contradictions``).
"""

from __future__ import annotations

from typing import Any

from domain.models import AnswerItem, Citation, ClinicalContext, EvidenceItem
from domain.policy.answers.contradictions import Contradiction, Statement, find_contradictions
from domain.policy.answers.relevance import context_of
from domain.policy.answers.verifier import citation_key
from domain.policy.facts.chart_rules import SUPPORTING_OUTCOMES
from core.services.answer.evidence_items import described, load_candidates
from core.services.workbench import Workbench
from storage import record_version

WHY_CHECK = "Check with the patient or the sources which is right."


def _statement(item: EvidenceItem, ctx: ClinicalContext | None, source_text: str) -> Statement:
    return Statement(evidence_id=item.evidence_id, fact_type=item.fact_type, value=item.structured,
                     text=source_text, negated=bool(ctx and ctx.negated),
                     temporality=ctx.temporality if ctx else "current",
                     experiencer=ctx.experiencer if ctx else "patient")


def _source_fact(fact: dict[str, Any]) -> tuple[EvidenceItem, ClinicalContext | None, str]:
    """A fact behind a chart row, as its own statement: one chart row may rest on several
    documents, and they may disagree (a workbook's "Stopped" beside a form's "takes")."""
    value = fact["structured_value"] or {}
    ctx = context_of(fact["fact_type"], fact.get("context"))
    citation = Citation.model_validate(fact["citation"])
    item = EvidenceItem(evidence_id=f"fact:{fact['id']}", kind="document_fact", fact_type=fact["fact_type"],
                        text=described(fact["fact_type"], value, fact["fact_text"], ctx),
                        structured=value, citations=[citation])
    return item, ctx, f"{fact['fact_text']} {citation.quote_or_value}"


def _side_text(items: list[EvidenceItem]) -> str:
    def one(i: EvidenceItem) -> str:
        status = i.structured.get("status") if i.fact_type == "medication" else None
        return f"“{i.text}”" + (f" (status: {status})" if status and f"{status}".lower() not in i.text.lower() else "")
    return "; ".join(one(i) for i in items)


def flag_item(found: Contradiction, by_id: dict[str, EvidenceItem]) -> AnswerItem:
    first = [by_id[i] for i in found.first]
    second = [by_id[i] for i in found.second]
    text = (f"Records disagree: {found.words}. One side: {_side_text(first)}. "
            f"The other: {_side_text(second)}. {WHY_CHECK}")
    sides = [*first, *second]
    return AnswerItem(text=text, citations=[c for e in sides for c in e.citations],
                      evidence_ids=[e.evidence_id for e in sides], kind="contradiction")


def record_contradictions(wb: Workbench, patient_id: int) -> tuple[list[Contradiction], dict[str, EvidenceItem]]:
    """Every contradiction in the patient's record, and the evidence of its sides: found
    once per record version (it depends on the record alone), not once per question.
    Read-only for callers, as every kept result is."""
    return record_version.kept(wb.db, patient_id, "answer.contradictions",
                               lambda: _record_contradictions(wb, patient_id))


def _record_contradictions(wb: Workbench, patient_id: int) -> tuple[list[Contradiction], dict[str, EvidenceItem]]:
    candidates, reviews, usable = load_candidates(wb, patient_id)
    # A chart row stands for the documents behind it: each speaks for itself here. A row
    # entered by hand (cited to the chart itself) speaks as the row.
    entries = [(c.item, c.context, c.source_text) for c in [*candidates, *reviews]
               if c.item.kind != "chart" or c.item.citations[0].source_type == "chart"]
    entries += [_source_fact(f) for f in usable.values()
                if f["active"] and f.get("promotion_status") in SUPPORTING_OUTCOMES]
    found = find_contradictions([_statement(*e) for e in entries])
    return found, {item.evidence_id: item for item, _, _ in entries}


def flags_for_answer(wb: Workbench, patient_id: int, answer_evidence: list[EvidenceItem], *,
                     whole_record: bool) -> tuple[list[AnswerItem], list[EvidenceItem]]:
    """The flags that bear on an answer (one side among its evidence, or every flag
    when ``whole_record``), and the evidence items of their sides."""
    found, by_id = record_contradictions(wb, patient_id)
    shown = {citation_key(c) for e in answer_evidence for c in e.citations}
    flags, sides = [], []
    for c in found:
        cited = {citation_key(x) for i in (*c.first, *c.second) for x in by_id[i].citations}
        if whole_record or shown & cited:
            flags.append(flag_item(c, by_id))
            sides += [by_id[i] for i in (*c.first, *c.second)]
    return flags, sides


def verified_flags(flags: list[AnswerItem], retrieved: list[EvidenceItem]) -> tuple[list[AnswerItem], int]:
    """Flags whose every citation is a citation of retrieved evidence and which cite
    both sides (two entries at least); the rest are dropped and counted."""
    known = {citation_key(c) for e in retrieved for c in e.citations}
    kept = [f for f in flags if len(f.evidence_ids) >= 2 and f.citations
            and all(citation_key(c) in known for c in f.citations)]
    return kept, len(flags) - len(kept)
