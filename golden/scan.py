"""Turn typed PDFs into realistic "scans" for tests and evals.

A scan here is what a flatbed or fax gives back: each page rendered to pixels, skewed a
little, blurred a little, speckled, and stored without any text layer. Everything is
driven by ``seed`` so a golden case produces the same bytes on every run.
"""

from __future__ import annotations

import io
from typing import Literal, Sequence

import numpy as np
import pymupdf
from PIL import Image, ImageFilter

from domain.policy.facts.ocr_readings import edit_distance

ScanFormat = Literal["pdf", "tiff", "png"]
TiffCompression = Literal["group4", "lzw"]


def typed_pdf(
    lines: Sequence[str],
    *,
    fontsize: float = 11,
    origin: tuple[float, float] = (72, 90),
    leading: float = 1.8,
    page_size: tuple[float, float] = (612, 792),
    pages: int = 1,
) -> bytes:
    """A plain typed Letter-size PDF with ``lines`` on every page (Helvetica).

    The text layer is the ground truth a scan of it is compared with.
    """
    doc = pymupdf.open()
    for _ in range(pages):
        page = doc.new_page(width=page_size[0], height=page_size[1])
        x, y = origin
        for text in lines:
            page.insert_text((x, y), text, fontsize=fontsize, fontname="helv")
            y += fontsize * leading
    return doc.tobytes(garbage=3, deflate=True, no_new_id=True)


def scan_pdf(
    pdf_bytes: bytes,
    *,
    dpi: int = 200,
    rotate_deg: float = 1.5,
    noise: float = 0.03,
    seed: int = 0,
    as_format: ScanFormat = "pdf",
    tiff_compression: TiffCompression = "group4",
    dpi_y: int | None = None,
) -> bytes:
    """Rasterise every page of ``pdf_bytes`` as a degraded scan.

    ``rotate_deg`` turns the content counter-clockwise on the paper (PIL convention),
    like a sheet fed slightly crooked; the paper size stays the same. ``noise`` is the
    fraction of pixels hit by salt-and-pepper speckle; a mild gaussian grain and a slight
    blur are always added. ``as_format`` picks an image-only PDF, a multi-page TIFF
    (``tiff_compression`` group4 = bilevel fax, or lzw = grayscale) or a PNG of page 1.

    A ``rotate_deg`` beyond 45 degrees is a sheet fed sideways or upside down: the
    nearest quarter turn turns the whole paper (the picture's width and height swap),
    the rest skews the content on it. ``dpi_y`` below ``dpi`` is a standard-resolution
    fax (204 x 98 dpi): rows are sampled that much more coarsely, and the file says so.
    """
    quarter = round(rotate_deg / 90.0) % 4 * 90
    skew = rotate_deg - round(rotate_deg / 90.0) * 90
    dpi_y = dpi_y or dpi
    with pymupdf.open(stream=pdf_bytes, filetype="pdf") as doc:
        sizes = [(page.rect.width, page.rect.height) for page in doc]
        pages = [
            _turn(_degrade(_squash(_render(page, dpi), dpi_y / dpi), skew, noise,
                           np.random.default_rng([seed, i])), quarter)
            for i, page in enumerate(doc)
        ]
    if quarter in (90, 270):
        sizes = [(h, w) for w, h in sizes]
    if as_format == "png":
        return _save(pages[0], "PNG", dpi=(dpi, dpi_y))
    if as_format == "tiff":
        if tiff_compression == "group4":
            # A fax is bilevel: threshold the grey scan, keeping the speckle.
            frames = [p.point(lambda v: 255 if v > 150 else 0).convert("1") for p in pages]
        else:
            frames = pages
        return _save(
            frames[0],
            "TIFF",
            save_all=True,
            append_images=frames[1:],
            compression="group4" if tiff_compression == "group4" else "tiff_lzw",
            dpi=(dpi, dpi_y),
        )
    if as_format == "pdf":
        return _image_pdf(pages, sizes)
    raise ValueError(f"unknown scan format {as_format!r}")


def _render(page: pymupdf.Page, dpi: int) -> Image.Image:
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    return Image.frombytes("L", (pix.width, pix.height), pix.samples)


def _squash(img: Image.Image, factor: float) -> Image.Image:
    """Fewer rows (a fax's coarse vertical resolution), averaged as a scanner would."""
    if factor >= 1.0:
        return img
    return img.resize((img.width, max(1, round(img.height * factor))), Image.Resampling.BOX)


def _turn(img: Image.Image, quarter: int) -> Image.Image:
    """The paper fed turned counter-clockwise by ``quarter`` degrees (0/90/180/270)."""
    ops = {90: Image.Transpose.ROTATE_90, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_270}
    return img.transpose(ops[quarter]) if quarter in ops else img


def _degrade(
    img: Image.Image, rotate_deg: float, noise: float, rng: np.random.Generator
) -> Image.Image:
    if rotate_deg:
        img = img.rotate(rotate_deg, resample=Image.Resampling.BICUBIC, fillcolor=255)
    img = img.filter(ImageFilter.GaussianBlur(radius=0.6))
    px = np.asarray(img, dtype=np.float32)
    px = px + rng.normal(0.0, 8.0, px.shape)  # sensor grain
    if noise > 0:
        hit = rng.random(px.shape)
        px[hit < noise / 2] = 0.0  # pepper
        px[hit > 1 - noise / 2] = 255.0  # salt
    return Image.fromarray(np.clip(px, 0, 255).astype(np.uint8))


def _save(img: Image.Image, fmt: str, **kwargs) -> bytes:
    buf = io.BytesIO()
    img.save(buf, fmt, **kwargs)
    return buf.getvalue()


# zlib effort when the PDF is written: the default (0, "best") spent ~1.5 s a 300 dpi page
# squeezing speckle, for 8% smaller files than this. The pixels are the same either way.
_PDF_COMPRESSION_EFFORT = 20


def _image_pdf(pages: list[Image.Image], sizes: list[tuple[float, float]]) -> bytes:
    """An image-only PDF: one full-page picture per page, no text layer. The grey pixels
    go in as they are (a PNG made here was only decoded again by PyMuPDF)."""
    out = pymupdf.open()
    for img, (width, height) in zip(pages, sizes):
        page = out.new_page(width=width, height=height)
        gray = img.convert("L")
        page.insert_image(page.rect, pixmap=pymupdf.Pixmap(pymupdf.csGRAY, gray.width, gray.height,
                                                           gray.tobytes(), False))
    return out.tobytes(garbage=3, deflate=True, no_new_id=True, compression_effort=_PDF_COMPRESSION_EFFORT)


def char_error_rate(got: str, want: str) -> float:
    """Levenshtein distance between OCR output and the typed text, per typed character."""
    return edit_distance(got, want) / max(len(want), 1)
