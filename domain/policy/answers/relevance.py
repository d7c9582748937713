"""Which patient evidence an answer includes (pure).

- ``relevant``: a chart row or document fact answers the question's topics
  (expanded: a condition brings its related labs);
- ``review_bears_on``: a needs-review finding is shown whenever it bears on the
  question: red flags always, clinical findings (allergies, medications, symptoms,
  abnormal labs, problems, pregnancy) when they touch the question's area or when
  the question asks what deserves attention; low-value ones (preferences,
  demographics) only when asked for;
- ``safety_finding``: what bears on any decision a clinician is about to make (a
  critical result, an affirmed red flag), shown beside every declined request;
- ``therapy_context``: what bears on choosing or changing a therapy (allergies,
  current medications, pregnancy), shown beside every declined therapy request
  ("what antibiotic should I prescribe?", "can I take her off warfarin?");
- ``guidance_hint``: the guideline words an abnormal result is searched with, by the
  direction it is abnormal in (a low glucose is about hypoglycemia, not diabetes
  screening);
- ``meant_as_asked``: whether a mention counts for a look-up (the patient's own, or a
  relative's for a family-history look-up);
- ``context_of`` / ``context_tags``: how a mention was meant, and the words that
  say so in the item text ("(denied)", "(not given or not taken)", "(family history)").
"""

from __future__ import annotations

import re
from typing import Any

from domain.models import ClinicalContext, EvidenceItem
from domain.policy.facts.certainty import not_the_patients_fact
from domain.policy.facts.chart_rules import critical_result
from domain.policy.facts.medication_status import status_reading
from domain.policy.context.mentions import red_flag
from domain.policy.questions.intent import Intent, ParsedQuestion
from domain.policy.questions.topics import LAB_TEST_TOPICS, TOPIC_BY_NAME, about_the_patient, expand

# Besides the topic itself, which review findings bear on a question about a topic.
BEARS_ON = {
    "medications": {"allergies", "medications", "pregnancy"},
    "allergies": {"allergies", "medications"},
    "problems": {"problems", "chief_concern"},
    "chief_concern": {"chief_concern", "problems", "pregnancy"},
    "pregnancy": {"pregnancy", "medications"},
}
# What bears on choosing or changing any therapy: shown (cited) beside a declined
# treatment, dose or medication-change request, as findings and as review findings.
THERAPY_CONTEXT = ("allergies", "medications", "pregnancy")
# Of those, the ones whose absence is said (an empty allergy or medication list matters
# before a prescription); a pregnancy is shown when the record mentions one, and the
# record not mentioning one says nothing either way.
THERAPY_CONTEXT_SAID_MISSING = ("allergies", "medications")
# Words that make a finding of another type clinically relevant.
CLINICAL_WORDS = re.compile(r"allerg|pregnan|chest pain|suicid|bleed|faint|syncope|shortness of breath|sulfa|"
                            r"penicillin|medication|mg\b|dose|symptom|pain|fever", re.I)
_CLINICAL_FACT_TYPES = ("allergy", "medication", "problem", "chief_concern")


# ------------------------------------------------------------------ clinical context
def context_of(fact_type: str | None, raw: Any) -> ClinicalContext | None:
    """The stored context of a fact (JSON or model; NULL for most facts). A family
    history entry is about a relative whatever its context column says."""
    ctx: ClinicalContext | None
    if isinstance(raw, ClinicalContext):
        ctx = raw
    elif isinstance(raw, dict):
        ctx = ClinicalContext.model_validate(raw)
    else:
        ctx = None
    if fact_type == "family_history":
        ctx = (ctx or ClinicalContext()).model_copy(update={"experiencer": "family"})
    return ctx


# A negated medication was not given or is not taken ("co-amoxiclav was avoided"); a
# symptom or condition the patient "denied".
_NEGATED_WORDS = {"medication": "(not given or not taken)"}


def context_tags(ctx: ClinicalContext | None, fact_type: str | None = None) -> list[str]:
    """How the mention was meant, in the words an item shows (of a fact of ``fact_type``)."""
    if ctx is None:
        return []
    tags = []
    if ctx.negated:
        tags.append(_NEGATED_WORDS.get(fact_type or "", "(denied)"))
    if ctx.experiencer == "family":
        tags.append("(family history)")
    elif ctx.experiencer == "other":
        tags.append("(about someone else)")
    if ctx.temporality == "historical":
        tags.append("(historical)")
    elif ctx.temporality == "hypothetical":
        tags.append("(hypothetical)")
    if ctx.uncertain:
        tags.append("(uncertain)")
    return tags


_SAYS_NO = re.compile(r"\b(?:no|not|none|denies|denied|negative|without)\b", re.I)


def with_context(text: str, ctx: ClinicalContext | None, fact_type: str | None = None,
                 status: str | None = None) -> str:
    """The item text with the context tags it does not already say ("Family history: …"
    needs no "(family history)", "No known allergies" no "(denied)"). ``status``: a
    medicine's printed status, which the text shows; when it says the medicine is not
    taken now ("STOPPED", "withheld"), "(historical)" would only say it again, less exactly."""
    negated = set(_NEGATED_WORDS.values()) | {"(denied)"}
    not_taken = status_reading(status) == "not_current"
    extra = [t for t in context_tags(ctx, fact_type) if t.strip("()").lower() not in text.lower()
             and not (t in negated and _SAYS_NO.search(text))
             and not (t == "(historical)" and not_taken)]
    return " ".join([text, *extra])


def raises_red_flag(source_text: str, ctx: ClinicalContext | None) -> str | None:
    """A red flag counts only for an affirmed, current mention about the patient:
    the stored context is honoured first, then the text's own context."""
    if not_the_patients_fact(ctx):
        return None
    return red_flag(source_text)


def safety_finding(item: EvidenceItem, source_text: str, ctx: ClinicalContext | None) -> bool:
    """A critical result or an affirmed red flag: it bears on any decision, so a
    declined request still shows it whatever was asked."""
    critical = critical_result(item.fact_type, item.structured)
    return critical or raises_red_flag(source_text, ctx) is not None


def therapy_context(item_topics: set[str], question: ParsedQuestion) -> bool:
    """An allergy, a medication or a pregnancy finding, for a therapy request."""
    return question.therapy and bool(item_topics & set(THERAPY_CONTEXT))


def meant_as_asked(topic: str, fact_type: str, ctx: ClinicalContext | None) -> bool:
    """A family-history look-up wants a relative's mention (not a denied one); any other
    look-up wants the patient's own."""
    if topic == "family_history":
        return not (ctx and ctx.negated)
    return about_the_patient(fact_type, ctx)


# ------------------------------------------------------------------ relevance
def relevant(item_topics: set[str], topics: tuple[str, ...]) -> bool:
    """Whether an item answers a question about ``topics`` (no topics: everything)."""
    if not topics:
        return True
    wanted = expand(tuple(topics))
    if "labs" in wanted and item_topics & LAB_TEST_TOPICS:
        return True
    return bool(item_topics & wanted)


def direct(item_topics: set[str], topics: tuple[str, ...]) -> bool:
    """Named by the question itself, not only brought along as related evidence."""
    return bool(item_topics & set(topics)) or ("labs" in topics and bool(item_topics & LAB_TEST_TOPICS))


def review_bears_on(item: EvidenceItem, item_topics: set[str], question: ParsedQuestion, *,
                    source_text: str, context: ClinicalContext | None) -> bool:
    """Clinically relevant review findings appear whenever they bear on the question;
    low-value ones (preferences, demographics) only when asked for."""
    if raises_red_flag(source_text, context):
        return True  # safety first: a red flag bears on every answer
    topics = question.topics
    if question.analytes and item.fact_type == "lab_result":
        # "What was her lactate?" names its test: another test's result held for review
        # (the CRP told in the same sentence) bears on it only through a topic of its
        # own, not the catch-all "labs" the named test stands for. The named test's own
        # held results are found by name (``evidence._narrow_to_named_tests``).
        topics = tuple(t for t in topics if t != "labs")
    if topics and relevant(item_topics, topics):
        return True
    if therapy_context(item_topics, question):
        return True  # a possible allergy or pregnancy bears on any treatment chosen
    clinical = item.fact_type in _CLINICAL_FACT_TYPES or item.abnormal or \
        bool(CLINICAL_WORDS.search(item.text + " " + source_text)) or "pregnancy" in item_topics
    if not clinical:
        return False
    if question.intent is Intent.ATTENTION:
        return True
    if not topics:
        return False  # an unrecognised question: only red flags and vector-matched findings
    bears = set().union(*(BEARS_ON.get(t, {t}) for t in topics))
    return bool(item_topics & bears)


# ------------------------------------------------------------------ guidance for a finding
def _low_guidance(topic: str, flag: str | None) -> bool:
    """A low result of a topic whose low direction has guidance of its own."""
    t = TOPIC_BY_NAME.get(topic)
    return t is not None and bool(t.guideline_hint_low) and str(flag or "") in ("low", "critical_low")


def guidance_hint(topic: str, flag: str | None) -> str:
    """The guideline words an abnormal result of ``topic`` is searched with: the topic's
    own hint, or its low-direction hint when the result is low and the topic has one
    (a glucose of 38 is hypoglycemia: diabetes screening does not bear on it)."""
    t = TOPIC_BY_NAME[topic]
    return t.guideline_hint_low if _low_guidance(topic, flag) else t.guideline_hint


def guidance_key(topic_key: str, flag: str | None) -> str:
    """Which guidance an attention line shares: its topic's (or test's) key, and for a low
    result of a topic with low-direction guidance, that guidance's own key."""
    return f"{topic_key}:low" if _low_guidance(topic_key, flag) else topic_key
