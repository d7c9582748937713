"""OCR engines (extract/ocr*.py): the shared contract, each engine's own parts, and
the pure helpers that turn engine output into text-layer-like words.

Ground truth comes from generated PDFs: their text layer says exactly which words
were typed where, so recognised words and boxes can be compared with it.
"""

from __future__ import annotations

import numpy as np
import pymupdf
import pytest
from PIL import Image

from domain.content import Word
from domain.errors import ExtractionError
from extract.formats.ocr import engines as ocr
from extract.formats.ocr.engines import OcrEngine, RapidOcrEngine, TesseractEngine, default_engine, tesseract_available
from extract.formats.ocr.rapid import line_words
from extract.formats.ocr.tesseract import _reread, words_from_tsv
from golden.scan import char_error_rate, typed_pdf

needs_tesseract = pytest.mark.skipif(not tesseract_available(), reason="tesseract binary not installed")

LINES = ["Patient: DOE, JANE", "DOB: 03/14/1961", "Hemoglobin A1c 7.9 % 4.0-5.6 H"]
PROSE = [
    "Comments: Specimen received at room temperature. Results were reviewed",
    "by the laboratory director. Please contact the laboratory with any",
    "questions regarding these results or the reference intervals used.",
    "Ordering provider: Dr. Alan Smith, Internal Medicine, Riverside Clinic",
]
DPI = 200
# Tolerances, stated once: character error rate of the recognised text against the
# typed text (spaces ignored: RapidOCR sometimes drops one), and how far a word's box
# centre may sit from where the word was typed, as a share of the image width.
MAX_CER = 0.05
MAX_CENTRE_SHIFT = 0.02


@pytest.fixture(scope="module")
def label() -> tuple[Image.Image, list[tuple[str, float, float, float, float]]]:
    """A small clean label image and its typed words with pixel boxes."""
    pdf = typed_pdf(LINES, origin=(36, 30), page_size=(320, 110))
    page = pymupdf.open(stream=pdf, filetype="pdf").load_page(0)
    pix = page.get_pixmap(dpi=DPI, colorspace=pymupdf.csGRAY)
    img = Image.frombytes("L", (pix.width, pix.height), pix.samples)
    zoom = DPI / 72
    truth = [
        (t, x0 * zoom, y0 * zoom, x1 * zoom, y1 * zoom)
        for x0, y0, x1, y1, t, *_ in page.get_text("words", sort=True)
    ]
    return img, truth


def _engines() -> list:
    params = [pytest.param("rapidocr", id="rapidocr")]
    params.insert(0, pytest.param("tesseract", id="tesseract", marks=needs_tesseract))
    return params


# --- the contract every engine keeps ----------------------------------------------------


@pytest.mark.parametrize("which", _engines())
def test_engine_reads_typed_words_with_tight_boxes(which, label):
    img, truth = label
    engine = default_engine(which)
    words = engine.recognize(img)

    assert isinstance(engine, OcrEngine)
    assert engine.name.startswith(which + " ") and any(ch.isdigit() for ch in engine.name)
    got = "".join(w.text for w in words)
    want = "".join(t for t, *_ in truth)
    assert char_error_rate(got, want) <= MAX_CER, got
    for w in words:
        assert w.text and not any(ch.isspace() for ch in w.text)
        assert 0.0 <= w.conf <= 1.0
        assert 0 <= w.x0 < w.x1 <= img.width and 0 <= w.y0 < w.y1 <= img.height
    # Tight boxes: a word typed alone lands where it was typed.
    for text in ("JANE", "7.9", "4.0-5.6"):
        typed = next(t for t in truth if t[0] == text)
        found = [w for w in words if w.text == text]
        assert found, f"{text!r} not read by {engine.name}"
        w = found[0]
        assert abs((w.x0 + w.x1) / 2 - (typed[1] + typed[3]) / 2) <= MAX_CENTRE_SHIFT * img.width
        # Vertically the typed box is the font's full line height: stay inside half of it.
        assert abs((w.y0 + w.y1) / 2 - (typed[2] + typed[4]) / 2) <= (typed[4] - typed[2]) / 2
    # Lines: the three typed lines are three engine lines, in order.
    first_line = {w.line for w in words if w.text in ("Patient:", "JANE")}
    last_line = {w.line for w in words if w.text in ("7.9", "H")}
    assert len(first_line) == 1 and len(last_line) == 1 and first_line != last_line


@pytest.mark.parametrize("which", _engines())
def test_engine_finds_nothing_on_blank_paper(which):
    assert default_engine(which).recognize(Image.new("L", (600, 400), 255)) == []


@pytest.mark.parametrize("which", _engines())
def test_engine_detects_a_sideways_page(which, label):
    # Only a page of running text gives orientation detectors something to vote on.
    page = pymupdf.open(stream=typed_pdf(PROSE * 4), filetype="pdf").load_page(0)
    pix = page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY)
    upright = Image.frombytes("L", (pix.width, pix.height), pix.samples)
    engine = default_engine(which)
    assert engine.detect_rotation(upright.rotate(90, expand=True)) == 270
    assert engine.detect_rotation(upright.rotate(270, expand=True)) == 90


# --- choosing an engine ------------------------------------------------------------------


@needs_tesseract
def test_default_engine_is_tesseract_once_per_process():
    engine = default_engine()
    assert isinstance(engine, TesseractEngine)
    assert engine.name.startswith("tesseract 5.")
    assert default_engine() is engine


def test_default_engine_falls_back_to_rapidocr_without_tesseract(monkeypatch):
    monkeypatch.setattr(ocr, "tesseract_available", lambda: False)
    assert isinstance(default_engine(), RapidOcrEngine)
    with pytest.raises(ExtractionError) as err:
        default_engine("tesseract")
    assert err.value.code == "ocr_unavailable"


def test_default_engine_rejects_unknown_names():
    with pytest.raises(ValueError):
        default_engine("abbyy")


# --- Tesseract parts -------------------------------------------------------------------


def test_words_from_tsv_keeps_words_and_numbers_lines_in_reading_order():
    data = {
        "text": ["", "", "Potassium", "4.2", " ", "mmol/L", "Sodium"],
        "conf": [-1, -1, 96.5, 88, 95, 40, 91],
        "block_num": [1, 1, 1, 1, 1, 1, 2],
        "par_num": [0, 1, 1, 1, 1, 1, 1],
        "line_num": [0, 1, 1, 1, 1, 2, 1],
        "left": [0, 0, 10, 120, 150, 10, 400],
        "top": [0, 0, 20, 20, 20, 60, 20],
        "width": [500, 500, 100, 30, 5, 70, 80],
        "height": [100, 100, 20, 20, 20, 20, 20],
    }
    words = words_from_tsv(data)
    assert [w.text for w in words] == ["Potassium", "4.2", "mmol/L", "Sodium"]
    assert [w.line for w in words] == [0, 0, 1, 2]
    assert [w.block for w in words] == [1, 1, 1, 2]
    assert words[0].conf == pytest.approx(0.965)
    assert (words[1].x0, words[1].y0, words[1].x1, words[1].y1) == (120, 20, 150, 40)


@needs_tesseract
def test_reread_fixes_a_misread_word_but_keeps_its_doubt(label):
    img, truth = label
    engine = default_engine("tesseract")
    text, *box = next(t for t in truth if t[0] == "4.0-5.6")
    typo = Word("4.056", *box, conf=0.37)  # what Tesseract made of it on a noisy scan
    right_but_doubted = Word("JANE", *next(t for t in truth if t[0] == "JANE")[1:], conf=0.5)
    words = _reread(img, [typo, right_but_doubted], engine)
    assert [w.text for w in words] == ["4.0-5.6", "JANE"]
    assert words[0] is typo and typo.conf == 0.37


@needs_tesseract
def test_reread_splits_a_word_that_was_really_two(label):
    img, truth = label
    doe, jane = (next(t for t in truth if t[0] == text) for text in ("DOE,", "JANE"))
    merged = Word("DOEJANE", doe[1], doe[2], jane[3], jane[4], line=0, conf=0.3)
    words = _reread(img, [merged], default_engine("tesseract"))
    assert [w.text for w in words] == ["DOE,", "JANE"]
    assert all(w.line == 0 and w.conf == 0.3 for w in words)
    assert words[0].x1 <= words[1].x0
    assert abs(words[0].x0 - doe[1]) < 10 and abs(words[1].x1 - jane[3]) < 10


@needs_tesseract
def test_tesseract_reports_a_timeout_as_an_ocr_error(monkeypatch, label):
    import pytesseract

    def hang(*args, **kwargs):
        raise RuntimeError("Tesseract process timeout")

    monkeypatch.setattr(pytesseract, "image_to_data", hang)
    with pytest.raises(ExtractionError) as err:
        default_engine("tesseract").recognize(label[0])
    assert err.value.code == "ocr_timeout"


# --- RapidOCR parts ------------------------------------------------------------------------


def _chars(text: str, x: float, step: float, gaps: dict[int, float]) -> list:
    """Fake per-character boxes for ``text`` (spaces omitted, as RapidOCR does)."""
    out, i = [], 0
    for ch in text:
        if ch == " ":
            continue
        x += gaps.get(i, 0.0)
        out.append((ch, 0.9, [[x, 10], [x + step, 10], [x + step, 60], [x, 60]]))
        x += step
        i += 1
    return out


def test_line_words_splits_where_the_recogniser_dropped_a_column_gap():
    quad = np.array([[0, 10], [400, 10], [400, 60], [0, 60]], dtype=float)
    # "7.9%4.0-5.6": a 60 px gap after "7.9" (a table column), then ordinary spacing.
    chars = _chars("7.9%4.0-5.6", 0, 20, {3: 60})
    words = line_words("7.9%4.0-5.6", quad, 0.95, chars, line_no=4)
    assert [w.text for w in words] == ["7.9", "%4.0-5.6"]
    assert words[0].x1 == 60 and words[1].x0 == 120
    assert all(w.line == 4 and w.conf == pytest.approx(0.9) for w in words)


def test_line_words_keeps_the_spaces_it_was_given():
    quad = np.array([[0, 10], [300, 10], [300, 60], [0, 60]], dtype=float)
    words = line_words("DOE, JANE", quad, 0.9, _chars("DOE, JANE", 0, 20, {}), line_no=0)
    assert [w.text for w in words] == ["DOE,", "JANE"]


def test_line_words_falls_back_to_proportional_split():
    quad = np.array([[100, 10], [200, 10], [200, 30], [100, 30]], dtype=float)
    words = line_words("ab cd", quad, 0.8, None, line_no=1)
    assert [(w.text, w.x0, w.x1) for w in words] == [("ab", 100, 140), ("cd", 160, 200)]
    assert all(w.conf == 0.8 and (w.y0, w.y1) == (10, 30) for w in words)
