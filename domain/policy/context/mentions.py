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
once per process by ``domain.policy.context.lexicon``; ``domain.policy.context.scope``
finds the triggers of a text and the spans each governs (cached, because extraction
asks about many targets of the same sentence); this module reads a mention's context
from them.

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
- ``opens_a_question(text) -> bool`` (in ``domain.policy.context.scope``): the sentence
  opens with "¿" or a question word (a form's question rather than a doubt);
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

import re

from domain.models import ClinicalContext, FactProposal
from domain.policy.context.scope import WORD, Cue, cues
from domain.policy.context.red_flags import red_flag_spans

CATEGORIES = ("uncertain", "negated", "family", "other", "hypothetical", "historical", "current")
# Fact types whose text is not free prose: values read from result tables and
# identifiers. Every other fact gets a context.
NO_CONTEXT_FACT_TYPES = frozenset({"lab_result", "demographic"})
# Where the subject of each kind of fact sits in its structured value.
_SUBJECT_KEYS = {"allergy": "substance", "medication": "name", "problem": "description",
                 "family_history": "condition", "chief_concern": "text"}


# --------------------------------------------------------------------------- attributes


def _governs_words(text: str, lo: int, hi: int, skip: list[tuple[int, int]]) -> bool:
    """Whether [lo, hi) holds a word character outside the ``skip`` spans."""
    if hi <= lo:
        return False
    return any(not any(s <= m.start() < e for s, e in skip) for m in WORD.finditer(text, lo, hi))


def _context(found: list[Cue]) -> ClinicalContext:
    cats = {c.category for c in found}
    if "historical" not in cats:  # a "current" cue only matters against a historical one
        found = [c for c in found if c.category != "current"]
    order = {c: i for i, c in enumerate(CATEGORIES)}
    triggers: list[str] = []
    for c in sorted(found, key=lambda c: (order[c.category], c.start)):
        if c.text not in triggers:
            triggers.append(c.text)
    # Both said of it: a stop told after the start, pointing back at the medicine, tells
    # what became of it ("was started on X in May but stopped it"); a time said of the
    # start does not ("started metformin last year": still taken).
    past = "historical" in cats and ("current" not in cats or any(
        c.family == "historical_backward_pronoun" and c.start > max(d.start for d in found if d.category == "current")
        for c in found))
    return ClinicalContext(
        negated="negated" in cats,
        experiencer="family" if "family" in cats else "other" if "other" in cats else "patient",
        temporality=("hypothetical" if "hypothetical" in cats else "historical" if past else "current"),
        uncertain="uncertain" in cats,
        triggers=tuple(triggers),
    )


def _governing(text: str, start: int, end: int) -> list[Cue]:
    """The cues that govern the mention ``text[start:end]``.

    A hedge counts when its scope reaches any word of the mention ("cough, ? chest
    pain" is in doubt as a whole). The other attributes are about the mention's head,
    its first word that is no trigger: "Cough for 3 days, denies chest pain" is an
    affirmed cough with a denial in it, not a negated mention; "denies chest pain"
    and "mother had breast cancer" are governed from their head on. A trigger that
    is itself the mention (NKDA, ~~struck~~) governs it wherever they overlap.
    """
    all_cues = cues(text)
    triggers = [(c.start, c.end) for c in all_cues]
    head = next((m.start() for m in WORD.finditer(text, start, end)
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


def _whole_text(text: str) -> list[Cue]:
    """The cues that speak for the text as a whole (see the module docstring)."""
    all_cues = cues(text)
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
    if WORD.match(words[0]):
        pattern = rf"(?<!\w){pattern}"
    if WORD.match(words[-1][-1]):
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
