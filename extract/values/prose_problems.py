"""Problems told in sentences (pure): "a background of type 2 diabetes and
hypertension", "PMH: AF, CKD stage 3", "She was diagnosed with gout in 2019",
"known to have asthma".

A problem is what follows a cue phrase that introduces a person's conditions
(data below), up to the end of its clause, cut into items at commas and "and"/"or".
Nothing is looked up; an item longer than a name (``MAX_PROBLEM_WORDS``) is a
sentence the reader cannot take apart and is left out. "No history of diabetes" is
read like "a history of diabetes": the context policy says it is negated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from domain.policy.checks.indications import condition_words, named_conditions
from extract.values.prose_text import Span, clause_items

# --------------------------------------------------------------------------- vocabulary (data)

# Phrases after which a sentence lists conditions, longest first.
PROBLEM_CUES = (
    r"(?:past )?medical history (?:is )?(?:of|includes?|including|notable for|significant for|remarkable for)",
    r"(?:past |relevant |significant )?(?:medical |surgical )?history (?:of|includes?|including)",
    r"p\.?m\.?h\.?x?\s*(?:includes?|of|is|:|-)", r"background (?:history )?(?:of|includes?|including|:)",
    r"(?:a )?(?:known )?diagnosis of", r"(?:was|were|been|is) diagnosed with", r"diagnosed with",
    r"known to have", r"(?:she|he|they) (?:is )?known (?:with|to be)", r"(?:she|he|they) (?:also )?(?:has|have) known",
    # "She has longstanding hypertension", "Mr Taufa has established gout": held for years, said so.
    # An article after it is the verb: "has established a clinic".
    r"(?:has|have) (?:longstanding|long-standing|long standing|established)(?!\s+(?:a|an|the|this|that)\b)",
    r"suffers? from", r"comorbidities (?:include|including|are|of|:)", r"co-morbidities (?:include|including|are|of|:)",
    r"(?:other )?(?:medical )?problems (?:include|including|are|:)", r"conditions (?:include|including|are|:)",
)
# A problem list in a sentence ends where the clause does.
PROBLEM_STOPS = (
    r"[;!?]", r"\.(?=\s|$)", r",\s*(?:which|who|for which|with|without|and (?:she|he|they|her|his|is|was|has|there))\b",
    r"\s(?:which|who|for which|for (?:which|whom)|since|diagnosed|treated|managed|controlled by|on (?!the\b)|"
    r"requiring|needing|but|although|because|with (?:a|an|the) |in (?:\d{4}|the past|childhood)|"
    r"(?:\d+|several|many|two|three|four|five|ten) years? ago|last year)\b", r"\s[-\u2013\u2014]\s",
)
# Words that are no condition although a cue stands before them ("She has been well").
NOT_A_PROBLEM = frozenset("""
been had a an no not some any good well fine several many been been otherwise always never also just recently
noticed experienced developed become been seen tried taken lost gained two three four five his her their
been difficulty trouble problems care
""".split())
MAX_PROBLEM_WORDS = 6
# An item that only says how a condition stands ("a history of hypertension for 15 years,
# untreated"): the condition's state, not another condition.
_STATE_ONLY = re.compile(r"(?:(?:well|poorly|partially|not)[- ])?(?:un)?(?:treated|controlled)|stable|resolved|"
                         r"improving|worsening|ongoing|active|inactive|in remission", re.I)

# "She has atrial fibrillation": after a plain "has", only the items that open with a
# condition the workbench knows by name (``named_condition_at``) are conditions.
HAS_CUE = r"(?:also\s+)?(?:has|have)\s+(?:also\s+|both\s+)?"
# "a 65 year old man with type 2 diabetes and CKD", how a referral letter introduces its
# patient: the cue names the person; as after "has", only named conditions count ("a
# 40-year-old woman with a two-week cough" lists none).
AGED_WITH_CUE = (r"(?:\d{1,3}|an?)[- ]?(?:years?|yrs?|y\.?o\.?)[- ]?(?:old\s+)?"
                 r"(?:man|woman|male|female|gentleman|lady|boy|girl|patient|person|child|infant|mother|father)"
                 r"\s+with\s+")
SHORT_TERM = 4  # a name this short ("AF", "CKD", "DVT") counts only in capitals
# Who may "have" a condition: the word before "has" ("she has", "her mother has"); a
# capitalised name counts too.
PERSON_WORDS = frozenset("""
she he they i we you patient patients mother father brother brothers sister sisters son sons daughter daughters
parent parents sibling siblings husband wife partner grandmother grandfather aunt uncle cousin twin both also
""".split())
# Capitalised words before "has" that name nobody: "This has", "Who has heart failure?".
NOT_A_PERSON = frozenset("the this that it who what which whoever whichever nobody everyone anyone".split())
# Words that make a condition's name part of something else: "a heart failure nurse".
SERVICE_WORDS = frozenset("""
nurse nurses clinic clinics team service services specialist specialists appointment appointments review
leaflet plan pack diary monitor meter programme program educator group
""".split())

# An assessment and plan numbered by problem: each item opens with the condition it is
# about, then what is to be done ("2. HTN, not at goal - increase lisinopril", "3) Obesity:
# dietitian referral"). Only an opening that is a condition the workbench knows by name,
# whole, counts: "1. Diabetes education booked" and "2. Asthma inhaler technique" are none.
_NUMBERED_ITEM = re.compile(r"^\s*\(?\d{1,2}[.)]\s+")
_ITEM_HEAD_END = re.compile(r"\s*[,:;(]|\s+[-\u2013\u2014]\s|\.?\s*$|\.\s|\s+with\s")
# Its stage or type, part of the condition's name ("2. CKD stage 3a - start losartan").
_ITEM_STAGE = re.compile(r"\s+(?:stage|grade|class|type)\s+(?:[0-9]{1,2}|[ivx]{1,4})[ab]?\b", re.I)

_CUE = re.compile(r"\b(?:" + "|".join(PROBLEM_CUES) + r")\s*", re.I)
_HAS = re.compile(rf"\b{HAS_CUE}", re.I)
_AGED_WITH = re.compile(rf"\b{AGED_WITH_CUE}", re.I)
_STOP = re.compile("|".join(PROBLEM_STOPS), re.I)
@dataclass(frozen=True, slots=True)
class ProblemMention:
    """A condition named in a sentence, as printed, and the cue that introduced it."""

    description: Span
    cue: Span


def problems_in(sentence: str) -> list[ProblemMention]:
    """Every condition the sentence lists after a cue, or opens a numbered item with
    (``_numbered_head``), in order."""
    out: list[ProblemMention] = [head] if (head := _numbered_head(sentence)) else []
    # (cue, only named conditions count, the cue names the person itself)
    cues = [(cue, False, True) for cue in _CUE.finditer(sentence)]
    cues += [(cue, True, False) for cue in _HAS.finditer(sentence)]
    cues += [(cue, True, True) for cue in _AGED_WITH.finditer(sentence)]
    for cue, named_only, names_person in sorted(cues, key=lambda c: c[0].start()):
        if any(p.description.start <= cue.start() < p.description.end or p.cue.start <= cue.start() < p.cue.end
               for p in out):
            continue  # the cue's words are part of a condition or a cue already read
        stop = _STOP.search(sentence, cue.end())
        end = stop.start() if stop else len(sentence)
        for item in clause_items(sentence, cue.end(), end, max_words=MAX_PROBLEM_WORDS):
            first = item.text.split()[0].lower().strip(",.:")
            if first in NOT_A_PROBLEM or not re.match(r"[A-Za-z]", item.text) \
                    or _STATE_ONLY.fullmatch(item.text.strip(" .,;:")):
                continue
            if named_only and not (named_condition_at(sentence, item.start)
                                   and (names_person or _a_person_has(sentence, cue.start()))
                                   and not SERVICE_WORDS.intersection(w.lower() for w in item.text.split())):
                continue  # "has hypertension and takes amlodipine": only what is named as a condition
            if any(p.description.start < item.end and item.start < p.description.end for p in out):
                continue  # "He has a background of IHD and gout": read once, whichever cue reaches it first
            out.append(ProblemMention(item, Span(cue.group(0).strip(), cue.start(), cue.end())))
    return sorted(out, key=lambda p: p.description.start)


def _numbered_head(sentence: str) -> ProblemMention | None:
    """The condition a numbered assessment item opens with, its number as the cue."""
    number = _NUMBERED_ITEM.match(sentence)
    named = _named_conditions().match(sentence, number.end()) if number else None
    if named is None:
        return None
    end = (stage.end() if (stage := _ITEM_STAGE.match(sentence, named.end())) else named.end())
    if not _ITEM_HEAD_END.match(sentence, end):
        return None
    return ProblemMention(Span(sentence[named.start():end], named.start(), end),
                          Span(number.group(0).strip(), number.start(), number.end()))


def _a_person_has(sentence: str, at: int) -> bool:
    """Whether the word before a plain "has" names a person: a pronoun, a relative,
    "patient", or a capitalised name ("Mrs Okafor has"), not "the ward" or "the clinic";
    after "and", the sentence's first word ("She ... and has gout")."""
    before = re.findall(r"[A-Za-z']+", sentence[:at])
    if not before:
        return False
    word = before[-1]
    if word.lower() == "and" and len(before) > 1:
        word = before[0]  # "He was diagnosed with ... and also has gout": the sentence's subject has it
    return word.lower() in PERSON_WORDS or (word[0].isupper() and word.lower() not in NOT_A_PERSON)


def named_condition_at(text: str, at: int) -> bool:
    """Whether ``text`` at ``at`` opens with a condition the workbench knows by name
    (``named_conditions``): whole words, an abbreviation only in capitals ("AF", not "af")."""
    return _named_conditions().match(text, at) is not None


# Between the words of a name as the vocabulary keeps it (punctuation made spaces): a
# space, an apostrophe or a hyphen as printed ("Crohn's disease", "gastro-oesophageal").
_NAME_GAP = r"(?:\s+|\s*['\u2019-]\s*)"


@lru_cache(maxsize=1)
def _named_conditions() -> re.Pattern:
    """The named conditions as one pattern, longest first: short names as capitals only."""
    words = condition_words()

    def printed(term: str) -> str:
        return _NAME_GAP.join(map(re.escape, term.split()))

    terms = [printed(t.upper()) if len(t) <= SHORT_TERM and t not in words else f"(?i:{printed(t)})"
             for t in named_conditions()]
    return re.compile(rf"(?:{'|'.join(terms)})\b")
