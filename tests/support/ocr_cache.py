"""OCR of a page image kept for the rest of the test run, by the image's hash.

For unit tests of the readers only (the ``cached_ocr`` fixture, tests/conftest.py): the
image and scan readers' own code (clean-up, deskew, scaling, the turn decision, line
grouping, citations) runs every time; only the engine's answer for an image it has
already read in this run is reused. The key is the sha256 of the image's pixels with its
mode, size and dpi, and the engine's name (with its version) and settings, so any change
to what reaches the engine is a new reading. Each answer is handed out as a copy: the
page code moves and clamps the words it is given.

Never used by the end-to-end tests (a served app, the CLI, a job's child process: they
run the real engine in their own processes), nor by tests/extract/formats/test_ocr.py,
which runs each engine uncached, nor by tests that report OCR time.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from PIL import Image


def _settings(engine: Any) -> tuple:
    """The engine's plain settings (Tesseract's language, page mode, re-read; ...)."""
    return tuple(sorted((k, v) for k, v in vars(engine).items() if isinstance(v, (str, int, float, bool))))


def image_key(image: Image.Image) -> str:
    h = hashlib.sha256()
    h.update(f"{image.mode}|{image.size}|{image.info.get('dpi')}|".encode())
    h.update(image.tobytes())
    return h.hexdigest()


class CachedEngine:
    """``engine`` with its readings kept in ``store`` (shared by every CachedEngine of a run)."""

    def __init__(self, engine: Any, store: dict) -> None:
        self.engine = engine
        self.name = engine.name
        self.store = store
        self.hits = 0

    def _once(self, method: str, image: Image.Image):
        key = (method, self.name, _settings(self.engine), image_key(image))
        if key in self.store:
            self.hits += 1
        else:
            self.store[key] = getattr(self.engine, method)(image)
        return copy.deepcopy(self.store[key])

    @property
    def upright_min_conf(self) -> float:
        return self.engine.upright_min_conf

    def recognize(self, image: Image.Image):
        return self._once("recognize", image)

    def detect_rotation(self, image: Image.Image) -> int:
        return self._once("detect_rotation", image)
