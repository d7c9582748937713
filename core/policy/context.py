"""Clinical context of a mention in free text (pure), after ConText (Harkema et al., 2009).

API used across the project (kept stable):
- ``assess(text, target=None) -> ClinicalContext``: negated / experiencer /
  temporality / uncertain for ``target`` (a phrase inside ``text``) or the whole text;
- ``hedge_cue(text) -> str | None``: the first hedge ("?", "possible", "rule out"...);
- ``red_flag(text) -> str | None``: a red-flag phrase that is affirmed, current and
  about the patient.

PROVISIONAL: the trigger lexicon and scope rules are being written (issue 9); this
first version only knows hedges.
"""

from __future__ import annotations

import re

from core.models import ClinicalContext
from core.policy.red_flags import red_flag_term

_HEDGE = re.compile(
    r"\?|\b(?:possibl[ey]|probabl[ey]|query|queried|suspected|unsure|unclear|uncertain|maybe|may be|"
    r"perhaps|questionable|r/o|rule out|not sure|unconfirmed|to be confirmed|tbc|might|i think|"
    r"don'?t know|do not know)\b",
    re.IGNORECASE,
)


def hedge_cue(text: str) -> str | None:
    m = _HEDGE.search(text or "")
    return m.group(0) if m else None


def assess(text: str, target: str | None = None) -> ClinicalContext:
    cue = hedge_cue(text)
    return ClinicalContext(uncertain=cue is not None, triggers=(cue,) if cue else ())


def red_flag(text: str) -> str | None:
    term = red_flag_term(text)
    if term is None:
        return None
    ctx = assess(text, term)
    if ctx.negated or ctx.experiencer != "patient" or ctx.temporality == "hypothetical":
        return None
    return term
