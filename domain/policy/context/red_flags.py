"""Red-flag language: symptoms that need a clinician's eyes whatever was asked (pure).

One list for every reader of free text (intake answers, referral letters, HL7 notes)
and for the answer composer. A red flag counts only for an affirmed, current mention
about the patient: "denies chest pain", "mother had a stroke", "history of stroke"
and "return if short of breath" raise nothing. This module only finds the phrases;
``domain.policy.context.mentions.red_flag`` decides on their context.
"""

from __future__ import annotations

import re

_RED_FLAGS = re.compile(
    r"\b(?:chest (?:pain|tightness|pressure)|short(?:ness)? of breath|can'?t breathe|cannot breathe|"
    r"difficulty breathing|suicid\w*|kill (?:myself|themselves|himself|herself)|self[- ]harm\w*|"
    r"harm(?:ing)? (?:myself|themselves|himself|herself)|overdose\w*|passed out|syncope|"
    # "faint" is also an examiner's word for something barely there ("faint murmur")
    r"faint(?:ed|ing)?(?! (?:systolic |diastolic )?(?:murmurs?|rash|lines?|bands?|positive|pulses?|"
    r"erythema|crackles|wheez\w*|opacit\w*))|"
    r"worst headache|vision loss|loss of vision|slurred speech|weakness on one side|one[- ]sided weakness|"
    r"stroke(?! volume)|seizures?|coughing (?:up )?blood|vomiting blood|blood in (?:my |the |his |her )?stool|"
    r"black stools?|severe bleeding)\b",
    re.I,
)


def red_flag_spans(text: str) -> list[tuple[str, int, int]]:
    """Every red-flag phrase in ``text``: (lower-case phrase, start, end), ignoring context."""
    return [(m.group(0).lower(), m.start(), m.end()) for m in _RED_FLAGS.finditer(text or "")]
