"""What a look-up question names that the vocabulary may not know (pure).

A look-up frame ("is she on …?", "allergic to …", "history of …") catches a free term
that narrows the record topic ("does he have gout?" -> problems mentioning gout), and
says whether an answer may repeat it (``domain.policy.questions.clinical_terms.quotable``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.policy.questions.clinical_terms import clinical_term, quotable
from domain.policy.questions.patterns import PT
from domain.policy.questions.topics import find_topics

_TERM = (r"(?P<term>[a-z][a-z0-9' /-]{1,40}?)\s*"
         r"(?:[?.!]|$|\s+(?:now|currently|still|anymore|at the moment|on file|on record))")
LOOKUP_FRAMES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (name, topic, re.compile(rx, re.I)) for name, topic, rx in (
        ("on_medication", "medications", rf"\b(?:is|was|are)\s+{PT}\s+(?:currently\s+|still\s+|ever\s+)?(?:on|taking|"
                                         rf"using|prescribed)\s+(?:any\s+|a\s+|an\s+)?{_TERM}"),
        ("takes_medication", "medications", rf"\b(?:does|do|did)\s+{PT}\s+(?:still\s+)?(?:take|use)\s+(?:any\s+|a\s+|"
                                            rf"an\s+)?{_TERM}"),
        # "was she given co-amoxiclav?", "has he been treated with warfarin?"
        ("given_medication", "medications", rf"\b(?:is|was|were|has|have)\s+{PT}\s+(?:ever\s+)?(?:been\s+)?(?:given|"
                                            rf"prescribed|started\s+on|commenced\s+on|treated\s+with|put\s+on|"
                                            rf"switched\s+to|administered)\s+(?:any\s+|a\s+|an\s+)?{_TERM}"),
        # "was co-amoxiclav given?", "has any insulin been prescribed?"
        ("medication_given", "medications", r"\b(?:is|was|were|has|have)\s+(?:any\s+)?"
                                            r"(?P<term>[a-z][a-z0-9' /-]{1,40}?)\s+(?:ever\s+)?(?:been\s+)?"
                                            r"(?:given|prescribed|started|administered|dispensed)\s*[?.!]*\s*$"),
        # "was metformin stopped?", "has her ramipril been held?": what became of a medicine
        # ("increased" is left out: "is the potassium increased?" asks of a result)
        ("medication_changed", "medications", r"\b(?:is|was|were|has|have)\s+(?:any\s+|the\s+|her\s+|his\s+|their\s+)?"
                                              r"(?P<term>[a-z][a-z0-9' /-]{1,40}?)\s+(?:ever\s+)?(?:been\s+)?"
                                              r"(?:stopped|discontinued|ceased|held|withheld|suspended|restarted|"
                                              r"resumed)\b"),
        # "what was her warfarin dose?", "what is his current insulin dosage?": a medicine's
        # dose as recorded (a question of what to give is an unsafe request, decided apart)
        ("medication_dose", "medications", r"\b(?:what|which)\s+(?:is|was|'s|are|were)\s+(?:her|his|their|the)\s+"
                                           r"(?:current\s+|usual\s+|last\s+|latest\s+)?"
                                           r"(?P<term>[a-z][a-z0-9'/-]{1,40}?)\s+(?:dose|doses|dosage|dosing)\b"),
        ("allergic_to", "allergies", rf"\ballergic\s+to\s+(?:any\s+)?{_TERM}"),
        ("has_condition", "problems", rf"\b(?:does|do|did|has|have)\s+{PT}\s+(?:ever\s+)?(?:have|had|got|get|been "
                                      rf"diagnosed with)\s+(?:a\s+|an\s+|any\s+)?(?:history of\s+|hx of\s+)?{_TERM}"),
        ("history_of", "problems", rf"\b(?:history|hx|h/o)\s+of\s+(?:any\s+)?{_TERM}"),
        ("diagnosed_with", "problems", rf"\bdiagnosed\s+with\s+(?:a\s+|an\s+|any\s+)?{_TERM}"),
        ("on_problem_list", "problems", r"\b(?:is|was|are)\s+(?P<term>[a-z][a-z0-9' /-]{1,40}?)\s+(?:on|in)\s+"
                                        r"(?:her|his|their|the)\s+(?:problem list|chart|record|history)\b"),
        # "was there a pneumothorax?", "has there been any bleeding?": a finding anywhere in the
        # record's text (a problem, a note, a report line); only for a clinical term (not
        # "is there a pharmacy nearby?")
        ("there_was", "problems", r"\b(?:(?:is|was|are|were)\s+there|has there been|have there been)\s+(?:ever\s+)?"
                                  rf"(?:a|an|any)\s+(?:sign of\s+|signs of\s+|evidence of\s+|mention of\s+)?{_TERM}"),
    ))
_CLINICAL_ONLY_FRAMES = {"there_was"}
# Words that name a kind of record rather than a thing in it.
_GENERIC_TERMS = re.compile(r"^(?:any(?:thing)?|something|allerg\w*|med\w*|drugs?|problems?|conditions?|issues?|"
                            r"diagnos\w*|history|illness(?:es)?|diseases?|that|this|it|them|those|these|"
                            r"(?:a |any )?known \w+)$", re.I)
# Not a thing to find in the record at all: what a frame caught is a place in the record
# ("on file"), or a document or list ("the report for …", "lab results").
_NOT_A_TERM = re.compile(r"^(?:on|in|at|for|from|to|of|with|about|by|under|into|within|anything|something|"
                         r"everything|nothing)\b|"
                         r"\b(?:reports?|documents?|files?|charts?|records?|notes?|letters?|forms?|lists?|faxe?s?|"
                         r"uploads?|paperwork|summar(?:y|ies)|results?|labs?|tests?|visits?|appointments?)\b", re.I)


@dataclass(frozen=True)
class LookupTerms:
    terms: tuple[tuple[str, str], ...]  # (record topic, free term)
    fired: tuple[str, ...]  # the frames, for the trace
    quotable: tuple[str, ...]  # the terms an answer may repeat back (``quotable``)
    kinds: tuple[str, ...]  # record topics a frame names by its verb alone ("is he on anything for…")


# Frames whose verb names the kind of record whatever the term ("is he on anything for his heart?").
_KIND_FRAMES = {"on_medication", "takes_medication", "given_medication", "medication_given", "medication_changed",
                "allergic_to"}


def _without_kind_words(term: str, topic: str) -> tuple[str, str]:
    """A term naming an allergy without the words that name a kind of record: "drug
    allergies" -> "" (every allergy is asked about), "penicillin allergy" ->
    "penicillin", looked for among the allergies; any other term as it is."""
    words = term.split()
    if len(words) < 2 or not any(w.startswith("allerg") for w in words):
        return term, topic  # "heart disease" is what to look for, whole
    return " ".join(w for w in words if not _GENERIC_TERMS.match(w)), "allergies"


def lookup_terms(text: str) -> LookupTerms:
    """Free terms a look-up frame names that no specific topic covers, and the frames."""
    found: list[tuple[str, str]] = []
    fired: list[str] = []
    speakable: list[str] = []
    kinds: list[str] = []
    for name, topic, pattern in LOOKUP_FRAMES:
        m = pattern.search(text)
        if not m:
            continue
        if name in _KIND_FRAMES and topic not in kinds:
            kinds.append(topic)
        written = re.sub(r"\s+", " ", m.group("term").strip(" '-/"))
        written = re.sub(r"^(?:any|a|an|the|her|his|their)\s+", "", written, flags=re.I)
        term = written.lower()
        if not term or _GENERIC_TERMS.match(term) or _NOT_A_TERM.search(term):
            continue
        # "any drug allergies", "a penicillin allergy": words naming a kind of record say
        # where to look, not what for; an allergy word sends the rest to the allergies
        term, topic = _without_kind_words(term, topic)
        if not term:
            continue
        if set(find_topics(term)) - {"labs", "problems", "medications", "allergies"}:
            continue  # the vocabulary knows it ("diabetes", "metformin")
        if name in _CLINICAL_ONLY_FRAMES and not clinical_term(term):
            continue
        if (topic, term) not in found:
            found.append((topic, term))
            fired.append(f"lookup:{name}")
            if quotable(term, written) and term not in speakable:
                speakable.append(term)
    return LookupTerms(tuple(found), tuple(fired), tuple(speakable), tuple(kinds))
