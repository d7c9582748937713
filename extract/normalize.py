"""Pick the format backend for stored bytes and produce ``NormalizedContent``."""

from __future__ import annotations

from pathlib import Path

from core.content import NormalizedContent
from core.errors import ExtractionError
from extract.sniff import sniff_kind


def normalize(data: bytes, *, render_dir: Path | None = None, allow_ocr: bool = True) -> NormalizedContent:
    if not data:
        raise ExtractionError("The file is empty (0 bytes).", code="empty_file")
    kind = sniff_kind(data)
    if kind == "pdf":
        from extract.pdf import normalize_pdf

        try:
            return normalize_pdf(data, render_dir=render_dir)
        except ExtractionError as exc:
            if exc.code != "needs_ocr" or not allow_ocr:
                raise
        from extract.images import ocr_pdf

        return ocr_pdf(data, render_dir=render_dir)
    if kind in ("png", "jpeg", "webp", "tiff"):
        from extract.images import normalize_image

        return normalize_image(data, render_dir=render_dir)
    if kind == "docx":
        from extract.docx import normalize_docx

        return normalize_docx(data)
    if kind == "xlsx":
        from extract.xlsx import normalize_xlsx

        return normalize_xlsx(data)
    if kind == "hl7":
        from extract.hl7 import normalize_hl7

        return normalize_hl7(data)
    raise ExtractionError(
        "The file is not a format the workbench can read (PDF, image, TIFF, DOCX, XLSX or HL7 v2).",
        code="unsupported_format",
    )
