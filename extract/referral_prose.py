"""Referral details written as prose: reason, service asked for, urgency (pure).

Referral letters often carry no "Reason for referral:" label; the request is a
sentence ("I would be grateful if you could see Mr Pettersen for exertional chest
tightness of six weeks' duration."). A sentence counts as a referral request only
when it has a *request* ("grateful if you could see", "I am writing to refer",
"thank you for seeing", "I would value your opinion on") whose object is a person
("Mr Pettersen", "this 34-year-old woman", "her"), so "Please see the table below
for details" asks for nothing. The reason is what follows the person after "for",
"regarding", "with", "because of", "who has (had)", "'s" ..., up to the end of the
clause; words that only name a service ("for a cardiology opinion") are not a
reason. The vocabulary below is data; the functions return what was printed,
with its offsets, so a citation quotes the letter exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# --------------------------------------------------------------------------- vocabulary (data)

REQUEST_PHRASES = (
    r"(?:be )?grateful if you (?:could|would|might) (?:kindly |please )?(?:see|review|assess|evaluate|examine)",
    r"(?:please|kindly) (?:could you |would you |can you )?(?:see|review|assess|evaluate|examine)",
    r"(?:could|would|can) you (?:please |kindly )?(?:see|review|assess|evaluate|examine)",
    r"(?:i am|i'm|we are|we're) (?:writing to |pleased to )?refer(?:ring)?",
    r"(?:writing|like|wish|want) to refer",
    r"thank you for (?:seeing|reviewing|assessing|agreeing to see)",
    r"(?:value|appreciate|welcome) your (?:opinion|advice|assessment|input|help|review|thoughts) (?:on|regarding|about|with|for)",
    r"(?:i|we) (?:have )?referred",
    r"(?:is|am|are) being referred",
    r"refer(?:ring)? (?:him|her|them|this)",
)

# Case matters for names (capitalised words) and not for the rest, hence the scoped flags.
PERSON_PATTERNS = (
    r"\b(?i:mr|mrs|ms|miss|mx|master)\.? [A-Z][\w'\u2019-]*(?: [A-Z][\w'\u2019-]*)*",
    r"\b(?i:him|her|them)\b",
    r"\b(?i:(?:this|my|our|the above(?:[- ]named)?|the|a)\s+(?:pleasant\s+)?(?:\d{1,3}[- ]year[- ]old\s+)?"
    r"(?:young\s+|elderly\s+|retired\s+)?(?:patient|man|woman|lady|gentleman|boy|girl|child|person|mother|father))\b",
    r"\b[A-Z][a-z'\u2019-]+ [A-Z][A-Za-z'\u2019-]+\b",
)

# What introduces the reason after the person, longest first; a possessive does too
# ("Mr Dunmore's worsening breathlessness").
REASON_INTRODUCERS = (
    r"who (?:has been experiencing|has developed|has noticed|has been|has had|is having|presents? with|"
    r"presented with|complains of|is experiencing|developed|reports|describes|noticed|has|had)",
    r"because of", r"due to", r"in view of", r"on account of", r"regarding", r"concerning", r"about", r"re",
    r"with(?! (?:the|these|those|this|that)\b)", r"for",
)

# A reason ends where the sentence moves on to something else.
CLAUSE_BREAKS = (
    r",\s*(?:which|who|as|and (?:i|we|she|he|they)|but|although|with a view)\b", r";", r"\s+[-\u2013\u2014]\s+",
    r"\s+(?:so that|in order to|with a view to|and would|and I would|as (?:she|he|they) (?:has|have))\b",
    r"\(",
)

# Words that make a "for ..." phrase a request for a service rather than a reason.
REQUEST_WORDS = frozenset("""
a an the your further specialist specialty opinion opinions assessment assessments review reviews advice
evaluation consultation consult management input investigation investigations appointment clinic service
services department team outpatient outpatients follow-up follow up and of please an urgent urgently routine
early soon possible treatment care
""".split())

# Leading words that introduce a reason but are not part of it.
REASON_PREFIXES = (
    r"(?:further |urgent |specialist |an? |your )*(?:assessment|investigation|evaluation|management|review|"
    r"consideration|treatment|advice|opinion)s? (?:of|on|regarding|for|about)\s+",
)

# Disciplines stand alone as a service ("refer to cardiology"); areas of care only
# with a service noun ("chest clinic", "memory service"), so "chest tightness" is
# not a service.
DISCIPLINES = (
    "cardiology", "dermatology", "endocrinology", "gastroenterology", "hepatology", "neurology", "rheumatology",
    "pulmonology", "respiratory medicine", "nephrology", "urology", "orthopaedics", "orthopedics",
    "otolaryngology", "ent", "ophthalmology", "gynaecology", "gynecology", "obstetrics", "oncology",
    "haematology", "hematology", "psychiatry", "psychology", "physiotherapy", "podiatry", "paediatrics",
    "pediatrics", "geriatrics", "general surgery", "vascular surgery", "colorectal surgery", "plastic surgery",
    "neurosurgery", "immunology", "audiology", "dietetics", "speech and language therapy", "endoscopy",
    "elderly care", "mental health",
)
AREAS = (
    "cardiac", "diabetes", "respiratory", "chest", "renal", "orthopaedic", "orthopedic", "eye", "breast",
    "paediatric", "pediatric", "surgical", "vascular", "colorectal", "allergy", "sleep", "pain", "memory",
    "falls", "sexual health", "spinal", "hand", "maxillofacial", "dental", "heart failure", "stroke", "skin",
    "infectious diseases", "fracture", "continence", "lipid", "hypertension", "thyroid", "rapid access chest pain",
)
SERVICE_NOUNS = ("clinic", "service", "department", "team", "unit", "outpatients", "opinion", "assessment",
                 "review", "surgeons", "surgery", "nurse", "specialist")
SERVICE_QUALIFIERS = ("rapid[- ]access", "general", "upper gi", "lower gi", "chest pain", "two[- ]week[- ]wait",
                      "2[- ]week[- ]wait", "urgent", "specialist", "community", "outpatient")

# Urgency as printed -> one level. Order matters: "non-urgent" before "urgent".
URGENCY_PHRASES: tuple[tuple[str, str], ...] = (
    (r"non[- ]?urgent(?:ly)?|not urgent(?:ly)?|semi[- ]urgent(?:ly)?", "routine"),
    (r"two[- ]?week[- ]?wait|2[- ]?week[- ]?wait|2ww|two[- ]week rule|2[- ]week rule|fast[- ]track", "2-week wait"),
    (r"as a matter of urgency|urgent(?:ly)?|emergency|same[- ]day|immediately", "urgent"),
    (r"as soon as (?:possible|you can)|at your earliest convenience|soon|expedited?|priority", "soon"),
    (r"routine(?:ly)?|on a routine basis|non[- ]?urgent", "routine"),
)

# --------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of the text as printed, with its offsets, and a normalised value."""

    text: str
    start: int
    end: int
    value: str = ""


_REQUEST = re.compile("|".join(f"(?:{p})" for p in REQUEST_PHRASES), re.I)
_PERSON = re.compile("|".join(f"(?:{p})" for p in PERSON_PATTERNS))
_INTRODUCER = re.compile(r"(?:(?<=\w)(?:'s|\u2019s)\b|\b(?:" + "|".join(REASON_INTRODUCERS) + r")\b)", re.I)
_BREAK = re.compile("|".join(CLAUSE_BREAKS), re.I)
_PREFIX = re.compile(r"^(?:" + "|".join(REASON_PREFIXES) + r")+", re.I)
_QUALIFIER = r"(?:(?:" + "|".join(SERVICE_QUALIFIERS) + r")\s+)?"
_NOUN = r"(?:" + "|".join(SERVICE_NOUNS) + r")"
_SPECIALTY = re.compile(
    r"\b" + _QUALIFIER + r"(?:(?:" + "|".join(sorted(DISCIPLINES, key=len, reverse=True)) + r")(?:\s+" + _NOUN
    + r")?|(?:" + "|".join(sorted(AREAS, key=len, reverse=True)) + r")\s+" + _NOUN + r")\b", re.I)
_ASKS = re.compile(r"\s*(?:please\s+)?(?:could|would|can|will)\s+you\b", re.I)
_CONNECTIVE = frozenset({"of", "on", "regarding", "for", "about", "concerning", "re", "into", "with"})
_URGENCY = [(re.compile(rf"\b(?:{p})\b", re.I), level) for p, level in URGENCY_PHRASES]
_SENTENCE_END = re.compile(r"(?<!\b[Mm]r)(?<!\b[Mm]rs)(?<!\b[Mm]s)(?<!\b[Dd]r)(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)"
                           r"[.!?](?=\s+[A-Z(\"'\u2018\u201c]|\s*$)")


def sentences(text: str) -> list[Span]:
    """The sentences of a paragraph, with offsets ("Mr." and "Dr." do not end one)."""
    out, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        end = m.end()
        if text[start:end].strip():
            out.append(_strip(text, start, end))
        start = end
    if text[start:].strip():
        out.append(_strip(text, start, len(text)))
    return out


def _strip(text: str, start: int, end: int, chars: str = " \t\n") -> Span:
    while start < end and text[start] in chars:
        start += 1
    while end > start and text[end - 1] in chars:
        end -= 1
    return Span(text[start:end], start, end)


def request_in(sentence: str) -> Span | None:
    """The request and the person it is about ("could see Mr Pettersen"), if the
    sentence asks a colleague to see someone."""
    for m in _REQUEST.finditer(sentence):
        rest = sentence[m.end():]
        who = _PERSON.search(rest)
        # The person comes right after the request (a few words at most: "see Mrs Adeyemi-Park").
        if who and len(rest[: who.start()].split()) <= 3:
            end = m.end() + who.end()
            return Span(sentence[m.start(): end], m.start(), end)
    return None


def reason_in(sentence: str) -> Span | None:
    """Why the patient is referred, as printed in a request sentence, or None."""
    req = request_in(sentence)
    if req is None:
        return None
    for intro in _INTRODUCER.finditer(sentence, req.end - 3 if sentence[req.end - 2: req.end] in ("'s", "\u2019s")
                                      else req.end):
        start = intro.end()
        stop = _BREAK.search(sentence, start)
        end = stop.start() if stop else len(sentence)
        span = _strip(sentence, start, end, " \t\n,.;:")
        span = _drop_request_head(sentence, span)
        if span is None:
            continue  # "for a cardiology opinion": a service, not a reason
        if span.text.endswith("?") and _ASKS.match(sentence):  # "Could you see her with ...?" asks, not doubts
            span = _strip(sentence, span.start, span.end, " ?")
        return span
    return None


def _is_request_word(word: str) -> bool:
    return word in REQUEST_WORDS or bool(_SPECIALTY.fullmatch(word)) or word in DISCIPLINES


def _drop_request_head(sentence: str, span: Span) -> Span | None:
    """``span`` without a leading request ("a cardiology opinion regarding recurrent
    syncope" -> "recurrent syncope"); None when it is nothing but a request."""
    prefix = _PREFIX.match(span.text)
    if prefix:
        span = _strip(sentence, span.start + prefix.end(), span.end, " \t\n,.;:")
    pos = span.start
    for m in re.finditer(r"\S+", span.text):
        word = m.group(0).lower().strip(",.")
        if word in _CONNECTIVE and pos > span.start:
            rest = _strip(sentence, span.start + m.end(), span.end, " \t\n,.;:")
            return _drop_request_head(sentence, rest) if rest.text else None
        if not _is_request_word(word):
            return span
        pos = span.start + m.end()
    return None  # only request words


def service_in(text: str) -> Span | None:
    """The specialty or service asked for ("rheumatology clinic", "cardiology")."""
    m = _SPECIALTY.search(text)
    if not m:
        return None
    return Span(m.group(0), m.start(), m.end(), m.group(0))


def urgency_in(text: str) -> Span | None:
    """How soon the patient should be seen: one of urgent, soon, routine, 2-week wait,
    with the words as printed ("urgently", "under the two-week-wait pathway")."""
    best: Span | None = None
    for pattern, level in _URGENCY:
        for m in pattern.finditer(text):
            if best is None or m.start() < best.start:
                best = Span(m.group(0), m.start(), m.end(), level)
            break
    return best
