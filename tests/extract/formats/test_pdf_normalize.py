"""PDF normalizer: words, rows, page images, and refusals with stable codes."""

from __future__ import annotations

import pymupdf
import pytest

from domain.errors import ExtractionError
from extract.formats import pdf as pdf_mod
from extract.formats.pdf import MAX_PAGES, normalize_pdf
from golden.fixtures import lab_case, render_lab


def _pdf(pages: list[list[tuple[float, float, str]]], **page_kw) -> bytes:
    doc = pymupdf.open()
    for items in pages:
        page = doc.new_page(**page_kw)
        for x, y, text in items:
            page.insert_text((x, y), text, fontsize=10)
    return doc.tobytes()


@pytest.fixture(scope="module")
def classic() -> bytes:
    return render_lab(lab_case("classic_cbc_lipids"))


def test_pages_have_size_words_and_engine(classic):
    content = normalize_pdf(classic)
    assert content.source_kind == "pdf_text" and content.engine == "pymupdf"
    page = content.pages[0]
    assert (page.number, page.width, page.height) == (1, 612, 792)
    texts = [w.text for w in page.words]
    assert "QUENNEVILLE," in texts and "x10E3/uL" in texts
    for w in page.words:
        assert 0 <= w.x0 < w.x1 <= page.width and 0 <= w.y0 < w.y1 <= page.height


def test_words_are_indexed_in_reading_order_and_lines_are_visual_rows(classic):
    page = normalize_pdf(classic).pages[0]
    assert [w.index for w in page.words] == list(range(len(page.words)))
    flat = [w for line in page.lines for w in line.words]
    assert flat == page.words  # lines partition the words in the same order
    for line in page.lines:
        xs = [w.x0 for w in line.words]
        assert xs == sorted(xs)
    tops = [line.y0 for line in page.lines]
    assert tops == sorted(tops)
    # Cells the PDF wrote separately share one visual row.
    wbc = next(line for line in page.lines if line.words[0].text == "WBC")
    assert wbc.text == "WBC 11.8 H x10E3/uL 3.4-10.8"
    # PyMuPDF's own block/line numbers are kept on every word.
    raw = {(round(t[0], 2), round(t[1], 2), t[4]): (t[5], t[6]) for t in pymupdf.open(stream=classic)[0].get_text("words")}
    assert all(raw[(round(w.x0, 2), round(w.y0, 2), w.text)] == (w.block, w.line) for w in page.words)
    assert len({w.block for w in page.words}) > 5


def test_render_writes_png_once_and_reuses_it(classic, tmp_path, monkeypatch):
    content = normalize_pdf(classic, render_dir=tmp_path, dpi=110, render_name="doc")
    path = tmp_path / "doc-p1.png"
    assert content.pages[0].image_path == str(path) and path.exists()
    pix = pymupdf.Pixmap(str(path))
    assert (pix.width, pix.height) == (round(612 * 110 / 72), round(792 * 110 / 72))
    assert not list(tmp_path.glob("*.tmp"))

    def no_render(*a, **k):
        raise AssertionError("a cached page must not be rendered again")

    monkeypatch.setattr(pymupdf.Page, "get_pixmap", no_render)
    again = normalize_pdf(classic, render_dir=tmp_path, render_name="doc")
    assert again.pages[0].image_path == str(path)


def test_default_render_name_is_content_hash(classic, tmp_path):
    import hashlib

    content = normalize_pdf(classic, render_dir=tmp_path)
    assert content.pages[0].image_path.endswith(f"{hashlib.sha256(classic).hexdigest()[:16]}-p1.png")


def test_no_render_dir_means_no_image(classic):
    assert normalize_pdf(classic).pages[0].image_path is None


def test_empty_file():
    with pytest.raises(ExtractionError) as e:
        normalize_pdf(b"")
    assert e.value.code == "empty_file"


@pytest.mark.parametrize("data", [b"this is not a pdf", b"%PDF-1.7\n garbage \x00\x01", b"\x89PNG\r\n\x1a\n0000"])
def test_garbage_is_corrupt(data):
    with pytest.raises(ExtractionError) as e:
        normalize_pdf(data)
    assert e.value.code == "corrupt_file"


def test_encrypted_pdf_is_refused():
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret result 148 mg/dL")
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user", owner_pw="owner")
    with pytest.raises(ExtractionError) as e:
        normalize_pdf(data)
    assert e.value.code == "encrypted_pdf"


def test_owner_password_only_pdf_is_readable():
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Glucose 105 mg/dL")
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner")
    assert [w.text for w in normalize_pdf(data).pages[0].words] == ["Glucose", "105", "mg/dL"]


def test_image_only_pdf_needs_ocr():
    doc = pymupdf.open()
    page = doc.new_page()
    page.draw_rect(pymupdf.Rect(50, 50, 300, 200), color=(0, 0, 0), fill=(0.8, 0.8, 0.8))
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 40, 40), False)
    pix.clear_with(128)
    page.insert_image(pymupdf.Rect(100, 300, 300, 500), pixmap=pix)
    with pytest.raises(ExtractionError) as e:
        normalize_pdf(doc.tobytes())
    assert e.value.code == "needs_ocr"
    assert "OCR" in e.value.message


@pytest.mark.shared_data
def test_real_scanned_pdf_needs_ocr(shared_data):
    data = (shared_data / "scans" / "aws_scanned_2p_image_only_no_text_layer.pdf").read_bytes()
    with pytest.raises(ExtractionError) as e:
        normalize_pdf(data)
    assert e.value.code == "needs_ocr"


def test_too_many_pages():
    data = _pdf([[(72, 72, f"page {i}")] for i in range(MAX_PAGES + 1)])
    with pytest.raises(ExtractionError) as e:
        normalize_pdf(data)
    assert e.value.code == "too_many_pages"


def test_max_pages_is_accepted():
    content = normalize_pdf(_pdf([[(72, 72, "x")]] * 3))
    assert len(content.pages) == 3


def test_damaged_page_is_a_warning_not_a_failure():
    doc = pymupdf.open()
    for text in ("first page ok", "second page damaged", "third page ok"):
        doc.new_page().insert_text((72, 72), text)
    stream = doc[1].get_contents()[0]
    doc.update_stream(stream, b"x\x9c definitely not zlib data", new=False, compress=False)
    doc.xref_set_key(stream, "Filter", "/FlateDecode")
    content = normalize_pdf(doc.tobytes())
    assert [w.text for w in content.pages[0].words] == ["first", "page", "ok"]
    assert [w.text for w in content.pages[2].words] == ["third", "page", "ok"]
    codes = {(w.code, w.page) for w in content.warnings}
    assert ("page_unreadable", 2) in codes
    assert not any(w.page in (1, 3) for w in content.warnings)


def test_page_that_raises_becomes_page_unreadable(monkeypatch):
    data = _pdf([[(72, 72, "one")], [(72, 72, "two")]])
    real = pymupdf.Page.get_text

    def flaky(self, *a, **k):
        if self.number == 1:
            raise RuntimeError("simulated MuPDF failure")
        return real(self, *a, **k)

    monkeypatch.setattr(pymupdf.Page, "get_text", flaky)
    content = normalize_pdf(data)
    assert [w.text for w in content.pages[0].words] == ["one"]
    assert content.pages[1].words == []
    assert [(w.code, w.page) for w in content.warnings] == [("page_unreadable", 2)]


def test_blank_page_between_text_pages_is_flagged():
    content = normalize_pdf(_pdf([[(72, 72, "text")], [], [(72, 72, "more")]]))
    assert [(w.code, w.page) for w in content.warnings] == [("page_without_text", 2)]


def test_rotated_page_words_are_in_visible_coordinates():
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((72, 100), "Glucose 105")
    page.set_rotation(90)
    content = normalize_pdf(doc.tobytes())
    p = content.pages[0]
    assert (p.width, p.height) == (792, 612)
    for w in p.words:
        assert 0 <= w.x0 < w.x1 <= p.width and 0 <= w.y0 < w.y1 <= p.height


def test_unreadable_page_errors_are_mupdf_specific():
    # The per-page guard must not swallow programming errors such as TypeError.
    assert not issubclass(TypeError, pdf_mod.PAGE_ERRORS)
    assert not issubclass(KeyError, pdf_mod.PAGE_ERRORS)
