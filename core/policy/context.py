"""Clinical context of a mention in free text (pure), after ConText (Harkema et al., 2009).

ConText decides how a mention is meant from trigger terms around it: "denies chest
pain" is negated, "mother had breast cancer" is about a relative, "history of" is
historical, "return if" is hypothetical, "shellfish?" is hedged. Each trigger has a
direction (it governs the words after it, before it, both, or only itself) and a
scope that runs to the sentence edge or to a terminating term ("but", "however",
"which", ";" ...); list-level triggers such as a "?" glued to a word stop at the
next "," or ";" too, so "penicillin, shellfish?" hedges shellfish only. Pseudo-
triggers look like triggers and are not ("no change", "gram negative", "if any").
Overlapping triggers resolve leftmost-longest. Two additions to the published
algorithm, both for the short answers of forms and notes:
- a list-level trigger that stands for its list, alone in its item ("penicillin,
  not sure") or heading it ("Not sure: penicillin, sulfa"), governs the whole
  sentence, across the list's "," and ";" (a terminating word still ends it); alone
  in its sentence ("Penicillin. Not sure."), it comments on the sentence before;
- a sentence ending in "?" asks rather than hedges when it opens with a question
  word, offers a choice ("Smoker? (Y/N)") or is answered by the next sentence
  ("Smoker? No"); what it asks is hypothetical until answered: yes affirms, no
  negates, a hedge ("Pregnant? Not sure") leaves it in doubt.

The trigger lexicon is data (``context_lexicon.json`` beside this module), compiled
once per process; analyses of a text are cached, because extraction asks about many
targets of the same sentence.

Triggers are found on whole words: phrases and texts are cut into the same tokens
and one token trie holds every phrase of every family, so the longest phrase at a
word wins ("no known allergies" over "no"); a few regular expressions cover what
words cannot ("?" glued to a word, ~~struck~~ text).

For a mention (a target inside the text), a hedge counts when its scope reaches
any word of it, the other attributes when their scope holds the mention's head,
its first word that is no trigger: "Cough for 3 days, denies chest pain" is not a
negated mention, "denies chest pain" is. For a text as a whole, a trigger counts
when it governs some word that is no trigger, a hedge wherever it stands (a doubt
anywhere is a doubt about the text), and every trigger of a text that is nothing
but triggers ("Not sure", "None", "Family hx: none").

API used across the project (kept stable):
- ``assess(text, target=None) -> ClinicalContext``: negated / experiencer /
  temporality / uncertain for ``target`` (a phrase inside ``text``) or, without a
  target or when it is not in the text, for the text as a whole (as above);
- ``hedge_cue(text) -> str | None``: the first hedge in the text as a whole, as
  printed ("?", "possible", "rule out", "~~struck~~"...);
- ``hedge_on(mention, within=None) -> str | None``: the hedge on a mention read out
  of a longer answer: one inside it ("shellfish?"), or one in the answer whose scope
  reaches it ("Not sure: penicillin, sulfa");
- ``opens_a_question(text) -> bool``: the sentence opens with "¿" or a question word
  (a form's question rather than a doubt);
- ``red_flag(text) -> str | None``: a red-flag phrase that is affirmed, about the
  patient and current: negated ("denies chest pain"), family or other people
  ("mother had a stroke"), hypothetical ("return if short of breath") and historical
  ("history of stroke": a past event is not an acute flag) mentions raise nothing.
  A hedged one ("? chest pain") still does: a possible red flag needs a clinician.
Also: ``assess_span`` (a mention given by offsets) and ``apply_to`` (the processing
hook).

``ClinicalContext.triggers`` lists the phrases as printed, in attribute order:
hedges first, then negation, experiencer and temporality cues.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from core.models import ClinicalContext, FactProposal
from core.policy.red_flags import red_flag_spans

LEXICON_PATH = Path(__file__).with_name("context_lexicon.json")

CATEGORIES = ("uncertain", "negated", "family", "other", "hypothetical", "historical", "current")
# Fact types whose text is not free prose: values read from result tables and
# identifiers. Every other fact gets a context.
NO_CONTEXT_FACT_TYPES = frozenset({"lab_result", "demographic"})
# Where the subject of each kind of fact sits in its structured value.
_SUBJECT_KEYS = {"allergy": "substance", "medication": "name", "problem": "description",
                 "family_history": "condition", "chief_concern": "text"}


@dataclass(frozen=True)
class _Family:
    name: str
    category: str  # one of CATEGORIES, "pseudo" or "terminate"
    direction: str  # forward | backward | bidirectional | self | pseudo | terminate
    forward_scope: str  # sentence | item
    backward_scope: str
    ends: frozenset[str]  # for terminators: the categories whose scope they end
    # Backward scope only when the words just before the trigger end like this
    # ("breast cancer in her mother", "diabetes (father)"), for triggers that
    # govern backwards only through a link word.
    backward_link: re.Pattern | None = None


@dataclass(frozen=True)
class _Cue:
    """One trigger found in a text, and the character spans it governs (none when
    nothing but other triggers surrounds it: "Not sure")."""

    family: str
    category: str
    direction: str
    text: str
    start: int
    end: int
    scopes: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class _Questions:
    openers: frozenset[str]
    yes: tuple[str, ...]
    no: tuple[str, ...]
    doubt: tuple[str, ...]  # answers that leave the question in doubt ("Unknown")


# --------------------------------------------------------------------------- lexicon


def _split_outside_classes(pattern: str) -> str:
    """A space in a lexicon pattern matches any whitespace, except inside [...]."""
    out, depth, escaped = [], 0, False
    for ch in pattern:
        if escaped:
            out.append(ch)
            escaped = False
            continue
        if ch == "\\":
            escaped = True
        elif ch == "[":
            depth += 1
        elif ch == "]" and depth:
            depth -= 1
        out.append(r"\s+" if ch == " " and depth == 0 else ch)
    return "".join(out)


# Words (with inner hyphens and apostrophes: "pain-free", "don't") and single
# punctuation marks. Phrases and texts are cut the same way, so matching is on
# whole words: "no" never matches inside "nose".
# A combining accent (a decomposed "é") belongs to its word.
_TOKEN = re.compile(r"[\w\u0300-\u036f]+(?:[-'’][\w\u0300-\u036f]+)*|[^\w\s\u0300-\u036f]")


_POSSESSIVE = re.compile(r"['’]s$")


@lru_cache(maxsize=8192)
def _key(token: str) -> str:
    """A token as the lexicon looks it up: lower case, without accents, a possessive
    "'s", hyphens or apostrophes ("Mother's" = "mother", "Pain-free" = "painfree",
    "don't" = "dont", "quizás" = "quizas", "peut-être" = "peutetre"): cues written
    without their accents, as forms often are, match all the same."""
    folded = "".join(ch for ch in unicodedata.normalize("NFD", token) if not unicodedata.combining(ch))
    if len(folded) == 1:
        return folded.lower()
    return _POSSESSIVE.sub("", folded.lower()).replace("-", "").replace("'", "").replace("’", "")


def _tokens(text: str) -> list[str]:
    return [_key(t) for t in _TOKEN.findall(text)]


def _spellings(words: str) -> list[list[str]]:
    """A literal piece of a phrase as token keys; a hyphenated word may also be written
    as two words ("pain-free" / "pain free"), and either way matches."""
    joined = _tokens(words)
    split = _tokens(re.sub(r"(?<=\w)-(?=\w)", " ", words))
    return [joined] if joined == split else [joined, split]


def _expansions(phrase: str, words: dict[str, list[str]], shapes: dict[str, str]) -> list[tuple[str, ...]]:
    """Every form of a phrase as a sequence of token keys: "{via} {relative}" becomes
    ("per", "mother"), ("with", "sister")...; a {number}-like shape stays one
    "<name>" slot that any token of that shape fills."""
    forms: list[list[str]] = [[]]
    for part in re.split(r"(\{\w+\})", phrase):
        name = part[1:-1] if part.startswith("{") and part.endswith("}") else None
        if name is None:
            if part.strip():
                forms = [f + s for f in forms for s in _spellings(part)]
        elif name in words:
            forms = [f + s for f in forms for w in words[name] for s in _spellings(w)]
        elif name in shapes:
            forms = [f + [f"<{name}>"] for f in forms]
        else:
            raise ValueError(f"context lexicon: unknown vocabulary {part}")
    return [tuple(f) for f in forms if f]


def _vocabulary_regex(words: list[str]) -> str:
    """A vocabulary list as a regex alternation, for patterns and backward links."""
    return "(?:" + "|".join(r"\s+".join(map(re.escape, w.split())) for w in sorted(words, key=len, reverse=True)) + ")"


def _expand_pattern(pattern: str, vocab: dict[str, str]) -> str:
    parts = re.split(r"(\{\w+\})", pattern)
    out = []
    for part in parts:
        if part.startswith("{") and part.endswith("}"):
            if part[1:-1] not in vocab:
                raise ValueError(f"context lexicon: unknown vocabulary {part}")
            out.append(vocab[part[1:-1]])
        else:
            out.append(_split_outside_classes(part))
    return "".join(out)


def _scopes(spec) -> tuple[str, str]:
    if isinstance(spec, dict):
        return spec.get("forward", "sentence"), spec.get("backward", "sentence")
    return (spec or "sentence"), (spec or "sentence")


_END = "\x00"  # trie key under which a node lists the families whose phrase ends there


@dataclass(frozen=True)
class _Lexicon:
    # Every phrase of every family in one token trie (dict of dicts): the longest
    # phrase starting at a word is found by walking it. One phrase may belong to
    # several families ("stopped" looks both ways).
    trie: dict
    shapes: tuple[tuple[str, re.Pattern], ...]  # "<number>" -> what fills that slot
    patterns: tuple[tuple[re.Pattern, _Family], ...]
    questions: _Questions


@lru_cache(maxsize=1)
def _lexicon() -> _Lexicon:
    """Read and build the lexicon once per process."""
    data = json.loads(LEXICON_PATH.read_text(encoding="utf-8"))
    words = {name: list(ws) for name, ws in data["vocabulary"].items()}
    shapes = dict(data.get("vocabulary_patterns", {}))
    vocab = {name: _vocabulary_regex(ws) for name, ws in words.items()} | {n: f"(?:{rx})" for n, rx in shapes.items()}
    trie: dict = {}
    patterns: list[tuple[re.Pattern, _Family]] = []
    for name, spec in data["families"].items():
        if not spec.get("phrases") and not spec.get("patterns"):
            raise ValueError(f"context lexicon: family {name} has no triggers")
        forward, backward = _scopes(spec.get("scope"))
        link = spec.get("backward_link")
        fam = _Family(
            name=name, category=spec["category"], direction=spec["direction"], forward_scope=forward,
            backward_scope=backward, ends=frozenset(spec.get("ends", ())),
            backward_link=re.compile(f"(?:{_expand_pattern(link, vocab)})$", re.IGNORECASE) if link else None,
        )
        for phrase in spec.get("phrases", ()):
            for form in _expansions(phrase, words, shapes):
                node = trie
                for key in form:
                    node = node.setdefault(key, {})
                ends = node.setdefault(_END, [])
                if fam not in ends:
                    ends.append(fam)
        patterns += [(re.compile(_expand_pattern(p, vocab), re.IGNORECASE), fam) for p in spec.get("patterns", ())]
    q = data["questions"]
    questions = _Questions(openers=frozenset(w.lower() for w in q["openers"]),
                           **{k: tuple(w.lower() for w in q[k]) for k in ("yes", "no", "doubt")})
    return _Lexicon(trie, tuple((f"<{n}>", re.compile(rx)) for n, rx in shapes.items()),
                    tuple(patterns), questions)


def _longest(trie: dict, keys: list[str], i: int, shapes) -> tuple[int, list[_Family]] | None:
    """The longest phrase starting at token ``i``: (index after its last token, families)."""
    best = None
    stack = [(trie, i)]
    while stack:
        node, j = stack.pop()
        if _END in node and j > i and (best is None or j > best[0]):
            best = (j, node[_END])
        if j >= len(keys):
            continue
        child = node.get(keys[j])
        if child is not None:
            stack.append((child, j + 1))
        for slot, rx in shapes:
            if slot in node and rx.fullmatch(keys[j]):
                stack.append((node[slot], j + 1))
    return best


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
_WORD = re.compile(r"\w")


def _sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in _BREAK.finditer(text):
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
    family: _Family


def _hits(text: str) -> list[_Hit]:
    """Every trigger, overlaps resolved leftmost-longest; pseudo-triggers consume
    what they cover and are then dropped. Triggers of different families on the
    very same words are all kept ("stopped" is historical both ways)."""
    lex = _lexicon()
    spans = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    keys = [_key(text[s:e]) for s, e in spans]
    root_slots = [rx for slot, rx in lex.shapes if slot in lex.trie]
    found = []
    for i in range(len(keys)):
        if keys[i] not in lex.trie and not any(rx.fullmatch(keys[i]) for rx in root_slots):
            continue
        match = _longest(lex.trie, keys, i, lex.shapes)
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
    return not _WORD.search(text, lo, hit.start) and not _WORD.search(text, hit.end, hi)


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
    # comments on the sentence before (see the module docstring).
    alone = _alone(text, hit, item_lo, item_hi)
    if alone and previous is not None and fam.backward_scope == "item" and _alone(text, hit, lo, hi):
        lo = previous

    def ends(wide: bool) -> list[_Hit]:
        """The terminators of this trigger; a widened scope runs across list separators."""
        return [t for t in terminators if fam.category in t.family.ends and lo <= t.start < hi
                and not (wide and _WORD.search(text, t.start, t.end) is None)]

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
# The first word of a question, after an "If yes," that ties it to the one before.
_OPENER = re.compile(r"[\s\d.)(*•-]*(?:if (?:yes|so|no|any),\s*)?([A-Za-z]+)", re.IGNORECASE)


def opens_a_question(text: str) -> bool:
    """Whether ``text`` opens like a question: with "¿" or with a question word of the
    lexicon ("Are you pregnant?", "Any allergies?", "If yes, which ones?"). "Shellfish?"
    and "Lips tingled after the curry - shellfish?" do not: their "?" is a doubt."""
    t = (text or "").lstrip(" \t\n\r*•-")
    if t.startswith("¿"):
        return True
    first = _OPENER.match(t)
    return first is not None and first.group(1).lower() in _lexicon().questions.openers


def _question_cues(text: str, sentences: list[tuple[int, int]], hits: list[_Hit]) -> tuple[list[_Cue], set[int]]:
    """Questions ("Have you had chest pain?", a form's "Smoker? (Y/N)" or "Smoker?
    No"): their closing "?" is not a hedge, and what they ask is hypothetical unless
    the next sentence answers it yes (affirmed) or no (negated). A "?" sentence
    counts as a question when it opens with a question word, offers a choice, or is
    answered by a bare yes or no; answered in doubt ("Pregnant? Not sure",
    "Pregnant? Unknown", "Pregnant? No idea"), its "?" stays a hedge."""
    questions = _lexicon().questions
    cues: list[_Cue] = []
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
            cues.append(_Cue("question_answered_no", "negated", "backward", reply.group(1), reply.start(1),
                             reply.end(1), scope))
        else:
            end = lo + len(body)
            cues.append(_Cue("question", "hypothetical", "backward", text[mark:end], mark, end, scope))
    return cues, dropped


# Extraction asks about many targets of the same sentence; the answer is immutable.
@lru_cache(maxsize=512)
def _cues(text: str) -> tuple[_Cue, ...]:
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
        out.append(_Cue(hit.family.name, hit.family.category, hit.family.direction, text[hit.start:hit.end],
                        hit.start, hit.end, _scope(text, hit, sentence, previous, terminators)))
    out.sort(key=lambda c: c.start)
    return tuple(out)


# --------------------------------------------------------------------------- attributes


def _governs_words(text: str, lo: int, hi: int, skip: list[tuple[int, int]]) -> bool:
    """Whether [lo, hi) holds a word character outside the ``skip`` spans."""
    if hi <= lo:
        return False
    return any(not any(s <= m.start() < e for s, e in skip) for m in _WORD.finditer(text, lo, hi))


def _context(found: list[_Cue]) -> ClinicalContext:
    cats = {c.category for c in found}
    if "historical" not in cats:  # a "current" cue only matters against a historical one
        found = [c for c in found if c.category != "current"]
    order = {c: i for i, c in enumerate(CATEGORIES)}
    triggers: list[str] = []
    for c in sorted(found, key=lambda c: (order[c.category], c.start)):
        if c.text not in triggers:
            triggers.append(c.text)
    return ClinicalContext(
        negated="negated" in cats,
        experiencer="family" if "family" in cats else "other" if "other" in cats else "patient",
        temporality=("hypothetical" if "hypothetical" in cats
                     else "historical" if "historical" in cats and "current" not in cats else "current"),
        uncertain="uncertain" in cats,
        triggers=tuple(triggers),
    )


def _governing(text: str, start: int, end: int) -> list[_Cue]:
    """The cues that govern the mention ``text[start:end]``.

    A hedge counts when its scope reaches any word of the mention ("cough, ? chest
    pain" is in doubt as a whole). The other attributes are about the mention's head,
    its first word that is no trigger: "Cough for 3 days, denies chest pain" is an
    affirmed cough with a denial in it, not a negated mention; "denies chest pain"
    and "mother had breast cancer" are governed from their head on. A trigger that
    is itself the mention (NKDA, ~~struck~~) governs it wherever they overlap.
    """
    all_cues = _cues(text)
    triggers = [(c.start, c.end) for c in all_cues]
    head = next((m.start() for m in _WORD.finditer(text, start, end)
                 if not any(s <= m.start() < e for s, e in triggers)), None)
    found = []
    for c in all_cues:
        if c.direction == "self":
            hit = c.start < end and start < c.end
        elif c.category == "uncertain" or head is None:
            hit = any(_governs_words(text, max(s, start), min(e, end), [(c.start, c.end)]) for s, e in c.scopes)
        else:
            hit = any(s <= head < e for s, e in c.scopes)
        if hit:
            found.append(c)
    return found


def _whole_text(text: str) -> list[_Cue]:
    """The cues that speak for the text as a whole (see the module docstring)."""
    all_cues = _cues(text)
    triggers = [(c.start, c.end) for c in all_cues]
    if not _governs_words(text, 0, len(text), triggers):
        return list(all_cues)  # nothing but triggers: they are what the text says
    return [c for c in all_cues if c.direction == "self" or c.category == "uncertain"
            or any(_governs_words(text, s, e, triggers) for s, e in c.scopes)]


def assess_span(text: str, start: int, end: int) -> ClinicalContext:
    """The context of the mention ``text[start:end]``."""
    return _context(_governing(text or "", start, end))


def _find(text: str, target: str) -> tuple[int, int] | None:
    """The first whole-word occurrence of ``target`` in ``text`` ("MI" is not the
    "mi" of "Family"), any whitespace between its words, any case."""
    words = target.split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words)
    if _WORD.match(words[0]):
        pattern = rf"(?<!\w){pattern}"
    if _WORD.match(words[-1][-1]):
        pattern = rf"{pattern}(?!\w)"
    m = re.search(pattern, text, re.IGNORECASE)
    return (m.start(), m.end()) if m else None


def assess(text: str, target: str | None = None) -> ClinicalContext:
    """The context of ``target`` inside ``text`` (its first occurrence), or of the whole
    text when there is no target or it does not occur there."""
    text = text or ""
    span = _find(text, target) if target else None
    return _context(_governing(text, *span) if span else _whole_text(text))


def hedge_cue(text: str) -> str | None:
    """The first hedge in ``text`` as a whole, as printed, or None."""
    return next((c.text for c in _whole_text(text or "") if c.category == "uncertain"), None)


def hedge_on(mention: str, within: str | None = None) -> str | None:
    """The hedge on ``mention``, read out of the answer ``within``: one inside the
    mention ("shellfish?"), else one in the answer whose scope reaches it ("Not sure:
    penicillin, sulfa"; anywhere in the answer when the mention is not found in it)."""
    if cue := hedge_cue(mention):
        return cue
    ctx = assess(within, mention) if within else None
    return ctx.triggers[0] if ctx is not None and ctx.uncertain else None


def red_flag(text: str) -> str | None:
    """The first red-flag phrase in ``text`` that is affirmed, about the patient and
    current (lower-case), or None. Negated, family/other, hypothetical and historical
    mentions are excluded; hedged ones are kept (see the module docstring)."""
    text = text or ""
    for term, start, end in red_flag_spans(text):
        ctx = assess_span(text, start, end)
        if not ctx.negated and ctx.experiencer == "patient" and ctx.temporality == "current":
            return term
    return None


# --------------------------------------------------------------------------- facts


def _targets(proposal: FactProposal) -> list[str]:
    """Where to look for the fact's mention: its subject (substance, drug, problem...),
    then its text without the label, then its whole text."""
    value = proposal.structured_value or {}
    out = []
    key = _SUBJECT_KEYS.get(proposal.fact_type)
    if key and str(value.get(key) or "").strip():
        out.append(str(value[key]))
    _, sep, rest = proposal.fact_text.partition(": ")
    if sep and rest.strip():
        out.append(rest)
    out.append(proposal.fact_text)
    return out


def apply_to(proposal: FactProposal) -> FactProposal:
    """The processing hook: set ``proposal.context`` from its free text
    (``context_text``, else the quote) for the fact's mention, found by
    ``_targets`` (the whole text when none occurs in it); re-type a problem that is
    about a relative into family history. Lab results and demographics are left as
    they are: their values come from tables and identifiers, not prose."""
    if proposal.fact_type in NO_CONTEXT_FACT_TYPES:
        return proposal
    text = proposal.context_text or proposal.citation.quote_or_value
    span = next((s for t in _targets(proposal) if (s := _find(text, t)) is not None), None)
    found = _governing(text, *span) if span else _whole_text(text)
    ctx = _context(found)
    update: dict = {"context": ctx}
    if proposal.fact_type == "problem" and ctx.experiencer == "family":
        value = dict(proposal.structured_value or {})
        value.setdefault("condition", value.get("description") or proposal.fact_text)
        value.setdefault("relative", next(c.text for c in found if c.category == "family"))
        _, sep, rest = proposal.fact_text.partition(": ")
        update.update(fact_type="family_history", structured_value=value,
                      fact_text=f"Family history: {rest if sep else proposal.fact_text}")
    return proposal.model_copy(update=update)
