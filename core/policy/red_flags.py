"""Red-flag language: symptoms that need a clinician's eyes whatever was asked (pure).

One list for every reader of free text (intake answers, referral letters, HL7 notes)
and for the answer composer. A red flag counts only for an affirmed, current mention
about the patient: "denies chest pain", "mother had a stroke" and "return if short of
breath" raise nothing (the context policy decides that).
"""

from __future__ import annotations

import re

_RED_FLAGS = re.compile(
    r"chest (?:pain|tightness|pressure)|short(?:ness)? of breath|can'?t breathe|cannot breathe|"
    r"difficulty breathing|suicid\w*|kill (?:myself|themselves|himself|herself)|self[- ]harm|"
    r"harm(?:ing)? (?:myself|themselves)|overdose|faint(?:ed|ing)?\b|passed out|syncope|"
    r"worst headache|vision loss|slurred speech|weakness on one side|one[- ]sided weakness|stroke|"
    r"seizure|coughing (?:up )?blood|vomiting blood|blood in (?:my |the )?stool|black stool|"
    r"severe bleeding",
    re.I,
)


def red_flag_term(text: str) -> str | None:
    """The first red-flag phrase in ``text`` (lower-case), ignoring context."""
    m = _RED_FLAGS.search(text or "")
    return m.group(0).lower() if m else None
