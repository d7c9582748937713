"""Stored bytes -> ``NormalizedContent``, by the format table (``extract.registry``).

This is the one boundary between untrusted bytes and the rest of the workbench: a
format's parser (MuPDF, Pillow, the zip and XML readers, the HL7 parser) meeting bytes
it cannot make sense of may raise anything (``TypeError: Missing dimensions`` from a TIFF
cut short, ``ValueError: bad xref`` from a PDF's page tree, MuPDF's stack overflow on
nested arrays). Whatever it raises ends here as ``corrupt_file``: the bytes are damaged
or built to break a reader, which no retry changes. Only our own coded errors and the
memory ceiling pass through as they are.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

from domain.content import NormalizedContent
from domain.errors import ExtractionError
from domain.models import DocType
from extract.registry import FORMATS, format_for
from domain.limits import DEFAULT_LIMITS, Limits
from extract.sniff import sniff_format

# What the person who uploaded the file is told, by the format that failed to read it.
_FORMAT_NAMES = {"pdf": "PDF", "image": "image", "docx": "Word document", "xlsx": "workbook", "hl7": "HL7 message",
                 "fhir": "FHIR file"}


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
    try:
        return fmt.normalise(data, render_dir=render_dir, allow_ocr=allow_ocr, ocr_engine=ocr_engine, limits=limits)
    except (ExtractionError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - the boundary: any parser failure on these bytes is damage
        kind = next((_FORMAT_NAMES.get(key, key) for key, value in FORMATS.items() if value is fmt), "file")
        raise damaged(kind, exc) from None


def damaged(kind: str, exc: BaseException) -> ExtractionError:
    """``corrupt_file`` for a parser that gave up on the bytes. The exception's class is
    named (it tells an administrator which parser and how); its text is not, since a
    parser may quote the bytes it choked on. The code location goes to stderr."""
    print(f"[extract] {kind} reader failed on damaged input: {type(exc).__name__}", file=sys.stderr)
    traceback.print_tb(exc.__traceback__, limit=6, file=sys.stderr)
    return ExtractionError(
        f"The {kind} is damaged or malformed and could not be read ({type(exc).__name__} in the {kind} reader). "
        "The original is kept. Trying again will not help: ask the sender for a new copy of the file.",
        code="corrupt_file",
    )
