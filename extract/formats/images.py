"""Images, TIFF fax packets and image-only PDFs -> OCR'd ``NormalizedContent``.

This module knows containers (image formats, TIFF frames, PDF pages, limits); each
page then goes through extract/formats/ocr/page.py (despeckle, deskew, scale, OCR, quarter-turn
check). Boxes are reported in the coordinates of the *corrected* page image, which is
also what gets saved for the review overlay, so a box drawn on the stored picture
lands on its word. Image pages are measured in pixels; PDF pages in points, like a
text layer.

Bad input raises ``ExtractionError`` with a code; a bad *page* becomes a
``ExtractionWarning`` and the remaining pages still come through.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pymupdf
from PIL import Image, UnidentifiedImageError

from domain.content import NormalizedContent, PageContent
from domain.errors import ExtractionError
from domain.models import ExtractionWarning
from domain.policy.facts.certainty import FILE_DAMAGED, PAGE_UNREADABLE
from extract.formats.ocr import imageprep
from domain.limits import DEFAULT_LIMITS, IMAGE_TOO_LARGE, Limits, exceeded
from extract.formats.ocr.engines import OcrEngine, TimedEngine, default_engine
from extract.formats.pdf import PAGE_ERRORS, check_page_count, check_page_size
from extract.formats.ocr.page import PNG_LEVEL, PageResult, ocr_page
from extract.formats.tiff_chain import starting_at, walk

# The defaults; jobs use their settings' ``limits``.
MAX_PAGES = DEFAULT_LIMITS.max_scanned_pages
MAX_FRAME_PIXELS = DEFAULT_LIMITS.max_image_pixels  # decompression-bomb guard, per frame
_FORMATS = {"PNG", "JPEG", "MPO", "WEBP", "TIFF"}
# Only TIFF frames are pages. MPO's second picture is a phone's preview/depth map and
# animated PNG/WEBP frames are animation steps: those formats give one page.
_PAGED_FORMATS = {"TIFF"}


def normalize_image(
    data: bytes,
    *,
    engine: OcrEngine | None = None,
    render_dir: Path | None = None,
    name: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> NormalizedContent:
    """OCR a PNG, JPEG, WEBP or (multi-page) TIFF.

    Saves each corrected page as ``<name>-p<N>.png`` in ``render_dir`` when given;
    ``name`` defaults to a prefix of the bytes' sha256.
    """
    if not data:
        raise ExtractionError("The file is empty.", code="empty_file")
    engine = TimedEngine(engine or default_engine())
    name = name or hashlib.sha256(data).hexdigest()[:16]
    # Pillow's own guard, at our limit: it refuses (at twice the limit) while reading
    # the header, before any pixel is decoded; ``_load_frame`` refuses at the limit.
    Image.MAX_IMAGE_PIXELS = limits.max_image_pixels
    try:
        img = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError:
        raise exceeded(IMAGE_TOO_LARGE, "The image has more pixels than any scanned page "
                       f"(over {2 * limits.max_image_pixels // 1_000_000} megapixels).", "max_image_pixels") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as err:
        # Pillow reports unreadable headers as any of these depending on the plugin.
        raise ExtractionError("The file is not a readable image.", code="corrupt_image") from err
    with img:
        if img.format not in _FORMATS:
            raise ExtractionError(
                f"{img.format} images are not supported; use PNG, JPEG, WEBP or TIFF.",
                code="unsupported_image_format",
            )
        content = NormalizedContent(source_kind="ocr", engine=engine.name, meta={"format": img.format})
        chain = walk(data) if img.format == "TIFF" else None
        if chain and chain.damage:
            content.warnings.append(ExtractionWarning(
                FILE_DAMAGED, f"The file is damaged: {chain.damage}. Pages may be missing or out of order, "
                "so its findings wait for a person to check them against the original."))
        decoded = 0
        for number, frame, problem in _frames(img, limits, data, chain.offsets if chain else []):
            if frame is None:
                # Keep the page slot: page numbers must stay those of the document.
                content.pages.append(PageContent(number=number, width=1.0, height=1.0))
                content.warnings.append(ExtractionWarning(PAGE_UNREADABLE, problem, page=number))
                continue
            decoded += 1
            gray = imageprep.to_grayscale(imageprep.trim_transparent(imageprep.upright(frame)))
            gray, dpi = imageprep.square_pixels(gray, frame.info.get("dpi"))
            result = ocr_page(gray, engine, number=number, dpi=dpi, png=render_dir is not None)
            _save_render(result, render_dir, name)
            content.pages.append(result.page)
            content.warnings.extend(result.warnings)
            content.meta.setdefault("pages", []).append(result.meta)
    if decoded == 0:
        raise ExtractionError("No page of the image could be decoded.", code="corrupt_image")
    content.ocr_ms = round(engine.ms, 2)
    _fail_if_ocr_failed_everywhere(content)
    return content


def ocr_pdf(
    data: bytes,
    *,
    engine: OcrEngine | None = None,
    render_dir: Path | None = None,
    dpi: int = 300,
    name: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> NormalizedContent:
    """OCR a PDF page by page (for PDFs without a usable text layer).

    Pages are rendered at ``dpi`` (at a scanned picture's own resolution if lower, and
    never above ``imageprep.MAX_OCR_PIXELS``), OCR'd like an image, and the boxes
    converted back to PDF points; ``width``/``height`` are those of the corrected page
    in points.
    """
    if not data:
        raise ExtractionError("The file is empty.", code="empty_file")
    engine = TimedEngine(engine or default_engine())
    name = name or hashlib.sha256(data).hexdigest()[:16]
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except pymupdf.FileDataError as err:
        raise ExtractionError("The file is not a readable PDF.", code="corrupt_file") from err
    with doc:
        if doc.needs_pass:
            raise ExtractionError("The PDF is password protected.", code="encrypted_pdf")
        check_page_count(doc.page_count, limits.max_scanned_pages, "max_scanned_pages")
        if doc.page_count == 0:
            raise ExtractionError("The PDF has no pages.", code="empty_file")
        content = NormalizedContent(source_kind="ocr", engine=engine.name, meta={"format": "PDF"})
        for index in range(doc.page_count):
            number = index + 1
            pdf_page = doc.load_page(index)
            rect = pdf_page.rect
            check_page_size(number, rect, limits)
            pymupdf.TOOLS.mupdf_warnings(reset=True)
            try:
                zoom = _render_zoom(pdf_page, dpi)
                pix = pdf_page.get_pixmap(
                    matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csGRAY, alpha=False
                )
            except PAGE_ERRORS as err:  # MuPDF could not draw this page (e.g. its stack overflowed)
                content.pages.append(PageContent(number=number, width=rect.width, height=rect.height))
                content.warnings.append(ExtractionWarning(
                    PAGE_UNREADABLE, f"Page {number} is damaged and could not be drawn ({type(err).__name__}).",
                    page=number))
                continue
            # MuPDF draws what it can of a broken content stream and only warns: a page
            # drawn blank or in part from garbage is damaged, not merely empty.
            if damage := _damage_reported():
                content.warnings.append(ExtractionWarning(
                    PAGE_UNREADABLE, f"Page {number} is damaged: {damage}", page=number))
            gray = Image.frombytes("L", (pix.width, pix.height), pix.samples)
            result = ocr_page(gray, engine, number=number, dpi=round(72 * zoom), png=render_dir is not None)
            _save_render(result, render_dir, name)
            _scale_page(result.page, 1.0 / zoom)
            content.pages.append(result.page)
            content.warnings.extend(result.warnings)
            content.meta.setdefault("pages", []).append(result.meta | {"render_zoom": round(zoom, 4)})
    content.ocr_ms = round(engine.ms, 2)
    _fail_if_ocr_failed_everywhere(content)
    return content


# --- helpers ------------------------------------------------------------------------


def _frames(img: Image.Image, limits: Limits, data: bytes, directories: list[int]):
    """Yield (page number, frame or None, problem) for each page of ``img``. Pillow
    meeting a damaged frame may raise anything (a TIFF cut short raises ``TypeError:
    Missing dimensions``): that page is unreadable, the others are still read. A TIFF
    page Pillow cannot reach (a damaged page before it ends Pillow's walk of the chain)
    is opened from its own directory, found by ``tiff_chain.walk``."""
    if img.format not in _PAGED_FORMATS:
        yield 1, *_load_frame(img, limits.max_image_pixels)
        return
    try:
        count = img.n_frames
    except Exception:  # noqa: BLE001 - a broken IFD chain: read what the first directory gives
        count = 1
    count = max(count, len(directories))
    check_page_count(count, limits.max_scanned_pages, "max_scanned_pages")
    for index in range(count):
        try:
            img.seek(index)
        except Exception as err:  # noqa: BLE001 - see above
            yield index + 1, *_page_on_its_own(data, directories, index, limits, err)
            continue
        yield index + 1, *_load_frame(img, limits.max_image_pixels)


def _page_on_its_own(data: bytes, directories: list[int], index: int, limits: Limits,
                     err: Exception) -> tuple[Image.Image | None, str]:
    copy = starting_at(data, directories[index]) if index < len(directories) else None
    if copy is None:
        return None, f"Page {index + 1} could not be found in the file ({type(err).__name__})."
    try:
        with Image.open(io.BytesIO(copy)) as page:
            return _load_frame(page, limits.max_image_pixels)
    except Exception as exc:  # noqa: BLE001 - see _frames
        return None, f"Page {index + 1} could not be found in the file ({type(exc).__name__})."


def _load_frame(img: Image.Image, max_pixels: int) -> tuple[Image.Image | None, str]:
    width, height = img.size
    if width * height > max_pixels:
        raise exceeded(
            IMAGE_TOO_LARGE,
            f"A page of {width:,} x {height:,} pixels is larger than the {max_pixels / 1e6:g} megapixels "
            f"read per page (a decompression bomb, or a scan at far too high a resolution).",
            "max_image_pixels",
        )
    try:
        frame = img.copy()  # decodes this frame now, so a bad one fails here
        frame.load()
    except Exception as err:  # noqa: BLE001 - see _frames
        return None, f"This page of the file is damaged and could not be decoded ({type(err).__name__})."
    return frame, ""


def _damage_reported() -> str:
    """The first error MuPDF reported (as a warning) since the last reset, or ''."""
    errors = [m for m in pymupdf.TOOLS.mupdf_warnings(reset=True).splitlines() if "error" in m.lower()]
    return errors[0] if errors else ""


def _fail_if_ocr_failed_everywhere(content: NormalizedContent) -> None:
    failed = {w.page for w in content.warnings if w.code in ("ocr_failed", "ocr_timeout")}
    if content.pages and len(failed) == len(content.pages):
        raise ExtractionError("OCR failed on every page.", code="ocr_failed")


def _render_zoom(page: pymupdf.Page, dpi: int) -> float:
    """Pixels per point to render ``page`` at.

    A scanned page is one big picture: rendering it at its own resolution hands the OCR
    step the scanner's pixels unchanged (interpolating up first would smear speckle
    into blobs that despeckling no longer recognises; ``ocr_scale`` enlarges small print
    afterwards, on a cleaned page). Otherwise ``dpi``. Never more than MAX_OCR_PIXELS.
    """
    rect = page.rect
    zoom = dpi / 72.0
    for info in page.get_image_info():
        x0, y0, x1, y1 = info["bbox"]
        covered = max(x1 - x0, 0.0) * max(y1 - y0, 0.0)
        if covered >= 0.5 * rect.width * rect.height:
            native = (info["width"] * info["height"] / covered) ** 0.5
            zoom = min(zoom, max(native, 100 / 72.0))  # but not below 100 dpi
            break
    return min(zoom, (imageprep.MAX_OCR_PIXELS / (rect.width * rect.height)) ** 0.5)


def _scale_page(page: PageContent, factor: float) -> None:
    """Pixels -> points for a rendered PDF page (words are shared with the lines)."""
    page.width *= factor
    page.height *= factor
    for w in page.words:
        w.x0, w.y0, w.x1, w.y1 = w.x0 * factor, w.y0 * factor, w.x1 * factor, w.y1 * factor


def _save_render(result: PageResult, render_dir: Path | None, name: str) -> None:
    """Store the corrected page (the image its boxes refer to) for review overlays."""
    if render_dir is None:
        return
    render_dir = Path(render_dir)
    render_dir.mkdir(parents=True, exist_ok=True)
    path = render_dir / f"{name}-p{result.page.number}.png"
    if result.png is not None:  # encoded while the page was read (extract/formats/ocr/page.py)
        path.write_bytes(result.png)
    else:
        result.image.save(path, "PNG", compress_level=PNG_LEVEL)
    result.page.image_path = str(path)
