"""How the review queue groups findings for one look (pure): reasons that differ only by
a confidence number are one reason, and a reading's confidence falls in a named band.

A reader writes "value read by OCR with low confidence (0.41)"; the next finding's
reason says (0.38). Both ask the reviewer the same question, so the queue filters,
counts and approves them together; the number stays in each item's own reason."""

from __future__ import annotations

import re

# A confidence score written into a reason: a number from 0 to 1 in parentheses, or
# after the word "confidence" ("confidence 0.62", "confidence: .7", "(0.33)").
_SCORE = r"(?:0?\.\d+|1\.0+)"  # a decimal: "(1)" or "(2)" is a count, not a confidence
_IN_PARENS = re.compile(rf"\s*\(\s*(?:confidence\s*:?\s*)?{_SCORE}\s*\)")
_AFTER_WORD = re.compile(rf"(?i)(confidence)\s*:?\s*{_SCORE}(?![\d.])")


def reason_group(reason: str | None) -> str | None:
    """``reason`` without the confidence numbers written into it; a reason without one
    (or a code such as ``conflict_needs_review``) is its own group."""
    if not reason:
        return reason
    grouped = _AFTER_WORD.sub(r"\1", _IN_PARENS.sub("", reason))
    return re.sub(r"\s{2,}", " ", grouped).strip()


# A reading's confidence, lowest band first: (upper bound, name, colour). The colours run
# red (doubtful) to green; an unknown confidence is shown grey, never as high.
CONFIDENCE_BANDS: tuple[tuple[float, str, str], ...] = (
    (0.5, "low", "#f8d7da"),
    (0.8, "medium", "#fff3cd"),
    (float("inf"), "high", "#d1e7dd"),
)
UNKNOWN_BAND = ("unknown", "#e9ecef")


def confidence_band(confidence: float | None) -> str:
    """The band a confidence falls in ("low", "medium", "high"), "unknown" without one."""
    return _band(confidence)[0]


def band_colour(confidence: float | None) -> str:
    return _band(confidence)[1]


def _band(confidence: float | None) -> tuple[str, str]:
    if confidence is None:
        return UNKNOWN_BAND
    value = float(confidence)
    for upper, name, colour in CONFIDENCE_BANDS:
        if value < upper:
            return name, colour
    return UNKNOWN_BAND  # NaN
