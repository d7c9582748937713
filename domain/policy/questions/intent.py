"""Understanding a clinician's question with rules a reviewer can read (pure).

A question is reduced to
- *topics*: what it is about (``domain.policy.questions.topics``), plus free *terms* where a
  look-up names something the vocabulary does not know ("is she on apixaban?");
- an *intent*: look something up, what deserves attention, or guideline advice;
- *unsafe requests*: asking the workbench to decide — make a diagnosis (from labs
  or symptoms), choose a treatment, a dose, or a medication change. Asking what the
  record documents is a look-up, not a diagnosis: "does she have diabetes?",
  "any hx of CKD?", "is she on metformin?" are answered with citations;
- *therapy*: whether a declined request chooses or changes a therapy (a dose, a
  medication change, "what antibiotic…"): the allergies, medications and pregnancy on
  record bear on it, unlike a care decision ("should he see a hematologist?");
- *scope*: whether it is about the chart at all ("write me a poem" is not; a question
  that names the patient or the record always is), and whether it leans on the
  previous turn ("and her LDL?", "when was that?");
- which free terms an answer may repeat back (``quotable``): clinical ones, never a
  name or other free text ("No “apixaban” found…", but not "No “report for …” found").

Every rule is a named regular expression in a table, so a reviewer can see which rule
fired (the name is recorded in the supervisor's handoff reason). The tables of unsafe
requests live in ``domain.policy.questions.unsafe_requests``, the look-up frames in
``domain.policy.questions.lookup_terms``, the clinical vocabulary in ``domain.policy.questions.clinical_terms``;
intent, scope and follow-ups are read here, and :func:`parse_question` puts them together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from domain.policy.facts.analytes import analytes_named
from domain.policy.questions.asked_dates import AskedDate, asked_date
from domain.policy.questions.clinical_terms import CLINICAL_SUBJECT, DRUG_STEMS, quotable
from domain.policy.questions.lookup_terms import lookup_terms
from domain.policy.questions.patterns import named_rules
from domain.policy.questions.topics import TOPIC_BY_NAME, find_topics, topic_of_analyte
from domain.policy.questions.unsafe_requests import Unsafe, chooses_therapy, unsafe_requests


class Intent(str, Enum):
    LOOKUP = "lookup"  # what is / list / when was / does the record say
    ATTENTION = "attention"  # interpret, anything abnormal or critical, what deserves attention
    GUIDELINE = "guideline"  # what do the guidelines say, how often, screening due


# ------------------------------------------------------------------ intent
_ATTENTION = re.compile(
    r"\b(attention|concern(ing|s)?|worr(y|ied|ying|isome)|abnormal\w*|out of range|flag(ged)?|interpret\w*|"
    r"critical|urgent|alarming|dangerous|panic|significan\w*|what stands out|anything (important|notable|unusual)|"
    r"(well |poorly |un)?controlled|at goal|on target|"
    r"red flags?|is (this|that|it) (normal|high|low|ok)|too high|too low|elevated|summar\w*|overview|review|"
    r"what should (i|we) (know|look at|watch))\b", re.I)
_GUIDELINE = re.compile(
    r"\b(guidelines?|recommend\w*|how often|when should|screening|due for|target|goal|threshold|"
    r"standard of care|uspstf|ada|acc|aha|kdigo|evidence|recheck\w*|repeat\w*|retest\w*|"
    r"should (her|his|their|the) [\w-]+ be)\b", re.I)

# ------------------------------------------------------------------ scope
# Never what this workbench answers, whatever else the question says.
OFF_TOPIC_ALWAYS = named_rules(
    ("creative_writing", r"\b(?:poem|poetry|haiku|limerick|sonnet|song|lyrics|rap|story|stories|joke|jokes|"
                         r"riddle|essay)\b"),
    ("about_the_assistant", r"\b(?:who|what)\s+are\s+you\b|\bare you (?:a |an )?(?:human|robot|ai|real|alive)\b|"
                            r"\byour (?:name|favou?rite)\b|\bhow are you\b"),
    ("programming", r"\b(?:python|javascript|sql query|regex|code snippet|write (?:a |some )?code)\b"),
)
# The outside world: off topic unless the question also names something in the chart.
OFF_TOPIC_WORLD = named_rules(
    ("weather", r"\b(?:weather|forecast|raining|sunny|snowing)\b"),
    ("news_and_markets", r"\b(?:news|headlines|stocks?|shares|crypto|bitcoin|exchange rate|election|president|"
                         r"prime minister)\b"),
    ("sport_and_entertainment", r"\b(?:who won|football|soccer|basketball|baseball|nba|nfl|movies?|films?|"
                                r"tv show|netflix|celebrity)\b"),
    ("travel_and_food", r"\b(?:recipes?|restaurants?|flights?|hotels?|vacation|holiday|tourist|directions to)\b"),
    ("general_knowledge", r"\b(?:capital of|population of|translate|meaning of life|tallest|how far is)\b"),
)
# Words that put a question without a known topic inside the chart: the patient,
# the record, or clinical subject matter (symptoms, body, conditions by their endings).
PATIENT_REFERENCE = re.compile(r"\b(?:she|he|her|his|him|hers|they|their|them|pt|pt's|patient|patient's|mrn)\b", re.I)
RECORD_WORDS = re.compile(
    r"\b(?:chart|record|notes?|documents?|visit|encounter|labs?|results?|values?|levels?|readings?|tests?|vitals?|"
    r"hx|dx|meds?|medications?|prescri\w*|dose|allerg\w*|problems?|diagnos\w*|conditions?|complain\w*|referr\w*|"
    r"follow[- ]?up|guidelines?|reports?|impressions?|findings?|on file|on record)\b", re.I)


def about_the_record(text: str) -> bool:
    """The question names the patient ("his", "her", "the patient") or the record ("on record")."""
    return bool(PATIENT_REFERENCE.search(text) or RECORD_WORDS.search(text))


# ------------------------------------------------------------------ follow-ups
# A follow-up leans on the previous clinical topic by a connective, a bare
# possessive, a pronoun or a time ellipsis; the last two only in a short question.
FOLLOW_UP_CUES = named_rules(
    ("connective", r"^\s*(?:and|also|plus|then|so|ok(?:ay)?,?\s+(?:and|what about)|what about|how about|"
                   r"same (?:for|with)|what of)\b"),
    ("bare_possessive", r"^\s*(?:her|his|their|its|the)\s+[\w-]+(?:\s+[\w-]+)?\s*\??\s*$"),
)
SHORT_FOLLOW_UP_CUES = named_rules(
    ("pronoun", r"\b(?:it|that|this|those|these|them|the same|the (?:result|results|value|values|level|reading|"
                r"number|test|one|last one|previous one|earlier one|date|trend))\b"),
    ("time_ellipsis", r"\b(?:last|previous|prior|earlier|before|since)\s+(?:year|month|week|time|visit|one|result|"
                      r"reading|value|that)s?\b|\btrend\b|\bover time\b"),
)
_SHORT = 8  # words
_CONNECTIVE = re.compile(r"^\s*(?:and|also|plus|then|so|ok(?:ay)?,?|what about|how about|same (?:for|with)|what of)"
                         r"(?:\s+(?:what about|how about))?\s+", re.I)
_WHEN = re.compile(r"\b(?:19|20)\d\d\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*\b|\b(?:today|yesterday|"
                   r"now|then|ago|recently|lately)\b", re.I)
# Record kinds an ellipsis may name something new in ("is she on metformin?" -> "and
# apixaban?" asks about a medication); any other topic is a lab or a problem.
_RECORD_KINDS = ("medications", "allergies", "family_history")


@dataclass(frozen=True)
class ParsedQuestion:
    text: str
    topics: tuple[str, ...]
    intent: Intent
    unsafe: tuple[Unsafe, ...] = ()
    follow_up: bool = False
    inherited: tuple[str, ...] = field(default=())  # what came from the previous turn
    terms: tuple[tuple[str, str], ...] = ()  # (record topic, free term) named by a look-up frame
    # The free terms an answer may repeat back (clinical, not a name: ``quotable``); any
    # other term is said in general words.
    quotable: tuple[str, ...] = ()
    # The request chooses or changes a therapy (``chooses_therapy``): the patient's
    # allergies, medications and pregnancy bear on it.
    therapy: bool = False
    analytes: tuple[str, ...] = ()  # canonical lab analytes the question names ("his eGFR and creatinine")
    out_of_scope: bool = False
    clinical_subject: bool = False  # names symptoms, body or conditions (something to narrow to)
    rules: tuple[str, ...] = ()  # names of the rules that fired, for the trace
    on_date: AskedDate | None = None  # the day it asks about ("her sodium on 2 Dec")

    @property
    def conditions(self) -> tuple[str, ...]:
        return tuple(t for t in self.topics if TOPIC_BY_NAME[t].is_condition)



def off_topic(text: str, topics: tuple[str, ...]) -> str | None:
    """The rule that puts the question outside the chart, if any. The outside world's
    words ("film", "news") do not put a question about the patient or the record outside
    it ("the impression of his chest film", "anything new on record?")."""
    for rule in OFF_TOPIC_ALWAYS:
        if rule.search(text):
            return rule.name
    if not topics and not about_the_record(text):
        for rule in OFF_TOPIC_WORLD:
            if rule.search(text):
                return rule.name
    return None


def _follow_up_cue(text: str) -> str | None:
    for rule in FOLLOW_UP_CUES:
        if rule.search(text):
            return rule.name
    if len(text.split()) <= _SHORT:
        for rule in SHORT_FOLLOW_UP_CUES:
            if rule.search(text):
                return rule.name
    return None


def _ellipsis_term(text: str) -> str | None:
    """What a connective follow-up names beyond pronouns and times ("and her ferritin?"
    -> "ferritin"); None when it only points back ("and the date?", "what about last year?")."""
    said = _CONNECTIVE.sub("", text, count=1).strip(" ?.!,")
    bare = any(r.name == "bare_possessive" and r.search(text) for r in FOLLOW_UP_CUES)  # "her ferritin?"
    if (said == text.strip(" ?.!,") and not bare) or _WHEN.search(said) or \
            any(rule.search(said) for rule in SHORT_FOLLOW_UP_CUES):
        return None
    rest = re.sub(r"^(?:her|his|their|its|the|any|a|an)\s+", "", said, flags=re.I)
    rest = re.sub(r"\s+(?:levels?|values?|results?|readings?|numbers?|tests?)$", "", rest, flags=re.I)
    if not rest or len(rest.split()) > 4:
        return None
    return rest  # as written (``quotable`` reads the capitals)


def _record_kind(topics: tuple[str, ...]) -> str:
    for topic in topics:
        if topic in _RECORD_KINDS:
            return topic
        if TOPIC_BY_NAME[topic].vitals:
            return "vitals"
        if TOPIC_BY_NAME[topic].is_lab:
            return "labs"
    return "problems"


def parse_question(text: str, previous: ParsedQuestion | None = None) -> ParsedQuestion:
    """Pure: topics, named tests, intent, unsafe requests, scope and follow-up grounding of one turn."""
    topics = find_topics(text)
    off = off_topic(text, topics)
    if off:
        return ParsedQuestion(text=text, topics=(), intent=Intent.LOOKUP, out_of_scope=True,
                              rules=(f"out_of_scope:{off}",))
    unsafe, rules = unsafe_requests(text, topics)
    if _ATTENTION.search(text):
        intent = Intent.ATTENTION
    elif _GUIDELINE.search(text):
        intent = Intent.GUIDELINE
    else:
        intent = Intent.LOOKUP
    terms: tuple[tuple[str, str], ...] = ()
    speakable: tuple[str, ...] = ()
    if not unsafe:
        framed = lookup_terms(text)
        terms, speakable = framed.terms, framed.quotable
        rules += framed.fired
        topics += tuple(k for k in framed.kinds if k not in topics)
    if "family_history" in topics:
        # "a family history of diabetes" is about relatives: the condition narrows the
        # family history, it is not a question about the patient's own diabetes.
        named = [t for t in topics if TOPIC_BY_NAME[t].is_condition]
        terms += tuple(("family_history", TOPIC_BY_NAME[t].label) for t in named)
        speakable += tuple(TOPIC_BY_NAME[t].label for t in named)  # the vocabulary's own words
        topics = tuple(t for t in topics if t not in named)
    # Tests the question names, unless a look-up frame names them as something else
    # ("is he on iron?" asks about a medication, not the iron result).
    framed = {a for _, term in terms for a in analytes_named(term)}
    analytes = tuple(a for a in analytes_named(text) if a not in framed)
    for topic in [*(t for t, _ in terms), *(topic_of_analyte(a) for a in analytes)]:
        if topic not in topics and not (topic == "labs" and any(TOPIC_BY_NAME[t].is_lab for t in topics)):
            topics += (topic,)

    cue = _follow_up_cue(text)
    grounded = previous is not None and not previous.out_of_scope and bool(previous.topics)
    follow_up = grounded and cue is not None
    inherited: list[str] = []
    if follow_up and previous is not None:
        rules.append(f"follow_up:{cue}")
        written = _ellipsis_term(text) if not topics else None
        if written:
            # Same question about something the vocabulary does not know: search the
            # same kind of record for it, not the previous topic.
            kind = _record_kind(previous.topics)
            new_term = written.lower()
            topics, terms = (kind,), ((kind, new_term),)
            speakable = (new_term,) if quotable(new_term, written) else ()
            inherited.append(f"the kind of record ({kind})")
        elif not topics:
            topics, terms, analytes = previous.topics, previous.terms, previous.analytes
            speakable = previous.quotable
            inherited.append("topics")
        if intent is Intent.LOOKUP and previous.intent is not Intent.LOOKUP:
            intent = previous.intent
            inherited.append("intent")
    if not topics and {Unsafe.DOSING, Unsafe.MEDICATION_CHANGE} & set(unsafe):
        topics = ("medications",)  # a dose or a medication change is about her medications
        inherited.append("topics implied by the request")
    clinical_subject = bool(topics) or bool(CLINICAL_SUBJECT.search(text) or DRUG_STEMS.search(text))
    in_chart = clinical_subject or about_the_record(text) or bool(unsafe) or intent is not Intent.LOOKUP
    if not in_chart:
        rules.append("out_of_scope:nothing_about_the_chart")
    therapy = chooses_therapy(text, unsafe, rules, topics)
    if therapy:
        rules.append("therapy:allergies_medications_pregnancy_bear_on_it")
    return ParsedQuestion(text=text, topics=topics, intent=intent, unsafe=unsafe, follow_up=follow_up,
                          inherited=tuple(inherited), terms=terms, quotable=speakable, therapy=therapy,
                          analytes=analytes, out_of_scope=not in_chart, clinical_subject=clinical_subject,
                          rules=tuple(rules), on_date=asked_date(text))
