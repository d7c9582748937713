"""Ink the page-level OCR pass did not read, found from the image, and its ruling lines.

Tesseract's page layout analysis sometimes drops a whole narrow column: on a scanned
lab report whose typed copy was read correctly it lost the flag column, so a potassium
printed "HH" came through with no flag at all. Nothing in its output says so. The
picture does: there is print where no word was read. So after the page pass:

* the page's ruling lines (long thin horizontal and vertical runs of ink) are found;
  they are not text, and they bound table cells, so a region of unread ink is never
  joined across a vertical rule into its neighbouring cell;
* the ink that no word box covers is gathered into text-sized regions (glyph-high
  blobs, joined along a row up to a word gap, cut at the rules);
* each region is handed back to be read on its own (one line of text, psm 7 style,
  see extract/formats/ocr/tesseract.py), and what it reads is added with its own
  confidence, so a doubtful read of a flag cell stays doubtful downstream.

Pure numpy/OpenCV on the OCR working image, no engine in here.
"""

from __future__ import annotations

import threading
import weakref
from concurrent.futures import Future
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image

from domain.content import Word
from extract.formats.ocr.imageprep import glyph_height

# A ruling line is at least this many glyph heights long and at most a fifth of one thick.
RULE_MIN_GLYPHS = 8
VERTICAL_RULE_MIN_GLYPHS = 4
# Unread ink is text-like when its blobs are 0.4-2.5 glyph heights tall.
MIN_GLYPH_SHARE, MAX_GLYPH_SHARE = 0.4, 2.5
# Blobs on a row closer than this many glyph heights belong to one region (a word gap
# is ~0.3-0.6; a table's column gap is wider, so columns stay apart).
JOIN_GAP_GLYPHS = 0.7
# Margin around each read word that counts as covered (its box hugs the ink).
COVER_PAD = 0.25
# At most this many regions are re-read per page: more means the page pass failed
# wholesale, which re-reading piecemeal would not mend in reasonable time.
MAX_REGIONS = 40


@dataclass(frozen=True)
class Rules:
    """The ruling lines of a page as a mask (255 on the lines)."""

    mask: np.ndarray
    horizontal: int  # how many
    vertical: int
    # Each vertical rule or shorter piece of one: (x of its middle, top, bottom) in pixels.
    columns: tuple[tuple[float, int, int], ...] = ()

    @property
    def ruled(self) -> bool:
        """A ruled table: vertical rules between columns, not just header underlines."""
        return self.vertical >= 2


def ink_mask(gray: Image.Image | np.ndarray) -> np.ndarray:
    """Dark pixels (Otsu) as 255, paper as 0."""
    arr = np.asarray(gray)
    _, ink = cv2.threshold(arr, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    return ink


def find_rules(ink: np.ndarray, glyph: float) -> Rules:
    """Long thin runs of ink in either direction: a table's ruling lines, counted from
    ``RULE_MIN_GLYPHS`` long. Vertical rules are masked (``mask``) and listed
    (``columns``) from a shorter length: a column rule between two section headings spans only the
    rows of its section, and no letter is that tall; a header row's rules alone do not
    make a ruled table (``ruled``)."""
    length = max(15, round(RULE_MIN_GLYPHS * glyph))
    horiz = cv2.morphologyEx(ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (length, 1)))
    vert = cv2.morphologyEx(ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (1, length)))
    tall = max(15, round(VERTICAL_RULE_MIN_GLYPHS * glyph))
    pieces = cv2.morphologyEx(ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (1, tall)))
    mask = cv2.bitwise_or(horiz, pieces)  # ``pieces`` holds ``vert``
    n, _, stats, _ = cv2.connectedComponentsWithStats(pieces, connectivity=8)
    columns = tuple((x + w / 2.0, int(y), int(y + h)) for x, y, w, h, _ in stats[1:n])
    return Rules(mask=mask, horizontal=_count_runs(horiz), vertical=_count_runs(vert), columns=columns)


# What a table's column rule is read as when OCR takes it for a character ("Troponin |
# 0.52 1 ng/mL ]"): on office scans and faxes alike, most in rows the rule crosses.
RULE_GLYPHS = frozenset({"|", "||", "1", "I", "l", "i", "!", "[", "]", "J", "j", "ia", "Tt", "L|", "|L"})
# A rule glyph's box holds the rule's line, give or take this share of a glyph height
# (a skewed page's rule leans across rows).
RULE_GLYPH_SLACK = 0.3


def without_rule_glyphs(words: list[Word], ink: PageInk) -> list[Word]:
    """``words`` less the column rules read as characters: a word that is one of
    ``RULE_GLYPHS`` lying on the line of a vertical rule found on the page, within the
    rows that rule spans or the table's header above it. A value or flag in its cell is
    set off from the rules; a rule's piece too short to be found (one header row) is
    placed by the longer pieces of the same line below it."""
    rules = ink.rules
    if rules is None or not rules.columns or not ink.glyph:
        return words
    slack = RULE_GLYPH_SLACK * ink.glyph
    reach = 4 * ink.glyph  # a header row or two above the rule's piece
    lines = [(x, top - reach, bottom + slack) for x, top, bottom in rules.columns]

    def on_a_rule(w: Word) -> bool:
        return any(w.x0 - slack <= x <= w.x1 + slack and top <= (w.y0 + w.y1) / 2 <= bottom
                   for x, top, bottom in lines)

    return [w for w in words if w.text.strip() not in RULE_GLYPHS or not on_a_rule(w)]


@dataclass(frozen=True)
class PageInk:
    """What ``unread_regions`` needs of a page that does not depend on the words read:
    its glyph height, its ink with the ruling lines taken out, and the rules."""

    glyph: float | None
    ink: np.ndarray | None = None  # 255 on ink that is not a rule
    rules: Rules | None = None


def page_ink(gray: Image.Image, glyph: float | None) -> PageInk:
    """The word-independent part of ``unread_regions`` (most of its cost): it can be
    worked out while the page pass still runs."""
    if not glyph:
        return PageInk(glyph)
    ink = ink_mask(np.asarray(gray))
    rules = find_rules(ink, glyph)
    ink = cv2.bitwise_and(ink, cv2.bitwise_not(cv2.dilate(rules.mask, np.ones((3, 3), np.uint8))))
    return PageInk(glyph, ink, rules)


_memo_lock = threading.Lock()
_memo: dict[int, Future] = {}  # id(image) -> its PageInk, while the image lives


def page_ink_of(image: Image.Image, glyph: float | None | object = ...) -> PageInk:
    """``page_ink(image, glyph_height(image))``, worked out once per image object.

    The page code (whether the page is a ruled table, for its meta) and the Tesseract
    engine (the unread-ink pass) both need it of the image the engine reads, on two
    worker threads while the page pass runs: the first to ask computes it, the other
    waits for that. ``glyph``: ``glyph_height(image)`` when the caller knows it already.
    """
    with _memo_lock:
        memo = _memo.get(id(image))
        mine = memo is None
        if mine:
            memo = _memo[id(image)] = Future()
            weakref.finalize(image, _memo.pop, id(image), None)  # gone with the image (ids are reused)
    if mine:
        try:
            if glyph is ...:
                glyph = glyph_height(image)
            memo.set_result(page_ink(image, glyph))
        except BaseException as err:
            memo.set_exception(err)
    return memo.result()


def forget_page_ink(image: Image.Image) -> None:
    """Drop what ``page_ink_of`` keeps for ``image``: its pixels may be changed later."""
    with _memo_lock:
        _memo.pop(id(image), None)


def unread_regions(gray: Image.Image, words: list[Word], glyph: float | None,
                   prepared: PageInk | None = None) -> list[tuple[int, int, int, int]]:
    """Boxes (x0, y0, x1, y1) of text-like ink that no word of ``words`` covers,
    top to bottom then left to right; at most MAX_REGIONS (the largest first kept).
    ``prepared``: ``page_ink(gray, glyph)`` worked out beforehand."""
    if not glyph:
        return []
    prepared = prepared or page_ink(gray, glyph)
    ink, rules = prepared.ink, prepared.rules
    covered = np.zeros_like(ink)
    for w in words:
        pad = COVER_PAD * max(w.y1 - w.y0, glyph * 0.5)
        x0, y0 = max(0, int(w.x0 - pad)), max(0, int(w.y0 - pad))
        x1, y1 = int(np.ceil(w.x1 + pad)), int(np.ceil(w.y1 + pad))
        covered[y0:y1, x0:x1] = 255
    left = cv2.bitwise_and(ink, cv2.bitwise_not(covered))
    # Keep glyph-sized blobs only: specks and stray rule ends are not text. Most of the
    # page is covered by then: its blobs are found inside the box round what is left,
    # and the kept ones painted through a uint8 table (a page-sized int64 ``np.where``
    # took ~0.3 s on a page enlarged for OCR).
    text = np.zeros_like(left)
    bx, by, bw, bh = cv2.boundingRect(left)
    if bw and bh:
        n, labels, stats, _ = cv2.connectedComponentsWithStats(left[by:by + bh, bx:bx + bw], connectivity=8)
        h, w_ = stats[:, cv2.CC_STAT_HEIGHT], stats[:, cv2.CC_STAT_WIDTH]
        keep = (h >= MIN_GLYPH_SHARE * glyph) & (h <= MAX_GLYPH_SHARE * glyph) & (w_ <= 20 * glyph)
        keep[0] = False
        text[by:by + bh, bx:bx + bw] = np.where(keep, 255, 0).astype(np.uint8)[labels]
    if not text.any():
        return []
    # Join letters into words and words into a cell's text, never across a rule.
    gap = max(3, round(JOIN_GAP_GLYPHS * glyph))
    joined = cv2.dilate(text, cv2.getStructuringElement(cv2.MORPH_RECT, (gap, max(1, round(glyph * 0.3)))))
    joined[rules.mask > 0] = 0
    n, _, stats, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
    boxes = []
    for i in range(1, n):
        x, y, bw, bh = (int(v) for v in stats[i, :4])
        if bh < MIN_GLYPH_SHARE * glyph or bh > 3 * glyph:
            continue
        # Undo the dilation's growth so the box hugs the ink.
        x0, x1 = x + gap // 2, x + bw - gap // 2
        sub = text[y:y + bh, max(0, x0):max(x0 + 1, x1)]
        ys, xs = np.nonzero(sub)
        if len(xs) < 0.5 * glyph:  # a few pixels: no character
            continue
        boxes.append((max(0, x0) + int(xs.min()), y + int(ys.min()), max(0, x0) + int(xs.max()) + 1,
                      y + int(ys.max()) + 1))
    boxes.sort(key=lambda b: -(b[2] - b[0]) * (b[3] - b[1]))
    return sorted(boxes[:MAX_REGIONS], key=lambda b: (b[1], b[0]))


def _count_runs(mask: np.ndarray) -> int:
    n, _ = cv2.connectedComponents(mask, connectivity=8)
    return n - 1
