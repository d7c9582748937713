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

from extract.values.prose_text import Span, strip_span

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

# How soon, as a time frame ("within two weeks", "in the next 48 hours", "within a
# fortnight"): the level follows the longest wait the words allow.
TIME_FRAME_OPENERS = (r"within(?: the next| the coming)?", r"in the (?:next|coming)", r"over the next",
                      r"no later than", r"not later than")
NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3,
                "few": 3, "several": 5}
UNIT_DAYS = {"hour": 1 / 24, "hr": 1 / 24, "h": 1 / 24, "day": 1, "working day": 1.4, "business day": 1.4,
             "week": 7, "wk": 7, "fortnight": 14, "month": 30, "mo": 30}
# A wait of at most this many days is urgent, at most SOON_DAYS soon, longer routine.
URGENT_DAYS = 3
SOON_DAYS = 31


def level_for_days(days: float) -> str:
    """The urgency level of a wait of ``days``."""
    return "urgent" if days <= URGENT_DAYS else "soon" if days <= SOON_DAYS else "routine"


# --------------------------------------------------------------------------- reading


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
        span = strip_span(sentence, start, end, " \t\n,.;:")
        span = _drop_request_head(sentence, span)
        if span is None:
            continue  # "for a cardiology opinion": a service, not a reason
        if span.text.endswith("?") and _ASKS.match(sentence):  # "Could you see her with ...?" asks, not doubts
            span = strip_span(sentence, span.start, span.end, " ?")
        return span
    return None


def _is_request_word(word: str) -> bool:
    return word in REQUEST_WORDS or bool(_SPECIALTY.fullmatch(word)) or word in DISCIPLINES


def _drop_request_head(sentence: str, span: Span) -> Span | None:
    """``span`` without a leading request ("a cardiology opinion regarding recurrent
    syncope" -> "recurrent syncope"); None when it is nothing but a request."""
    prefix = _PREFIX.match(span.text)
    if prefix:
        span = strip_span(sentence, span.start + prefix.end(), span.end, " \t\n,.;:")
    pos = span.start
    for m in re.finditer(r"\S+", span.text):
        word = m.group(0).lower().strip(",.")
        if word in _CONNECTIVE and pos > span.start:
            rest = strip_span(sentence, span.start + m.end(), span.end, " \t\n,.;:")
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


_NUMBER = r"(?:\d+(?:\.\d+)?(?:\s*(?:-|to|\u2013)\s*\d+(?:\.\d+)?)?|" + "|".join(
    sorted((re.escape(w).replace(r"\ ", r"\s+") for w in NUMBER_WORDS), key=len, reverse=True)) + ")"
_UNIT = r"(?:working\s+days?|business\s+days?|hours?|hrs?|h|days?|weeks?|wks?|fortnights?|months?|mos?)"
# Clinical shorthand: 2/52 is two weeks, 3/12 three months, 5/7 five days.
_FRACTION_UNIT = {"52": "week", "12": "month", "7": "day"}
_TIME_FRAME = re.compile(rf"\b(?:{'|'.join(TIME_FRAME_OPENERS)})\s+(?:(?:(?P<n>{_NUMBER})(?:\s+|-)?)?(?P<unit>{_UNIT})\b"
                         rf"|(?P<fn>\d{{1,2}})/(?P<fd>52|12|7)\b)", re.I)


def _days(number: str | None, unit: str) -> float:
    """A time frame in days; of a range ("2-3 weeks") its longest."""
    unit = re.sub(r"\s+", " ", unit.lower())
    unit = unit if unit in UNIT_DAYS else unit[:-1] if unit.endswith("s") and unit[:-1] in UNIT_DAYS else unit
    n = 1.0
    if number:
        words = re.sub(r"\s+", " ", number.lower())
        digits = re.findall(r"\d+(?:\.\d+)?", words)
        n = max(map(float, digits)) if digits else float(NUMBER_WORDS.get(words, 1))
    return n * UNIT_DAYS.get(unit, 30)


def time_frame_in(text: str) -> Span | None:
    """An urgency given as a time frame ("within two weeks" -> soon, "within 48
    hours" -> urgent, "within the next 3 months" -> routine, "within 2/52" -> soon),
    as printed."""
    m = _TIME_FRAME.search(text)
    if m is None:
        return None
    days = _days(m.group("fn"), _FRACTION_UNIT[m.group("fd")]) if m.group("fd") else _days(m.group("n"), m.group("unit"))
    return Span(m.group(0), m.start(), m.end(), level_for_days(days))


def urgency_in(text: str) -> Span | None:
    """How soon the patient should be seen: one of urgent, soon, routine, 2-week wait,
    with the words as printed ("urgently", "under the two-week-wait pathway",
    "within two weeks"). Where several are printed the first counts."""
    best: Span | None = time_frame_in(text)
    for pattern, level in _URGENCY:
        for m in pattern.finditer(text):
            if best is None or m.start() < best.start:
                best = Span(m.group(0), m.start(), m.end(), level)
            break
    return best
