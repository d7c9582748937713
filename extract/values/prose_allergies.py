"""Allergies told in sentences (pure): "She is allergic to penicillin, which gave her
a rash", "a penicillin allergy - rash", "allergic to codeine (vomiting) and
sulfonamides", "The morphine made her vomit", "NKDA".

The vocabulary below is data: the words that name an allergic response, the verbs
that say a substance caused one, the words a substance's name never starts after
and the words that end a substance's or a reaction's name. Nothing is looked up: a
substance is whatever the sentence names in that place, with its offsets, so a
citation quotes the letter exactly. Whether the allergy is the patient's ("her son
is allergic to peanuts", "not allergic to penicillin") is for the context policy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.policy.facts.ocr_readings import alike_spellings
from extract.values.lists import no_known
from extract.values.prose_meds import is_drug_name
from extract.values.prose_text import Span, clause_items, strip_span

# --------------------------------------------------------------------------- vocabulary (data)

# Allergies told in a sentence rather than listed ("He wonders whether the
# chlorhexidine wash gave him a rash", "She reacted to co-amoxiclav with hives",
# "a possible latex allergy"): the words that name an allergic response, the verbs
# that say a substance caused one, and where a substance's name stops.
# "allergic" as a scan or fax may print it ("allergio", "a1lergic": ``alike_spellings``). A
# text layer never spells these, so only OCR'd letters can match them; the quote keeps the
# word as read, and an allergy told in a sentence is always held for a person.
OCR_ALLERGIC = alike_spellings("allergic")
ALLERGY_WORDS = rf"allergic|{OCR_ALLERGIC}|allergy|allergies|sensitive|sensitivity|hypersensitivity|intolerant|intolerance|" \
                r"reaction|reactions|reacted|reacts|react"
ALLERGY_NOUNS = r"allergy|intolerance|sensitivity|hypersensitivity|reaction"
# Words that take their substance after "of" ("intolerant of trimethoprim").
INTOLERANT_OF = r"intolerant|intolerance|intolerances"
CAUSE_VERBS = ("gave", "gives", "give", "caused", "causes", "cause", "triggered", "triggers", "provoked",
               "provokes", "brought on", "brings on", "led to", "leads to", "resulted in", "produced")
# Words a substance's name never starts after: what the sentence says before it.
SUBSTANCE_STARTERS = frozenset("""
the a an his her their its this that these those whether if think thinks thought believes believed says said
wonders wondered wondering reports reported recalls recalled feels felt possibly perhaps maybe probably and or
to with he she they it i we you patient patient's mr mrs ms miss dr which who some any has have had also
nothing none anything nil
""".split())
# Words that end a substance's or a reaction's name.
MENTION_STOPS = r"after|when|following|on|in|at|during|but|and|or|which|who|that|since|while|although|though|" \
                r"because|due|owing|as|so|this|was|were|is|has|had|from|with|last|once|twice|ago|" \
                r"years?|months?|weeks?|" \
                r"days?|yesterday|today|recently|previously|earlier|before|then|used|given|taken|prescribed|" \
                r"applied|injected"
# "made her vomit": a cause verb only with its object.
CAUSE_VERBS_WITH_OBJECT = ("made", "makes", "make")
# Words before "allergy" that say what kind of allergy, not to what ("a known allergy").
NOT_A_SUBSTANCE = frozenset("""
known drug food medication medicine documented reported recorded severe mild moderate true confirmed suspected
possible no any other previous prior serious significant life-threatening anaphylactic anaphylactoid allergic
adverse skin cutaneous local systemic bad nasty immediate delayed
heat cold exercise activity effort orthostatic glucose light noise
""".split())
# (The last line: symptoms a letter words as an intolerance or sensitivity, "heat
# intolerance and tremor", "cold intolerance", "exercise intolerance": no substance.)
# "could not tolerate metformin because of diarrhoea": an intolerance told with a verb.
NOT_TOLERATED = (r"(?:cannot|can't|could\s+not|couldn't|did\s+not|didn't|does\s+not|doesn't|unable\s+to|never)"
                 r"\s+tolerated?")
REASON_MARKS = r"because\s+of|due\s+to|owing\s+to|as\s+it\s+(?:gave|causes?|caused)\s+(?:him|her|them)"
# Where a reaction is written after a substance: "(rash)", "- rash", ": rash".
REACTION_MARKS = r"\s*\(\s*|\s[-\u2013\u2014]\s*|\s*:\s*|\s*\u2192\s*|\s*->\s*"
# A substance in a list of them is at most this many words ("sulfonamide antibiotics").
MAX_SUBSTANCE_WORDS = 4

# --------------------------------------------------------------------------- reading

_WORD_RUN = r"[A-Za-z0-9][\w'\u2019-]*"
_STOP = rf"(?=\s+(?:{MENTION_STOPS})\b|\s*[,.;:()!?]|\s+[-\u2013\u2014]\s|\s*$)"
_TO_SUBSTANCE = re.compile(
    rf"\b(?:(?:{ALLERGY_WORDS})\s+(?:to|with|against|from|towards?)|(?:{INTOLERANT_OF})\s+of)\s+"
    rf"(?:(?:the|his|her|their|a|an|any|all)\s+)?"
    rf"(?P<s>{_WORD_RUN}(?:\s+{_WORD_RUN}){{0,3}}?){_STOP}", re.I)
_CAUSE_VERB = "|".join(v.replace(" ", r"\s+") for v in CAUSE_VERBS)
_OBJECT = r"(?:him|her|them|me|us|the patient)"
_CAUSES = re.compile(
    rf"\b(?:(?:{_CAUSE_VERB})\s+(?:{_OBJECT}\s+)?|(?:{'|'.join(CAUSE_VERBS_WITH_OBJECT)})\s+{_OBJECT}\s+(?:feel\s+)?)"
    rf"(?:(?:an?|some|his|her|their|my|bad|severe|mild|terrible|nasty|widespread)\s+)*(?P<r>{_WORD_RUN}(?:\s+{_WORD_RUN}){{0,2}}?)"
    rf"{_STOP}", re.I)
_NOUN_AFTER = re.compile(rf"(?P<s>{_WORD_RUN}(?:\s+{_WORD_RUN})?)\s+(?:{ALLERGY_NOUNS})\b", re.I)
_REACTED_WITH = re.compile(rf"\bwith\s+(?:(?:an?|some)\s+)?(?P<r>{_WORD_RUN}(?:\s+{_WORD_RUN}){{0,2}}?){_STOP}", re.I)


@dataclass(frozen=True, slots=True)
class AllergyMention:
    """An allergy told in a sentence: the substance and the reaction, as printed."""

    substance: Span
    reaction: Span | None = None


def _trailing_name(sentence: str, end: int, max_words: int = 3) -> Span | None:
    """The name that ends at ``end``: the words right before it back to the first
    word that only introduces it ("whether the chlorhexidine wash" -> "chlorhexidine
    wash")."""
    words = list(re.finditer(_WORD_RUN, sentence[:end]))
    picked = []
    for m in reversed(words):
        if m.group(0).lower() in SUBSTANCE_STARTERS or len(picked) == max_words:
            break
        if sentence[m.end():(picked[-1].start() if picked else end)].strip(" "):
            break  # punctuation between the words: another clause
        picked.append(m)
    if not picked:
        return None
    return Span(sentence[picked[-1].start(): picked[0].end()], picked[-1].start(), picked[0].end())


def allergy_in(sentence: str) -> AllergyMention | None:
    """The allergy a sentence tells of, if it tells one: "allergic/a reaction/
    sensitive to X", "X gave/caused him a rash", "reacted to X with hives", "an X
    allergy". Only the sentence's words: nothing is looked up, and a sentence about
    no substance ("He is otherwise well") gives None."""
    m = _TO_SUBSTANCE.search(sentence)
    if m and m.group("s").split()[0].lower() not in SUBSTANCE_STARTERS:
        substance = Span(m.group("s"), m.start("s"), m.end("s"))
        r = _REACTED_WITH.search(sentence, m.end("s"))
        return AllergyMention(substance, Span(r.group("r"), r.start("r"), r.end("r")) if r else None)
    c = _CAUSES.search(sentence)
    if c:
        substance = _trailing_name(sentence, c.start())
        if substance is not None:
            return AllergyMention(substance, Span(c.group("r"), c.start("r"), c.end("r")))
    n = _NOUN_AFTER.search(sentence)
    if n:
        substance = _trailing_name(sentence, n.end("s"), max_words=2)
        if substance is not None:
            return AllergyMention(substance)
    return None


# ----------------------------------------------------------------- several allergies in one sentence

_LIST_OPENER = re.compile(rf"\b(?:(?:{ALLERGY_WORDS})\s+(?:to|against|towards?)|(?:{INTOLERANT_OF})\s+of)\s+", re.I)
# Where a list of substances after "allergic to" ends: the clause moves on.
_LIST_END = re.compile(
    rf"[;!?]|\.(?=\s|$)|,\s*(?:which|who|but|although|though|and (?:she|he|they|this|that|it))\b"
    rf"|\s(?:which|who|when|after|following|since|but|although|though|because|as a|in \d{{4}}|last|ago|"
    rf"(?:{_CAUSE_VERB}))\b|\swith\s(?!(?:the|a|an)\s+(?:{ALLERGY_NOUNS})\b)", re.I)
_POSSESSIVE = re.compile(r"(?:(?:to|his|her|their|its|any|all|known)\s+)+", re.I)  # "and to latex"
_REACTION_AFTER = re.compile(rf"^(?:{REACTION_MARKS})(?P<r>{_WORD_RUN}(?:\s+{_WORD_RUN}){{0,3}}?)(?:\s*\)|{_STOP})",
                             re.I)
_TRAILING_NOUN = re.compile(rf"\s+(?:{ALLERGY_NOUNS})$", re.I)
_ITEM_WITH_REACTION = re.compile(r"^(?P<s>.+?)\s*(?:\((?P<r1>[^()]+)\)|\s[-\u2013\u2014]\s*(?P<r2>.+))$")


def no_known_allergies_in(sentence: str) -> Span | None:
    """The words saying there is no known allergy ("NKDA", "no known drug allergies"), or
    None; ``value`` is what it rules out (``extract.values.lists.NO_KNOWN_STATUS``: the
    one table every reader uses, so "no known drug allergies" stays drug-specific)."""
    found = no_known(sentence, anywhere=True)
    if found is None:
        return None
    return Span(sentence[found.start:found.end], found.start, found.end, found.status)


def _item(sentence: str, span: Span) -> AllergyMention | None:
    """One item of a list of substances, perhaps with its reaction ("codeine (vomiting)")."""
    lead = _POSSESSIVE.match(span.text)
    if lead:
        span = strip_span(sentence, span.start + lead.end(), span.end)
    m = _ITEM_WITH_REACTION.match(span.text)
    substance, reaction = span, None
    if m:
        substance = strip_span(sentence, span.start + m.start("s"), span.start + m.end("s"))
        g = "r1" if m.group("r1") else "r2"
        reaction = strip_span(sentence, span.start + m.start(g), span.start + m.end(g), " \t\n,.;:")
    noun = _TRAILING_NOUN.search(substance.text)  # "allergic to penicillin and codeine allergy"
    if noun and noun.start() > 0:
        substance = strip_span(sentence, substance.start, substance.start + noun.start())
    words = substance.text.split()
    if not words or len(words) > MAX_SUBSTANCE_WORDS or words[0].lower() in SUBSTANCE_STARTERS \
            or not re.match(_WORD_RUN, substance.text):
        return None
    return AllergyMention(substance, reaction if reaction and reaction.text else None)


def _overlaps(span: Span, taken: list[tuple[int, int]]) -> bool:
    return any(span.start < e and s < span.end for s, e in taken)


def allergies_in(sentence: str) -> list[AllergyMention]:
    """Every allergy a sentence tells of, in order: lists after "allergic/an allergy/
    a reaction/sensitive to" ("allergic to penicillin (rash) and codeine"), with a
    reaction told after them ("..., which gave her a rash", "with hives") for those
    that name none of their own; "an X allergy (rash)" / "X allergy - rash"; "X gave
    her a rash". A "no known allergies" statement is ``no_known_allergies_in``'s."""
    found: list[AllergyMention] = []
    taken: list[tuple[int, int]] = []
    none = no_known_allergies_in(sentence)
    for opener in _LIST_OPENER.finditer(sentence):
        if none and none.start <= opener.start() < none.end:
            continue
        stop = _LIST_END.search(sentence, opener.end())
        end = stop.start() if stop else len(sentence)
        # "... and intolerant of codeine": the next opener starts a list of its own
        if (nxt := _LIST_OPENER.search(sentence, opener.end(), end)) is not None:
            end = nxt.start()
        items = [i for s in clause_items(sentence, opener.end(), end, max_words=MAX_SUBSTANCE_WORDS + 4)
                 if (i := _item(sentence, s)) is not None]
        if not items:
            continue
        told = _CAUSES.match(sentence, end) or _CAUSES.search(sentence[:_clause_end(sentence, end)], end) \
            or _REACTED_WITH.match(sentence, end) or _REACTED_WITH.match(sentence, end + 1)
        kind = _KIND_BEFORE.search(sentence, 0, opener.start())  # "an anaphylactic reaction to peanuts"
        if told:
            reaction = Span(told.group("r"), told.start("r"), told.end("r"))
            items = [i if i.reaction else AllergyMention(i.substance, reaction) for i in items]
        elif kind is not None:
            noun_end = opener.start() + len(opener.group(0).split()[0])
            reaction = Span(sentence[kind.start("r"):noun_end], kind.start("r"), noun_end)
            items = [i if i.reaction else AllergyMention(i.substance, reaction) for i in items]
        found += items
        # What the list's items and its told reaction cover, not the whole clause: words the
        # list could not take ("... and reports latex sensitivity") may tell another allergy.
        taken += [(i.substance.start, i.substance.end) for i in items]
        taken += [(i.reaction.start, i.reaction.end) for i in items if i.reaction]
        if told:  # ", which both gave her a rash": the words telling the list's reaction
            taken.append((end, told.end()))
    for n in _NOUN_AFTER.finditer(sentence):
        substance = _trailing_name(sentence, n.end("s"), max_words=2)
        while substance is not None and substance.text.split()[0].lower() in NOT_A_SUBSTANCE:
            # "a severe peanut allergy": what kind of allergy, not to what ("known allergy to" is a list's)
            rest = substance.text.split(None, 1)
            substance = (strip_span(sentence, substance.end - len(rest[1]), substance.end) if len(rest) > 1
                         else None)
        if substance is None or _overlaps(substance, taken) or (none and _overlaps(substance, [(none.start, none.end)])):
            continue
        r = _REACTION_AFTER.match(sentence[n.end():])
        reaction = Span(r.group("r"), n.end() + r.start("r"), n.end() + r.end("r")) if r else None
        if reaction is None and (w := _REACTED_WITH.match(sentence, n.end())):
            reaction = Span(w.group("r"), w.start("r"), w.end("r"))
        found.append(AllergyMention(substance, reaction))
        taken.append((substance.start, reaction.end if reaction else n.end()))
    for c in _CAUSES.finditer(sentence):
        substance = _trailing_name(sentence, c.start())
        if substance is None or _overlaps(substance, taken) or not _ALLERGY_CONTEXT.search(sentence) \
                and not _REACTION_WORDS.search(c.group("r")):
            continue
        found.append(AllergyMention(substance, Span(c.group("r"), c.start("r"), c.end("r"))))
        taken.append((substance.start, c.end()))
    for t in _NOT_TOLERATED.finditer(sentence):
        substance = Span(t.group("s"), t.start("s"), t.end("s"))
        reaction = Span(t.group("r"), t.start("r"), t.end("r")) if t.group("r") else None
        if _overlaps(substance, taken) or t.group("s").split()[0].lower() in SUBSTANCE_STARTERS \
                or (reaction is None and not is_drug_name(substance.text)):
            continue  # "did not tolerate the CPAP mask": no drug, and nothing it caused
        found.append(AllergyMention(substance, reaction))
        taken.append((t.start(), t.end()))
    for r in _REACTION_ON.finditer(sentence):
        substance = Span(r.group("s"), r.start("s"), r.end("s"))
        if _overlaps(substance, taken) or not is_drug_name(substance.text):
            continue
        found.append(AllergyMention(substance, Span(r.group("r"), r.start("r"), r.end("r"))))
        taken.append((r.start(), r.end()))
    return sorted(found, key=lambda m: m.substance.start)


def _clause_end(sentence: str, at: int) -> int:
    m = re.compile(r"[;.!?]").search(sentence, at)
    return m.start() if m else len(sentence)


_ALLERGY_CONTEXT = re.compile(rf"\b(?:{ALLERGY_WORDS})\b", re.I)
# What a drug "gave" someone that reads as an adverse reaction when no allergy word is
# printed ("the codeine gave her hives"), not a benefit ("gave him good relief").
REACTION_WORDS = (r"rash\w*|hives|urticaria|swell\w*|angioedema|anaphyla\w*|wheez\w*|itch\w*|vomit\w*|nause\w*|"
                  r"blister\w*|diarrh\w*|confus\w*|headache\w*|dizz\w*|breathless\w*|flushing|redness|"
                  r"stevens[- ]johnson|collapse|palpitations|myalgia|muscle (?:aches?|pains?|cramps?)")
_REACTION_WORDS = re.compile(rf"\b(?:{REACTION_WORDS})", re.I)
# A reaction named as the kind of reaction right before "reaction to": "an anaphylactic reaction to".
_KIND_BEFORE = re.compile(rf"\b(?P<r>{REACTION_WORDS}|urticarial)\s+$", re.I)
# A reaction told before the drug that caused it ("developed angioedema on ramipril",
# "a rash after amoxicillin", "a dry cough with lisinopril"): only reactions a drug is
# blamed for, never how ill the patient is ("breathless on exertion", "remains
# breathless on bisoprolol" is not an allergy), and only a drug's name after them.
REACTION_BEFORE_DRUG = (r"rash\w*|hives|urticaria|angioedema|anaphyla\w*|itch\w*|pruritus|vomit\w*|nause\w*|"
                        r"blister\w*|diarrh\w*|stevens[- ]johnson(?: syndrome)?|(?:dry |tickly |persistent )?cough|"
                        r"myalgia|muscle (?:aches?|pains?)|(?:lip|tongue|facial) swelling")
_NOT_TOLERATED = re.compile(
    rf"\b{NOT_TOLERATED}\s+(?:(?:the|his|her|their|any)\s+)?(?P<s>{_WORD_RUN}(?:\s+{_WORD_RUN})??){_STOP}"
    rf"(?:\s*,?\s*(?:{REASON_MARKS})\s+(?:(?:an?|the|some|bad|severe)\s+)*"
    rf"(?P<r>{_WORD_RUN}(?:\s+{_WORD_RUN}){{0,2}}?){_STOP})?",
    re.I)
_REACTION_ON = re.compile(rf"\b(?P<r>{REACTION_BEFORE_DRUG})\s+(?:on|with|after|from|following|to|due\s+to)\s+"
                          rf"(?:(?:the|his|her|their|starting|taking|a course of)\s+)*(?P<s>[A-Za-z][\w-]*)\b", re.I)
