"""Scanned PDFs, images and TIFF fax packets -> OCR'd NormalizedContent
(extract/formats/images.py, extract/formats/ocr/page.py, extract/formats/ocr/imageprep.py, golden/scan.py).

Exact checks use generated content: a typed PDF (its text layer is the ground truth)
is "scanned" by golden/scan.py - rendered, turned 1.5 degrees, blurred, speckled - and
read back. Real third-party samples (marked shared_data) must go through without a
crash and give words inside their pages; a few words were checked by eye.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pymupdf
import pytest
from PIL import Image

from domain.content import NormalizedContent, PageContent, Word
from domain.errors import ExtractionError
from domain.models import BoundingBox
from extract.formats.ocr import imageprep
from extract.formats.images import MAX_PAGES, normalize_image, ocr_pdf
from extract.sniff import MIME_TYPES, mime_of

MIME_DOCX, MIME_XLSX = MIME_TYPES["docx"], MIME_TYPES["xlsx"]
from extract.formats.ocr.engines import default_engine, tesseract_available
from extract.formats.ocr.page import group_lines, level_lines
from golden.scan import char_error_rate, scan_pdf, typed_pdf

# Exact-text checks are calibrated on Tesseract, the engine CI installs; without it the
# fallback engine still runs the structural tests below.
needs_tesseract = pytest.mark.skipif(not tesseract_available(), reason="tesseract binary not installed")
# A page image read once in this run is not read again (tests/support/ocr_cache.py): the same
# scan stored as PNG, LZW TIFF and PDF reaches the engine as the same pixels. The engine itself,
# uncached, is tests/extract/formats/test_ocr.py.
pytestmark = pytest.mark.usefixtures("cached_ocr")

LAB_LINES = [
    "ACME LABORATORY REPORT",
    "Patient: DOE, JANE",
    "DOB: 03/14/1961",
    "Test Result Units Reference Flag",
    "Hemoglobin A1c 7.9 % 4.0-5.6 H",
    "Glucose, fasting 126 mg/dL 70-99 H",
    "LDL Cholesterol 142 mg/dL <100 H",
    "Collected: 2024-02-11",
]
KEY_WORDS = ("DOE,", "JANE", "03/14/1961", "7.9", "4.0-5.6", "126", "mg/dL")
# Stated tolerances. Character error rate of a page's words against the typed words
# (measured 0-0.6% on these scans; 3% leaves room for another Tesseract build), and
# how far a word's box centre may land from where it was typed, in page fractions:
# the scan turns the page 1.5 degrees and deskewing grows the canvas by ~1.6% a side.
MAX_CER = 0.03
MAX_SHIFT = 0.03


@pytest.fixture(scope="module")
def lab_pdf() -> bytes:
    return typed_pdf(LAB_LINES)


@pytest.fixture(scope="module")
def typed_words(lab_pdf) -> list[tuple[str, float, float, float, float]]:
    """(text, x0, y0, x1, y1) as fractions of the page, from the text layer."""
    page = pymupdf.open(stream=lab_pdf, filetype="pdf").load_page(0)
    w, h = page.rect.width, page.rect.height
    return [
        (t, x0 / w, y0 / h, x1 / w, y1 / h)
        for x0, y0, x1, y1, t, *_ in page.get_text("words", sort=True)
    ]


@pytest.fixture(scope="module")
def scanned(lab_pdf, tmp_path_factory):
    """OCR results of the lab page scanned to each format, each computed once."""
    render_dir = tmp_path_factory.mktemp("renders")
    cache: dict[str, NormalizedContent] = {}

    def get(fmt: str) -> NormalizedContent:
        if fmt not in cache:
            if fmt == "pdf":
                data = scan_pdf(lab_pdf, as_format="pdf")
                cache[fmt] = ocr_pdf(data, render_dir=render_dir, name="lab-pdf")
            else:
                tiff = "lzw" if fmt == "tiff-lzw" else "group4"
                data = scan_pdf(lab_pdf, as_format=fmt.split("-")[0], tiff_compression=tiff)
                cache[fmt] = normalize_image(data, render_dir=render_dir, name=f"lab-{fmt}")
        return cache[fmt]

    return get


def assert_page_sane(page: PageContent) -> None:
    """Boxes inside the page and usable as citations; words and lines agree."""
    assert page.width > 0 and page.height > 0
    for i, w in enumerate(page.words):
        assert w.index == i
        assert w.text and not any(ch.isspace() for ch in w.text)
        assert 0 <= w.x0 < w.x1 <= page.width and 0 <= w.y0 < w.y1 <= page.height, w
        BoundingBox(**dict(zip(("x", "y", "width", "height"), page.normalize(w.x0, w.y0, w.x1, w.y1))))
    assert [w for ln in page.lines for w in ln.words] == page.words
    for a, b in zip(page.lines, page.lines[1:]):
        # The next line is not above this one, unless it is its neighbour in a row.
        assert (b.y0 + b.y1) / 2 >= a.y0 or b.x0 >= a.x0, f"{a.text!r} before {b.text!r}"
    for ln in page.lines:
        assert all(a.x0 <= b.x0 for a, b in zip(ln.words, ln.words[1:])), "words not left to right"


# --- golden/scan.py -------------------------------------------------------------------------


def test_scans_are_deterministic_image_only_and_in_the_asked_format(lab_pdf):
    pdf = scan_pdf(lab_pdf, as_format="pdf")
    assert pdf == scan_pdf(lab_pdf, as_format="pdf")
    assert pdf != scan_pdf(lab_pdf, as_format="pdf", seed=1)
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        assert doc.page_count == 1 and doc[0].get_text().strip() == ""
        assert doc[0].rect == pymupdf.Rect(0, 0, 612, 792)
    assert scan_pdf(lab_pdf, as_format="png").startswith(b"\x89PNG")
    g4 = Image.open(io.BytesIO(scan_pdf(lab_pdf, as_format="tiff")))
    assert (g4.format, g4.mode, g4.info["compression"]) == ("TIFF", "1", "group4")
    lzw = Image.open(io.BytesIO(scan_pdf(lab_pdf, as_format="tiff", tiff_compression="lzw")))
    assert (lzw.mode, lzw.info["compression"]) == ("L", "tiff_lzw")


# --- reading scans back ------------------------------------------------------------------------


@needs_tesseract
@pytest.mark.parametrize("fmt", ["png", "tiff-group4", "tiff-lzw", "pdf"])
def test_scanned_lab_page_reads_back(fmt, scanned, typed_words):
    content = scanned(fmt)
    assert content.source_kind == "ocr"
    assert content.engine == default_engine().name
    (page,) = content.pages
    assert_page_sane(page)
    got = " ".join(w.text for w in page.words)
    want = " ".join(t for t, *_ in typed_words)
    assert char_error_rate(got, want) <= MAX_CER, got
    texts = [w.text for w in page.words]
    for key in KEY_WORDS:
        assert key in texts
    assert "Hemoglobin A1c 7.9 % 4.0-5.6 H" in [ln.text for ln in page.lines]
    assert content.meta["pages"][0]["deskew_deg"] == pytest.approx(1.5, abs=0.2)


@needs_tesseract
@pytest.mark.parametrize("fmt", ["png", "pdf"])
def test_word_boxes_land_where_the_words_were_typed(fmt, scanned, typed_words):
    page = scanned(fmt).pages[0]
    for text in ("JANE", "03/14/1961", "7.9", "<100"):
        typed = next(t for t in typed_words if t[0] == text)
        word = next(w for w in page.words if w.text == text)
        x, y, w, h = page.normalize(word.x0, word.y0, word.x1, word.y1)
        assert abs((x + w / 2) - (typed[1] + typed[3]) / 2) <= MAX_SHIFT, text
        assert abs((y + h / 2) - (typed[2] + typed[4]) / 2) <= MAX_SHIFT, text


@needs_tesseract
def test_pdf_pages_are_measured_in_points_and_rendered_for_review(scanned):
    page = scanned("pdf").pages[0]
    # Letter is 612 x 792 pt; deskewing 1.5 degrees grows the page by ~2.5%.
    assert page.width == pytest.approx(612 * 1.03, rel=0.03)
    assert page.height == pytest.approx(792 * 1.03, rel=0.03)
    stored = Image.open(page.image_path)
    assert Path(page.image_path).name == "lab-pdf-p1.png"
    assert stored.width / page.width == pytest.approx(stored.height / page.height, rel=0.01)


@needs_tesseract
def test_stored_page_image_is_the_one_the_boxes_refer_to(scanned):
    page = scanned("png").pages[0]
    stored = Image.open(page.image_path)
    assert stored.size == (page.width, page.height)
    word = next(w for w in page.words if w.text == "JANE")
    ink = stored.crop((int(word.x0), int(word.y0), int(word.x1), int(word.y1))).convert("L")
    assert min(ink.getdata()) < 100  # the box covers dark print, not paper


@needs_tesseract
def test_multipage_tiff_packet_keeps_page_order():
    doc = pymupdf.open()
    for text in ("Page one: Patient DOE, JANE", "Page two: Potassium 4.2 mmol/L"):
        doc.new_page(width=612, height=792).insert_text((72, 90), text, fontsize=11, fontname="helv")
    for compression in ("group4", "lzw"):
        data = scan_pdf(doc.tobytes(), as_format="tiff", tiff_compression=compression)
        content = normalize_image(data)
        assert [p.number for p in content.pages] == [1, 2]
        assert "JANE" in [w.text for w in content.pages[0].words]
        assert "Potassium" in [w.text for w in content.pages[1].words]


def _clean_page_png(lines=LAB_LINES, dpi=150) -> Image.Image:
    page = pymupdf.open(stream=typed_pdf(lines), filetype="pdf").load_page(0)
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
    return Image.frombytes("L", (pix.width, pix.height), pix.samples)


def _encode(img: Image.Image, fmt: str, **kwargs) -> bytes:
    buf = io.BytesIO()
    img.save(buf, fmt, **kwargs)
    return buf.getvalue()


@needs_tesseract
def test_jpeg_exif_orientation_is_applied_before_ocr():
    upright = _clean_page_png()
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 clockwise to display": the pixels lie on their side
    data = _encode(upright.rotate(90, expand=True).convert("RGB"), "JPEG", quality=92, exif=exif)
    content = normalize_image(data)
    page = content.pages[0]
    assert (page.width, page.height) == upright.size
    assert content.meta["pages"][0]["turn_tried"] is False  # EXIF alone fixed it
    assert "03/14/1961" in [w.text for w in page.words]


@needs_tesseract
def test_webp_page_is_read():
    data = _encode(_clean_page_png(dpi=200), "WEBP", quality=90)
    content = normalize_image(data)
    assert content.meta["format"] == "WEBP"
    assert "JANE" in [w.text for w in content.pages[0].words]


@needs_tesseract
def test_sideways_page_is_turned_upright():
    prose = LAB_LINES + [
        "Comments: Specimen received at room temperature. Results were reviewed",
        "by the laboratory director. Please contact the laboratory with any",
        "questions regarding these results or the reference intervals used.",
    ]
    upright = _clean_page_png(prose)
    content = normalize_image(_encode(upright.rotate(90, expand=True), "PNG"))
    page = content.pages[0]
    assert content.meta["pages"][0]["rotation"] == 270
    assert (page.width, page.height) == upright.size
    assert_page_sane(page)
    assert any(ln.text.endswith("7.9 % 4.0-5.6 H") for ln in page.lines)


def test_a_page_read_again_in_this_run_is_a_copy_of_the_first_reading(lab_pdf, cached_ocr):
    """The run's OCR cache (tests/support/ocr_cache.py) is the engine's own answer: the
    same pixels get an equal, separate copy; other pixels are read by the engine."""
    page = pymupdf.open(stream=lab_pdf, filetype="pdf").load_page(0)
    pix = page.get_pixmap(dpi=100, colorspace=pymupdf.csGRAY)
    image = Image.frombytes("L", (pix.width, pix.height), pix.samples)
    engine = default_engine()
    first, again = engine.recognize(image), engine.recognize(image.copy())
    assert first and first == again and all(a is not b for a, b in zip(first, again))
    assert engine.hits >= 1 and engine.engine.recognize(image) == first  # uncached, the same words
    first[0].x0 += 5  # the page code moves words: a later reading is not moved with them
    assert engine.recognize(image) == again
    changed = image.copy()
    changed.putpixel((0, 0), 0)
    hits = engine.hits
    engine.recognize(changed)
    assert engine.hits == hits


def test_blank_page_gives_a_warning_not_an_error():
    content = normalize_image(_encode(Image.new("L", (1275, 1650), 255), "PNG"))
    assert len(content.pages) == 1 and content.pages[0].words == []
    assert [(w.code, w.page) for w in content.warnings] == [("no_text_on_page", 1)]


def test_one_undecodable_frame_becomes_a_warning():
    frames = [_clean_page_png(dpi=100), Image.new("L", (850, 1100), 255)]
    data = _encode(frames[0], "TIFF", save_all=True, append_images=frames[1:])
    second = Image.open(io.BytesIO(data))
    second.seek(1)
    data = data[: second.tile[0].offset + 10]  # cut the file inside page 2's pixels
    content = normalize_image(data)
    assert [p.number for p in content.pages] == [1, 2]
    assert "JANE" in [w.text for w in content.pages[0].words]
    assert content.pages[1].words == []
    assert [(w.code, w.page) for w in content.warnings] == [("page_unreadable", 2)]


# --- bad input ------------------------------------------------------------------------------------


def _png_header_only(width: int, height: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", "empty_file"),
        (b"this is not an image at all", "corrupt_image"),
        (_png_header_only(400, 300), "corrupt_image"),  # header fine, pixels missing
        (_png_header_only(10_000, 7_000), "image_too_large"),  # 70 MP
        (_png_header_only(20_000, 10_000), "image_too_large"),  # Pillow's own bomb guard
        (_encode(Image.new("L", (10, 10)), "GIF"), "unsupported_image_format"),
    ],
    ids=["empty", "garbage", "truncated", "over-60MP", "bomb", "gif"],
)
def test_bad_images_fail_with_a_code(data, code):
    with pytest.raises(ExtractionError) as err:
        normalize_image(data)
    assert err.value.code == code


def test_too_many_tiff_pages_fail_before_any_ocr():
    frames = [Image.new("1", (16, 16), 1) for _ in range(MAX_PAGES + 1)]
    data = _encode(frames[0], "TIFF", save_all=True, append_images=frames[1:], compression="group4")
    with pytest.raises(ExtractionError) as err:
        normalize_image(data)
    assert err.value.code == "too_many_pages"


def _encrypted_pdf() -> bytes:
    doc = pymupdf.open(stream=typed_pdf(["secret"]), filetype="pdf")
    return doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="u")


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", "empty_file"),
        (b"%PDF-1.7\nnot really", "corrupt_file"),
        (_encrypted_pdf(), "encrypted_pdf"),
        (typed_pdf(["x"], pages=MAX_PAGES + 1), "too_many_pages"),
    ],
    ids=["empty", "corrupt", "encrypted", "too-many-pages"],
)
def test_bad_pdfs_fail_with_a_code(data, code):
    with pytest.raises(ExtractionError) as err:
        ocr_pdf(data)
    assert err.value.code == code


# --- page clean-up helpers ---------------------------------------------------------------------


@pytest.mark.parametrize("angle", [-4.0, 0.7, 2.5])
def test_skew_is_measured_to_a_fifth_of_a_degree(angle, lab_pdf):
    scan = Image.open(io.BytesIO(scan_pdf(lab_pdf, rotate_deg=angle, noise=0.0, as_format="png")))
    assert imageprep.estimate_skew(scan.convert("L")) == pytest.approx(angle, abs=0.2)


@pytest.mark.parametrize("angle", [0.35, -1.0, 2.7, -13.3, 31.0])
@pytest.mark.parametrize("bands", [2, 3])
def test_a_page_turned_in_bands_is_pillows_turn_pixel_for_pixel(angle, bands, lab_pdf):
    # The stored page and every OCR box depend on these pixels: a faster turn that moved
    # one of them would change what reviewers see and what the engine reads.
    scan = Image.open(io.BytesIO(scan_pdf(lab_pdf, dpi=120, rotate_deg=0.0, noise=0.02, as_format="png")))
    page = scan.convert("L").crop((0, 0, 997, 1201))  # odd sizes: the band edges fall mid-pixel
    want = page.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)
    got = imageprep.rotate_in_bands(page, angle, bands=bands)
    assert got.size == want.size
    assert np.array_equal(np.asarray(got), np.asarray(want))


def test_a_short_strip_is_turned_in_one_piece():
    strip = Image.new("L", (300, 40), 255)
    want = strip.rotate(1.5, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)
    assert np.array_equal(np.asarray(imageprep.rotate_in_bands(strip, 1.5, bands=4)), np.asarray(want))


def test_skew_of_blank_or_single_word_pages_is_zero():
    assert imageprep.estimate_skew(Image.new("L", (800, 1000), 255)) == 0.0
    assert imageprep.estimate_skew(_clean_page_png(["Page1"])) == 0.0


def test_despeckle_only_touches_speckled_pages(lab_pdf):
    clean = _clean_page_png()
    assert imageprep.despeckle(clean) == (clean, False)
    noisy = Image.open(io.BytesIO(scan_pdf(lab_pdf, noise=0.03, as_format="png"))).convert("L")
    cleaned, changed = imageprep.despeckle(noisy)
    assert changed

    def specks(img: Image.Image) -> int:
        return int(imageprep._small_components((np.asarray(img) < 128).astype(np.uint8) * 255).sum())

    assert specks(cleaned) < specks(noisy) / 10


def test_flatten_background_evens_a_photo_but_leaves_scans_alone():
    scan = _clean_page_png()
    assert imageprep.flatten_background(scan) == (scan, False)
    # A "photo": the same page under light falling off from left to right.
    arr = np.asarray(scan, dtype=np.float32) * np.linspace(1.0, 0.55, scan.width)[None, :]
    photo = Image.fromarray(arr.astype(np.uint8))
    flat, changed = imageprep.flatten_background(photo)
    assert changed
    right_margin = np.asarray(flat)[:, -40:]
    assert np.median(right_margin) > 240  # paper is white again on the dark side


def test_small_print_is_enlarged_for_ocr_and_large_photos_are_not():
    assert imageprep.ocr_scale(_clean_page_png(dpi=100)) > 1.5
    assert imageprep.ocr_scale(_clean_page_png(dpi=300)) == 1.0


def test_transparent_margins_are_cut_away():
    img = Image.new("RGBA", (300, 200), (0, 0, 0, 0))
    img.paste((200, 180, 160, 255), (50, 40, 250, 160))
    assert imageprep.trim_transparent(img).size == (200, 120)
    assert imageprep.to_grayscale(Image.new("LA", (5, 5), (0, 0))).getpixel((2, 2)) == 255


def test_group_lines_makes_one_line_per_row_read_top_to_bottom():
    words = [
        Word("4.2", 300, 100, 340, 120, line=1),  # value cell, its own engine line
        Word("Potassium", 10, 100, 120, 120, line=0),
        Word("Sodium", 10, 140, 90, 160, line=2),
        Word("mmol/L", 360, 101, 420, 121, line=1),
    ]
    lines, flat = group_lines(words)
    assert [ln.text for ln in lines] == ["Potassium 4.2 mmol/L", "Sodium"]
    assert [w.text for w in flat] == ["Potassium", "4.2", "mmol/L", "Sodium"]
    assert [(w.index, w.line) for w in flat] == [(0, 0), (1, 0), (2, 0), (3, 1)]


def test_words_of_a_line_share_its_height_like_a_text_layer():
    words = [
        Word("Sunrise", 10, 102, 60, 110, line=0),  # capitals only
        Word("Valley", 66, 102, 100, 113, line=0),  # a descender
        Word("-", 105, 106, 108, 107, line=0),  # a sliver
        Word("Summary", 10, 130, 80, 141, line=1),
    ]
    level_lines(words)
    boxes = [(w.x0, w.y0, w.x1, w.y1) for w in words[:3]]
    assert boxes == [(10, 102, 60, 113), (66, 102, 100, 113), (105, 102, 108, 113)]
    assert (words[3].y0, words[3].y1) == (130, 141)


def test_group_lines_merges_engine_lines_that_interleave_in_a_row():
    words = [  # a table header the engine read as two lines, one inside the other
        Word("Component", 48, 103, 99, 110, line=6),
        Word("Units", 588, 103, 616, 109, line=6),
        Word("Your", 308, 103, 331, 109, line=7),
        Word("Range", 479, 103, 508, 110, line=7),
    ]
    lines, _ = group_lines(words)
    assert [ln.text for ln in lines] == ["Component Your Range Units"]


# --- content sniffing -------------------------------------------------------------------------------


def _zip(*names: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name in names:
            zf.writestr(name, "<x/>")
    return buf.getvalue()


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (typed_pdf(["x"]), "application/pdf"),
        (_encode(Image.new("L", (4, 4)), "PNG"), "image/png"),
        (_encode(Image.new("RGB", (4, 4)), "JPEG"), "image/jpeg"),
        (_encode(Image.new("RGB", (4, 4)), "WEBP"), "image/webp"),
        (_encode(Image.new("1", (4, 4)), "TIFF", compression="group4"), "image/tiff"),
        (_zip("[Content_Types].xml", "word/document.xml"), MIME_DOCX),
        (_zip("[Content_Types].xml", "xl/workbook.xml"), MIME_XLSX),
        (_zip("notes.txt"), "application/zip"),
        (b"MSH|^~\\&|LAB|HOSP|||202402110815||ORU^R01|1|P|2.5.1\r", "x-application/hl7-v2+er7"),
        (b"\xef\xbb\xbf\r\n  FHS|^~\\&|SENDER\rBHS|^~\\&\r", "x-application/hl7-v2+er7"),
        (b"\x0bBHS|^~\\&|X\r", "x-application/hl7-v2+er7"),
        ("Patient: José DOE\nDOB: 03/14/1961\n".encode(), "text/plain"),
        ("Patient: José DOE\n".encode("latin-1"), "text/plain"),
        (bytes(range(256)) * 4, None),
        (b"", None),
        (b"PK\x03\x04 broken zip", "application/zip"),
    ],
    ids=["pdf", "png", "jpeg", "webp", "tiff", "docx", "xlsx", "zip", "hl7", "hl7-bom-batch",
         "hl7-mllp", "utf8-text", "latin1-text", "binary", "empty", "broken-zip"],
)
def test_sniffing_reads_content_not_names(data, mime):
    assert mime_of(data) == mime


# --- real third-party samples -------------------------------------------------------------------------

# file -> (expected pages, words that must be read; checked by eye on the samples)
REAL_SAMPLES = {
    "aws_multipage_2p_intake_form_and_employment_app_lzw.tiff": (
        2, ["Patient", "Emergency", "Employment", "Applicant"]
    ),
    "aws_patient_intake_form_handwritten_photo.jpg": (1, ["Patient", "Emergency"]),
    "cdc_rv_TX_hepatitisA_case_report_blank.jpg": (1, ["Hepatitis", "Texas"]),
    "cdc_rv_TX_hepatitisA_case_report_filled.jpg": (1, ["Hepatitis", "Smith", "94583"]),
    "cdc_rv_TX_pertussis_case_report_filled_scan150dpi.jpg": (1, ["Pertussis", "Bueller"]),
    "cdc_rv_lab_TRF_phone_photo_rotated.jpeg": (1, ["Blood", "ANTENATAL"]),
    "cdc_rv_lab_test_requisition_form_Aster.png": (1, ["Blood", "ANTENATAL", "Physician"]),
    "msft_health_insurance_card_photo.png": (1, ["BROWN", "123456789", "BCAAXYZ"]),
    "pillow_multipage_3p_G4_400dpi.tiff": (3, ["Page2", "Page3"]),
    "pillow_scanned_US_passport_instructions_G4_200dpi.tif": (1, ["passport"]),
    "aws_scanned_2p_image_only_no_text_layer.pdf": (2, ["Patient", "Information", "Employment"]),
}


@pytest.fixture(scope="module")
def real_results(tmp_path_factory) -> dict:
    """Each real sample is OCR'd once per test session, on first use."""
    return {"render_dir": tmp_path_factory.mktemp("real")}


@needs_tesseract
@pytest.mark.shared_data
@pytest.mark.parametrize("name", sorted(REAL_SAMPLES))
def test_real_sample_is_read(name, shared_data, real_results):
    if name not in real_results:
        data = (shared_data / "scans" / name).read_bytes()
        read = ocr_pdf if name.endswith(".pdf") else normalize_image
        real_results[name] = read(data, render_dir=real_results["render_dir"], name=Path(name).stem)
    content = real_results[name]
    pages, expected = REAL_SAMPLES[name]
    assert len(content.pages) == pages
    for page in content.pages:
        assert page.words, f"page {page.number} has no words"
        assert_page_sane(page)
        if not name.endswith(".pdf"):  # image pages are measured in stored pixels
            assert Image.open(page.image_path).size == (page.width, page.height)
    texts = {w.text.strip(".,:;") for p in content.pages for w in p.words}
    for word in expected:
        assert word in texts, f"{word!r} not read from {name}"
    assert not [w for w in content.warnings if w.code != "no_text_on_page"]


@needs_tesseract
@pytest.mark.shared_data
def test_real_fax_pages_come_back_in_order(shared_data, real_results):
    name = "pillow_multipage_3p_G4_400dpi.tiff"
    content = real_results.get(name) or normalize_image((shared_data / "scans" / name).read_bytes())
    # One word a page. "Page1" may come back as "Pagel": a lone 1 and l look alike.
    read = [[w.text.replace("Pagel", "Page1") for w in p.words] for p in content.pages]
    assert read == [["Page1"], ["Page2"], ["Page3"]]


# --- fixed resolution, quarter turns and the flag column of scanned labs -------------------------


def test_square_pixels_stretches_a_standard_resolution_fax():
    fax = Image.new("L", (1700, 1100), 255)  # a Letter page at 200 x 100 dpi
    img, dpi = imageprep.square_pixels(fax, (200, 100))
    assert img.size == (1700, 2200) and dpi == 200
    assert imageprep.square_pixels(fax, (300, 300)) == (fax, 300)
    assert imageprep.square_pixels(fax, (204, 196)) == (fax, 204)  # within 10%: left alone
    assert imageprep.square_pixels(fax, None) == (fax, None)
    assert imageprep.square_pixels(fax, (1, 1)) == (fax, None)  # a placeholder tag, not a resolution


def test_scans_fed_sideways_turn_the_paper_and_faxes_keep_their_coarse_rows(lab_pdf):
    sideways = Image.open(io.BytesIO(scan_pdf(lab_pdf, dpi=100, rotate_deg=91.0, noise=0, as_format="png")))
    assert sideways.width > sideways.height  # the Letter page lies on its side
    fax = Image.open(io.BytesIO(scan_pdf(lab_pdf, dpi=200, dpi_y=100, noise=0, as_format="tiff")))
    assert fax.size == (1700, 1100) and tuple(round(v) for v in fax.info["dpi"]) == (200, 100)


@needs_tesseract
def test_standard_resolution_fax_reads_back(lab_pdf, typed_words):
    data = scan_pdf(lab_pdf, dpi=204, dpi_y=98, rotate_deg=0.5, noise=0.005, as_format="tiff")
    page = normalize_image(data).pages[0]
    assert_page_sane(page)
    assert page.height > page.width  # stretched back to the page's shape
    got = " ".join(w.text for w in page.words)
    assert char_error_rate(got, " ".join(t[0] for t in typed_words)) < 0.08
    assert all(k in got.split() for k in ("126", "JANE", "03/14/1961"))
    # "7.9      %" sits in tight columns: read as its own word, or doubted where merged.
    a1c = next(w for w in page.words if "7.9" in w.text)
    assert a1c.text == "7.9" or a1c.conf < 0.5


def _critical_lab(layout: str):
    from golden.ground_truth import ExpectedLab as L, LabCase, Patient

    patient = Patient("Ignatius", "Okonkwo-Baird", "1952-02-17", "IB-660218", sex="M")
    rows = (L("Sodium", "137", "mmol/L", "136-145", "normal"),
            L("Potassium", "6.6", "mmol/L", "3.5-5.1", "critical_high", "HH"),
            L("Creatinine", "1.84", "mg/dL", "0.70-1.30", "high", "H"))
    return LabCase("critical", layout, patient, "2026-09-03", (("Basic Metabolic Panel", rows),))


@needs_tesseract
@pytest.mark.parametrize("layout,scan", [
    ("classic", dict(dpi=300, rotate_deg=92.0, noise=0.004)),  # fed sideways, 2 degrees crooked
    ("two_page", dict(dpi=300, rotate_deg=178.5, noise=0.004)),  # upside down
    ("classic", dict(dpi=200, dpi_y=100, rotate_deg=0.8, noise=0.01)),  # standard-resolution fax
])
def test_the_flag_column_of_a_turned_or_faxed_lab_survives_ocr(layout, scan):
    """The HH printed in a lab's flag column is read wherever the page was turned or how
    coarsely it was faxed: the potassium comes out critical, or doubtful and reviewed,
    never merely high."""
    from extract.lab.extractor import extract_lab
    from golden.lab_layouts import render_lab

    content = normalize_image(scan_pdf(render_lab(_critical_lab(layout)), as_format="tiff",
                                       tiff_compression="lzw", seed=5, **scan))
    facts = {f.structured_value["test_name"]: f for f in extract_lab(content, "t").facts}
    potassium = facts["Potassium"]
    assert potassium.structured_value["value"] == "6.6"
    assert potassium.structured_value["abnormal_flag"] == "critical_high" or potassium.wants_review
    assert facts["Creatinine"].structured_value["abnormal_flag"] == "high"
