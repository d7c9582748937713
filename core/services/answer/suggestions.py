"""Questions worth asking about the patient on screen, from what the record holds.

A question is offered when the record holds what it asks about (labs, allergies,
medications, problems, vital signs, a reason for the visit, a referral), most recent
document first; one the workbench would refuse or narrow, or finds no subject in, is
never offered (each is routed as it would be asked).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from domain.policy.answers.supervisor import route
from domain.policy.questions.intent import parse_question
from core.services.admin.patients import get_patient
from core.services.answer.evidence_items import load_candidates
from core.services.workbench import Workbench

MAX_SUGGESTIONS = 4

# (what the record must hold: fact types, question template). {pos}: her/his/their,
# {subj}: she/he/they, the patient as the chart records their sex.
SUGGESTIONS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"lab_result"}), "What deserves attention in {pos} labs?"),
    (frozenset({"allergy"}), "What allergies are on record?"),
    (frozenset({"medication"}), "What medications {is} {subj} taking?"),
    (frozenset({"problem"}), "What problems are on record?"),
    (frozenset({"vital_sign"}), "What are {pos} latest vital signs?"),
    (frozenset({"chief_concern"}), "What is {pos} chief concern?"),
    (frozenset({"referral"}), "What does the referral say?"),
)
_PRONOUNS = {"F": {"pos": "her", "subj": "she", "is": "is"}, "M": {"pos": "his", "subj": "he", "is": "is"}}
_NEUTRAL = {"pos": "their", "subj": "they", "is": "are"}


@dataclass(frozen=True)
class Suggestion:
    question: str
    why: str  # what the record holds that makes it worth asking, in words


@lru_cache(maxsize=128)  # pure in the words; the page asks for the same few questions on every rerun
def would_answer(question: str) -> bool:
    """Routed as asked: about something named, answered (not refused, narrowed or out of scope)."""
    parsed = parse_question(question)
    return bool(parsed.topics) and not parsed.out_of_scope and not route(parsed).refused


def _newest_document(items: list) -> int:
    ids = []
    for item in items:
        source = item.citations[0].source_id if item.citations else ""
        tail = source.rsplit(":", 1)[-1]
        ids.append(int(tail) if source.startswith("documents:") and tail.isdigit() else 0)
    return max(ids, default=0)


def suggested_questions(wb: Workbench, patient_id: int, *, limit: int = MAX_SUGGESTIONS) -> list[Suggestion]:
    patient = get_patient(wb, patient_id=patient_id)
    words = _PRONOUNS.get(str(patient.get("sex") or "").upper(), _NEUTRAL)
    candidates, reviews, _ = load_candidates(wb, patient_id)
    by_type: dict[str, list] = {}
    for c in [*candidates, *reviews]:
        by_type.setdefault(c.item.fact_type or "", []).append(c.item)
    offered = []
    for order, (needs, template) in enumerate(SUGGESTIONS):
        held = [i for t in needs for i in by_type.get(t, [])]
        if not held:
            continue
        question = template.format(**words)
        if not would_answer(question):
            continue
        n = len(held)
        kind = sorted(needs)[0].replace("_", " ")
        offered.append((-_newest_document(held), order,
                        Suggestion(question, f"{n} {kind} entr{'y' if n == 1 else 'ies'} on record")))
    offered.sort(key=lambda t: (t[0], t[1]))
    return [s for _, _, s in offered[:limit]]
