"""A laboratory's comment that says a result may not be valid (pure).

Labs print what they noticed about a sample beside or under its results: "Sample
haemolysed - potassium may be falsely raised. Please repeat.", an HL7 NTE under an OBX,
a FHIR Observation's note. Such a result is still the lab's, but it is not a fact to
chart as it stands: it goes to a person with the comment quoted (fail closed). The
comment is never a result of its own.

Which results a comment covers: its own result always (an NTE under an OBX, a note in
the result's row or Observation); otherwise, where it names tests ("K+ may be falsely
elevated"), the results of those tests, and where it names none ("Haemolysed sample"),
every result of its scope (the report, the order, the message): it speaks of the sample
they all came from. General advice a report prints on every copy ("eGFR should be
interpreted with caution ...") is not about this sample, so caution alone is no cue.
"""

from __future__ import annotations

import re

from domain.policy.facts.analytes import analytes_named, result_is_of

# Words a lab uses for a sample or a measurement it does not vouch for.
_CUE = re.compile(
    r"\b(?:haemoly[sz]\w*|hemoly[sz]\w*|lipa?emi[ac]\w*|icteri[ac]\w*|icterus|clotted|clots?\s+(?:present|seen|detected)"
    r"|micro-?clots?|contaminat\w*|falsely|spurious\w*|artefact\w*|artifact\w*|interferen\w*|unreliable"
    r"|drip\s+arm|(?:sample|specimen)\s+(?:was\s+)?(?:delayed|aged|unspun|leaking|not\s+separated)"
    r"|delay(?:ed)?\s+in\s+(?:transit|transport|receipt|processing|separation|analysis)"
    r"|(?:please|suggest|advise|recommend)\w*\s+(?:a\s+)?repeat|repeat\s+(?:sample|specimen|test\w*|bloods?)?\s*"
    r"(?:requested|advised|recommended|suggested|required))",
    re.IGNORECASE,
)
# "No haemolysis", "not lipaemic", "non-haemolysed", "without clots".
_NEGATED_BEFORE = re.compile(r"\b(?:no|not|non|without|nil|free\s+of)[\s-]+(?:\w+\s+)?$", re.IGNORECASE)
# "Haemolysis: none", "Haemolysis index: not detected".
_NEGATED_AFTER = re.compile(r"^\s*(?:index)?\s*[:=\-]?\s*(?:nil|none|absent|negative|not\s+(?:detected|seen|present))\b",
                            re.IGNORECASE)
MAX_QUOTED = 160


def doubt_cue(comment: str | None) -> str | None:
    """The words of ``comment`` that say a result may not be valid, or None."""
    for m in _CUE.finditer(comment or ""):
        if _NEGATED_BEFORE.search(comment[:m.start()]) or _NEGATED_AFTER.match(comment[m.end():]):
            continue
        return m.group(0)
    return None


def comment_doubts(test_name: str, own: list[str] | tuple[str, ...] = (), scope: list[str] | tuple[str, ...] = (),
                   loinc: str | None = None, unit: str | None = None) -> list[str]:
    """Review reasons for a result from the lab's comments: ``own`` are its own (an NTE
    under its OBX, a note in its row), ``scope`` those of its report, order or message."""
    reasons = []
    for comment in own:
        if doubt_cue(comment):
            reasons.append(_reason(comment))
    for comment in scope:
        if comment in own or not doubt_cue(comment):
            continue
        named = analytes_named(comment)
        if not named or result_is_of(named, test_name, loinc=loinc, unit=unit):
            reasons.append(_reason(comment))
    return list(dict.fromkeys(reasons))


def _reason(comment: str) -> str:
    text = " ".join(comment.split())
    if len(text) > MAX_QUOTED:
        text = text[:MAX_QUOTED - 1].rstrip() + "…"
    return f"the laboratory's comment says the result may not be valid: {text!r}"
