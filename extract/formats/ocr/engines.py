"""OCR engines: page image in, words with pixel boxes out.

Two implementations of one small protocol. Tesseract (a system binary driven through
pytesseract; extract/formats/ocr/tesseract.py) is the default: on our generated scans it is
the fastest (~0.5-1 s a page) and, with its doubtful words re-read, accurate. RapidOCR
(ONNX models shipped inside the wheel; extract/formats/ocr/rapid.py) is the fallback for
machines where the binary cannot be installed (~2-5 s a page). With Tesseract,
RapidOCR's recogniser also votes on the words Tesseract doubted (extract/formats/ocr/vote.py),
and ink Tesseract's page pass left unread is read region by region
(extract/formats/ocr/cells.py). Neither touches the network. ``name`` carries the version,
so a stored result says what produced it.

Words come back the way a PDF text layer gives them: one ``Word`` per
whitespace-separated token, a tight box in the pixel space of the image passed in,
``conf`` in 0..1 and ``line`` numbering the engine's text lines. Image clean-up is the
caller's job (extract/formats/ocr/imageprep.py, extract/formats/ocr/page.py); only orientation *detection*
lives here, because only an engine can tell which way its text reads.
"""

from __future__ import annotations

import functools
import shutil
import time
from typing import Protocol, runtime_checkable

import pytesseract
from PIL import Image

from domain.content import Word
from domain.errors import ExtractionError
from extract.formats.ocr.rapid import RapidOcrEngine
from extract.formats.ocr.tesseract import TesseractEngine

__all__ = ["OcrEngine", "TesseractEngine", "RapidOcrEngine", "TimedEngine", "default_engine",
           "tesseract_available"]

ENGINE_NAMES = ("tesseract", "rapidocr")


@runtime_checkable
class OcrEngine(Protocol):
    """What the image and scan normalizers need from an OCR engine."""

    name: str  # engine and version, e.g. "tesseract 5.3.0"
    # Mean confidence of a page's longer words below which its reading is taken for a
    # turned page (extract/formats/ocr/upright.py).
    upright_min_conf: float

    def recognize(self, image: Image.Image) -> list[Word]:
        """Words with pixel boxes of ``image`` and conf in 0..1; ``line`` groups them."""
        ...

    def detect_rotation(self, image: Image.Image) -> int:
        """Degrees (0, 90, 180, 270) to turn ``image`` counter-clockwise so its text is
        upright; 0 when the engine is not confident."""
        ...


@functools.cache
def tesseract_available() -> bool:
    """The binary runs and has English data (a binary without traineddata is as
    useless as none). Probed once per process."""
    if shutil.which(pytesseract.pytesseract.tesseract_cmd) is None:
        return False
    try:
        pytesseract.get_tesseract_version()
        return "eng" in pytesseract.get_languages(config="")
    except (pytesseract.TesseractNotFoundError, OSError):
        return False


@functools.cache
def _engine(name: str) -> OcrEngine:
    """One engine per process: RapidOCR loads ~30 MB of models; Tesseract is probed."""
    return TesseractEngine() if name == "tesseract" else RapidOcrEngine()


def default_engine(prefer: str | None = None) -> OcrEngine:
    """Tesseract when its binary is installed, else RapidOCR.

    ``prefer`` ("tesseract" or "rapidocr", e.g. from settings) forces one engine; asking
    for Tesseract on a machine without it is a configuration error, not a silent swap.
    """
    if prefer is not None and prefer not in ENGINE_NAMES:
        raise ValueError(f"unknown OCR engine {prefer!r}; expected one of {ENGINE_NAMES}")
    if prefer == "rapidocr":
        return _engine("rapidocr")
    if tesseract_available():
        return _engine("tesseract")
    if prefer == "tesseract":
        raise ExtractionError(
            "Tesseract was requested for OCR but is not installed on this machine.",
            code="ocr_unavailable",
        )
    return _engine("rapidocr")


class TimedEngine:
    """An engine that adds the wall time of each call to ``ms`` (for stage latency).

    One per document: the shared engine instances stay free of per-call state."""

    def __init__(self, engine: OcrEngine):
        self.engine = engine
        self.name = engine.name
        self.ms = 0.0

    @property
    def upright_min_conf(self) -> float:
        return self.engine.upright_min_conf

    def recognize(self, image: Image.Image) -> list[Word]:
        start = time.perf_counter()
        try:
            return self.engine.recognize(image)
        finally:
            self.ms += (time.perf_counter() - start) * 1000

    def detect_rotation(self, image: Image.Image) -> int:
        start = time.perf_counter()
        try:
            return self.engine.detect_rotation(image)
        finally:
            self.ms += (time.perf_counter() - start) * 1000
