"""One page image -> corrected page image + words + lines.

Shared by every raster source (PNG/JPEG/WEBP/TIFF frames, rendered PDF pages). The
order of work is: despeckle, flatten a photo's lighting, deskew, scale to a readable
glyph size, OCR; then, only if the result does not read like upright text, ask the
engine which way the page is turned and try that quarter turn, keeping whichever
reading is better. Checking the OCR result first costs nothing on the usual upright
page (Tesseract's OSD alone takes ~0.5 s a page) and guards against OSD's confident
mistakes on sparse forms. Finally the words are shaped like a text layer's: noise
tokens dropped, each line's words given the line's height, one line per row.
"""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from PIL import Image

from domain.content import Line, PageContent, Word
from domain.errors import ExtractionError
from domain.models import ExtractionWarning
from extract.formats.ocr import cells, imageprep, points
from extract.formats.ocr.engines import OcrEngine
from extract.formats.ocr.upright import reads_upright

# A quarter-turned reading must beat the unturned one by this factor to be kept.
TURN_MIN_GAIN = 1.2
# Tokens made only of rule-like marks read below this confidence are form rules, box
# edges and speckle ("—_", "|"), not text: dropped. Symbols that carry meaning on a
# lab ("%", "<", ">", "*", arrows) are never noise, however doubtful.
NOISE_MAX_CONF = 0.5
NOISE_CHARS = frozenset("-_—–|=~.,:;'\"`‘’“”·°^()[]{}/\\")


@dataclass
class PageResult:
    page: PageContent  # boxes in pixels of ``image``
    image: Image.Image  # the corrected page: what to store and show under the boxes
    warnings: list[ExtractionWarning] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    png: bytes | None = None  # ``image`` as PNG (PNG_LEVEL), when asked for


@dataclass
class _Reading:
    image: Image.Image
    words: list[Word]
    rotation: int
    skew: float
    scale: float
    warnings: list[ExtractionWarning]
    ruled: bool = False
    leaders: int = 0
    png: bytes | None = None


# zlib level of the stored page PNG: the picture under the review overlay, lossless at
# any level; 3 is ~3x faster to write than the default 6 for ~10% more bytes.
PNG_LEVEL = 3


def ocr_page(
    gray: Image.Image, engine: OcrEngine, *, number: int, dpi: int | None = None, png: bool = False
) -> PageResult:
    """Correct and OCR one 8-bit grayscale page image; ``png``: also the corrected page
    as PNG bytes (``PageResult.png``), encoded while the engine reads the page.

    Work that needs no words (the PNG, the ruling lines noted in ``meta``) is done on a
    worker thread while the engine reads: Tesseract runs as a subprocess, so this
    process would only wait. The thread ends with this call."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ocr-page") as side:
        return _ocr_page(gray, engine, number, dpi, side if png else None, side)


def _ocr_page(gray: Image.Image, engine: OcrEngine, number: int, dpi: int | None,
              png: ThreadPoolExecutor | None, side: ThreadPoolExecutor) -> PageResult:
    bilevel = imageprep.is_bilevel(gray)
    clean, despeckled = imageprep.despeckle(gray)
    clean, flattened = imageprep.flatten_background(clean)
    reading = _read(clean, engine, 0, number, dpi, bilevel, side, png)
    tried_turn = False
    if not reads_upright(reading.words, engine.upright_min_conf):
        turn = engine.detect_rotation(clean)
        if turn:
            tried_turn = True
            turned = _read(clean, engine, turn, number, dpi, bilevel, side, png)
            if text_score(turned.words) > TURN_MIN_GAIN * text_score(reading.words):
                reading = turned
    img = reading.image
    words = level_lines(split_stacked_lines([w for w in reading.words if not _is_noise(w)]))
    page = PageContent(number=number, width=float(img.width), height=float(img.height))
    page.lines, page.words = group_lines(words)
    warnings = list(reading.warnings)
    if not page.words and not warnings:
        warnings.append(
            ExtractionWarning("no_text_on_page", "No text was recognised on this page.", page=number)
        )
    meta = {
        "page": number,
        "despeckled": despeckled,
        "flattened": flattened,
        "rotation": reading.rotation,
        "turn_tried": tried_turn,
        "deskew_deg": reading.skew,
        "ocr_scale": round(reading.scale, 3),
        "ruled_table": reading.ruled,
        "leaders_erased": reading.leaders,
        "noise_words_dropped": len(reading.words) - len(words),
        "size": [img.width, img.height],
    }
    return PageResult(page=page, image=img, warnings=warnings, meta=meta, png=reading.png)


def _read(
    clean: Image.Image, engine: OcrEngine, rotation: int, number: int, dpi: int | None, bilevel: bool,
    side: ThreadPoolExecutor, png: ThreadPoolExecutor | None = None,
) -> _Reading:
    img = imageprep.rotate_quarter(clean, rotation)
    skew = imageprep.estimate_skew(img)
    if abs(skew) < imageprep.MIN_SKEW_DEG:
        skew = 0.0
    img = imageprep.deskew(img, skew)
    encoded = png.submit(_png, img) if png is not None else None  # img is this reading's page now
    height = imageprep.glyph_height(img)
    scale = imageprep.scale_for_glyphs(height, img.size)
    if abs(scale - 1.0) < 0.05:
        scale, work = 1.0, img
    else:
        size = (max(1, round(img.width * scale)), max(1, round(img.height * scale)))
        work = img.resize(size, Image.Resampling.LANCZOS if scale < 1 else Image.Resampling.BICUBIC)
    # The page's ruling lines are noted, not erased: painting them out of the engine's
    # copy helped a boxed table but ate letters standing on a real form's lines. Cells
    # the page pass skips are read from the ink left unread (extract/formats/ocr/cells.py).
    glyph = height if work is img else imageprep.glyph_height(work) if bilevel else ...  # ...: measured aside
    # The engine needs the same of the image it reads (cells.page_ink_of: worked out once).
    ruled = side.submit(_ruled, work, glyph)
    warnings: list[ExtractionWarning] = []
    # Dotted leaders are painted out of the engine's copy only (extract/formats/ocr/imageprep.py),
    # on a fax or other bilevel page, whose leaders break up into specks the engine reads as
    # words. On grey photos of forms the erasing moved the engine's reading of the checkboxes
    # beside the leaders ("Yes" -> "@Yes"): their leaders stay.
    leaders = 0
    if bilevel:
        work, leaders = imageprep.erase_leaders(work, glyph)
    if dpi:  # tells Tesseract the resolution instead of letting it guess
        work.info["dpi"] = (dpi * scale, dpi * scale)
    try:
        words = engine.recognize(work)
        # Points a low-resolution page's ink shows and the engine dropped ("0" "91").
        words = points.restore_points(work, words, bilevel=bilevel)
    except ExtractionError as err:  # the engine failed on this page only
        words = []
        warnings.append(ExtractionWarning(err.code, err.message, page=number))
    # Always clamp: detectors pad their boxes and can overshoot the page edge. A box
    # left with no area was entirely off the page: not a citable word.
    words = [_rescale(w, 1.0 / scale, img.width, img.height) for w in words]
    words = [w for w in words if w.x1 > w.x0 and w.y1 > w.y0]
    return _Reading(img, words, rotation, skew, scale, warnings, ruled=ruled.result(), leaders=leaders,
                    png=encoded.result() if encoded is not None else None)


def _ruled(work: Image.Image, glyph) -> bool:
    """Whether the page is a ruled table (``cells.Rules.ruled``), for ``meta``."""
    rules = cells.page_ink_of(work, glyph).rules
    return bool(rules and rules.ruled)


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "PNG", compress_level=PNG_LEVEL)
    return buf.getvalue()


def split_stacked_lines(words: list[Word]) -> list[Word]:
    """Give each row of an engine "line" that is really a column its own line number.

    Tesseract sometimes takes a narrow column (a flag column's "H" over "H") for one
    text line: levelled to that line's height, both flags would land in one row and
    the row above would lose its flag. Words of one engine line whose middles lie
    more than half a word height apart are on different rows.
    """
    by_line: dict[int, list[Word]] = {}
    for w in words:
        by_line.setdefault(w.line, []).append(w)
    next_line = max((w.line for w in words), default=-1) + 1
    for line_words in by_line.values():
        if len(line_words) < 2:
            continue
        line_words.sort(key=_middle)
        height = sorted(w.y1 - w.y0 for w in line_words)[len(line_words) // 2]
        current, prev = line_words[0].line, _middle(line_words[0])
        for w in line_words[1:]:
            if _middle(w) - prev > 0.5 * height:
                current, next_line = next_line, next_line + 1
            w.line = current
            prev = _middle(w)
    return words


def _middle(w: Word) -> float:
    return (w.y0 + w.y1) / 2


def level_lines(words: list[Word]) -> list[Word]:
    """Give the words of each engine line the line's full height.

    OCR boxes hug the ink, so "Sunrise" and "Valley" on one line differ in height and
    centre by a descender, and a lone "-" is a sliver. A PDF text layer gives every
    word of a line the same top and bottom (the font's), and the row grouping and
    gap rules downstream (domain.policy.facts.citations.reading_rows, extract/layout.py) are
    built on that. So each word keeps its tight left and right edges and takes the
    top and bottom of all the ink on its line.
    """
    extent: dict[int, tuple[float, float]] = {}
    for w in words:
        top, bottom = extent.get(w.line, (w.y0, w.y1))
        extent[w.line] = (min(top, w.y0), max(bottom, w.y1))
    for w in words:
        w.y0, w.y1 = extent[w.line]
    return words


def _is_noise(w: Word) -> bool:
    return (w.conf or 0.0) < NOISE_MAX_CONF and all(ch in NOISE_CHARS for ch in w.text)


def text_score(words: list[Word]) -> float:
    """Confidence-weighted characters of horizontal, alphanumeric words."""
    score = 0.0
    for w in words:
        horizontal = len(w.text) < 3 or (w.x1 - w.x0) >= (w.y1 - w.y0)
        if horizontal and any(ch.isalnum() for ch in w.text):
            score += (w.conf or 0.0) * len(w.text)
    return score


def group_lines(words: list[Word]) -> tuple[list[Line], list[Word]]:
    """Lines in reading order and the page's words in the same order.

    A line is a row of the page, as in the text layer of a typed PDF (extract/formats/pdf.py):
    engine lines whose middles fall inside the same band (table cells the engine read
    as separate lines, a label and its value, a header it read as "Component ...
    Units" plus "Your Value Standard Range" in between) become one line, its words
    left to right; rows are read top to bottom. ``Word.line`` becomes the index into
    the returned lines, ``Word.index`` the index into the returned words.
    """
    by_line: dict[int, list[Word]] = {}
    for w in words:
        by_line.setdefault(w.line, []).append(w)
    lines = sorted((Line(ws) for ws in by_line.values()), key=lambda ln: (ln.y0 + ln.y1) / 2)
    rows: list[list[Line]] = []
    for ln in lines:
        if rows and rows[-1][0].y0 <= (ln.y0 + ln.y1) / 2 <= rows[-1][0].y1:
            rows[-1].append(ln)
        else:
            rows.append([ln])
    ordered = [Line(sorted((w for ln in row for w in ln.words), key=lambda w: w.x0)) for row in rows]
    flat: list[Word] = []
    for line_no, ln in enumerate(ordered):
        for w in ln.words:
            w.line = line_no
            w.index = len(flat)
            flat.append(w)
    return ordered, flat


def _rescale(w: Word, factor: float, width: float, height: float) -> Word:
    """Map a box from the OCR working image back onto the stored page, inside it."""
    w.x0 = min(max(w.x0 * factor, 0.0), width)
    w.x1 = min(max(w.x1 * factor, w.x0), width)
    w.y0 = min(max(w.y0 * factor, 0.0), height)
    w.y1 = min(max(w.y1 * factor, w.y0), height)
    return w
