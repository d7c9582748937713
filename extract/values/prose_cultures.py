"""A sentence about a culture's susceptibilities ("A urine culture grew E. coli, resistant to
trimethoprim and sensitive to nitrofurantoin"): the antibiotics it names are how an
organism fared, not the patient's allergies ("sensitive to nitrofurantoin") or medicines
("trimethoprim"). Only the sentence's words: the culture is named before how it fared, so
"She is sensitive to penicillin; her culture grew E. coli" keeps its allergy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.policy.facts.lab_vocabulary import susceptibility_code

# Words that say the sentence is about what a culture grew.
_CULTURE = re.compile(r"\b(?:cultures?|grew|grown|growth|isolated|isolates?|organisms?|bacteria|bacteriuria|coliforms?|"
                      r"e\.\s?coli|mrsa|sensitivities|susceptibilit(?:y|ies))\b", re.I)
_FARED = re.compile(r"\b(?:resistant|sensitive|susceptible|intermediate)\s+(?:to|against)\b", re.I)
# Where the antibiotics after "resistant to" end: the sentence or clause ends, or the next
# "sensitive to" starts.
_END = re.compile(r"[;!?]|\.(?=\s|$)|\bbut\b|,?\s+(?:and\s+)?(?=(?:resistant|sensitive|susceptible|intermediate)"
                  r"\s+(?:to|against)\b)", re.I)


def susceptibility_spans(sentence: str) -> list[tuple[int, int]]:
    """The (start, end) of each "resistant/sensitive to <antibiotics>" run that follows
    the words of a culture in ``sentence``; [] for a sentence about no culture."""
    cue = _CULTURE.search(sentence)
    if cue is None:
        return []
    spans = []
    for m in _FARED.finditer(sentence, cue.end()):
        between = sentence[cue.end():m.start()]
        if ";" in between and between[between.rfind(";") + 1:].strip():
            continue  # another clause: "... grew E. coli; she is sensitive to penicillin"
        # ("...; resistant to nitrofurantoin" goes on about the organism)
        end = _END.search(sentence, m.end())
        spans.append((m.start(), end.start() if end else len(sentence)))
    return spans


# One antibiotic of the run: letters, perhaps joined ("co-amoxiclav", "piperacillin/tazobactam").
_NAME = re.compile(r"[A-Za-z][A-Za-z/-]*(?:\s+[A-Za-z][A-Za-z/-]*){0,2}")
_SEPARATOR = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+)\s*", re.I)


@dataclass(slots=True)
class Susceptibility:
    """An antibiotic a sentence says an organism fared against, with how (its HL7 code)."""

    name: str
    code: str  # "R", "S", "I"
    fared: str  # as the sentence words it: "resistant"
    quote: str  # the sentence's words from "resistant to" through the name


def susceptibilities_in(sentence: str) -> list[Susceptibility]:
    """Each antibiotic of the sentence's "resistant/sensitive to ..." runs (``susceptibility_spans``)."""
    out = []
    for start, end in susceptibility_spans(sentence):
        fared = _FARED.match(sentence, start)
        word = fared.group(0).split()[0]
        code = susceptibility_code(word)
        at = fared.end()
        for part in _SEPARATOR.split(sentence[at:end]):
            name = part.strip().rstrip(".,;")
            if not name:
                continue
            at = sentence.index(name, at)
            if code and _NAME.fullmatch(name) and sum(c.isalpha() for c in name) >= 4:
                out.append(Susceptibility(name=name, code=code, fared=word.lower(), quote=sentence[start:at + len(name)]))
            at += len(name)
    return out
