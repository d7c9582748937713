"""Sentences of free text and the spans read out of them (pure).

The sentence readers (``prose_allergies``, ``prose_meds``, ``prose_problems``,
``prose_labs``) return what was printed with its offsets, so a citation quotes the
document exactly; this module cuts a paragraph into sentences and trims spans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of the text as printed, with its offsets, and a normalised value."""

    text: str
    start: int
    end: int
    value: str = ""


# A sentence ends before a capital, a quote or bracket, or a list item's number ("...
# daily. 2. CKD - ..."): numbered items set close together run into one paragraph.
_SENTENCE_END = re.compile(r"(?<!\b[Mm]r)(?<!\b[Mm]rs)(?<!\b[Mm]s)(?<!\b[Dd]r)(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)"
                           r"[.!?](?=\s+[A-Z(\"'\u2018\u201c]|\s+\d{1,2}[.)]\s|\s*$)")


# A list item's number ("1. T2DM, uncontrolled - ...", "(2) Gout"): it opens its sentence.
_ITEM_NUMBER = re.compile(r"\s*\(?\d{1,2}[.)]")


def sentences(text: str) -> list[Span]:
    """The sentences of a paragraph, with offsets ("Mr." and "Dr." do not end one, nor
    does a numbered item's "1.")."""
    out, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        end = m.end()
        if _ITEM_NUMBER.fullmatch(text, start, end):
            continue
        if text[start:end].strip():
            out.append(strip_span(text, start, end))
        start = end
    if text[start:].strip():
        out.append(strip_span(text, start, len(text)))
    return out


def strip_span(text: str, start: int, end: int, chars: str = " \t\n") -> Span:
    """``text[start:end]`` without the ``chars`` at either end, as a span."""
    while start < end and text[start] in chars:
        start += 1
    while end > start and text[end - 1] in chars:
        end -= 1
    return Span(text[start:end], start, end)


def clause_items(text: str, start: int, end: int, *, max_words: int) -> list[Span]:
    """The items of a list written in a clause ("type 2 diabetes, hypertension and
    gout"): cut at commas and semicolons outside brackets and at "and"/"or"/"&",
    each trimmed of articles and punctuation; items longer than ``max_words`` words
    are sentences, not names, and are dropped."""
    pieces: list[tuple[int, int]] = []
    depth, last = 0, start
    i = start
    while i < end:
        ch = text[i]
        depth += ch in "([{"
        depth -= ch in ")]}" and depth > 0
        if depth == 0 and ch in ",;":
            pieces.append((last, i))
            last = i + 1
        elif depth == 0:
            m = _JOINER.match(text, i)
            if m and m.end() <= end:
                pieces.append((last, i))
                last = i = m.end()
                continue
        i += 1
    pieces.append((last, end))
    out = []
    for a, b in pieces:
        span = strip_span(text, a, b, " \t\n,.;:")
        lead = _ARTICLE.match(span.text)
        if lead:
            span = strip_span(text, span.start + lead.end(), span.end, " \t\n,.;:")
        if span.text and len(span.text.split()) <= max_words:
            out.append(span)
    return out


_JOINER = re.compile(r"\s+(?:and|or|&|as well as|plus)\s+", re.I)
_ARTICLE = re.compile(r"(?:(?:a|an|the|some|also|both|either|then)\s+)+", re.I)
