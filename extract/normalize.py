"""Stored bytes -> ``NormalizedContent``, by the format table (``extract.registry``)."""

from __future__ import annotations

from pathlib import Path

from domain.content import NormalizedContent
from domain.errors import ExtractionError
from domain.models import DocType
from extract.registry import format_for
from domain.limits import DEFAULT_LIMITS, Limits
from extract.sniff import sniff_format


def normalize(data: bytes, *, render_dir: Path | None = None, allow_ocr: bool = True,
              doc_type: DocType | None = None, ocr_engine: str | None = None,
              limits: Limits = DEFAULT_LIMITS) -> NormalizedContent:
    """Bytes -> content by what the bytes are. ``doc_type`` only settles the two
    ambiguous cases (a damaged zip, text that may hold an HL7 message);
    ``ocr_engine`` is "tesseract", "rapidocr" or None for the best available;
    ``limits`` bound the work (a file over one fails with its family's code)."""
    if not data:
        raise ExtractionError("The file is empty (0 bytes).", code="empty_file")
    fmt = format_for(sniff_format(data), doc_type)
    return fmt.normalise(data, render_dir=render_dir, allow_ocr=allow_ocr, ocr_engine=ocr_engine, limits=limits)
