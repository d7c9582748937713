"""Where each ConText trigger in a text reaches (pure): sentences, list items, the
triggers found, their scopes, and a form's questions with their answers.

A trigger governs the words after it, before it, both, or only itself, up to the
sentence edge or a terminating term; list-level triggers stop at the next "," or ";"
unless they stand for their list; a question's "?" asks rather than hedges (see
``domain.policy.context.mentions``, which reads a mention's context from the cues found here). The
trigger phrases come from ``domain.policy.context.lexicon``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from domain.policy.context.lexicon import TOKEN, Family, lexicon, longest_phrase, token_key


@dataclass(frozen=True)
class Cue:
    """One trigger found in a text, and the character spans it governs (none when
    nothing but other triggers surrounds it: "Not sure")."""

    family: str
    category: str
    direction: str
    text: str
    start: int
    end: int
    scopes: tuple[tuple[int, int], ...]


# --------------------------------------------------------------------------- text units

# A sentence ends at ". " / "! " before a capital or a digit, after a "?" glued to a
# word, at a blank line, at a line that starts like a new label or list item, or at
# a bullet.
_BREAK = re.compile(
    r"(?<=[.!])\s+(?=[\"'(\[]?[A-Z0-9•*-])|(?<=[\w)]\?)\s+|\n\s*\n|\n(?=[ \t]*[A-Z0-9•*-])|\s*•\s*"
)
_NOT_AN_END = frozenset({"dr", "mr", "mrs", "ms", "st", "vs", "pt", "approx", "e.g", "i.e", "hx", "dx", "tx",
                         "fig", "inc", "jr", "sr"})
_WORD_BEFORE = re.compile(r"([\w.]+)[.!]$")
_ITEM_BREAK = re.compile(r"(?<!\d),|,(?!\d)|;")
WORD = re.compile(r"\w")


# Dictated and OCR'd notes often start a sentence in lower case ("Denies chest pain.
# palpitations since Monday"): ". " or "! " before a lower-case word ends a sentence
# too, unless the word before the stop is short or a known abbreviation ("e.g.",
# "tab.", "p.o."), where a stop does not end a sentence.
_LOWER_BREAK = re.compile(r"(?<=[A-Za-z]{3}[.!])\s+(?=[a-z])")
_NOT_A_LOWER_END = _NOT_AN_END | frozenset({"tab", "tabs", "cap", "caps", "etc", "approx", "vol", "dept", "min",
                                             "max", "hrs", "wks", "yrs", "mos", "resp", "temp", "cont", "incl",
                                             "ref", "req", "sol", "susp", "inj", "oint", "liq", "syr"})


def _breaks(text: str) -> list[re.Match[str]]:
    found = list(_BREAK.finditer(text))
    for m in _LOWER_BREAK.finditer(text):
        w = _WORD_BEFORE.search(text, 0, m.start())
        if w and "." not in w.group(1) and w.group(1).lower() not in _NOT_A_LOWER_END:
            found.append(m)
    return sorted(found, key=lambda m: m.start())


def _sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in _breaks(text):
        if m.start() < start:
            continue
        before = text[start:m.start()]
        w = _WORD_BEFORE.search(before)
        if w and text[m.start() - 1] == "." and (w.group(1).lower() in _NOT_AN_END or len(w.group(1)) == 1):
            continue
        if before.strip():
            spans.append((start, m.start()))
        start = m.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class _Hit:
    start: int
    end: int
    family: Family


def _hits(text: str) -> list[_Hit]:
    """Every trigger, overlaps resolved leftmost-longest; pseudo-triggers consume
    what they cover and are then dropped. Triggers of different families on the
    very same words are all kept ("stopped" is historical both ways)."""
    lex = lexicon()
    spans = [(m.start(), m.end()) for m in TOKEN.finditer(text)]
    keys = [token_key(text[s:e]) for s, e in spans]
    root_slots = [rx for slot, rx in lex.shapes if slot in lex.trie]
    found = []
    for i in range(len(keys)):
        if keys[i] not in lex.trie and not any(rx.fullmatch(keys[i]) for rx in root_slots):
            continue
        match = longest_phrase(lex.trie, keys, i, lex.shapes)
        if match is not None:
            end, fams = match
            found += [_Hit(spans[i][0], spans[end - 1][1], fam) for fam in fams]
    found += [_Hit(m.start(), m.end(), fam) for rx, fam in lex.patterns for m in rx.finditer(text)
              if m.end() > m.start()]
    found.sort(key=lambda h: (h.start, -(h.end - h.start)))
    groups: list[list[_Hit]] = []
    for hit in found:
        if groups and (hit.start, hit.end) == (groups[-1][0].start, groups[-1][0].end):
            groups[-1].append(hit)
        elif not groups or hit.start >= groups[-1][0].end:
            groups.append([hit])
    return [h for g in groups if not any(x.family.category == "pseudo" for x in g) for h in g]


def _item_bounds(text: str, lo: int, hi: int, at: int) -> tuple[int, int]:
    """The list item (between "," / ";") of the sentence [lo, hi) that holds ``at``."""
    left, right = lo, hi
    for m in _ITEM_BREAK.finditer(text, lo, hi):
        if m.end() <= at:
            left = m.end()
        elif m.start() >= at:
            right = m.start()
            break
    return left, right


# A trigger followed by ":" or a dash heads what comes after it.
_LEADS_A_LIST = re.compile(r"\s*(?::|-\s|\u2013|\u2014)")


def _alone(text: str, hit: _Hit, lo: int, hi: int) -> bool:
    """Whether ``hit`` is the only wording in [lo, hi)."""
    return not WORD.search(text, lo, hit.start) and not WORD.search(text, hit.end, hi)


def _scope(text: str, hit: _Hit, sentence: tuple[int, int], previous: int | None,
           terminators: list[_Hit]) -> tuple[tuple[int, int], ...]:
    """The spans ``hit`` governs in its sentence; ``previous``: where the sentence
    before it starts, if any."""
    fam = hit.family
    if fam.direction == "self":
        return ((hit.start, hit.end),)
    lo, hi = sentence
    item_lo = _item_bounds(text, lo, hi, hit.start)[0]
    item_hi = _item_bounds(text, lo, hi, hit.end)[1]
    # An item-level side widens to the whole list when the trigger stands for it:
    # alone in its item, or (forward) heading the list; alone in its sentence, it
    # comments on the sentence before (see ``domain.policy.context.mentions``).
    alone = _alone(text, hit, item_lo, item_hi)
    if alone and previous is not None and fam.backward_scope == "item" and _alone(text, hit, lo, hi):
        lo = previous

    def ends(wide: bool) -> list[_Hit]:
        """The terminators of this trigger; a widened scope runs across list separators."""
        return [t for t in terminators if fam.category in t.family.ends and lo <= t.start < hi
                and not (wide and WORD.search(text, t.start, t.end) is None)
                and text[t.start:t.end].lower() not in fam.crosses]

    spans = []
    if fam.direction in ("forward", "bidirectional"):
        item = fam.forward_scope == "item"
        wide = item and (alone or _LEADS_A_LIST.match(text, hit.end) is not None)
        right = min([item_hi if item and not wide else hi] + [t.start for t in ends(wide) if t.start >= hit.end])
        if right > hit.end:
            spans.append((hit.end, right))
    linked = fam.backward_link is None or fam.backward_link.search(text, lo, hit.start) is not None
    if fam.direction in ("backward", "bidirectional") and linked:
        item = fam.backward_scope == "item"
        wide = item and alone
        left = max([item_lo if item and not wide else lo] + [t.end for t in ends(wide) if t.end <= hit.start])
        if left < hit.start:
            spans.append((left, hit.start))
    return tuple(spans)


# "Smoker? (Y/N)": a question offering its answers.
_CHOICE = r"\(?\s*y(?:es)?\s*/\s*no?\s*\)?"
_OFFERS_A_CHOICE = re.compile(rf"\?\s*{_CHOICE}$", re.IGNORECASE)
# The first word of an answer ("No.", "yes - last week", "N/A", "not applicable"),
# after the choice it picks from ("(Y/N) N").
_ANSWER = re.compile(rf"\s*(?:{_CHOICE}(?=\s+\w)\s*)?(not applicable|[A-Za-z/]+)\b", re.IGNORECASE)
# The first word of a question, after its number ("3.", "B1.", "Q2)", "(iv)") and an
# "If yes," that ties it to the one before.
_OPENER = re.compile(r"[\s\d.)(*•-]*(?:(?:[A-Za-z]{1,2}\d+[a-z]?|[A-Za-z]|[ivx]{1,4})[.):]\s+|\(\w{1,4}\)\s*)?"
                     r"(?:if (?:yes|so|no|any),\s*)?([A-Za-z]+)", re.IGNORECASE)


def opens_a_question(text: str) -> bool:
    """Whether ``text`` opens like a question: with "¿" or with a question word of the
    lexicon ("Are you pregnant?", "Any allergies?", "If yes, which ones?"). "Shellfish?"
    and "Lips tingled after the curry - shellfish?" do not: their "?" is a doubt."""
    t = (text or "").lstrip(" \t\n\r*•-")
    if t.startswith("¿"):
        return True
    first = _OPENER.match(t)
    return first is not None and first.group(1).lower() in lexicon().questions.openers


def _question_cues(text: str, sentences: list[tuple[int, int]], hits: list[_Hit]) -> tuple[list[Cue], set[int]]:
    """Questions ("Have you had chest pain?", a form's "Smoker? (Y/N)" or "Smoker?
    No"): their closing "?" is not a hedge, and what they ask is hypothetical unless
    the next sentence answers it yes (affirmed) or no (negated). A "?" sentence
    counts as a question when it opens with a question word, offers a choice, or is
    answered by a bare yes or no; answered in doubt ("Pregnant? Not sure",
    "Pregnant? Unknown", "Pregnant? No idea"), its "?" stays a hedge."""
    questions = lexicon().questions
    cues: list[Cue] = []
    dropped: set[int] = set()
    for i, (lo, hi) in enumerate(sentences):
        body = text[lo:hi].rstrip()
        offered = _OFFERS_A_CHOICE.search(body)
        if offered:
            body = body[:offered.start() + 1]
        if not body.endswith("?"):
            continue
        reply = _ANSWER.match(text, *sentences[i + 1]) if i + 1 < len(sentences) else None
        word = reply.group(1).lower() if reply else ""
        if re.fullmatch(_CHOICE, word):  # "Pregnant? Y/N": the choice, not yet an answer
            offered, word = True, ""
        if word in questions.doubt or (reply is not None and any(
                h.start == reply.start(1) and h.family.category == "uncertain" for h in hits)):
            continue  # answered in doubt: the "?" stays a hedge
        bare_answer = reply is not None and not text[reply.end():sentences[i + 1][1]].strip(" .,;:!-")
        first = _OPENER.match(body)
        opener = first is not None and first.group(1).lower() in questions.openers
        if not (opener or offered or (bare_answer and word in questions.yes + questions.no)):
            continue
        mark = lo + len(body) - 1
        while mark > lo and text[mark - 1] == "?":
            mark -= 1
        dropped |= {id(h) for h in hits if h.start == mark and h.family.category == "uncertain"}
        scope = ((lo, mark),)
        if word in questions.yes:
            continue
        if word in questions.no:
            cues.append(Cue("question_answered_no", "negated", "backward", reply.group(1), reply.start(1),
                             reply.end(1), scope))
        else:
            end = lo + len(body)
            cues.append(Cue("question", "hypothetical", "backward", text[mark:end], mark, end, scope))
    return cues, dropped


# Extraction asks about many targets of the same sentence; the answer is immutable.
@lru_cache(maxsize=512)
def cues(text: str) -> tuple[Cue, ...]:
    """Every context trigger in ``text`` with the character spans it governs."""
    sentences = _sentences(text)
    hits = _hits(text)
    terminators = [h for h in hits if h.family.direction == "terminate"]
    out, dropped = _question_cues(text, sentences, hits)
    for hit in hits:
        if hit.family.direction == "terminate" or id(hit) in dropped:
            continue
        k = next((k for k, (lo, hi) in enumerate(sentences) if lo <= hit.start < hi), None)
        if k is None:  # outside every sentence: read the text as one
            sentence, previous = (0, len(text)), None
        else:
            sentence, previous = sentences[k], (sentences[k - 1][0] if k else None)
        out.append(Cue(hit.family.name, hit.family.category, hit.family.direction, text[hit.start:hit.end],
                        hit.start, hit.end, _scope(text, hit, sentence, previous, terminators)))
    out.sort(key=lambda c: c.start)
    return tuple(out)
