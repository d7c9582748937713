"""OCR engines (extract/ocr*.py): the shared contract, each engine's own parts, and
the pure helpers that turn engine output into text-layer-like words.

Ground truth comes from generated PDFs: their text layer says exactly which words
were typed where, so recognised words and boxes can be compared with it.
"""

from __future__ import annotations

import io

import numpy as np
import pymupdf
import pytest
from PIL import Image

from domain.content import Word
from domain.errors import ExtractionError
from extract.formats.ocr import cells, imageprep, vote
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


# --- the second engine's vote (extract/formats/ocr/vote.py) -------------------------------


def _fixed_reader(answers: dict[int, tuple[str, float]]):
    """A stand-in second engine answering by crop order (the rules, not a model)."""
    def read(crops):
        return [answers.get(i, ("", 0.0)) for i in range(len(crops))]
    return read


def test_vote_raises_the_confidence_of_a_word_both_engines_read_alike():
    img = Image.new("L", (200, 60), 255)
    w = Word("6.6", 10, 10, 60, 40, conf=0.55)
    vote.vote(img, [w], _fixed_reader({0: ("6.6", 0.97)}))
    assert (w.text, w.conf) == ("6.6", 0.97)


def test_vote_on_a_disagreement_keeps_the_lower_confidence_and_the_text():
    img = Image.new("L", (200, 60), 255)
    w = Word("HH", 10, 10, 60, 40, conf=0.7)
    vote.vote(img, [w], _fixed_reader({0: ("HI", 0.8)}))  # not sure enough to replace
    assert (w.text, w.conf) == ("HH", 0.7)
    w2 = Word("HH", 10, 10, 60, 40, conf=0.7)
    vote.vote(img, [w2], _fixed_reader({0: ("H", 0.6)}))
    assert (w2.text, w2.conf) == ("HH", 0.6)


def test_two_engines_reading_different_numbers_leave_the_number_to_a_person():
    """A faxed flowsheet's "41 H" read "44H" (0.85) by Tesseract and "41 H" (0.90) by
    the second engine: the reading of two tokens is not taken, but the number stays
    contested, so whatever depends on it is reviewed; it had been charted as 44."""
    from extract.layout import OCR_TRUSTED_CONF

    img = Image.new("L", (300, 60), 255)
    # (the vote reads the least sure first: the reader below answers in that order)
    contested = Word("44H", 10, 10, 60, 40, conf=0.85)
    worded = Word("mg/dL", 130, 10, 180, 40, conf=0.86)
    unsure = Word("131", 190, 10, 230, 40, conf=0.87)
    agreed = Word("5.6H", 70, 10, 120, 40, conf=0.9)
    vote.vote(img, [contested, agreed, worded, unsure],
              _fixed_reader({0: ("41 H", 0.90), 1: ("mg/aL", 0.88), 2: ("181", 0.6), 3: ("5.6 H", 0.96)}))
    assert contested.text == "44H" and contested.conf < OCR_TRUSTED_CONF
    assert (agreed.text, agreed.conf) == ("5.6H", 0.96)
    assert (worded.text, worded.conf) == ("mg/dL", 0.86)  # no number: the lower confidence, as before
    assert (unsure.text, unsure.conf) == ("131", 0.6)  # a second reading this unsure contests nothing


def test_a_word_the_vote_changes_is_never_left_trusted():
    """A second engine sure of another text changes the word, but the changed word's
    confidence drops below the readers' trust line: it is shown and reviewed."""
    from extract.layout import OCR_TRUSTED_CONF

    img = Image.new("L", (200, 60), 255)
    sure = Word("118)", 10, 10, 60, 40, conf=0.52)
    backed = Word("Aic", 70, 10, 110, 40, conf=0.8)
    vote.vote(img, [sure, backed], _fixed_reader({0: ("11.8", 0.99), 1: ("A1c", 0.8)}),
              alternatives={id(backed): ["A1c", "Alc"]})
    assert sure.text == "11.8" and sure.conf < OCR_TRUSTED_CONF
    assert backed.text == "A1c" and backed.conf < OCR_TRUSTED_CONF


def test_a_vote_reading_a_too_wide_box_does_not_print_the_neighbours_twice():
    """Tesseract drew "115" over the whole printed "115 - 165" and read "-" and "165" on
    their own too: the second engine reads the crop as "115-165", which taken for "115"
    made the range "115-165 - 165". A reading that only spans junk read inside the box
    ("mmol/L" over "mime", "/", "1,") is still the word's."""
    img = Image.new("L", (400, 60), 255)
    wide, dash, high = Word("115", 10, 10, 180, 40, conf=0.7), Word("-", 90, 10, 100, 40, conf=0.7), \
        Word("165", 110, 10, 180, 40, conf=0.96)
    vote.vote(img, [wide, dash, high], _fixed_reader({0: ("115-165", 0.97)}))
    assert [w.text for w in (wide, dash, high)] == ["115", "-", "165"] and wide.conf == 0.7
    mime, slash, junk = Word("mime", 200, 10, 345, 40, conf=0.3), Word("/", 304, 10, 316, 40, conf=0.2), \
        Word("1,", 324, 10, 348, 40, conf=0.1)
    vote.vote(img, [mime, slash, junk], _fixed_reader({1: ("mmol/L", 0.95)}))  # "1," is read first: less sure
    assert mime.text == "mmol/L"


def test_a_digit_split_off_a_number_as_a_mark_is_given_back_but_reviewed():
    """A fax read the printed "11/27/2026" as "|" and "1/27/2026", both sure. Read again
    together, sure, as a digit and the number's own text, they become one word whose
    confidence is below the readers' trust line."""
    from extract.layout import OCR_TRUSTED_CONF

    img = Image.new("L", (400, 60), 255)
    label, mark, date = Word("collected", 10, 10, 100, 36, conf=0.95), Word("|", 112, 10, 116, 36, conf=0.5), \
        Word("1/27/2026", 125, 10, 227, 36, conf=1.0)
    asked = []

    def read(crops):
        asked.append([c.size for c in crops])
        return [("11/27/2026", 0.9998)]

    words = vote.vote(img, [label, mark, date], read)
    assert [w.text for w in words] == ["collected", "11/27/2026"]
    assert date.x0 == mark.x0 and date.conf < OCR_TRUSTED_CONF
    assert asked and asked[-1][0][0] >= 227 - 112  # the mark and the number, in one crop


@pytest.mark.parametrize("reading", [("1/27/2026", 0.99), ("I1/27/2026", 0.99), ("11/27/2026", 0.6),
                                     ("11/27/2025", 0.99), ("1 1/27/2026", 0.99)])
def test_a_mark_before_a_number_stays_unless_the_second_reading_gives_back_one_digit(reading):
    img = Image.new("L", (400, 60), 255)
    mark, date = Word("|", 112, 10, 116, 36, conf=0.5), Word("1/27/2026", 125, 10, 227, 36, conf=1.0)
    words = vote.vote(img, [mark, date], _fixed_reader({0: reading}))
    assert [(w.text, w.conf) for w in words] == [("|", 0.5), ("1/27/2026", 1.0)]


def test_only_a_narrow_mark_close_before_a_number_on_its_line_is_read_again():
    near = [Word("|", 112, 10, 116, 36), Word("1/27/2026", 125, 10, 227, 36)]
    assert vote.split_digit_pairs(near) == [tuple(near)]
    far = [Word("|", 50, 10, 54, 36), Word("1/27/2026", 125, 10, 227, 36)]  # a column rule's bar
    wide = [Word("[]", 100, 10, 120, 36), Word("12", 125, 10, 150, 36)]  # a box, not a "1"
    other_line = [Word("|", 112, 10, 116, 36, line=0), Word("12", 125, 40, 150, 66, line=1)]
    word = [Word("|", 112, 10, 116, 36), Word("mg", 125, 10, 150, 36)]
    assert not any(vote.split_digit_pairs(ws) for ws in (far, wide, other_line, word))


def test_confident_words_get_no_vote_and_a_failing_voter_changes_nothing():
    img = Image.new("L", (200, 60), 255)
    sure = Word("Sodium", 10, 10, 90, 40, conf=0.96)
    doubtful = Word("139", 100, 10, 140, 40, conf=0.4)
    asked = []

    def read(crops):
        asked.append(len(crops))
        raise RuntimeError("model missing")

    vote.vote(img, [sure, doubtful], read)
    assert asked == [1]
    assert (doubtful.text, doubtful.conf) == ("139", 0.4)


def test_on_a_page_of_more_doubtful_words_than_the_cap_the_least_sure_are_voted_on(monkeypatch):
    """A poor page (a standard-resolution fax) has more doubtful words than the vote
    reads: the cap takes the least sure first, and confident words are never among them."""
    monkeypatch.setattr(vote, "VOTE_MAX_WORDS", 3)
    words = [Word(f"{n}", 10 + 40 * n, 10, 40 + 40 * n, 40, conf=c)
             for n, c in enumerate([0.6, 0.1, 0.95, 0.3, 0.99, 0.2])]
    assert [w.text for w in vote.voted_on(words)] == ["1", "5", "3"]
    monkeypatch.setattr(vote, "VOTE_MAX_WORDS", 10)
    assert [w.text for w in vote.voted_on(words)] == ["1", "5", "3", "0", "2"]  # "4" is sure enough


def test_rapidocr_reads_word_crops_for_the_vote(label):
    img, truth = label
    crops = [vote.crop_word(img, Word(t, x0, y0, x1, y1)) for t, x0, y0, x1, y1 in truth[:4]]
    readings = RapidOcrEngine().read_crops(crops)
    assert len(readings) == 4
    assert all(vote.same_text(text, t[0]) and score > 0.8 for (text, score), t in zip(readings, truth[:4]))


# --- ink the page pass left unread (extract/formats/ocr/cells.py) ---------------------------

RULED_ROWS = [("Test", "Result", "Units", "Flag"), ("Sodium", "137", "mmol/L", ""),
              ("Potassium", "6.6", "mmol/L", "HH"), ("Glucose", "64", "mg/dL", "L")]
RULED_X = (40, 200, 270, 380, 410)  # column edges in points: the flag column is narrow, far right


def _ruled_table(dpi: int = 300) -> tuple[Image.Image, list[tuple[str, float, float, float, float]]]:
    """A ruled table (every cell boxed) with a narrow flag column at the right, and
    its typed words in pixels."""
    doc = pymupdf.open()
    page = doc.new_page(width=450, height=160)
    top, row_h = 20, 24
    for r, row in enumerate(RULED_ROWS):
        for c, text in enumerate(row):
            if text:
                page.insert_text((RULED_X[c] + 5, top + r * row_h + 16), text, fontsize=10, fontname="helv")
    for r in range(len(RULED_ROWS) + 1):
        page.draw_line((RULED_X[0], top + r * row_h), (RULED_X[-1], top + r * row_h), width=0.8)
    for x in RULED_X:
        page.draw_line((x, top), (x, top + len(RULED_ROWS) * row_h), width=0.8)
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
    img = Image.frombytes("L", (pix.width, pix.height), pix.samples)
    zoom = dpi / 72
    truth = [(t, x0 * zoom, y0 * zoom, x1 * zoom, y1 * zoom) for x0, y0, x1, y1, t, *_ in page.get_text("words")]
    return img, truth


def test_rules_of_a_boxed_table_are_found():
    img, _ = _ruled_table()
    glyph = imageprep.glyph_height(img)
    rules = cells.find_rules(cells.ink_mask(img), glyph)
    assert rules.ruled and rules.vertical == len(RULED_X) and rules.horizontal == len(RULED_ROWS) + 1
    plain = Image.new("L", img.size, 255)
    plain.paste(img.crop((0, 0, img.width, 200)))  # the top rule and the header: no table yet
    assert not cells.find_rules(cells.ink_mask(plain), glyph).ruled


def test_unread_regions_are_the_cells_no_word_covers():
    """The page pass "lost" the flag column: the regions left are exactly its cells,
    each inside its own box (never joined across the rule to the units beside it)."""
    img, truth = _ruled_table()
    zoom = 300 / 72
    read = [Word(t, x0, y0, x1, y1) for t, x0, y0, x1, y1 in truth if t not in ("Flag", "HH", "L")]
    regions = cells.unread_regions(img, read, imageprep.glyph_height(img))
    assert len(regions) == 3
    for (x0, y0, x1, y1), text in zip(regions, ("Flag", "HH", "L")):
        t = next(t for t in truth if t[0] == text)
        assert RULED_X[3] * zoom < x0 and x1 < RULED_X[4] * zoom
        assert abs((y0 + y1) / 2 - (t[2] + t[4]) / 2) < 10
    assert cells.unread_regions(img, [Word(*t) for t in truth], imageprep.glyph_height(img)) == []


@needs_tesseract
def test_tesseract_reads_back_a_flag_column_its_page_pass_lost(monkeypatch):
    """Whatever the page pass drops, the ink it left is read on its own."""
    img, truth = _ruled_table()
    engine = TesseractEngine(vote=False)
    real = engine.read_words

    def page_pass_loses_the_flag_column(image, config):
        words = real(image, config)
        if image.size == img.size:  # only the page pass, not the re-reads
            words = [w for w in words if w.x0 < RULED_X[3] * 300 / 72]
        return words

    monkeypatch.setattr(engine, "read_words", page_pass_loses_the_flag_column)
    words = engine.recognize(img)
    flags = [w for w in words if w.x0 > RULED_X[3] * 300 / 72]
    assert [w.text for w in flags] == ["Flag", "HH", "L"]
    assert all(w.conf is not None and 0 <= w.conf <= 1 for w in flags)


@needs_tesseract
def test_a_boxed_table_is_read_cell_by_cell_flag_column_included():
    """Tesseract's page pass reads nothing at all on a table boxed by rules (it takes
    the cells for pictures); with the ink it left unread read region by region, every
    cell comes back, the narrow flag column too."""
    from extract.formats.images import normalize_image

    img, truth = _ruled_table()
    assert TesseractEngine(reread=False, vote=False).recognize(img) == []
    buf = io.BytesIO()
    img.save(buf, "PNG", dpi=(300, 300))
    content = normalize_image(buf.getvalue(), engine=default_engine("tesseract"))
    rows = [ln.text for ln in content.pages[0].lines]
    assert rows == [" ".join(t for t in row if t) for row in RULED_ROWS]
    assert content.meta["pages"][0]["ruled_table"] is True
    hh = next(w for w in content.pages[0].words if w.text == "HH")
    assert hh.conf is not None and 0 < hh.conf <= 1


def test_a_number_tesseract_was_fairly_sure_of_is_still_voted_on():
    """A faxed "7.9" read as "79" at 0.95: the decimal point is gone, Tesseract has no
    doubt; the second engine's "7.9" changes it, and the change is reviewed."""
    from extract.layout import OCR_TRUSTED_CONF

    img = Image.new("L", (200, 60), 255)
    value = Word("79", 10, 10, 60, 40, conf=0.95)
    name = Word("Hemoglobin", 70, 10, 190, 40, conf=0.95)
    asked = []

    def read(crops):
        asked.append(len(crops))
        return [("7.9", 0.99)]

    vote.vote(img, [name, value], read)
    assert asked == [1]  # the number only: a 0.95 word is not doubted
    assert value.text == "7.9" and value.conf < OCR_TRUSTED_CONF
    assert (name.text, name.conf) == ("Hemoglobin", 0.95)


def test_doubtful_lab_symbols_are_not_dropped_as_noise():
    from extract.formats.ocr.page import _is_noise

    for text in ("%", "<", ">", "*", "HH", "▲"):
        assert not _is_noise(Word(text, 0, 0, 5, 5, conf=0.2)), text
    for text in ("—_", "|", "..", "~"):
        assert _is_noise(Word(text, 0, 0, 5, 5, conf=0.2)), text
    assert not _is_noise(Word("|", 0, 0, 5, 5, conf=0.9))


# --- reading ahead on a second core (extract/formats/ocr/tesseract.py, vote.py) ------------


def test_crops_read_ahead_vote_as_if_read_in_the_vote_and_are_not_read_twice():
    """The vote takes an early reading by its crop's box and asks the reader only for
    the crops nobody read yet (here a word added after the early reads started)."""
    from concurrent.futures import ThreadPoolExecutor

    img = Image.new("L", (300, 60), 255)
    page = [Word("118)", 10, 10, 60, 40, conf=0.52), Word("mg/dL", 70, 10, 130, 40, conf=0.6)]
    added = Word("HH", 140, 10, 170, 40, conf=0.3)
    # A stand-in second engine answering by the crop's size (each word's differs).
    answers = {vote.crop_word(img, w).size: a for w, a in
               zip([*page, added], [("11.8", 0.99), ("mg/dL", 0.95), ("H", 0.6)])}
    asked: list[int] = []

    def read(crops):
        asked.append(len(crops))
        return [answers[c.size] for c in crops]

    alike = [Word(w.text, w.x0, w.y0, w.x1, w.y1, conf=w.conf) for w in [*page, added]]
    with ThreadPoolExecutor(max_workers=1) as side:
        early = vote.EarlyReadings(img, read, side.submit)
        early.ahead(page)
        words = vote.vote(img, [*page, added], read, early=early)
    assert asked == [2, 1]
    vote.vote(img, alike, read)
    assert [(w.text, w.conf) for w in words] == [(w.text, w.conf) for w in alike]
    assert [(w.text, w.conf) for w in words] == [("11.8", 0.45), ("mg/dL", 0.95), ("HH", 0.3)]


def test_an_early_reading_that_failed_is_asked_again_in_the_vote():
    from concurrent.futures import ThreadPoolExecutor

    img = Image.new("L", (200, 60), 255)
    w = Word("6.6", 10, 10, 60, 40, conf=0.55)
    calls: list[int] = []

    def read(crops):
        calls.append(len(crops))
        if len(calls) == 1:
            raise RuntimeError("busy")
        return [("6.6", 0.97)]

    with ThreadPoolExecutor(max_workers=1) as side:
        early = vote.EarlyReadings(img, read, side.submit)
        early.ahead([w])
        vote.vote(img, [w], read, early=early)
    assert calls == [1, 1] and (w.text, w.conf) == ("6.6", 0.97)


def _noisy_lab_page() -> Image.Image:
    """A generated lab report scanned at 200 dpi with speckle: many doubtful words."""
    from golden.fixtures import LAB_CASES, render_lab
    from golden.scan import scan_pdf

    scan = scan_pdf(render_lab(LAB_CASES[0]), dpi=200, rotate_deg=0.0, noise=0.02, seed=3,
                    as_format="tiff", tiff_compression="lzw")
    return Image.open(io.BytesIO(scan)).convert("L")


@needs_tesseract
def test_tesseract_with_its_side_thread_reads_exactly_what_the_steps_read_in_turn():
    """The page pass, the unread-ink pass, the re-reads and the vote run partly side by
    side; the words (texts, boxes, confidences, order) are those of the same steps run
    one after another, and the same on every run."""
    from extract.formats.ocr import tesseract as tess
    from extract.formats.ocr.rapid import rapid_reader

    img = _noisy_lab_page()
    engine = TesseractEngine()

    def in_turn() -> list[Word]:
        words = engine.read_words(img, f"--psm {engine.psm} --dpi {tess._dpi_of(img)}")
        words += tess._read_unread_ink(img, words, engine)
        alternatives: dict[int, list[str]] = {}
        words = tess._reread(img, words, engine, alternatives)
        return vote.vote(img, words, rapid_reader(), alternatives)

    def key(words: list[Word]) -> list[tuple]:
        return [(w.text, w.x0, w.y0, w.x1, w.y1, w.conf, w.line) for w in words]

    expected = key(in_turn())
    assert sum(1 for w in expected if w[5] < vote.VOTE_BELOW) >= 5  # the vote had work to do
    assert key(engine.recognize(img)) == expected
    assert key(engine.recognize(img)) == expected


@needs_tesseract
def test_crop_readers_side_by_side_read_each_crop_as_one_engine_does():
    """The vote's crops dealt out to two engines come back in the crops' order, each
    read exactly as one engine alone reads it (texts and scores)."""
    from extract.formats.ocr.rapid import CropReaders

    img = _noisy_lab_page()
    words = TesseractEngine(reread=False).recognize(img)
    crops = [vote.crop_word(img, w) for w in vote.voted_on(words)][:12]
    assert len(crops) >= 5
    alone = RapidOcrEngine().read_crops(crops)
    assert CropReaders(2)(crops) == alone
    assert CropReaders(2)(crops[:1]) == alone[:1]


def test_a_page_reads_upright_by_its_longer_words_against_the_engines_bar():
    """Specks read as short low-confidence marks do not make an upright page look
    turned; words standing on end or long words read at a turned page's confidence do."""
    from extract.formats.ocr.upright import reads_upright

    def word(text: str, conf: float, x0: float = 0, standing: bool = False) -> Word:
        return Word(text, x0, 0, x0 + (10 if standing else 60), 40 if standing else 12, conf=conf)

    page = [word("Potassium", 0.8), word("mmol/L", 0.7)] + [word(".", 0.1, x0=i) for i in range(8)]
    assert reads_upright(page, 0.45) and reads_upright(page, 0.7)
    assert not reads_upright([word("Potassium", 0.3), word("mmol/L", 0.25)], 0.45)
    assert not reads_upright([word("Potassium", 0.9, standing=True), word("mmol/L", 0.9, standing=True)], 0.45)


@needs_tesseract
def test_an_upright_scan_of_dotted_leaders_is_not_asked_its_orientation():
    """The specks of its leaders read at low confidence; asking Tesseract which way the
    page is turned cost ~0.8 s to hear it was upright."""
    from extract.formats.images import ocr_pdf
    from golden.fixtures import LAB_CASES, render_lab, with_layout
    from golden.scan import scan_pdf

    asked: list[int] = []

    class Counting(TesseractEngine):
        def detect_rotation(self, image: Image.Image) -> int:
            asked.append(turn := super().detect_rotation(image))
            return turn

    scan = scan_pdf(render_lab(with_layout(LAB_CASES[0], "dotted")), dpi=200, rotate_deg=1.0, noise=0.02, seed=1)
    content = ocr_pdf(scan, engine=Counting())
    assert asked == []
    assert len(content.pages[0].words) > 50 and content.meta["pages"][0]["turn_tried"] is False
