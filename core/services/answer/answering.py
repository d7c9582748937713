"""Answering a question about a patient: supervisor -> evidence-retriever ->
answer-composer -> verifier (-> optional drafter), every handoff recorded.

The answer is assembled from structured evidence (values, units and dates exactly
as stored) in four sections, or refused/narrowed. An optional drafter may turn the
verified items into prose; its sentences must carry evidence markers and may not
introduce values, or the deterministic answer is used.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from typing import Any, Protocol

from core import telemetry
from domain.errors import BadInput
from domain.models import AnswerItem, AnswerSections, EvidenceItem
from domain.policy.answers.verifier import RetrievedEvidence, check_drafted_sentence, verify_answer
from domain.policy.facts.chart_rules import critical_result
from domain.policy.answers.lab_series import CRITICAL, IN_RANGE, LabSeries, trend_text
from domain.policy.questions.intent import Intent, ParsedQuestion, parse_question
from domain.policy.answers.supervisor import (NODE_ANSWER, NODE_DRAFTER, NODE_RETRIEVER, NODE_SUPERVISOR, NODE_VERIFIER,
                                    RoutePlan, route)
from core.services.answer.alert_lines import alert_lines
from core.services.answer.contradictions import flags_for_answer, verified_flags
from core.services.answer.summary import summarize, summary_text
from core.services.answer.absence import RELATED_NOTE
from core.services.answer.evidence import retrieve_evidence
from core.services.answer.evidence_items import EvidenceBundle
from core.services.answer.guideline_evidence import series_guide_key
from core.services.admin.patients import get_patient
from core.services.workbench import Workbench
from storage import audit_repo

SECTION_TITLES = {"patient_findings": "Patient Findings", "needs_review": "Needs Human Review",
                  "guideline_evidence": "Guideline Evidence", "missing": "Missing or Not Found"}


class Drafter(Protocol):
    """Rephrases numbered evidence into prose with [E#] markers (optional, keyed)."""

    name: str

    def draft(self, question: str, evidence: dict[str, str]) -> str: ...


class _Trace:
    """Records supervisor handoffs for one request."""

    def __init__(self, wb: Workbench, request_id: str):
        self.wb, self.request_id, self.rows = wb, request_id, []

    def handoff(self, source: str, destination: str, reason: str, task_type: str, outcome: str,
                latency_ms: float | None = None, error: str | None = None) -> None:
        row = dict(source_node=source, destination_node=destination, decision_reason=reason[:500],
                   task_type=task_type, outcome=outcome, latency_ms=round(latency_ms or 0.0, 2), error_reason=error)
        self.rows.append(row)

    def save(self) -> None:
        # One commit for the request's handoffs, not one per row (each commit syncs the log).
        with self.wb.db.transaction() as cur:
            for row in self.rows:
                audit_repo.add_handoff(cur, request_id=self.request_id, job_id=None, **row)


def _finding_text(e: EvidenceItem) -> str:
    critical = critical_result(e.fact_type, e.structured)
    return ("Critical: " if critical else "") + e.text


def _item(e: EvidenceItem, kind: str, *, text: str | None = None) -> AnswerItem:
    return AnswerItem(text=text or e.text, citations=e.citations, evidence_ids=[e.evidence_id], kind=kind)


def _series_line(series: LabSeries, guides: list[EvidenceItem]) -> AnswerItem:
    """One attention line: the latest result, its trend, and the guideline passage on
    its topic when one cleared the threshold (an attention line cites both)."""
    latest, previous = series.latest, series.previous
    lead = "Critical" if series.severity == CRITICAL else "Deserves attention"
    text = f"{lead}: {latest.text}"
    trend = trend_text(series)
    if trend:
        text += f"; {trend}"
    evidence = [latest, *([previous] if previous else [])]
    if guides:
        guide = guides[0]
        text += f". Related guideline: {guide.structured['source_title']} — {guide.structured['section']}."
        evidence.append(guide)
    return AnswerItem(text=text, citations=[c for e in evidence for c in e.citations],
                      evidence_ids=[e.evidence_id for e in evidence], kind="attention" if guides else "finding")


def _in_range_summary(in_range: list[LabSeries]) -> AnswerItem | None:
    """Normal results are counted, not listed; the count cites the results it counts."""
    if not in_range:
        return None
    normal = [s for s in in_range if s.severity == IN_RANGE]
    unflagged = [s for s in in_range if s.severity != IN_RANGE]
    parts = []
    if normal:
        parts.append(f"{len(normal)} other result{'s' if len(normal) != 1 else ''} "
                     f"{'were' if len(normal) != 1 else 'was'} within range")
    if unflagged:
        parts.append(f"{len(unflagged)} {'were' if len(unflagged) != 1 else 'was'} not flagged either way")
    latest = [s.latest for s in in_range]
    return AnswerItem(text="; ".join(parts) + " (latest result of each test).",
                      citations=[c for e in latest for c in e.citations],
                      evidence_ids=[e.evidence_id for e in latest], kind="summary")


def compose(question: ParsedQuestion, plan: RoutePlan, bundle: EvidenceBundle) -> AnswerSections:
    sections = AnswerSections()
    if plan.intent is Intent.ATTENTION and not plan.refused:
        sections.patient_findings += alert_lines(bundle.alerts, notes=False)  # the chart checks' alerts first
        for series in bundle.attention:
            guides = bundle.guidelines_by_key.get(series_guide_key(series), [])
            sections.patient_findings.append(_series_line(series, guides))
        sections.patient_findings += alert_lines(bundle.alerts, notes=True)
        if bundle.list_in_range:
            for series in bundle.in_range:
                trend = trend_text(series)
                sections.patient_findings.append(
                    _item(series.latest, "finding", text=series.latest.text + (f"; {trend}" if trend else "")))
        else:
            summary = _in_range_summary(bundle.in_range)
            if summary:
                sections.patient_findings.append(summary)
    for e in bundle.patient:
        earlier = "Earlier result: " if e.evidence_id in bundle.earlier else ""
        sections.patient_findings.append(_item(e, "finding", text=earlier + _finding_text(e)))
    sections.needs_review = [_item(e, "review") for e in bundle.review]
    sections.guideline_evidence = [_item(e, "guideline") for e in bundle.guidelines]
    related = {c.claim.text for c in bundle.absence_checks if c.related}
    sections.missing = [AnswerItem(text=text + (RELATED_NOTE if text in related else ""), kind="missing")
                        for _, text in bundle.missing]
    for label, e in bundle.mentions:
        sections.missing.append(_item(e, "missing", text=f"Not counted as this patient's own ({label}): {e.text}"))
    # What the absence searches found that the answer did not show, and where.
    for status, e in bundle.related:
        sections.missing.append(_item(e, "missing", text=f"Related entry ({status}): {e.text}"))
    sections.missing += [AnswerItem(text=note, kind="missing") for note in bundle.held_notes]
    if bundle.guideline_not_found and not bundle.unguided:
        sections.missing.append(AnswerItem(
            text="No guideline in the workbench's corpus covers this question.", kind="missing"))
    return sections


def render_text(sections: AnswerSections, *, refusal: str | None = None) -> str:
    """Plain text with numbered citation markers and a source list."""
    lines: list[str] = []
    if refusal:
        lines += [refusal, ""]
    sources: dict[tuple, int] = {}
    for name, title in SECTION_TITLES.items():
        items = getattr(sections, name)
        lines.append(f"{title}:")
        if not items:
            lines.append("- none")
        for item in items:
            marks = []
            for c in item.citations:
                key = (c.source_id, c.field_or_chunk_id, c.quote_or_value)
                marks.append(sources.setdefault(key, len(sources) + 1))
            lines.append(f"- {item.text}" + "".join(f" [{m}]" for m in marks))
        lines.append("")
    if sources:
        lines.append("Sources:")
        for (source_id, field_id, quote), number in sources.items():
            lines.append(f"[{number}] {source_id} · {field_id} · “{quote[:120]}”")
    return "\n".join(lines).rstrip()


def _draft(drafter: Drafter, question: str, sections: AnswerSections,
           usage: dict[str, int] | None = None) -> tuple[str | None, str | None]:
    """Ask the drafter for prose over verified items; accept it only if every sentence checks.
    Token usage the provider reported is added to ``usage`` (a drafter that can report it
    has ``draft_with_usage``)."""
    evidence: dict[str, str] = {}
    for item in [*sections.patient_findings, *sections.needs_review, *sections.guideline_evidence]:
        evidence[f"E{len(evidence) + 1}"] = item.text
    if not evidence:
        return None, "nothing to draft from"
    with_usage = getattr(drafter, "draft_with_usage", None)
    try:
        if with_usage is not None:
            prose, reported = with_usage(question, evidence)
            if usage is not None and reported:
                for key, n in reported.items():
                    usage[key] = usage.get(key, 0) + n
        else:
            prose = drafter.draft(question, evidence)
    except Exception as exc:  # noqa: BLE001 - a provider outage falls back to the verified answer
        return None, f"drafter unavailable ({type(exc).__name__})"
    sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n+", prose.strip()) if s.strip()]
    if not sentences:
        return None, "empty draft"
    for sentence in sentences:
        problem = check_drafted_sentence(sentence, evidence)
        if problem:
            return None, problem
    return prose.strip(), None


def _ms(seconds: float) -> float:
    return round(max(seconds, 0.0) * 1000, 2)


@dataclass
class AskResult:
    payload: dict[str, Any]  # the JSON answer of the CLI contract
    parsed: ParsedQuestion  # kept by a conversation so the next turn can lean on it


def ask(wb: Workbench, patient_id: int, question: str, *, previous: ParsedQuestion | str | None = None,
        drafter: Drafter | None = None) -> AskResult:
    if not question or not question.strip():
        raise BadInput("Ask a question.", code="empty_question")
    patient = get_patient(wb, patient_id=patient_id)
    request_id = uuid.uuid4().hex[:16]
    trace = _Trace(wb, request_id)
    started = time.perf_counter()
    if isinstance(previous, str):
        previous = parse_question(previous)
    parsed = parse_question(question, previous)
    plan = route(parsed)
    t0 = time.perf_counter()
    trace.handoff(NODE_SUPERVISOR, NODE_RETRIEVER, "; ".join(plan.reasons), plan.task_type, "dispatched",
                  (t0 - started) * 1000)
    bundle = retrieve_evidence(wb, patient["id"], parsed, plan, request_id=request_id)
    t1 = time.perf_counter()
    sufficient = bool(bundle.patient or bundle.attention or bundle.in_range or bundle.guidelines or bundle.review)
    trace.handoff(NODE_RETRIEVER, NODE_SUPERVISOR,
                  f"patient={len(bundle.patient)} attention={len(bundle.attention)} in_range={len(bundle.in_range)} "
                  f"review={len(bundle.review)} guideline={len(bundle.guidelines)} missing={len(bundle.missing)}",
                  "evidence_retrieval", "not_needed" if not (plan.need_patient_evidence or plan.need_guidelines)
                  else "sufficient" if sufficient else "insufficient", (t1 - t0) * 1000)
    draft_sections = compose(parsed, plan, bundle)
    t2 = time.perf_counter()
    trace.handoff(NODE_SUPERVISOR, NODE_ANSWER, "compose four sections from retrieved evidence", plan.task_type,
                  {"narrow": "refused_narrowed", "refuse": "refused", "out_of_scope": "out_of_scope"}.get(
                      plan.disposition, "composed"), (t2 - t1) * 1000)
    sections, removed = verify_answer(draft_sections, RetrievedEvidence.of(bundle.all_items()))
    t3 = time.perf_counter()
    trace.handoff(NODE_ANSWER, NODE_VERIFIER, "every claim cited; citations retrieved by this request",
                  "verification", f"removed={len(removed)}", (t3 - t2) * 1000)
    # Records that disagree, flagged with both sides; then the two opening lines.
    flags, sides = flags_for_answer(wb, patient["id"], bundle.all_items(),
                                    whole_record=plan.intent is Intent.ATTENTION and not plan.refused)
    flags, dropped_flags = verified_flags(flags, [*bundle.all_items(), *sides])
    summary, dropped_lines = summarize(sections, flags, refusal=plan.refusal_reason if plan.refused else None)
    preface = plan.refusal_reason or plan.caveat
    text = "\n\n".join(p for p in (summary_text(summary), "\n".join(f"- {f.text}" for f in flags),
                                    render_text(sections, refusal=preface)) if p)
    t4 = time.perf_counter()
    drafted = False
    draft_s = 0.0
    usage: dict[str, int] = {}
    if drafter is not None:
        prose, problem = _draft(drafter, parsed.text, sections, usage)
        draft_s = time.perf_counter() - t4
        trace.handoff(NODE_VERIFIER, NODE_DRAFTER, "rephrase verified items; sentences must carry markers",
                      "drafting", "accepted" if prose else "rejected_fallback", draft_s * 1000, error=problem)
        if prose:
            drafted = True
            text = (preface + "\n\n" if preface else "") + prose + "\n\n" + text
    trace.save()
    latency = round((time.perf_counter() - started) * 1000, 2)
    # Standard stage names (the eval gate's latency report): ``retrieve`` is patient and
    # guideline retrieval without the reranker, ``rerank`` the guideline reranker's time;
    # ``database``/``vectors``/``guidelines`` break retrieval down further.
    rerank_ms = round(bundle.timings_ms.get("rerank", 0.0), 2)
    stages = {"retrieve": round(max(_ms(t1 - t0) - rerank_ms, 0.0), 2), "rerank": rerank_ms,
              "compose": _ms((t2 - t1) + (t4 - t3)), "verify": _ms(t3 - t2), "draft": _ms(draft_s),
              "total": latency}
    details = {k: v for k, v in bundle.timings_ms.items() if k in ("database", "vectors", "guidelines")}
    extra: dict[str, Any] = {}
    if drafter is not None:
        extra["model"] = getattr(drafter, "model", None) or getattr(drafter, "name", None)
        if usage:
            extra["tokens"] = usage
    telemetry.emit("answer", settings=wb.settings, patient_id=patient["id"], request_id=request_id,
                   refused=plan.refused, task_type=plan.task_type, latency_ms={**details, **stages},
                   counts={"patient_findings": len(sections.patient_findings),
                           "needs_review": len(sections.needs_review),
                           "guideline_evidence": len(sections.guideline_evidence),
                           "missing": len(sections.missing), "removed": len(removed)}, **extra)
    return AskResult(payload={
        "request_id": request_id,
        "refused": plan.refused,
        "refusal_reason": plan.refusal_reason,
        "caveat": plan.caveat,
        "sections": sections.model_dump(mode="json"),
        "summary": [line.model_dump(mode="json") for line in summary],
        "contradictions": [f.model_dump(mode="json") for f in flags],
        "text": text,
        "drafted": drafted,
        "question": {"topics": list(parsed.topics), "intent": parsed.intent.value, "follow_up": parsed.follow_up,
                     "unsafe": [u.value for u in parsed.unsafe], "disposition": plan.disposition,
                     "out_of_scope": parsed.out_of_scope, "terms": [term for _, term in parsed.terms],
                     "rules": list(parsed.rules)},
        "verifier": {"removed": len(removed), "reasons": [r.reason for r in removed],
                     "summary_removed": dropped_lines, "contradictions_removed": dropped_flags},
        # Every absence line's search: what was searched for, over what, what was found.
        "absence_checks": [c.record() for c in bundle.absence_checks],
        "handoffs": trace.rows,
        "latency_ms": latency,
    }, parsed=parsed)
