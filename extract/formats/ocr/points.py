"""Decimal points the engine dropped, found in the ink.

On a low-resolution fax a full stop is a blob of a few pixels, and Tesseract often
drops it while reading the digits around it confidently: "0.91" came back as the two
words "0" and "91" (each at 1.00), "3.5-5.2" as "3", "5-5", "2", and "7.9" as one
word "79" at 0.95. Nothing in the text says so; the picture does: a small round
blob sits on the digits' baseline, between two digits, where the text has no point.

* Between two number words of one line, closer than a word gap, such a blob makes
  them one word with the point ("0" + "91" -> "0.91").
* Inside a number word, such a blob between two of its glyphs puts the point there
  when the word's glyphs can be matched to its characters one to one ("79" -> "7.9"),
  and otherwise only marks the word doubtful.

Either way the word is capped below the confidence the readers trust
(``CHANGED_MAX_CONF``): a value whose point came from the ink and not from the
engine is shown, cited and reviewed, never charted on its own. Pure numpy/OpenCV on
the OCR working image.
"""

from __future__ import annotations

import re

import cv2
import numpy as np
from PIL import Image

from domain.content import Word
from extract.formats.ocr.vote import CHANGED_MAX_CONF

# Two words closer than this many glyph heights can be one number split at its point
# (a character cell of a monospaced font is ~0.6-0.9 glyph heights, with the glyphs'
# side bearings the blank left by a lost point up to ~1.4; a column gap is far wider).
JOIN_MAX_GAP = 1.5
# Digits of one number stand at most ~0.4 glyph heights apart: a blank wider than this
# between two of them held a character, and inside a number that is its point.
BLANK_MIN_GAP = 0.8
# The digit run a split number ends / starts with (a point already in it: no join).
_TRAILING = re.compile(r"(?:^|[^\d.,])(\d{1,3})$")
_LEADING = re.compile(r"^(\d{1,3})(?![\d.,])")
# A full stop: at most this share of the digits' height in width and height, sitting
# at most this share above their baseline, and reasonably filled (not a hairline).
POINT_MAX_SIZE = 0.35
POINT_MAX_LIFT = 0.2
POINT_MIN_FILL = 0.35
# Glyphs: components at least this share of the tallest one's height.
GLYPH_MIN_SHARE = 0.6


def restore_points(image: Image.Image, words: list[Word]) -> list[Word]:
    """``words`` with the decimal points the ink shows put back (see module doc)."""
    if not words:
        return words
    ink = _ink(image)
    words = _join_split_numbers(ink, words)
    for w in words:
        if _number_like(w.text) and not any(ch in ".," for ch in w.text):
            _point_inside(ink, w)
    return words


def _ink(image: Image.Image) -> np.ndarray:
    arr = np.asarray(image.convert("L"))
    _, ink = cv2.threshold(arr, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    return ink


def _number_like(text: str) -> bool:
    """A word that is a number, a range or a number with a flag ("79H", "3.5-5", "(34")."""
    core = text.strip("()[]<>")
    return sum(ch.isdigit() for ch in core) >= 2 and core[:1].isdigit() \
        and all(ch.isdigit() or ch in ".,-" or ch.isalpha() for ch in core) \
        and sum(ch.isalpha() for ch in core) <= 2


def _components(ink: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """(x0, y0, x1, y1, area) of the ink blobs inside ``box``, in page pixels."""
    x0, y0, x1, y1 = box
    x0, y0 = max(0, x0), max(0, y0)
    x1, y1 = min(ink.shape[1], x1), min(ink.shape[0], y1)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return np.zeros((0, 5))
    n, _, stats, _ = cv2.connectedComponentsWithStats(ink[y0:y1, x0:x1], connectivity=8)
    out = [(x0 + s[0], y0 + s[1], x0 + s[0] + s[2], y0 + s[1] + s[3], s[4]) for s in stats[1:n]]
    return np.array(out, dtype=float).reshape(-1, 5)


def _glyph_line(comps: np.ndarray) -> tuple[float, float] | None:
    """(height, baseline) of the glyphs among ``comps``."""
    if not len(comps):
        return None
    heights = comps[:, 3] - comps[:, 1]
    tall = comps[heights >= GLYPH_MIN_SHARE * heights.max()]
    return float(np.median(tall[:, 3] - tall[:, 1])), float(np.median(tall[:, 3]))


def _is_point(c: np.ndarray, height: float, baseline: float) -> bool:
    w, h = c[2] - c[0], c[3] - c[1]
    if w < 1 or h < 1 or max(w, h) > POINT_MAX_SIZE * height:
        return False
    if c[4] < POINT_MIN_FILL * w * h:
        return False
    # On the baseline (a comma may hang below it); a mid-height blob is a hyphen or speck.
    return c[3] >= baseline - POINT_MAX_LIFT * height and c[1] >= baseline - 0.45 * height


def _join_split_numbers(ink: np.ndarray, words: list[Word]) -> list[Word]:
    out: list[Word] = []
    for w in sorted(words, key=lambda w: (w.line, w.x0)):
        prev = out[-1] if out else None
        if prev is not None and prev.line == w.line and _splits_at_point(ink, prev, w):
            prev.text = f"{prev.text}.{w.text}"
            prev.x1, prev.y0, prev.y1 = max(prev.x1, w.x1), min(prev.y0, w.y0), max(prev.y1, w.y1)
            prev.conf = round(min(prev.conf or 0.0, w.conf or 0.0, CHANGED_MAX_CONF), 4)
            continue
        out.append(w)
    order = {id(w): i for i, w in enumerate(words)}
    return sorted(out, key=lambda w: order[id(w)])


def _splits_at_point(ink: np.ndarray, a: Word, b: Word) -> bool:
    """``a`` and ``b`` are one number with a point between them that the engine dropped:
    a point-shaped blob alone in the gap, or (the point lost to the fax's threshold)
    a blank gap no wider than a character between short digit runs."""
    left, right = _TRAILING.search(a.text), _LEADING.match(b.text)
    if left is None or right is None or not _number_part(a.text) or not _number_part(b.text):
        return False
    height = max(a.y1 - a.y0, b.y1 - b.y0)
    if min(a.y1, b.y1) - max(a.y0, b.y0) < 0.5 * height:
        return False  # not side by side on one baseline
    top, bottom = round(min(a.y0, b.y0)), round(max(a.y1, b.y1) + 0.3 * height)
    line = _glyph_line(_components(ink, (round(a.x0), top, round(b.x1), bottom)))
    if line is None:
        return False
    glyph, baseline = line
    if b.x0 - a.x1 < 0 or b.x0 - a.x1 > JOIN_MAX_GAP * glyph:
        return False
    # Blobs lying wholly in the gap. Those touching a word's box are pieces of its
    # digits (a fax breaks strokes apart): the gap runs between them.
    x0, x1 = a.x1, b.x0
    between = []
    for c in sorted(_components(ink, (round(a.x1) - 2, top, round(b.x0) + 3, bottom)).tolist()):
        if c[0] < a.x1 - 2 or c[2] > b.x0 + 3:
            continue
        if c[0] <= x0 + 2:
            x0 = max(x0, c[2])
        elif c[2] >= x1 - 2:
            x1 = min(x1, c[0])
        else:
            between.append(c)
    between = [c for c in between if c[0] >= x0 and c[2] <= x1]
    if between:
        return len(between) == 1 and _is_point(np.array(between[0]), glyph, baseline)
    return x1 - x0 >= BLANK_MIN_GAP * glyph and len(left.group(1)) <= 3 and len(right.group(1)) <= 3


def _number_part(text: str) -> bool:
    core = text.strip("()[]<>")
    return bool(core) and all(ch.isdigit() or ch in ".,-" or ch.isalpha() for ch in core) \
        and sum(ch.isalpha() for ch in core) <= 2


def _point_inside(ink: np.ndarray, w: Word) -> None:
    """Put back (or, when unsure where, flag) a point between two digits of ``w``."""
    height = w.y1 - w.y0
    box = (round(w.x0) - 1, round(w.y0) - 1, round(w.x1) + 2, round(w.y1 + 0.3 * height))
    comps = _components(ink, box)
    line = _glyph_line(comps)
    if line is None:
        return
    glyph, baseline = line
    comps = comps[np.argsort(comps[:, 0])]
    tall = [c for c in comps if c[3] - c[1] >= GLYPH_MIN_SHARE * glyph]
    chars = [i for i, ch in enumerate(w.text) if ch.isalnum()]
    matched = len(tall) == len(chars)
    found = []  # glyph boundaries (index of the glyph after it) holding a lost point
    for k in range(1, len(tall)):
        x0, x1 = tall[k - 1][2], tall[k][0]
        if matched and not (w.text[chars[k - 1]].isdigit() and w.text[chars[k]].isdigit()):
            continue  # "9 H": the space before a flag
        inside = [c for c in comps if c[0] >= x0 and c[2] <= x1]
        if inside:
            if len(inside) == 1 and _is_point(inside[0], glyph, baseline):
                found.append(k)
        elif x1 - x0 >= BLANK_MIN_GAP * glyph and matched:
            found.append(k)
    if not found:
        return
    w.conf = round(min(w.conf or 0.0, CHANGED_MAX_CONF), 4)
    if matched and len(found) == 1:
        at = chars[found[0]]
        w.text = w.text[:at] + "." + w.text[at:]
