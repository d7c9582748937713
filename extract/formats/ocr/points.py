"""Decimal points the engine dropped, found in the ink.

On a low-resolution fax a full stop is a blob of a few pixels, and Tesseract often
drops it while reading the digits around it confidently: "0.91" came back as the two
words "0" and "91" (each at 1.00), "3.5-5.2" as "3", "5-5", "2", and "7.9" as one
word "79" at 0.95. Nothing in the text says so; the picture does.

Where the point's ink survived, a small round blob sits on the digits' baseline
between two digits where the text has none. Where the fax's threshold erased it, the
digits still stand apart: digits are set on one fixed advance, and the step from one
to the next across a lost point is a point's width longer than the page's usual
step between neighbouring digits (its pitch, measured on the page's own numbers).

* Between two number words of one line, such a blob or step makes them one word with
  the point ("0" + "91" -> "0.91"; "3" + "5-5" + "2" -> "3.5-5.2"), when both sides
  are short digit runs (a space between "22" and "2026" is no point).
* Inside a number word, such a blob or step between two of its digits puts the point
  there when the word's glyphs can be matched to its characters one to one ("79" ->
  "7.9"), and otherwise only marks the word doubtful.

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

# Digits are set on one fixed advance (the page's pitch, measured on its numbers). A
# step from one digit to the next of at least LOST_STEP pitches held a character, and
# inside a number that is its point (a point adds ~0.4 of a pitch in a proportional
# face, a whole one in a typewriter face); beyond MAX_LOST_STEP it is more than that.
LOST_STEP = 1.3
MAX_LOST_STEP = 2.4
MIN_PITCHES = 5
MAX_PITCH_SPREAD = 0.15  # interquartile range of the page's digit steps, over their median
# Two words whose facing digits stand further apart than this many glyph heights are
# never one number (a table's column gap is far wider).
JOIN_MAX_STEP = 3.0
# The digit run a split number ends / starts with (a point already in it: no join).
_TRAILING = re.compile(r"(?:^|[^\d.,])(\d{1,3})$")
_LEADING = re.compile(r"^(\d{1,3})(?![\d.,])")
# A full stop: at most this share of the digits' height in width and height, sitting
# at most this share above their baseline, and reasonably filled (not a hairline).
POINT_MAX_SIZE = 0.35
POINT_MAX_LIFT = 0.2
POINT_MIN_FILL = 0.35
# Glyphs: components at least this share of the tallest one's height. Besides letters
# and digits, these marks stand as tall as a digit and are glyphs of their own.
GLYPH_MIN_SHARE = 0.6
TALL_MARKS = frozenset("<>()[]{}%/#")


def restore_points(image: Image.Image, words: list[Word], *, bilevel: bool = False) -> list[Word]:
    """``words`` with the decimal points the ink shows put back (see module doc).

    Only on a ``bilevel`` page (a fax, a black and white scan), whose threshold shrinks
    a point to a speck or erases it whole. A grey page keeps a point's ink for the
    engine to read, and on grey pages the rule found only false points: specks and
    pen marks between the digits of a form filled in by hand ("12 345" -> "12.345"),
    uneven steps in a telephone number of a 150 dpi photo ("776-7616" -> "77.6-7616")."""
    if not words or not bilevel:
        return words
    ink = _ink(image)
    glyphs = {id(w): _glyphs(ink, w) for w in words if _number_part(w.text) and any(ch.isdigit() for ch in w.text)}
    pitch = _digit_pitch(words, glyphs)
    words = _join_split_numbers(ink, words, glyphs, pitch)
    for w in words:
        if id(w) in glyphs and _number_like(w.text) and not any(ch in ".," for ch in w.text):
            _point_inside(w, glyphs[id(w)], pitch)
    return words


def _glyphs(ink: np.ndarray, w: Word) -> tuple[list[np.ndarray], list[np.ndarray], float, float] | None:
    """(glyph blobs, all blobs, glyph height, baseline) of a word, blobs left to right."""
    height = w.y1 - w.y0
    comps = _components(ink, (round(w.x0) - 1, round(w.y0) - 1, round(w.x1) + 2, round(w.y1 + 0.3 * height)))
    line = _glyph_line(comps)
    if line is None:
        return None
    comps = comps[np.argsort(comps[:, 0])]
    tall = [c for c in comps if c[3] - c[1] >= GLYPH_MIN_SHARE * line[0]]
    return tall, list(comps), line[0], line[1]


def _digit_pitch(words: list[Word], glyphs: dict) -> float | None:
    """The page's usual distance between the centres of neighbouring digits of a
    number, in glyph heights (digits are set on one fixed advance: ~0.75 in a
    proportional face, ~1 in a typewriter face), or None when too few to tell."""
    pitches = []
    for w in words:
        g = glyphs.get(id(w))
        if g is None:
            continue
        tall, _, height, _ = g
        chars = _glyph_chars(w.text)
        if len(tall) != len(chars):
            continue
        for k in range(1, len(tall)):
            if _digits_side_by_side(w.text, chars[k - 1], chars[k]):
                pitches.append((_centre(tall[k]) - _centre(tall[k - 1])) / height)
    if len(pitches) < MIN_PITCHES:
        return None
    q1, median, q3 = np.percentile(pitches, [25, 50, 75])
    # Typed digits on a fax keep their advance within a few percent (spread 0.05-0.07);
    # irregular steps (handwriting: 0.27) say nothing about a lost character.
    return float(median) if (q3 - q1) <= MAX_PITCH_SPREAD * median else None


def _glyph_chars(text: str) -> list[int]:
    """Where in ``text`` the characters that stand a glyph tall are."""
    return [i for i, ch in enumerate(text) if ch.isalnum() or ch in TALL_MARKS]


def _digits_side_by_side(text: str, i: int, j: int) -> bool:
    return j == i + 1 and text[i].isdigit() and text[j].isdigit()


def _centre(c: np.ndarray) -> float:
    return (c[0] + c[2]) / 2


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


def _join_split_numbers(ink: np.ndarray, words: list[Word], glyphs: dict, pitch: float | None) -> list[Word]:
    out: list[Word] = []
    for w in sorted(words, key=lambda w: (w.line, w.x0)):
        prev = out[-1] if out else None
        if prev is not None and prev.line == w.line and _splits_at_point(ink, prev, w, glyphs, pitch):
            prev.text = f"{prev.text}.{w.text}"
            prev.x1, prev.y0, prev.y1 = max(prev.x1, w.x1), min(prev.y0, w.y0), max(prev.y1, w.y1)
            prev.conf = round(min(prev.conf or 0.0, w.conf or 0.0, CHANGED_MAX_CONF), 4)
            ga, gb = glyphs[id(prev)], glyphs[id(w)]
            glyphs[id(prev)] = (ga[0] + gb[0], ga[1] + gb[1], (ga[2] + gb[2]) / 2, (ga[3] + gb[3]) / 2)
            continue
        out.append(w)
    order = {id(w): i for i, w in enumerate(words)}
    return sorted(out, key=lambda w: order.get(id(w), len(order)))


def _splits_at_point(ink: np.ndarray, a: Word, b: Word, glyphs: dict, pitch: float | None) -> bool:
    """``a`` and ``b`` are one number with a point between them that the engine dropped:
    a point-shaped blob alone between them, or (the point lost to the fax's threshold)
    nothing between them and the step from the last digit of one to the first of the
    other wider than the page's digit pitch but no wider than a point and a space."""
    left, right = _TRAILING.search(a.text), _LEADING.match(b.text)
    ga, gb = glyphs.get(id(a)), glyphs.get(id(b))
    if left is None or right is None or not ga or not gb or not ga[0] or not gb[0]:
        return False
    height = max(a.y1 - a.y0, b.y1 - b.y0)
    if min(a.y1, b.y1) - max(a.y0, b.y0) < 0.5 * height:
        return False  # not side by side on one baseline
    glyph, baseline = (ga[2] + gb[2]) / 2, (ga[3] + gb[3]) / 2
    last, first = ga[0][-1], gb[0][0]
    step = (_centre(first) - _centre(last)) / glyph
    if step <= 0 or step > JOIN_MAX_STEP:
        return False
    top, bottom = round(min(a.y0, b.y0)), round(max(a.y1, b.y1) + 0.3 * height)
    between = [c for c in _components(ink, (round(last[2]), top, round(first[0]), bottom))
               if c[0] >= last[2] and c[2] <= first[0]]
    if between:
        return len(between) == 1 and _is_point(between[0], glyph, baseline)
    return pitch is not None and LOST_STEP * pitch <= step <= MAX_LOST_STEP * pitch \
        and len(left.group(1)) <= 3 and len(right.group(1)) <= 3


def _number_part(text: str) -> bool:
    core = text.strip("()[]<>")
    return bool(core) and all(ch.isdigit() or ch in ".,-" or ch.isalpha() for ch in core) \
        and sum(ch.isalpha() for ch in core) <= 2


def _point_inside(w: Word, g, pitch: float | None) -> None:
    """Put back (or, when unsure where, flag) a point between two digits of ``w``: a
    point-shaped blob between them, or a step between them wider than the page's pitch."""
    if g is None:
        return
    tall, comps, glyph, baseline = g
    chars = _glyph_chars(w.text)
    matched = len(tall) == len(chars)
    found = []  # glyph boundaries (index of the glyph after it) holding a lost point
    for k in range(1, len(tall)):
        if matched and not _digits_side_by_side(w.text, chars[k - 1], chars[k]):
            continue  # "9 H": the space before a flag; "6-0": the hyphen's place
        x0, x1 = tall[k - 1][2], tall[k][0]
        inside = [c for c in comps if c[0] >= x0 and c[2] <= x1]
        if inside:
            if len(inside) == 1 and _is_point(inside[0], glyph, baseline):
                found.append(k)
        elif matched and pitch is not None and (_centre(tall[k]) - _centre(tall[k - 1])) / glyph >= LOST_STEP * pitch:
            found.append(k)
    if not found:
        return
    w.conf = round(min(w.conf or 0.0, CHANGED_MAX_CONF), 4)
    if matched and len(found) == 1:
        at = chars[found[0]]
        w.text = w.text[:at] + "." + w.text[at:]
