"""A second engine's vote on the words the first engine doubted.

Tesseract reads a page; the words it read below ``VOTE_BELOW`` are cut out and read
again by a different recogniser (RapidOCR's line model, extract/formats/ocr/rapid.py),
which makes different mistakes. The rule, per doubtful word:

* both read the same text: the doubt was Tesseract's line model stumbling over a short
  isolated token, not the ink; the word's confidence rises to the better of the two;
* they differ: the word keeps the *lower* of the two confidences, so the lab rules
  send what depends on it to review; where both are fairly sure but read different
  numbers ("44H" and "41 H"), the number is contested and drops below the readers'
  trust line whatever the two confidences were. Its text changes only when the second
  engine is sure of its reading (``VOTER_REPLACES_AT``) or agrees with one of
  Tesseract's own re-readings of the word (``alternatives``), and a changed word's
  confidence is then capped below the readers' trust line. Nothing is ever corrected into a confident
  value: a corrected word is shown, cited and reviewed.

One more mistake is the second engine's to undo: a "1" OCR split off the number it
begins, read as a mark ("| 1/27/2026" for "11/27/2026"); the two are read again together
(``rejoin_split_digits``), and the number given back its digit is reviewed like any
changed word.

Only doubtful words are voted on, and numbers read short of near-certain (a lost
decimal point reads as a confident "79"); at most VOTE_MAX_WORDS a page, so the vote
costs a fraction of a second full-page reading.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Callable, Sequence

from PIL import Image

from domain.content import Word

# Words read below this confidence get a second opinion, and numbers below the higher
# bar: Tesseract read a faxed "7.9" as "79" at 0.95, a dropped decimal point that only
# another engine notices. At most this many words a page (lowest confidence first): the
# cap binds on poor pages, where the vote is worth most. On standard-resolution faxes
# of thin typefaces, where most words are doubtful, 50 left many of them unvoted; 150
# read 6-8 more fields of 180 on each of three speckle draws (and 4 more of 375 on
# speckled 300 dpi scans) for ~0.1-0.2 s of CPU a page; a higher cap read no more.
VOTE_BELOW = 0.9
NUMBER_VOTE_BELOW = 0.97
VOTE_MAX_WORDS = 150
# A second reading must be at least this sure to count as agreement.
VOTER_MIN_SCORE = 0.75
# A second reading this sure, of a word Tesseract doubted, replaces its text (RapidOCR
# read "11.8", "A1c", "x10E3/uL" at 0.93-1.0 where Tesseract read "118)", "Aic" and
# "xX10E3/uL" at 0.04-0.52 and its own re-readings disagreed with each other).
VOTER_REPLACES_AT = 0.9
# A word whose text the vote changed is capped below the confidence the readers trust
# (extract.layout.OCR_TRUSTED_CONF, 0.5): a changed value is always reviewed.
CHANGED_MAX_CONF = 0.45
# A word inside another's box read at least this sure is a neighbour the second reading
# must not take in (``_reads_neighbours``): the readers' trust line.
NEIGHBOUR_TRUSTED_CONF = 0.5

# Marks OCR makes of a "1" it split off the number it begins ("| 1/27/2026").
SPLIT_MARKS = frozenset("|!lI[]")

# crops -> (text, score 0..1) per crop
Reader = Callable[[list[Image.Image]], list[tuple[str, float]]]


def _latin(text: str) -> bool:
    """Text our reports can print: the second engine's model also knows Chinese, and
    reads a speck as "●" or a box as "口", which is no vote for anything."""
    return all(ch.isascii() or ch in "µμ°±≤≥‼▲▼↑↓" or ch.isalpha() and ord(ch) < 0x250 for ch in text)


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def same_text(a: str, b: str) -> bool:
    """Equal once spaces are ignored (RapidOCR often drops the space between tokens)."""
    return "".join(a.split()) == "".join(b.split())


def crop_box(image: Image.Image, w: Word) -> tuple[int, int, int, int]:
    """Where ``crop_word`` cuts: the word's box with a margin, inside the image."""
    pad = max(2, round(0.25 * (w.y1 - w.y0)))
    return (max(0, round(w.x0) - pad), max(0, round(w.y0) - pad),
            min(image.width, round(w.x1) + pad + 1), min(image.height, round(w.y1) + pad + 1))


def crop_word(image: Image.Image, w: Word) -> Image.Image:
    """The word with a margin of paper around it, as a recogniser expects a line crop."""
    return image.crop(crop_box(image, w))


def _bar(text: str) -> float:
    """The confidence below which a word is voted on (0: never, for marks without
    letters or digits, which a line recogniser reads no better)."""
    if any(ch.isdigit() for ch in text):
        return NUMBER_VOTE_BELOW
    return VOTE_BELOW if any(ch.isalnum() or ch in "%<>" for ch in text) else 0.0


def voted_on(words: list[Word]) -> list[Word]:
    """The words the vote reads, lowest confidence first, at most VOTE_MAX_WORDS."""
    return sorted(
        (w for w in words if (w.conf or 0.0) < _bar(w.text) and w.x1 - w.x0 >= 2 and w.y1 - w.y0 >= 6),
        key=lambda w: w.conf or 0.0,
    )[:VOTE_MAX_WORDS]


class EarlyReadings:
    """The second reader's readings of crops read ahead of the vote, by crop box.

    The vote needs the words as Tesseract's re-reads leave them, but most of its crops
    are known as soon as the page pass is done: read on a worker thread while the
    re-reads run (Tesseract runs in a subprocess and onnxruntime releases the GIL, so
    the two use both cores). A reading depends only on its crop's pixels (the reader
    reads each crop on its own), so a crop read early reads as it would have in the
    vote; crops the vote asks for that were not read early are read then. A reader
    that failed early leaves nothing here: the vote asks again and handles it.
    """

    def __init__(self, image: Image.Image, reader: Reader, submit: Callable) -> None:
        self.image, self.reader, self._submit = image, reader, submit
        self._pending: list[tuple[list[tuple[int, int, int, int]], object]] = []
        self._asked: set[tuple[int, int, int, int]] = set()

    def ahead(self, words: list[Word]) -> None:
        """Start reading the crops the vote would ask for if it ran on ``words`` now."""
        boxes = [b for b in dict.fromkeys(crop_box(self.image, w) for w in voted_on(words)) if b not in self._asked]
        if boxes:
            self._asked.update(boxes)
            crops = [self.image.crop(b) for b in boxes]
            self._pending.append((boxes, self._submit(self.reader, crops)))

    def readings(self) -> dict[tuple[int, int, int, int], tuple[str, float]]:
        """Every early reading that succeeded (waits for those still running)."""
        out: dict[tuple[int, int, int, int], tuple[str, float]] = {}
        for boxes, future in self._pending:
            try:
                found = future.result()
            except Exception:  # noqa: BLE001 - the vote reads these crops again
                continue
            if len(found) == len(boxes):
                out.update(zip(boxes, found))
        return out


def vote(
    image: Image.Image,
    words: list[Word],
    reader: Reader,
    alternatives: dict[int, Sequence[str]] | None = None,
    early: EarlyReadings | None = None,
) -> list[Word]:
    """Apply the second reader's vote to the doubtful ``words`` (changed in place).

    ``alternatives`` maps ``id(word)`` to other texts the first engine read for it
    (its re-readings); returns ``words``. A reader that fails leaves every word as it
    was: the vote can only add certainty that it has earned. ``early``: crops of this
    image already read (or being read) by the same reader.
    """
    doubtful = voted_on(words)
    if not doubtful:
        return rejoin_split_digits(image, words, reader)
    boxes = [crop_box(image, w) for w in doubtful]
    known = early.readings() if early is not None else {}
    missing = [b for b in dict.fromkeys(boxes) if b not in known]
    try:
        if missing:
            known.update(zip(missing, reader([image.crop(b) for b in missing])))
    except Exception:  # noqa: BLE001 - a second opinion that fails must not fail the page
        return words
    alternatives = alternatives or {}
    crowded = _crowded(words, doubtful)
    for w, box in zip(doubtful, boxes):
        if box not in known:  # a reader that answered for fewer crops than it was given
            continue
        text, score = known[box]
        conf = w.conf or 0.0
        if not _latin(text):
            continue
        if text and score >= VOTER_MIN_SCORE and same_text(text, w.text):
            w.conf = round(max(conf, score), 4)
            continue
        w.conf = round(min(conf, score), 4)
        if not text or score < VOTER_MIN_SCORE:
            continue
        if _reads_neighbours(text, w, crowded.get(id(w), ())):
            continue  # the crop holds other words too, and the reading took theirs in
        if _digits(text) and _digits(w.text) and _digits(text) != _digits(w.text):
            # Two engines, each fairly sure, read different numbers: a person reads it.
            w.conf = round(min(w.conf, CHANGED_MAX_CONF), 4)
        if " " in text.strip():
            continue
        backed = any(same_text(a, text) for a in alternatives.get(id(w), ()))
        if backed or score >= VOTER_REPLACES_AT:
            w.text = text  # one token, as a word must be (a split is the re-read's call)
            w.conf = round(min(w.conf, CHANGED_MAX_CONF), 4)
    return rejoin_split_digits(image, words, reader)


def split_digit_pairs(words: list[Word]) -> list[tuple[Word, Word]]:
    """(mark, word) pairs where OCR may have split a leading digit off a number: a narrow
    mark a "1" is often read as ("|", "l", "I", "!", "[", "]") right before a word that
    starts with a digit, on the same line, no further than a line height from it."""
    pairs: list[tuple[Word, Word]] = []
    by_line: dict[tuple[int, int], list[Word]] = {}
    for w in words:
        by_line.setdefault((w.block, w.line), []).append(w)
    for line in by_line.values():
        line.sort(key=lambda w: w.x0)
        for mark, word in zip(line, line[1:]):
            height = word.y1 - word.y0
            if (mark.text in SPLIT_MARKS and word.text[:1].isdigit() and height > 0
                    and mark.x1 - mark.x0 <= 0.5 * height
                    and 0 <= word.x0 - mark.x1 <= height
                    and min(mark.y1, word.y1) - max(mark.y0, word.y0) >= 0.5 * height):
                pairs.append((mark, word))
    return pairs


def rejoin_split_digits(image: Image.Image, words: list[Word], reader: Reader) -> list[Word]:
    """Give a number back the digit OCR split off it as a mark.

    A fax read the printed "11/27/2026" as "|" and "1/27/2026", the number sure: a date
    ten months out. The mark and the number are read again together by the second engine
    (``split_digit_pairs``); where it reads, sure (``VOTER_REPLACES_AT``), one token that
    is a digit followed by the number's own text ("11/27/2026"), the two become one word
    with that text, and, as any word the vote changed, a confidence below the readers'
    trust line: the number is shown and reviewed, never charted on this reading alone.
    Any other reading leaves both words as they were (the mark keeps telling the readers
    a digit may be lost)."""
    pairs = split_digit_pairs(words)
    if not pairs:
        return words
    boxes = [crop_box(image, Word("", m.x0, min(m.y0, w.y0), w.x1, max(m.y1, w.y1))) for m, w in pairs]
    try:
        readings = reader([image.crop(b) for b in boxes])
    except Exception:  # noqa: BLE001 - a second opinion that fails must not fail the page
        return words
    merged: set[int] = set()
    for (mark, word), (text, score) in zip(pairs, readings):
        if (score >= VOTER_REPLACES_AT and _latin(text) and " " not in text.strip()
                and len(text) == len(word.text) + 1 and text[0].isdigit() and text[1:] == word.text):
            word.text, word.x0 = text, mark.x0
            word.y0, word.y1 = min(mark.y0, word.y0), max(mark.y1, word.y1)
            word.conf = round(min(word.conf or 0.0, CHANGED_MAX_CONF), 4)
            merged.add(id(mark))
    return [w for w in words if id(w) not in merged] if merged else words


def _crowded(words: list[Word], doubtful: list[Word]) -> dict[int, list[Word]]:
    """The other words whose middle lies inside a doubtful word's box, by ``id`` of the
    doubtful word: a box the engine drew too wide ("115" over the whole "115 - 165",
    beside its own "-" and "165"), or a re-read's part overlapping the next one."""
    by_y = sorted(((w.y0 + w.y1) / 2, i) for i, w in enumerate(words))
    ys = [y for y, _ in by_y]
    out: dict[int, list[Word]] = {}
    for w in doubtful:
        for _, i in by_y[bisect_left(ys, w.y0):bisect_right(ys, w.y1)]:
            o = words[i]
            if o is not w and w.x0 < (o.x0 + o.x1) / 2 < w.x1:
                out.setdefault(id(w), []).append(o)
    return out


def _reads_neighbours(text: str, w: Word, inside: Sequence[Word]) -> bool:
    """Whether the second reading of ``w``'s crop ("115-165") ends with the text of a word
    read with trust in the right part of its box ("165"), or starts with one in the left
    part: taken for this word, it would print that neighbour twice. A reading that only
    spans junk read inside the box ("mmol/L" over "mime", "/", "1,") is this word's."""
    joined = "".join(text.split())
    middle = (w.x0 + w.x1) / 2
    for o in inside:
        if (o.conf or 0.0) < NEIGHBOUR_TRUSTED_CONF or not o.text.strip():
            continue
        if (o.x0 + o.x1) / 2 > middle and joined.endswith(o.text) or \
                (o.x0 + o.x1) / 2 < middle and joined.startswith(o.text):
            return True
    return False
