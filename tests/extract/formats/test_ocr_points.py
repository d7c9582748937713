"""Decimal points a fax's threshold erased, put back from the digits' geometry
(extract/formats/ocr/points.py). Pages are drawn glyph by glyph on a fixed advance, as
a typewriter face sets digits, so where a character is missing is known exactly."""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image

from domain.content import Word
from extract.formats.ocr import points
from extract.layout import OCR_TRUSTED_CONF

ADVANCE = 22  # px from one character's start to the next's
SCALE = 1.0  # cv2 Hershey scale: digits ~22 px tall


def _page(rows: list[list[str | tuple[str, str]]]) -> tuple[Image.Image, list[Word]]:
    """Each row is a list of printed words, or of (printed, read) pairs; a space inside
    a word's printed text is a character lost to the threshold (drawn as nothing, read
    without it, though the engine's box still spans it). Returns the page and the words
    "read"."""
    img = np.full((60 * len(rows) + 40, 900), 255, np.uint8)
    words: list[Word] = []
    for line, row in enumerate(rows):
        x, base = 20, 50 + 60 * line
        for item in row:
            printed, read = item if isinstance(item, tuple) else (item, item.replace(" ", ""))
            start = x
            for ch in printed:
                if ch not in " .":
                    cv2.putText(img, ch, (x, base), cv2.FONT_HERSHEY_SIMPLEX, SCALE, 0, 2, cv2.LINE_8)
                elif ch == ".":
                    cv2.circle(img, (x + 8, base - 2), 2, 0, -1)
                x += ADVANCE
            words.append(Word(read, start, base - 24, x - 6, base + 2,
                              line=line, conf=0.96))
            x += 2 * ADVANCE  # a space and then some between words
    return Image.fromarray(img), words


def _reference_row() -> list[str]:
    # Numbers with their digits side by side: they set the page's digit pitch.
    return ["139", "2026", "134", "144", "65", "99"]


def test_a_number_split_where_its_point_was_lost_is_joined_and_sent_to_review():
    page, words = _page([_reference_row(), ["0"]])
    # "0.91" printed, the point lost: the engine read "0" and "91" a character apart.
    zero = words[-1]
    nine_one = Word("91", zero.x1 + 6 + ADVANCE, zero.y0, zero.x1 + 6 + 3 * ADVANCE - 6, zero.y1, line=1, conf=1.0)
    img = np.asarray(page).copy()
    for i, ch in enumerate("91"):
        cv2.putText(img, ch, (round(nine_one.x0) + i * ADVANCE, 50 + 60), cv2.FONT_HERSHEY_SIMPLEX, SCALE, 0, 2,
                    cv2.LINE_8)
    out = points.restore_points(Image.fromarray(img), words + [nine_one], bilevel=True)
    joined = [w for w in out if w.line == 1]
    assert [w.text for w in joined] == ["0.91"]
    assert joined[0].conf < OCR_TRUSTED_CONF


def test_a_point_lost_inside_a_word_is_put_back_and_sent_to_review():
    page, words = _page([_reference_row(), ["7 9", "(5 7)"]])
    out = points.restore_points(page, words, bilevel=True)
    row = [w for w in out if w.line == 1]
    assert [w.text for w in row] == ["7.9", "(5.7)"]
    assert all(w.conf < OCR_TRUSTED_CONF for w in row)


def test_a_point_the_engine_dropped_but_the_ink_shows_is_put_back():
    page, words = _page([_reference_row(), [("4.52", "452")]])
    out = points.restore_points(page, words, bilevel=True)
    row = [w for w in out if w.line == 1]
    assert row[0].text == "4.52" and row[0].conf < OCR_TRUSTED_CONF


def test_numbers_without_a_lost_character_are_left_alone():
    page, words = _page([_reference_row(), ["2026-04-10", "22", "2026", "6.8"]])
    before = [(w.text, w.conf) for w in words]
    out = points.restore_points(page, words, bilevel=True)
    assert [(w.text, w.conf) for w in out] == before


def test_two_numbers_in_columns_apart_are_never_joined():
    page, words = _page([_reference_row(), ["18"]])
    far = Word("6", words[-1].x1 + 10 * ADVANCE, words[-1].y0, words[-1].x1 + 11 * ADVANCE, words[-1].y1,
               line=1, conf=1.0)
    img = np.asarray(page).copy()
    cv2.putText(img, "6", (round(far.x0), 110), cv2.FONT_HERSHEY_SIMPLEX, SCALE, 0, 2, cv2.LINE_8)
    out = points.restore_points(Image.fromarray(img), words + [far], bilevel=True)
    assert [w.text for w in out if w.line == 1] == ["18", "6"]


def test_a_grey_page_is_left_as_read():
    # A grey scan keeps a point's ink for the engine: a step or a speck between digits
    # there (a form filled in by hand, a telephone number "776-7616" in a low-resolution
    # photo) is no lost point.
    page, words = _page([_reference_row(), ["7 9", "77 6-7616", ("4.52", "452")]])
    before = [(w.text, w.conf) for w in words]
    out = points.restore_points(page, words)
    assert [(w.text, w.conf) for w in out] == before


def test_irregular_digit_steps_give_no_pitch_to_judge_by():
    page, words = _page([["1 3 9", "2 0  2 6", "1  34", "1 44", "6  5", "99"], ["7 9"]])
    out = points.restore_points(page, words, bilevel=True)
    assert [w for w in out if w.line == 1][0].text == "79"
