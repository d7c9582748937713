"""Dotted leaders painted out of the OCR engine's copy of a page
(extract/formats/ocr/imageprep.erase_leaders): a run of like, evenly spaced, lone dots
on one baseline goes; decimal points, the feet of a broken typewriter face and text stay."""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image

from extract.formats.ocr import imageprep

GLYPH = 22  # px: Hershey simplex at scale 1


def _text(img: np.ndarray, text: str, x: int, y: int) -> None:
    cv2.putText(img, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, 1.0, 0, 2, cv2.LINE_8)


def _dots(img: np.ndarray, x0: int, y: int, step: int, count: int, skip: tuple[int, ...] = ()) -> None:
    for k in range(count):
        if k not in skip:  # a fax drops a dot here and there
            cv2.circle(img, (x0 + k * step, y - 3), 3, 0, -1)


def _blank() -> np.ndarray:
    return np.full((400, 1200), 255, np.uint8)


def _erased(img: np.ndarray) -> tuple[np.ndarray, int]:
    out, runs = imageprep.erase_leaders(Image.fromarray(img), float(GLYPH))
    return np.asarray(out), runs


def test_a_dotted_leader_is_painted_out_and_the_words_beside_it_kept():
    img = _blank()
    _text(img, "WBC", 20, 60)
    _dots(img, 110, 60, 18, 20, skip=(4, 9, 10))
    _text(img, "11.8", 490, 60)
    out, runs = _erased(img)
    assert runs == 1
    assert (out[30:70, 105:480] < 128).sum() == 0  # the leader is gone
    assert np.array_equal(out[:, :100], img[:, :100]) and np.array_equal(out[:, 485:], img[:, 485:])


def test_decimal_points_in_evenly_spaced_columns_stay():
    # A cumulative row "4.1 4.3 4.0 4.2 4.4": its points stand in a row, evenly spaced,
    # but each has digits right beside it.
    img = _blank()
    for k in range(5):
        _text(img, "4.1", 40 + 150 * k, 120)
    out, runs = _erased(img)
    assert runs == 0 and np.array_equal(out, img)


def test_a_row_of_dots_under_text_strokes_is_no_leader():
    # The feet of a typewriter face broken up by a fax: dots, evenly spaced, each under a stroke.
    img = _blank()
    for k in range(8):
        x = 40 + 26 * k
        cv2.line(img, (x, 170), (x, 190), 0, 2)
        cv2.circle(img, (x, 197), 3, 0, -1)
    out, runs = _erased(img)
    assert runs == 0 and np.array_equal(out, img)


def test_a_few_scattered_specks_are_no_leader():
    img = _blank()
    _text(img, "Sodium 139 mmol/L", 20, 300)
    for x, y in ((400, 298), (431, 297), (480, 299), (547, 296)):  # uneven steps
        cv2.circle(img, (x, y), 2, 0, -1)
    out, runs = _erased(img)
    assert runs == 0 and np.array_equal(out, img)
