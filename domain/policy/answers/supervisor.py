"""The supervisor's routing rules (pure): what evidence a question needs, and
whether to answer, narrow, refuse, or say it is out of scope.

- answer: a look-up, an attention or a guideline question about the chart;
- narrow: a diagnosis, treatment, dosing or medication-change request about
  something the record holds: that part is declined and the answer narrows to what
  the record shows on the topic (cited), for a clinician to decide;
- refuse: such a request with nothing in the record to narrow to ("is this
  pneumonia?", "can I send him home?"). A request that chooses or changes a therapy
  ("what antibiotic should I prescribe?", "can I take her off warfarin?") always has
  something to narrow to: the allergies, medications and pregnancy findings that bear
  on any treatment;
- out of scope: not about the chart or the guidelines at all ("write me a poem"): no
  evidence at all.

A declined request (narrow or refuse) still shows the record's critical results and
red flags: they bear on any decision a clinician is about to make.

Guideline retrieval runs only for attention and guideline questions, never for
plain look-ups or refusals. A look-up of a condition says the workbench does not
diagnose: it lists what the record documents.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from domain.policy.questions.intent import Intent, ParsedQuestion
from domain.policy.answers.relevance import THERAPY_CONTEXT
from domain.policy.questions.topics import TOPIC_BY_NAME, analyte_label
from domain.policy.questions.unsafe_requests import Unsafe, asks_to_check_a_dose

NODE_SUPERVISOR = "supervisor"
NODE_RETRIEVER = "evidence-retriever"
NODE_ANSWER = "answer-composer"
NODE_VERIFIER = "answer-verifier"
NODE_DRAFTER = "answer-drafter"

ANSWER, NARROW, REFUSE, OUT_OF_SCOPE = "answer", "narrow", "refuse", "out_of_scope"

_REFUSALS = {
    Unsafe.DIAGNOSIS: "I can't make or confirm a diagnosis.",
    Unsafe.TREATMENT: "I can't recommend treatment.",
    Unsafe.DOSING: "I can't recommend or change a dose.",
    Unsafe.MEDICATION_CHANGE: "I can't advise starting, stopping or switching a medication.",
}
OUT_OF_SCOPE_REASON = ("That is outside what this workbench answers: it answers questions about this patient's "
                       "record and the clinical guidelines in its corpus.")
_NOTHING_TO_NARROW = ("Ask what the record documents instead (a test, a medication, a problem), and the answer "
                      "will cite it.")
_SAFETY_SHOWN = "Critical results and red flags on record are always shown."
CHECK_A_DOSE_CAVEAT = ("This lists the dose as the record states it, with citations; the workbench does not judge "
                       "whether a dose is right.")


@dataclass(frozen=True)
class RoutePlan:
    topics: tuple[str, ...]
    intent: Intent
    # Chart rows, document facts and review findings (honoured by the retriever); for a
    # refusal only the safety findings (critical results, red flags).
    need_patient_evidence: bool
    need_guidelines: bool
    disposition: str = ANSWER
    refusal_reason: str | None = None
    caveat: str | None = None  # said before the answer ("the workbench does not diagnose")
    reasons: tuple[str, ...] = field(default=())

    @property
    def refused(self) -> bool:
        return self.disposition != ANSWER

    @property
    def task_type(self) -> str:
        return {ANSWER: self.intent.value, NARROW: "refusal_narrowed", REFUSE: "refused",
                OUT_OF_SCOPE: "out_of_scope"}[self.disposition]


def _labels(question: ParsedQuestion) -> list[str]:
    named = [analyte_label(a) for a in question.analytes]
    labels = named + [TOPIC_BY_NAME[t].label for t in question.topics if not (named and TOPIC_BY_NAME[t].is_lab)]
    labels += [f"“{term}”" for _, term in question.terms if term in question.quotable]
    return list(dict.fromkeys(labels))


def _join(labels: list[str]) -> str:
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def _narrowed_to(question: ParsedQuestion) -> str:
    """What a declined request is narrowed to, in words: the topic asked about, and for a
    therapy request the allergies, medications and pregnancy findings that bear on it."""
    labels = _labels(question) or (["what you asked about"] if question.topics or question.clinical_subject else [])
    if not question.therapy:
        return "what the record shows about " + ", ".join(labels or ["what you asked about"])
    context = [TOPIC_BY_NAME[t].label for t in THERAPY_CONTEXT]
    more = [label for label in context if label not in labels]
    if not labels:
        return f"what the record shows about {_join(context)}, which bear on any treatment"
    if not more:
        return "what the record shows about " + ", ".join(labels)
    return f"what the record shows about {', '.join(labels)} and the {_join(more)} findings that bear on it"


def route(question: ParsedQuestion) -> RoutePlan:
    reasons: list[str] = []
    if question.rules:
        reasons.append("rules: " + ", ".join(question.rules))
    if question.follow_up and question.inherited:
        reasons.append("follow-up: " + ", ".join(question.inherited) + " carried from the previous question")
    if question.out_of_scope:
        reasons.append("out of scope: not about this patient's record or the guidelines")
        return RoutePlan(topics=(), intent=question.intent, need_patient_evidence=False, need_guidelines=False,
                         disposition=OUT_OF_SCOPE, refusal_reason=OUT_OF_SCOPE_REASON, reasons=tuple(reasons))
    if question.unsafe:
        declined = " ".join(_REFUSALS[u] for u in question.unsafe)
        reasons.append("unsafe request: " + ", ".join(u.value for u in question.unsafe))
        if question.topics or question.clinical_subject or question.therapy:
            narrowed = _narrowed_to(question)
            reasons.append("narrowed to the record" + (" and what bears on a therapy (allergies, medications, "
                                                       "pregnancy)" if question.therapy else ""))
            return RoutePlan(topics=question.topics, intent=question.intent, need_patient_evidence=True,
                             need_guidelines=False, disposition=NARROW,
                             refusal_reason=f"{declined} Instead, here is {narrowed}, with citations, "
                                            f"for a clinician to decide. {_SAFETY_SHOWN}", reasons=tuple(reasons))
        reasons.append("nothing in the record to narrow to: safety findings only")
        return RoutePlan(topics=(), intent=question.intent, need_patient_evidence=True, need_guidelines=False,
                         disposition=REFUSE, refusal_reason=f"{declined} {_NOTHING_TO_NARROW} {_SAFETY_SHOWN}",
                         reasons=tuple(reasons))
    if not question.topics:
        reasons.append("no recognised topic: searching all active facts")
    wants_guidelines = question.intent in (Intent.ATTENTION, Intent.GUIDELINE)
    reasons.append(f"{question.intent.value} question: guideline evidence needed" if wants_guidelines
                   else "look-up: patient evidence only")
    caveat = None
    if question.conditions and question.intent is not Intent.GUIDELINE:
        names = ", ".join(TOPIC_BY_NAME[t].label for t in question.conditions)
        caveat = (f"The workbench does not diagnose: this lists what the record documents about {names}, "
                  "with citations, for a clinician to judge.")
    elif asks_to_check_a_dose(question.text):
        reasons.append("checking a recorded dose: a look-up, no dose judged")
        caveat = CHECK_A_DOSE_CAVEAT
    return RoutePlan(topics=question.topics, intent=question.intent, need_patient_evidence=True,
                     need_guidelines=wants_guidelines, caveat=caveat, reasons=tuple(reasons))
