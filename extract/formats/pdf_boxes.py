"""Tick boxes a PDF draws rather than prints (pure): as words the form readers know.

A form made in a layout tool draws each box as a small square path and its tick as a
letter "X" or a "✓" (or a few strokes) inside it; the text layer then holds "No X Yes"
where the page shows "☐ No ☒ Yes", and a reader took the unticked "No" for the answer
("no known allergies"). Each drawn box becomes one word, "☐" or "☒", in the box's place,
and a tick mark inside it becomes part of that word. The readers already know these
glyphs (``extract.values.written_answers``).

Not a tick box: a square around a printed letter or digit (a comb field's boxes for
handwriting, "[1][9][7][9]"), a run of squares touching each other (the same, empty), a
filled dark square (a bullet), or anything but a small square.
"""

from __future__ import annotations

from dataclasses import dataclass

import pymupdf

from domain.content import Word

BOX_SIZE = (4.5, 16.0)  # points, each side
SQUARE_SPREAD = 0.25  # sides may differ by this share of the longer one
COMB_GAP = 2.5  # points between squares of one comb field (or a table of squares)
MAX_DRAWINGS = 4000  # a page of vector art is no form: its paths are not searched
TICK_MARKS = frozenset({"x", "X", "\u2713", "\u2714", "\u00d7", "\u2717", "\u2718"})
EMPTY, TICKED = "\u2610", "\u2612"


@dataclass(slots=True)
class _Box:
    rect: pymupdf.Rect
    ticked: bool = False


def with_drawn_boxes(page: pymupdf.Page, words: list[Word], rotation: pymupdf.Matrix | None) -> list[Word]:
    """``words`` with a "☐"/"☒" word for each tick box the page draws, the tick marks
    inside them taken in; the words as they were when the page draws none."""
    try:
        drawings = page.get_cdrawings()  # the raw paths: a third faster than get_drawings
    except (RuntimeError, ValueError):
        return words
    if not drawings or len(drawings) > MAX_DRAWINGS:
        return words
    boxes = _squares(drawings, rotation)
    if not boxes:
        return words
    _ticked_by_strokes(boxes, drawings, rotation)
    taken: set[int] = set()
    out_boxes: list[Word] = []
    for box in boxes:
        inside = [i for i, w in enumerate(words) if _centre_in(w, box.rect)]
        if any(words[i].text.strip() not in TICK_MARKS for i in inside):
            continue  # a square around a letter or a digit: a comb field or a boxed label
        taken.update(inside)
        r = box.rect
        out_boxes.append(Word(text=TICKED if box.ticked or inside else EMPTY, x0=r.x0, y0=r.y0, x1=r.x1, y1=r.y1,
                              block=-1, line=-1))
    return [w for i, w in enumerate(words) if i not in taken] + out_boxes


def _turned(rect: pymupdf.Rect, rotation: pymupdf.Matrix | None) -> pymupdf.Rect:
    return pymupdf.Rect(rect) * rotation if rotation is not None else pymupdf.Rect(rect)


def _squares(drawings: list[dict], rotation: pymupdf.Matrix | None) -> list[_Box]:
    """The small stroked squares, once each, not in a run of touching squares."""
    found: list[pymupdf.Rect] = []
    for d in drawings:
        r = _turned(d.get("rect") or pymupdf.Rect(), rotation)
        side = max(r.width, r.height)
        if not (BOX_SIZE[0] <= r.width <= BOX_SIZE[1] and BOX_SIZE[0] <= r.height <= BOX_SIZE[1]) \
                or abs(r.width - r.height) > SQUARE_SPREAD * side:
            continue
        fill = d.get("fill")
        if fill is not None and sum(fill) < 1.5:
            continue  # a filled dark square: a bullet, not a box to tick
        if "s" not in (d.get("type") or "") and fill is None:
            continue
        kinds = [item[0] for item in d.get("items", ())]
        if not (kinds and (set(kinds) <= {"re", "qu"} or (set(kinds) == {"l"} and len(kinds) >= 4))):
            continue
        if any(abs(r.x0 - f.x0) < 1 and abs(r.y0 - f.y0) < 1 and abs(r.x1 - f.x1) < 1 for f in found):
            continue  # the same square stroked and filled as two paths
        found.append(r)
    comb = set()
    for i, a in enumerate(found):
        for j, b in enumerate(found):
            if i != j and abs(a.y0 - b.y0) < 1.5 and (0 <= b.x0 - a.x1 <= COMB_GAP or 0 <= a.x0 - b.x1 <= COMB_GAP):
                comb.update((i, j))
    return [_Box(r) for i, r in enumerate(found) if i not in comb]


def _ticked_by_strokes(boxes: list[_Box], drawings: list[dict], rotation: pymupdf.Matrix | None) -> None:
    """A box with strokes drawn inside it (a vector tick or cross) is ticked."""
    for d in drawings:
        kinds = {item[0] for item in d.get("items", ())}
        if not kinds & {"l", "c"}:
            continue
        r = _turned(d.get("rect") or pymupdf.Rect(), rotation)
        for box in boxes:
            b = box.rect
            if r.width < 0.9 * b.width and r.height < 0.9 * b.height and r.x0 >= b.x0 - 0.5 \
                    and r.x1 <= b.x1 + 0.5 and r.y0 >= b.y0 - 0.5 and r.y1 <= b.y1 + 0.5 \
                    and (r.width > 1 or r.height > 1):
                box.ticked = True


def _centre_in(w: Word, r: pymupdf.Rect) -> bool:
    cx, cy = (w.x0 + w.x1) / 2, (w.y0 + w.y1) / 2
    return r.x0 <= cx <= r.x1 and r.y0 <= cy <= r.y1
