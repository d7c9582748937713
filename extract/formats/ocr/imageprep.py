"""Page-image clean-up before OCR: orientation tag, transparency, grayscale, speckle,
uneven lighting, skew, and the scale to OCR at.

Pure functions on PIL images (numpy/OpenCV inside), no OCR engine and no I/O, so each
step can be tested on its own. The corrected image is what the workbench stores and
what reviewers see, so every step that moves pixels happens before OCR, and the OCR
boxes are expressed in the corrected image's coordinates (only the scale for OCR is
undone afterwards, in extract/formats/ocr/page.py).
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np
from PIL import Image, ImageFilter, ImageOps

MAX_SKEW_DEG = 45.0
# How much sharper the projection profile must get for a rotation to be applied.
SMALL_SKEW_GAIN = 1.1  # up to 10 degrees: a crooked scan
LARGE_SKEW_GAIN = 1.3  # beyond: a photo; be surer before turning the page that far
# Below this the rotation's resampling blur costs more than the skew does.
MIN_SKEW_DEG = 0.2
# Median glyph height (px) that Tesseract reads well, and the height below which a page
# is treated as low resolution: 10-11 pt text at 300 dpi has glyphs ~25 px tall, at
# 200 dpi ~16 px.
TARGET_GLYPH_PX = 26.0
SMALL_GLYPH_PX = 17.0
MAX_UPSCALE = 3.0
# Working images are kept below this for OCR (shrunk only while glyphs stay readable,
# enlarged no further): OCR time grows with pixels, accuracy not beyond ~300 dpi.
MAX_OCR_PIXELS = 24_000_000
# Gaussian radius (px) smoothing a page stretched to square pixels.
STRETCH_BLUR = 0.8
# Background (ink closed away) of a scanned page: median at least this white, and
# 5th-95th percentile spread at most this; anything else is treated as a photo.
PAPER_WHITE = 225
PAPER_SPREAD = 50
# Isolated 1-2 px ink dots per megapixel above which a page counts as speckled.
SPECKS_PER_MP = 2000
# On a speckled page, ink blobs up to this size away from any print are noise too.
CLUMP_MAX_PX = 12


def to_grayscale(img: Image.Image) -> Image.Image:
    """8-bit grayscale; transparent areas become white paper, 16-bit scans are scaled
    rather than clipped (Pillow's ``convert("L")`` clips mode ``I``)."""
    if img.mode in ("I;16", "I;16B", "I;16L", "I;16N", "I", "F"):
        arr = np.asarray(img, dtype=np.float64)
        top = 65535.0 if arr.max() > 255 else 255.0
        return Image.fromarray(np.clip(arr * 255.0 / top, 0, 255).astype(np.uint8))
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        rgba = img.convert("RGBA")
        paper = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(paper, rgba).convert("L")
    return img.convert("L")


def trim_transparent(img: Image.Image) -> Image.Image:
    """Cut away fully transparent margins (a photo pasted on a transparent canvas).

    Left in, they become a white frame that dominates the OCR engine's global
    binarisation and can black out a light photo entirely (the insurance-card sample
    gave zero words).
    """
    if img.mode not in ("RGBA", "LA", "PA") and not (img.mode == "P" and "transparency" in img.info):
        return img
    alpha = img.convert("RGBA").getchannel("A")
    box = alpha.getbbox()  # bounding box of alpha > 0
    if box is None or box == (0, 0, *img.size):
        return img
    return img.crop(box)


def flatten_background(gray: Image.Image) -> tuple[Image.Image, bool]:
    """Even out the lighting of a photographed page; (image, whether it changed).

    A scan has white paper everywhere; a photo has grey paper, gradients and a desk,
    which defeat a global threshold. Divide by the background (the page with its ink
    closed away and blurred, estimated at quarter size for speed), which turns paper
    white and keeps ink dark. Flat, white pages are left alone: the division would
    also whiten large dark bars and the light text printed on them.
    """
    arr = np.asarray(gray)
    f = 4
    if min(arr.shape) < 8 * f:
        return gray, False
    small = cv2.resize(arr, (arr.shape[1] // f, arr.shape[0] // f), interpolation=cv2.INTER_AREA)
    k = max(3, round(min(small.shape) / 40)) | 1  # wider than any glyph, far narrower than the page
    bg = cv2.morphologyEx(small, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    lo, med, hi = np.percentile(bg, [5, 50, 95])
    if med >= PAPER_WHITE and hi - lo <= PAPER_SPREAD:
        return gray, False
    bg = cv2.GaussianBlur(bg, (0, 0), k)
    bg = cv2.resize(bg, (arr.shape[1], arr.shape[0]), interpolation=cv2.INTER_LINEAR)
    out = np.clip(arr.astype(np.float32) * 255.0 / np.maximum(bg, 1).astype(np.float32), 0, 255)
    return Image.fromarray(out.astype(np.uint8)), True


def square_pixels(gray: Image.Image, dpi: tuple[float, float] | None) -> tuple[Image.Image, int | None]:
    """A page whose rows and columns were sampled at different resolutions (a
    standard-resolution fax: 204 x 98 dpi) stretched to square pixels at the finer of
    the two; (image, its dpi). Left as it was, every glyph is half as tall as it is
    wide, which Tesseract reads as noise (7% of a fax's lab fields were read)."""
    if not dpi:
        return gray, None
    try:
        dx, dy = float(dpi[0]), float(dpi[1])
    except (TypeError, ValueError, IndexError):
        return gray, None
    if not (50 <= dx <= 1200 and 50 <= dy <= 1200):
        return gray, None
    if abs(dx - dy) <= 0.1 * max(dx, dy):
        return gray, round(dx)
    top = max(dx, dy)
    size = (max(1, round(gray.width * top / dx)), max(1, round(gray.height * top / dy)))
    stretched = gray.resize(size, Image.Resampling.BICUBIC)
    # On a bilevel (black and white) fax a slight blur turns the doubled rows'
    # staircase edges back into strokes: 47% -> 52% of fields on the hardest layouts.
    # A grey scan is smooth already, and blurring it cost 71% -> 90% on the same test.
    if _grey_levels(gray) <= 2:
        stretched = stretched.filter(ImageFilter.GaussianBlur(STRETCH_BLUR))
        stretched.info["bilevel"] = True  # grey now, but its fine detail went at the threshold
    return stretched, round(top)


def is_bilevel(gray: Image.Image) -> bool:
    """A black and white page (a fax, a bilevel scan), or one stretched from such a page:
    its threshold may have erased small marks (a decimal point) whole."""
    if gray.info.get("bilevel"):
        return True
    return _grey_levels(gray.convert("L")) <= 2


def _grey_levels(gray: Image.Image) -> int:
    """How many of the 256 grey levels an 8-bit page uses (Pillow's histogram: a
    fraction of the time numpy's bincount of every pixel takes)."""
    return sum(1 for count in gray.histogram() if count)


def upright(img: Image.Image) -> Image.Image:
    """Apply the EXIF orientation tag (phone photos are stored sideways + a tag)."""
    return ImageOps.exif_transpose(img)


def rotate_quarter(img: Image.Image, degrees: int) -> Image.Image:
    """Lossless counter-clockwise rotation by a multiple of 90 degrees."""
    ops = {
        90: Image.Transpose.ROTATE_90,
        180: Image.Transpose.ROTATE_180,
        270: Image.Transpose.ROTATE_270,
    }
    op = ops.get(degrees % 360)
    return img.transpose(op) if op is not None else img


def despeckle(gray: Image.Image) -> tuple[Image.Image, bool]:
    """Remove salt-and-pepper speckle from a noisy page; (image, whether it changed).

    Only pages that really are speckled are touched (many isolated one-pixel ink dots
    per megapixel): a clean low-resolution page keeps its full stops and i-dots, which
    can be one or two pixels too. On a speckled page, ink specks and paper pin-holes of
    at most two pixels take their 3x3 median value; strokes and form rules, being
    larger components, are untouched (a plain median filter would erase 1-px rules).
    A second pass removes clumps of a few specks that lie away from any print: small
    print makes a full stop as small as such a clump, but a full stop sits next to a
    letter or digit ("7.9"), while noise sits in the white space. Left in, the clumps
    became ":" and "'" tokens between table columns, and, on a page enlarged for its
    small print, thousands of blobs that kept Tesseract busy for two minutes.
    """
    arr = np.asarray(gray)
    if arr.size == 0 or arr.min() == arr.max():
        return gray, False
    ink = _ink(arr)
    _, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    small = _areas_up_to(stats, 2)
    if stats[small, cv2.CC_STAT_AREA].sum() < SPECKS_PER_MP * arr.size / 1e6:
        return gray, False
    out = arr.copy()
    # The paper's pin-holes are found on the other core while the ink's specks are marked.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="despeckle") as side:
        holes = side.submit(_small_components, cv2.bitwise_not(ink), 2)
        mask = small[labels]
        mask |= holes.result()
    out[mask] = cv2.medianBlur(arr, 3)[mask]
    ink = _ink(out)
    # One labelling of the cleaned ink gives both the clumps and the glyph height.
    _, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    clumps = _areas_up_to(stats, CLUMP_MAX_PX)[labels]
    height = _glyph_median(stats) or 12.0
    reach = max(3, round(0.6 * height))  # how near a letter a full stop can be
    print_only = np.where(clumps, 0, ink).astype(np.uint8)
    near_print = cv2.dilate(print_only, np.ones((reach, reach), np.uint8)) > 0
    lonely = clumps & ~near_print
    out[lonely] = cv2.medianBlur(out, 5)[lonely]
    return Image.fromarray(out), True


def _ink(arr: np.ndarray) -> np.ndarray:
    """Dark pixels (Otsu threshold) as 255, paper as 0."""
    _, ink = cv2.threshold(arr, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    return ink


def _small_components(binary: np.ndarray, max_area: int = 2) -> np.ndarray:
    """Mask of the 8-connected foreground components of at most ``max_area`` pixels."""
    _, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    return _areas_up_to(stats, max_area)[labels]


def _areas_up_to(stats: np.ndarray, max_area: int) -> np.ndarray:
    """Per label of a ``connectedComponentsWithStats`` labelling: at most ``max_area``
    pixels (label 0, the background, never)."""
    small = stats[:, cv2.CC_STAT_AREA] <= max_area
    small[0] = False
    return small


def estimate_skew(gray: Image.Image) -> float:
    """Skew of the text lines in degrees, counter-clockwise positive, 0.0 if unsure.

    Projection-profile search: project the ink onto the vertical axis along lines of
    slope tan(a); when a matches the skew, text lines and form rules collapse into
    sharp peaks. Chosen over minAreaRect on the ink because forms, logos and photo
    borders make one bounding rectangle meaningless, while the profile is dominated by
    the many parallel text lines. Searches +-45 degrees (a phone photo of a form lying
    on a desk is easily 20 degrees off); quarter turns are the OCR engine's business.
    """
    small = gray.copy()
    small.thumbnail((2000, 2000))
    # A 3x3 median removes leftover speckle, which would flatten the profile.
    arr = cv2.medianBlur(np.asarray(small), 3)
    if arr.size == 0 or arr.min() == arr.max():
        return 0.0
    _, ink = cv2.threshold(arr, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    # The ink pixels row by row, as numpy's nonzero lists them, in under half its time.
    found = cv2.findNonZero(ink)
    points = found.reshape(-1, 2) if found is not None else np.empty((0, 2), np.int32)
    xs, ys = points[:, 0], points[:, 1]
    # Blank pages have no ink; mostly-dark images (photo backgrounds) have no lines;
    # a lone word ("Page1") is too short for its baseline to define an angle.
    if len(ys) < 1000 or len(ys) > 0.4 * arr.size:
        return 0.0
    if np.percentile(xs, 95) - np.percentile(xs, 5) < 0.15 * arr.shape[1]:
        return 0.0
    rng = np.random.default_rng(0)
    pts = np.column_stack([ys, xs - xs.mean()]).astype(np.float64)
    if len(pts) > 300_000:
        pts = pts[rng.choice(len(pts), 300_000, replace=False)]
    coarse_pts = pts[rng.choice(len(pts), 60_000, replace=False)] if len(pts) > 60_000 else pts

    def score(angle: float, p: np.ndarray = pts) -> float:
        # Postl's criterion: squared differences of neighbouring bins reward sharp
        # line edges and ignore any uniform background.
        proj = p[:, 0] + p[:, 1] * math.tan(math.radians(angle))
        counts = np.bincount(np.round(proj - proj.min()).astype(np.int64)).astype(np.float64)
        return float(np.sum(np.diff(counts) ** 2))

    best = max(np.arange(-MAX_SKEW_DEG, MAX_SKEW_DEG + 1e-9, 1.0), key=lambda a: score(a, coarse_pts))
    if abs(best) >= MAX_SKEW_DEG:
        return 0.0  # optimum at the edge of the range: no dominant line direction
    for step, half in ((0.2, 1.0), (0.05, 0.2)):
        best = max(np.arange(best - half, best + half + 1e-9, step), key=score)
    # A flat profile (pictures, handwriting) has no real optimum: require a clear
    # gain over leaving the page alone, a larger one for a large turn.
    gain = score(best) / max(score(0.0), 1.0)
    if gain < (SMALL_SKEW_GAIN if abs(best) <= 10 else LARGE_SKEW_GAIN):
        return 0.0
    return round(float(best), 2)


def deskew(gray: Image.Image, angle: float) -> Image.Image:
    """Rotate by ``-angle`` (undoing a counter-clockwise skew), white fill, canvas grown
    so no corner of the page is cut off."""
    if abs(angle) < MIN_SKEW_DEG:
        return gray
    return rotate_in_bands(gray, -angle)


# Horizontal bands a page is turned in at once (one thread each; Pillow lets go of the
# GIL while it resamples): the turn was a quarter of the clean-up before OCR.
ROTATE_BANDS = max(1, min(4, os.cpu_count() or 1))


def rotate_in_bands(gray: Image.Image, degrees: float, bands: int = ROTATE_BANDS) -> Image.Image:
    """``gray.rotate(degrees, BICUBIC, expand=True, fillcolor=255)``, pixel for pixel,
    with each band of output rows resampled on its own thread.

    An affine resampling maps each output pixel on its own, so a band is the same
    transform with its origin moved down to the band's first row."""
    size, (a, b, c, d, e, f) = _rotation(gray.size, degrees)
    width, height = size
    bands = max(1, min(bands, height // 64))
    edges = [round(height * i / bands) for i in range(bands + 1)]

    def band(top: int, bottom: int) -> Image.Image:
        return gray.transform((width, bottom - top), Image.Transform.AFFINE, (a, b, c + b * top, d, e, f + e * top),
                              Image.Resampling.BICUBIC, fillcolor=255)

    if bands == 1:
        return band(0, height)
    out = Image.new("L", size, 255)
    with ThreadPoolExecutor(max_workers=bands - 1, thread_name_prefix="rotate") as pool:
        later = [pool.submit(band, top, bottom) for top, bottom in zip(edges[1:-1], edges[2:])]
        out.paste(band(edges[0], edges[1]), (0, 0))
        for top, part in zip(edges[1:-1], later):
            out.paste(part.result(), (0, top))
    return out


def _rotation(size: tuple[int, int], degrees: float) -> tuple[tuple[int, int], list[float]]:
    """The grown canvas and the output-to-input affine coefficients of Pillow's
    ``Image.rotate(degrees, expand=True)`` about the page centre (worked out as Pillow
    does, so the pixels match; tests/extract/formats/test_images.py compares them)."""
    w, h = size
    rad = -math.radians(degrees % 360.0)
    m = [round(math.cos(rad), 15), round(math.sin(rad), 15), 0.0,
         round(-math.sin(rad), 15), round(math.cos(rad), 15), 0.0]

    def apply(x: float, y: float) -> tuple[float, float]:
        return m[0] * x + m[1] * y + m[2], m[3] * x + m[4] * y + m[5]

    m[2], m[5] = apply(-w / 2, -h / 2)
    m[2] += w / 2
    m[5] += h / 2
    corners = [apply(x, y) for x, y in ((0, 0), (w, 0), (w, h), (0, h))]
    nw = math.ceil(max(x for x, _ in corners)) - math.floor(min(x for x, _ in corners))
    nh = math.ceil(max(y for _, y in corners)) - math.floor(min(y for _, y in corners))
    m[2], m[5] = apply(-(nw - w) / 2.0, -(nh - h) / 2.0)
    return (nw, nh), m


def glyph_height(gray: Image.Image) -> float | None:
    """Median height in px of character-sized ink blobs, or None if too few to tell."""
    arr = np.asarray(gray)
    if arr.size == 0 or arr.min() == arr.max():
        return None
    _, ink = cv2.threshold(arr, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    _, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    return _glyph_median(stats)


def _glyph_median(stats: np.ndarray) -> float | None:
    """``glyph_height`` from the page's ink labelling (``connectedComponentsWithStats``)."""
    w, h = stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT]
    area = stats[1:, cv2.CC_STAT_AREA]
    # Letters: not specks, not rules or boxes, reasonably filled.
    glyphs = (h >= 5) & (h <= 200) & (w <= 3 * h) & (area >= 0.15 * w * h)
    if glyphs.sum() < 30:
        return None
    return float(np.median(h[glyphs]))


def ocr_scale(gray: Image.Image) -> float:
    """Factor to resize the page by before OCR (the stored page keeps its size).

    Small print (under ~200 dpi equivalent, judged from the glyphs themselves rather
    than the often-wrong dpi tag) is enlarged towards ~300 dpi; very large photos are
    shrunk as long as their glyphs stay comfortably above that size.
    """
    return scale_for_glyphs(glyph_height(gray), gray.size)


def scale_for_glyphs(height: float | None, size: tuple[int, int]) -> float:
    """``ocr_scale`` of a page ``size`` pixels large whose glyph height is known."""
    budget = math.sqrt(MAX_OCR_PIXELS / (size[0] * size[1]))  # scale hitting the cap
    if height is not None and height < SMALL_GLYPH_PX:
        return max(1.0, min(TARGET_GLYPH_PX / height, MAX_UPSCALE, budget))
    if budget < 1.0:
        floor = TARGET_GLYPH_PX / height if height else 0.0  # keep glyphs readable
        return min(1.0, max(budget, floor))
    return 1.0


# Dotted leaders ("WBC ........ 11.8"): at least this many point-sized blobs in a row
# on one baseline, evenly spaced (gaps within this share of their mean) and this close.
LEADER_MIN_DOTS = 4
LEADER_MAX_DOT = 0.5  # of a glyph height, in width and height (glyph: the median blob, ~x-height)
LEADER_GAP = (0.15, 4.6)  # glyph heights from one dot's centre to the next (a fax drops some)
LEADER_SPACING_SPREAD = 0.3  # each gap within this of a whole number of the usual gap


def erase_leaders(gray: Image.Image, glyph: float | None) -> tuple[Image.Image, int]:
    """A copy of the page with its dotted leaders painted white, for the OCR engine only
    (the stored page keeps them); (image, number of leaders).

    Read as text, a leader becomes words: ". . . ." turned into "0% 0 0s ten to's" on a
    standard-resolution fax, whose "0" was then taken for the value, and a run of dots
    can fuse with the value beside it. A leader is a row of many evenly spaced dots on
    one baseline; a decimal point is one dot between digits, never a run, so it stays.
    """
    if not glyph:
        return gray, 0
    arr = np.asarray(gray)
    _, ink = cv2.threshold(arr, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    x, y, w, h, area = (stats[1:n, i] for i in range(5))
    small = (w <= LEADER_MAX_DOT * glyph) & (h <= LEADER_MAX_DOT * glyph) & (area >= 0.3 * w * h) & (area >= 2)
    # A leader's dots stand alone: no stroke of a letter above or below them (a thin
    # typewriter face broken up by a fax leaves the feet of its letters as a row of
    # evenly spaced dots too), and no digit right beside them (the points of a row of
    # decimals in evenly spaced columns).
    big = np.concatenate([[False], ~small])[labels]  # ink of every blob that is no dot
    integral = cv2.integral(big.astype(np.uint8))
    reach = max(2, round(0.8 * glyph))

    side = max(1, round(0.3 * glyph))  # a decimal point has digits this close beside it

    def alone(i: int) -> bool:
        x0, x1 = max(0, x[i] - side), min(ink.shape[1], x[i] + w[i] + side)
        y0, y1 = max(0, y[i] - reach), min(ink.shape[0], y[i] + h[i] + reach // 2)
        return integral[y1, x1] - integral[y0, x1] - integral[y1, x0] + integral[y0, x0] == 0

    idx = np.array([i for i in np.nonzero(small)[0] if alone(i)], dtype=np.int64)
    if len(idx) < LEADER_MIN_DOTS:
        return gray, 0
    cx, cy = x[idx] + w[idx] / 2.0, y[idx] + h[idx] - 1.0  # centre and bottom (the baseline)
    band = max(1.0, 0.2 * glyph)
    order = np.argsort(cx, kind="stable")  # each leader is followed from its first dot
    used = np.zeros(len(idx), bool)
    by_band: dict[int, list[int]] = {}
    for k in order:
        by_band.setdefault(int(round(cy[k] / band)), []).append(k)
    runs: list[list[int]] = []
    for k in order:
        if used[k]:
            continue
        run, taken = [k], {k}
        while True:
            last = run[-1]
            b = int(round(cy[last] / band))
            # Dots of one leader are printed alike: a speck of another size is no part of it.
            nxt = [j for bb in (b - 1, b, b + 1) for j in by_band.get(bb, ())
                   if not used[j] and j not in taken
                   and LEADER_GAP[0] * glyph <= cx[j] - cx[last] <= LEADER_GAP[1] * glyph
                   and 0.5 <= area[idx[j]] / area[idx[run[0]]] <= 2.0]
            if not nxt:
                break
            j = min(nxt, key=lambda j: cx[j])
            run.append(j)
            taken.add(j)
        if len(run) >= LEADER_MIN_DOTS:
            steps = np.diff(cx[run]) / np.median(np.diff(cx[run]))
            if np.all(np.abs(steps - np.round(steps)) <= LEADER_SPACING_SPREAD) and np.all(np.round(steps) >= 1):
                runs.append(run)
                used[run] = True
    if not runs:
        return gray, 0
    out = arr.copy()
    for run in runs:
        for k in run:
            i = idx[k]
            out[max(0, y[i] - 1):y[i] + h[i] + 1, max(0, x[i] - 1):x[i] + w[i] + 1] = 255
    return Image.fromarray(out), len(runs)
