"""RapidOCR (PaddleOCR models on onnxruntime): the fallback when Tesseract is absent.

RapidOCR detects text *lines* (quadrilaterals) and recognises each. Two things need
care to make its output look like a text layer:

* Tokens. The recogniser often drops the space between tokens ("7.9%" for a table
  row "7.9      %"), so the line is re-split where the per-character boxes it reports
  (``return_single_char_box``) leave a gap as wide as a column gap. Where those boxes can't
  be matched to the text, the line box is split proportionally to the characters'
  offsets in the line text (close for proportional fonts, exact for monospaced ones).
* Orientation. Its angle classifier only knows 0/180 per line crop; page quarter turns
  are judged from the shape of the detected lines plus a read-both-ways vote.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version as dist_version

import numpy as np
from PIL import Image

from domain.content import Word

# A gap between two character boxes wider than this share of the line height is a
# space the recogniser left out. Its character boxes are coarse (one per decoder
# step): gaps inside words measured up to 0.38 line heights, ordinary spaces 0.1-0.31,
# so only the wide gaps between table columns (0.77-1.66) can be told apart; a
# dropped single space ("DOB:03/14/1961") stays dropped.
SPACE_GAP = 0.6
_TOKEN = re.compile(r"\S+")
# RapidOCR keeps per-call options on the instance for later calls: pass all of them,
# every time (a detection-only call would otherwise leave recognition switched off).
# Its line classifier stays off: it would silently read an upside-down page's lines
# right way up, leaving the page itself (boxes, reading order) upside down, where an
# honest low-confidence reading lets the page-level check turn the page instead.
_NO_BOXES = dict(return_word_box=False, return_single_char_box=False)
_FULL = dict(use_det=True, use_cls=False, use_rec=True, return_word_box=True,
             return_single_char_box=True)
_DETECT_ONLY = dict(use_det=True, use_cls=False, use_rec=False, **_NO_BOXES)
_READ_ONLY = dict(use_det=False, use_cls=False, use_rec=True, **_NO_BOXES)


class RapidOcrEngine:
    """``name`` e.g. "rapidocr 3.10.0"; ``recognize`` and ``detect_rotation`` as in
    ``extract.formats.ocr.engines.OcrEngine``."""

    def __init__(self):
        from rapidocr import RapidOCR  # heavy import: only when this engine is chosen

        self.version = dist_version("rapidocr")
        self.name = f"rapidocr {self.version}"
        # Upside-down pages read at 0.65-0.69 with its line classifier off, upright typed
        # pages at 0.85-0.97: a high bar (extract/formats/ocr/upright.py).
        self.upright_min_conf = 0.7
        # The default config names the models bundled in the wheel; nothing is fetched.
        # Log level error: RapidOCR's "detection result is empty" is no warning here.
        # One onnxruntime thread, as Tesseract runs with one OpenMP thread: on a busy
        # 2-core machine its spinning worker threads made each call ~2x slower.
        self._ocr = RapidOCR(params={
            "Global.log_level": "error",
            "EngineConfig.onnxruntime.intra_op_num_threads": 1,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
        })
        # RapidOCR.__call__ stores per-call options on the instance: not re-entrant.
        self._lock = threading.Lock()

    def recognize(self, image: Image.Image) -> list[Word]:
        with self._lock:
            out = self._ocr(np.asarray(image.convert("RGB")), **_FULL)
        if not out.txts:
            return []
        chars = list(out.word_results or ())
        chars += [None] * (len(out.txts) - len(chars))
        words: list[Word] = []
        lines = zip(out.txts, out.boxes, out.scores, chars)
        for line_no, (text, quad, score, line_chars) in enumerate(lines):
            quad = np.asarray(quad, dtype=float)
            words.extend(line_words(text, quad, float(score), line_chars, line_no))
        return words

    def read_crops(self, crops: list[Image.Image]) -> list[tuple[str, float]]:
        """Recognise each crop as one line of text (no detection): (text, score) per
        crop, ("", 0.0) where nothing was read. The second opinion on doubtful words
        (extract/formats/ocr/vote.py), ~35 ms a crop. One call per crop: batching them
        was slower (the recogniser pads a batch to its widest crop)."""
        out: list[tuple[str, float]] = []
        for crop in crops:
            rgb = np.ascontiguousarray(np.asarray(crop.convert("RGB")))
            if rgb.shape[0] < 4 or rgb.shape[1] < 4:
                out.append(("", 0.0))
                continue
            with self._lock:
                rec = self._ocr(rgb, **_READ_ONLY)
            txts = getattr(rec, "txts", None) or ()
            scores = getattr(rec, "scores", None) or ()
            out.append((" ".join(txts).strip(), float(min(scores)) if txts and scores else 0.0))
        return out

    def detect_rotation(self, image: Image.Image) -> int:
        """Lines standing upright mean a sideways page (90 or 270); which of the two,
        and whether a flat page is upside down (180), is decided by reading the widest
        lines both ways round and keeping the more confident direction."""
        rgb = np.asarray(image.convert("RGB"))
        with self._lock:
            det = self._ocr(rgb, **_DETECT_ONLY)
        quads = getattr(det, "boxes", None)
        if quads is None or len(quads) < 3:
            return 0
        quads = np.asarray(quads, dtype=float)
        tall = sum(1 for q in quads if np.ptp(q[:, 1]) > 1.5 * np.ptp(q[:, 0]))
        sideways = tall > len(quads) / 2
        if sideways:
            rgb, quads = np.rot90(rgb), _rot90_points(quads, rgb.shape[1])  # 90 CCW
        upright, flipped = self._vote(rgb, quads)
        if flipped > 1.15 * upright:
            return 270 if sideways else 180
        return 90 if sideways else 0

    def _vote(self, rgb: np.ndarray, quads: np.ndarray) -> tuple[float, float]:
        # The eight widest lines are plenty to vote and keep this well under a second.
        upright = flipped = 0.0
        for q in sorted(quads, key=lambda q: -np.ptp(q[:, 0]))[:8]:
            x0, y0 = np.floor(q.min(axis=0)).astype(int).clip(0)
            x1, y1 = np.ceil(q.max(axis=0)).astype(int)
            crop = np.ascontiguousarray(rgb[y0:y1, x0:x1])
            if crop.size == 0:
                continue
            with self._lock:
                a = self._ocr(crop, **_READ_ONLY)
                b = self._ocr(np.ascontiguousarray(crop[::-1, ::-1]), **_READ_ONLY)
            upright += _weighted_score(a)
            flipped += _weighted_score(b)
        return upright, flipped


# Engines reading one call's crops side by side. Each runs onnxruntime on one thread
# and a crop's reading depends only on its own pixels, so splitting the crops changes
# no reading, only the wall time: the vote's crops were read on one core while the
# other waited (a scanned lab page waited 0.6-1.5 s for them after its re-reads).
CROP_READERS = max(1, min(2, os.cpu_count() or 1))


class CropReaders:
    """RapidOCR's crop reader on ``count`` engines at once (``read_crops`` per engine,
    the crops dealt out in turn so each share holds short and long words alike); the
    readings come back in the crops' order. Threads live for one call only."""

    def __init__(self, count: int = CROP_READERS):
        self._engines = [RapidOcrEngine() for _ in range(max(1, count))]

    def __call__(self, crops: list[Image.Image]) -> list[tuple[str, float]]:
        n = min(len(self._engines), len(crops))
        if n <= 1:
            return self._engines[0].read_crops(crops)
        shares = [crops[i::n] for i in range(n)]
        with ThreadPoolExecutor(max_workers=n - 1, thread_name_prefix="ocr-crops") as pool:
            others = [pool.submit(e.read_crops, s) for e, s in zip(self._engines[1:], shares[1:])]
            parts = [self._engines[0].read_crops(shares[0])] + [f.result() for f in others]
        out: list[tuple[str, float]] = [("", 0.0)] * len(crops)
        for i, part in enumerate(parts):
            out[i::n] = part
        return out


@functools.cache
def rapid_reader() -> CropReaders:
    """RapidOCR's crop readers, loaded once per process: the vote on Tesseract's
    doubtful words (extract/formats/ocr/vote.py)."""
    return CropReaders()


def line_words(text: str, quad: np.ndarray, score: float, chars, line_no: int) -> list[Word]:
    """Split one recognised line into whitespace tokens with boxes (see module doc)."""
    x0, y0 = quad.min(axis=0)
    x1, y1 = quad.max(axis=0)
    glyphs = [(c, s, np.asarray(b, dtype=float)) for c, s, b in chars or () if b is not None]
    if glyphs and "".join(c for c, _, _ in glyphs) == "".join(text.split()):
        return _from_chars(text, glyphs, y0, y1, line_no)
    per_char = (x1 - x0) / max(len(text), 1)
    return [
        Word(m.group(), x0 + m.start() * per_char, y0, x0 + m.end() * per_char, y1,
             line=line_no, conf=score)
        for m in _TOKEN.finditer(text)
    ]


def _from_chars(text: str, glyphs: list, y0: float, y1: float, line_no: int) -> list[Word]:
    min_gap = SPACE_GAP * (y1 - y0)
    tokens: list[list] = []
    pending_space = True
    k = 0
    for ch in text:
        if ch.isspace():
            pending_space = True
            continue
        c, s, box = glyphs[k]
        k += 1
        if tokens and not pending_space:
            gap = box[:, 0].min() - tokens[-1][-1][2][:, 0].max()
            pending_space = gap > min_gap
        if pending_space or not tokens:
            tokens.append([])
        tokens[-1].append((c, s, box))
        pending_space = False
    words = []
    for tok in tokens:
        pts = np.concatenate([b for _, _, b in tok])
        conf = float(np.mean([s for _, s, _ in tok]))
        words.append(
            Word("".join(c for c, _, _ in tok), pts[:, 0].min(), max(pts[:, 1].min(), y0),
                 pts[:, 0].max(), min(pts[:, 1].max(), y1), line=line_no, conf=conf)
        )
    return words


def _weighted_score(rec) -> float:
    scores = getattr(rec, "scores", None) or ()
    txts = getattr(rec, "txts", None) or ()
    return float(sum(s * len(t) for s, t in zip(scores, txts)))


def _rot90_points(quads: np.ndarray, width: int) -> np.ndarray:
    """Where points land after ``np.rot90`` (90 degrees counter-clockwise) of an image
    ``width`` pixels wide: (x, y) -> (y, width - 1 - x)."""
    out = quads.copy()
    out[..., 0] = quads[..., 1]
    out[..., 1] = width - 1 - quads[..., 0]
    return out
