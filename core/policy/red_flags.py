"""Red-flag language: symptoms that need a clinician's eyes whatever was asked (pure).

One list for every reader of free text (intake answers, referral letters, HL7 notes)
and for the answer composer. A red flag counts only for an affirmed, current mention
about the patient: "denies chest pain", "mother had a stroke", "history of stroke"
and "return if short of breath" raise nothing. This module only finds the phrases;
``core.policy.context.red_flag`` decides on their context.
"""

from __future__ import annotations

import re

_RED_FLAGS = re.compile(
    r"\b(?:chest (?:pain|tightness|pressure)|short(?:ness)? of breath|can'?t breathe|cannot breathe|"
    r"difficulty breathing|suicid\w*|kill (?:myself|themselves|himself|herself)|self[- ]harm\w*|"
    r"harm(?:ing)? (?:myself|themselves|himself|herself)|overdose\w*|faint(?:ed|ing)?|passed out|syncope|"
    r"worst headache|vision loss|loss of vision|slurred speech|weakness on one side|one[- ]sided weakness|"
    r"stroke|seizures?|coughing (?:up )?blood|vomiting blood|blood in (?:my |the |his |her )?stool|black stools?|"
    r"severe bleeding)\b",
    re.I,
)


def red_flag_spans(text: str) -> list[tuple[str, int, int]]:
    """Every red-flag phrase in ``text``: (lower-case phrase, start, end), ignoring context."""
    return [(m.group(0).lower(), m.start(), m.end()) for m in _RED_FLAGS.finditer(text or "")]


def red_flag_term(text: str) -> str | None:
    """The first red-flag phrase in ``text`` (lower-case), ignoring context."""
    spans = red_flag_spans(text)
    return spans[0][0] if spans else None
