"""The supervisor's routing rules (pure): what evidence a question needs, and
whether to refuse or narrow it.

Diagnosis, treatment, dosing and medication-change requests are never answered
as asked: the supervisor refuses that part and narrows to what the record can
say (the cited facts on the topic), which is stated in the refusal reason.
Guideline retrieval runs only for interpretation / attention / guideline
questions, never for plain look-ups.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.policy.questions import TOPIC_BY_NAME, Intent, ParsedQuestion, Unsafe

NODE_SUPERVISOR = "supervisor"
NODE_RETRIEVER = "evidence-retriever"
NODE_ANSWER = "answer-composer"
NODE_VERIFIER = "answer-verifier"
NODE_DRAFTER = "answer-drafter"

_REFUSALS = {
    Unsafe.DIAGNOSIS: "I can't make or confirm a diagnosis.",
    Unsafe.TREATMENT: "I can't recommend treatment.",
    Unsafe.DOSING: "I can't recommend or change a dose.",
    Unsafe.MEDICATION_CHANGE: "I can't advise starting, stopping or switching a medication.",
}


@dataclass(frozen=True)
class RoutePlan:
    topics: tuple[str, ...]
    intent: Intent
    need_chart: bool
    need_document_facts: bool
    need_review_findings: bool
    need_guidelines: bool
    refused: bool = False
    refusal_reason: str | None = None
    narrowed_to: str | None = None
    reasons: tuple[str, ...] = field(default=())

    @property
    def task_type(self) -> str:
        return "refusal_narrowed" if self.refused else self.intent.value


def route(question: ParsedQuestion) -> RoutePlan:
    reasons: list[str] = []
    topics = question.topics
    if question.follow_up and question.inherited:
        reasons.append("follow-up: " + ", ".join(question.inherited) + " carried from the previous question")
    refused = bool(question.unsafe)
    refusal_reason = narrowed = None
    if refused:
        parts = [_REFUSALS[u] for u in question.unsafe]
        labels = [TOPIC_BY_NAME[t].label for t in topics] or ["the topic you asked about"]
        narrowed = "what the record shows about " + ", ".join(labels)
        refusal_reason = " ".join(parts) + f" Instead, here is {narrowed}, with citations, for a clinician to decide."
        reasons.append("unsafe request: " + ", ".join(u.value for u in question.unsafe))
    if not topics:
        reasons.append("no recognised topic: searching all active facts")
    wants_guidelines = question.intent in (Intent.ATTENTION, Intent.GUIDELINE) and not refused
    if wants_guidelines:
        reasons.append(f"{question.intent.value} question: guideline evidence needed")
    else:
        reasons.append("look-up: patient evidence only")
    return RoutePlan(
        topics=topics, intent=question.intent, need_chart=True, need_document_facts=True,
        need_review_findings=True, need_guidelines=wants_guidelines, refused=refused,
        refusal_reason=refusal_reason, narrowed_to=narrowed, reasons=tuple(reasons),
    )
