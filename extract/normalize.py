"""Pick the format backend for stored bytes and produce ``NormalizedContent``."""

from __future__ import annotations

from pathlib import Path

from core.content import NormalizedContent
from core.errors import ExtractionError
from core.models import DocType
from extract.limits import DEFAULT_LIMITS, Limits
from extract.sniff import sniff_kind


def normalize(data: bytes, *, render_dir: Path | None = None, allow_ocr: bool = True,
              doc_type: DocType | None = None, ocr_engine: str | None = None,
              limits: Limits = DEFAULT_LIMITS) -> NormalizedContent:
    """Bytes -> content by what the bytes are. ``doc_type`` only settles the two
    ambiguous cases (a damaged zip, text that may hold an HL7 message);
    ``ocr_engine`` is "tesseract", "rapidocr" or None for the best available;
    ``limits`` bound the work (a file over one fails with its family's code)."""
    if not data:
        raise ExtractionError("The file is empty (0 bytes).", code="empty_file")
    kind = sniff_kind(data)
    if kind == "pdf":
        from extract.pdf import normalize_pdf

        try:
            return normalize_pdf(data, render_dir=render_dir, limits=limits)
        except ExtractionError as exc:
            if exc.code != "needs_ocr" or not allow_ocr:
                raise
        from extract.images import ocr_pdf
        from extract.ocr import default_engine
        from extract.pdf import repair_warnings

        content = ocr_pdf(data, render_dir=render_dir, engine=default_engine(ocr_engine), limits=limits)
        content.warnings += repair_warnings(data)  # a rebuilt scan is as doubtful as a rebuilt text PDF
        return content
    if kind in ("png", "jpeg", "webp", "tiff"):
        if not allow_ocr:
            raise ExtractionError("This image needs OCR, which was not allowed here.", code="needs_ocr")
        from extract.images import normalize_image
        from extract.ocr import default_engine

        return normalize_image(data, render_dir=render_dir, engine=default_engine(ocr_engine), limits=limits)
    if kind == "docx" or (kind == "zip" and doc_type is DocType.REFERRAL_DOCX):
        from extract.docx import normalize_docx

        return normalize_docx(data, limits)
    if kind == "xlsx" or (kind == "zip" and doc_type is DocType.CLINICAL_WORKBOOK):
        from extract.xlsx import normalize_xlsx

        return normalize_xlsx(data, limits)
    if kind == "hl7" or (kind == "text" and doc_type is DocType.HL7V2_MESSAGE):
        from extract.hl7 import normalize_hl7

        return normalize_hl7(data, limits)
    raise ExtractionError(
        "The file is not a format the workbench can read (PDF, image, TIFF, DOCX, XLSX or HL7 v2).",
        code="unsupported_format",
    )
