"""Geometry shared by the paged extractors: rows, gap segments and label phrases.

Works on ``Word`` boxes only (PDF text layer or OCR alike), never on a known
template: a *segment* is a run of words on one row without a wide gap, and a
*label* is a vocabulary phrase that starts a segment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from statistics import median
from typing import Iterable, Sequence

from domain.content import PageContent, Word
from domain.policy.facts.citations import reading_rows
from domain.policy.facts.ocr_readings import alike_letters_apart, one_edit_apart

__all__ = ["reading_rows", "Row", "page_rows", "segments", "ocr_char_width", "norm_token", "PhraseBook",
           "PhraseHit", "LabelledValue", "labelled_values", "text_of"]

# A gap wider than this share of the text height separates segments. A space is
# ~0.25 of the word-box height in Helvetica/Times and ~0.5 in Courier; column gaps
# in tables and forms are several spaces wide.
SEGMENT_GAP = 0.8
# OCR boxes hug the ink, so an OCR row is only as tall as its ink (well under the
# font's box a text layer reports) and a gap between words includes both side
# bearings: in row heights, word gaps (up to 1.3 in Courier) and column gaps (from
# 1.5) overlap. In character widths they do not: on 300 dpi scans of every
# generated layout, words of one phrase were at most 1.8 characters apart and
# columns at least 3.3. So OCR words are also held together up to this many
# characters of the row's own print.
OCR_SEGMENT_CHARS = 2.5
# OCR words read below this confidence are doubtful: not used to measure print size
# and, in the lab rules, candidates for a dot leader read as junk.
OCR_TRUSTED_CONF = 0.5


@dataclass(slots=True)
class Row:
    """One visual row of a page, with its extent computed once."""

    page: PageContent
    words: list[Word]
    index: int  # position among the page's rows
    x0: float = 0.0
    y0: float = 0.0
    x1: float = 0.0
    y1: float = 0.0
    height: float = 0.0  # median word height: the row's text size

    def __post_init__(self) -> None:
        ws = self.words
        self.x0, self.x1 = min(w.x0 for w in ws), max(w.x1 for w in ws)
        self.y0, self.y1 = min(w.y0 for w in ws), max(w.y1 for w in ws)
        self.height = median(w.y1 - w.y0 for w in ws)

    @property
    def text(self) -> str:
        return text_of(self.words)


def page_rows(page: PageContent) -> list[Row]:
    """Visual rows of a page, regrouped from its words whatever the normalizer did."""
    return [Row(page, words, i) for i, words in enumerate(reading_rows(page.words))]


def segments(words: Sequence[Word], gap_factor: float = SEGMENT_GAP) -> list[list[Word]]:
    """Split a row's words wherever the horizontal gap exceeds ``gap_factor`` × height
    (for OCR words, also more than ``OCR_SEGMENT_CHARS`` character widths)."""
    min_gap = OCR_SEGMENT_CHARS * cw if (cw := ocr_char_width(words)) else 0.0
    out: list[list[Word]] = []
    for w in words:
        if out:
            prev = out[-1][-1]
            h = min(prev.y1 - prev.y0, w.y1 - w.y0)
            if w.x0 - prev.x1 <= max(gap_factor * h, min_gap):
                out[-1].append(w)
                continue
        out.append([w])
    return out


def ocr_char_width(words: Sequence[Word]) -> float | None:
    """Median width of one printed character among the confidently read OCR words of
    three or more characters; ``None`` for text-layer words or too little evidence.
    (Short words and doubtful ones are left out: a dot leader read as "oe" is a
    two-letter word a hundred points wide.)"""
    widths = sorted((w.x1 - w.x0) / len(w.text) for w in words
                    if w.conf is not None and w.conf >= OCR_TRUSTED_CONF and len(w.text) >= 3)
    return widths[len(widths) // 2] if widths else None


_EDGE_PUNCT = re.compile(r"^[\s(\[*•·\-–]+|[\s:;#?.,)\]*]+$")


def norm_token(text: str) -> str:
    """Lower-case a word and drop label punctuation around it ("Acct#:" -> "acct")."""
    return _EDGE_PUNCT.sub("", text.lower())


@dataclass(frozen=True, slots=True)
class PhraseHit:
    key: str
    start: int  # index of the first word of the phrase in the word list
    end: int  # index just past the phrase
    ends_with_colon: bool  # written as a label: "DOB:" or "What brings you in today?"
    tokens: int  # how many vocabulary words matched


# OCR'd label words this long may be read through one misread letter (PhraseBook).
_OCR_LABEL_MIN = 6
_NEAR_CACHE_MAX = 4096


class PhraseBook:
    """A vocabulary of label phrases -> keys, matched longest-first on word tokens.

    Phrases are written plainly ("date of birth", "acct #"); matching ignores case
    and the label punctuation around words, so "Date of Birth:" and "DATE OF BIRTH"
    both match.
    """

    def __init__(self, phrases: dict[str, str]):
        self._by_tokens: dict[tuple[str, ...], str] = {}
        for phrase, key in phrases.items():
            tokens = tuple(t for t in (norm_token(p) for p in phrase.split()) if t)
            if self._by_tokens.setdefault(tokens, key) != key:
                raise ValueError(f"label {phrase!r} is already used for {self._by_tokens[tokens]!r}")
        self.max_len = max(len(t) for t in self._by_tokens)
        self._tokens = frozenset(t for tokens in self._by_tokens for t in tokens)
        # ``_ocr_token``'s answers by token: ``match_at`` runs at every word of a page,
        # so each token was compared with the whole vocabulary several times (85% of a
        # scanned lab page's extraction). Emptied when full: a page's tokens fit many times.
        self._near: dict[str, str] = {}

    def _ocr_token(self, w: Word, token: str) -> str:
        """A label word OCR misread by one letter ("Descriptlon", "Roported"), or a long one
        by two letters OCR prints alike ("Roforence"), read as the one label word it stands
        for; only for OCR'd words of six letters or more, and only when no other label word
        is as close (short labels differ by a letter)."""
        if w.conf is None or len(token) < _OCR_LABEL_MIN or token in self._tokens:
            return token
        found = self._near.get(token)
        if found is None:
            near = [t for t in self._tokens if one_edit_apart(token, t)] or \
                [t for t in self._tokens if alike_letters_apart(token, t)]
            found = near[0] if len(near) == 1 else token
            if len(self._near) >= _NEAR_CACHE_MAX:
                self._near.clear()
            self._near[token] = found
        return found

    def vouches(self, hit: PhraseHit, after: Sequence[Word]) -> bool:
        """Whether the words after a label written without a colon ("MRN AW-481530",
        "Born 06/21/1958") have the shape of that label's value, so that a one-word label
        opening a segment can be trusted. A vocabulary that knows its values' shapes
        says so; by default a bare one-word label is never trusted."""
        return False

    def match_at(self, words: Sequence[Word], start: int) -> PhraseHit | None:
        """The longest phrase beginning at ``words[start]``."""
        tokens: list[str] = []
        for w in words[start : start + self.max_len + 2]:
            t = norm_token(w.text)
            if t:
                tokens.append(self._ocr_token(w, t))
            elif tokens:  # a lone "#" or ":" word belongs to the phrase before it
                continue
        best = None
        for n in range(min(len(tokens), self.max_len), 0, -1):
            key = self._by_tokens.get(tuple(tokens[:n]))
            if key is not None:
                best = (key, n)
                break
        if best is None:
            return None
        key, n = best
        # Map n tokens back to word positions (punctuation-only words ride along).
        end, seen = start, 0
        while end < len(words) and seen < n:
            if norm_token(words[end].text):
                seen += 1
            end += 1
        while end < len(words) and not norm_token(words[end].text) and words[end].text.strip() in (":", "#", "#:"):
            end += 1
        last = words[end - 1].text.rstrip()
        # A label closed by "#" ("Hosp#", "MR #") is written as a label as surely as "DOB:".
        return PhraseHit(key, start, end, last.endswith((":", "?", "#")), n)


def text_of(words: Iterable[Word]) -> str:
    return " ".join(w.text for w in words)


@dataclass(slots=True)
class LabelledValue:
    """A "Label: value" pair found on a row (or a label with its value just below)."""

    key: str
    row: Row
    label: list[Word]
    value: list[Word]

    @property
    def words(self) -> list[Word]:
        return self.label + self.value

    @property
    def value_text(self) -> str:
        return text_of(self.value)

    def value_words_at(self, start: int, end: int) -> list[Word]:
        """The value's words that ``value_text[start:end]`` touches."""
        return words_at(self.value, start, end)


def words_at(words: Sequence[Word], start: int, end: int) -> list[Word]:
    """The words that ``text_of(words)[start:end]`` touches."""
    out, at = [], 0
    for w in words:
        if at < end and start < at + len(w.text):
            out.append(w)
        at += len(w.text) + 1
    return out


def labelled_values(rows: Sequence[Row], book: PhraseBook) -> list[LabelledValue]:
    """Every label from ``book`` on the rows, with the words it labels.

    A label starts a segment, or sits inside one when written with a colon
    ("Name: Ann Lee   DOB: 01/02/1960" typed with only a few spaces). The value
    runs to the next label; a label standing alone takes the next piece of its row
    (unless that is another label), else the words right below it (stacked header
    boxes). A one-word label ("Name", "Patient", "Collected") is too common a word
    to trust unless written with a colon.
    """
    found: list[LabelledValue] = []
    for i, row in enumerate(rows):
        segs = segments(_unglue_labels(row.words, book))
        pieces = [p for k, seg in enumerate(segs)
                  for p in _label_pieces(seg, book, segs[k + 1] if k + 1 < len(segs) else [])]
        for j, (hit, label, value) in enumerate(pieces):
            if hit is None:
                continue
            if not value and j + 1 < len(pieces) and pieces[j + 1][0] is None:
                value = pieces[j + 1][2]
            if not value and i + 1 < len(rows):
                value = _words_below(label, row, rows[i + 1])
            found.append(LabelledValue(hit.key, row, label, value))
    return found


# "DOB:7/22/58", and "DOB.14/03/1952" (a fax's speck or a lost space read as a point) before a number.
_GLUED_LABEL = re.compile(r"^(?P<label>[A-Za-z][A-Za-z .#/']*:)(?P<value>[A-Za-z0-9(].*)$"
                          r"|^(?P<plabel>[A-Za-z][A-Za-z.]*[A-Za-z]\.)(?P<pvalue>\d.*)$")
_HYPHENED_LABEL = re.compile(r"^[A-Za-z]+(?:-[A-Za-z]+)+:$")


def _unglue_labels(words: Sequence[Word], book: PhraseBook) -> list[Word]:
    """OCR words "DOB:7/22/58" (the space after a colon lost) as "DOB:" and "7/22/58",
    and "Patient-name:" (a space read as a hyphen) as "Patient-" "name:" when that is a
    label of ``book`` and the word as printed is not.

    Only OCR words are cut, each into words sharing its box by character count;
    a citation quoting them still finds the one word the page holds.
    """
    out: list[Word] = []
    for w in words:
        if w.conf is not None and _HYPHENED_LABEL.match(w.text):
            pieces = w.text.split("-")  # each keeps its hyphen, so a quote is still what the page prints
            parts = _cut(w, [t + "-" for t in pieces[:-1]] + pieces[-1:])
            hit = book.match_at(parts, 0)
            if hit is not None and hit.end == len(parts) and book.match_at([w], 0) is None:
                out.extend(parts)
                continue
        m = _GLUED_LABEL.match(w.text) if w.conf is not None else None
        if m is None:
            out.append(w)
            continue
        label = m.group("label") or m.group("plabel")
        if m.group("plabel") and book.match_at([Word(label, w.x0, w.y0, w.x1, w.y1)], 0) is None:
            out.append(w)  # "No.5", "approx.3": only a label of the book is cut off its number
            continue
        out.extend(_cut(w, [label, m.group("value") or m.group("pvalue")]))
    return out


def _cut(w: Word, texts: list[str]) -> list[Word]:
    """``w`` as one word per text, sharing its box by character count."""
    out, x0, total = [], w.x0, sum(map(len, texts))
    for text in texts:
        x1 = x0 + (w.x1 - w.x0) * len(text) / total
        out.append(Word(text, x0, w.y0, x1, w.y1, block=w.block, line=w.line, index=w.index, conf=w.conf))
        x0 = x1
    return out


def _label_pieces(seg: list[Word], book: PhraseBook, next_seg: Sequence[Word] = ()
                  ) -> list[tuple[PhraseHit | None, list[Word], list[Word]]]:
    """Cut a segment at its labels: (hit, label words, value words) per piece; text
    before the first label is a piece without a hit. A label that is the whole segment
    is vouched for by the next segment of its row ("Collected      28-Nov-2026 07:45",
    a column apart and its colon lost on a scan)."""
    starts: list[PhraseHit] = []
    i = 0
    while i < len(seg):
        hit = book.match_at(seg, i)
        trusted = hit is not None and (hit.ends_with_colon or (i == 0 and (
            hit.tokens >= 2 or book.vouches(hit, seg[hit.end:] or next_seg))) or _labels_inside(hit, seg, book))
        if trusted:
            starts.append(hit)
            i = hit.end
        else:
            i += 1
    if not starts:
        return [(None, [], seg)]
    pieces: list[tuple[PhraseHit | None, list[Word], list[Word]]] = []
    if starts[0].start > 0:
        pieces.append((None, [], seg[: starts[0].start]))
    for k, hit in enumerate(starts):
        stop = starts[k + 1].start if k + 1 < len(starts) else len(seg)
        pieces.append((hit, seg[hit.start : hit.end], seg[hit.end : stop]))
    return pieces


def _labels_inside(hit: PhraseHit, seg: list[Word], book: PhraseBook) -> bool:
    """A label inside a segment without a colon ("Patient: WIECZOREK, Tomasz DOB 14/03/1952
    MRN HX-771203", its gaps too narrow to split): trusted when what follows has the shape
    of its value and the label is several words ("Date of birth") or printed in capitals
    ("DOB", "MRN") or capitalised ("Born", "Visit"), never a word of running text in lower
    case ("... was born 01/02/1960")."""
    printed = "".join(c for w in seg[hit.start:hit.end] for c in w.text if c.isalpha())
    return (hit.tokens >= 2 or (len(printed) >= 2 and printed[0].isupper())) and book.vouches(hit, seg[hit.end:])


def _words_below(label: list[Word], row: Row, below: Row) -> list[Word]:
    """Words of the next row that sit under ``label`` (header-box style), if close."""
    if below.page is not row.page or below.y0 - row.y1 > 1.5 * row.height:
        return []
    x0, x1 = label[0].x0, label[-1].x1
    for seg in segments(below.words):
        if seg[0].x0 < x1 and seg[-1].x1 > x0 - row.height:
            return seg
    return []
