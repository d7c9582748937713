"""Resource limits for reading one document, as one value handed to the readers.

Each limit bounds a way a file can make a reader spend unbounded time or memory (a
page tree of thousands of pages, a zip whose XML inflates to gigabytes, a merged range
over a whole sheet, a field repeated a million times). Readers check them before the
expensive step where they can (the zip directory, a streamed count of XML elements)
and again while they work; a file over a limit fails its job with the family's code
and a sentence naming the limit and the setting that raises it. The defaults come from
``domain.settings`` (``WORKBENCH_MAX_*``); readers never read the settings themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from domain.errors import ExtractionError

# One error code per family of limits.
TOO_MANY_PAGES = "too_many_pages"  # pages of a PDF, frames of a TIFF
PAGE_TOO_LARGE = "page_too_large"  # a page's area or the text on one page
IMAGE_TOO_LARGE = "image_too_large"  # pixels of one image or frame (decompression bombs)
ARCHIVE_TOO_LARGE = "archive_too_large"  # DOCX/XLSX zip: uncompressed size, member count
SHEET_TOO_LARGE = "sheet_too_large"  # XLSX rows, cells, merged cells per sheet
DOCUMENT_TOO_LONG = "document_too_long"  # DOCX paragraphs
HL7_TOO_LARGE = "hl7_too_large"  # HL7 bytes, messages, segments, repetitions
FHIR_TOO_LARGE = "fhir_too_large"  # FHIR JSON bytes, resources, nesting depth

LIMIT_CODES = (TOO_MANY_PAGES, PAGE_TOO_LARGE, IMAGE_TOO_LARGE, ARCHIVE_TOO_LARGE, SHEET_TOO_LARGE,
               DOCUMENT_TOO_LONG, HL7_TOO_LARGE, FHIR_TOO_LARGE)


@dataclass(frozen=True, slots=True)
class Limits:
    """Defaults are generous for real clinical documents; see domain/settings.py."""

    max_pages: int = 200  # pages of a PDF with a text layer
    max_scanned_pages: int = 100  # pages OCR'd in one document (a 60-page fax fits)
    max_page_area_sq_in: float = 2_500.0  # 50 x 50 in; A0 is 1,550, the PDF maximum 40,000
    max_text_chars_per_page: int = 200_000  # a dense printed page holds ~10,000
    max_image_pixels: int = 60_000_000  # one image or frame: 60 MP, a 600 dpi A3 scan is 70
    max_archive_uncompressed_bytes: int = 200 * 1024 * 1024
    max_archive_members: int = 2_000  # a letter has ~20 parts, a workbook one per sheet and image
    max_sheet_rows: int = 100_000
    max_sheet_cells: int = 500_000
    max_merged_cells: int = 200_000  # cells covered by merged ranges, per sheet
    # Shared strings (an XLSX's table of cell texts), counted while streaming, before any
    # parser builds them: 10 million one-letter strings fit in a 464 KB file.
    max_shared_strings: int = 500_000  # no more distinct texts than cells are read
    max_shared_string_bytes: int = 256 * 1024  # Excel caps a cell at 32,767 characters
    max_docx_paragraphs: int = 50_000
    max_hl7_bytes: int = 32 * 1024 * 1024
    max_hl7_messages: int = 10_000  # per file (a batch); a 5,000-message batch fits
    max_hl7_segments_per_message: int = 5_000
    max_hl7_field_repetitions: int = 1_000
    max_fhir_bytes: int = 32 * 1024 * 1024
    max_fhir_resources: int = 10_000  # entries of one Bundle; a patient's whole export fits
    max_fhir_depth: int = 64  # nesting of JSON objects and arrays; real resources use ~10

    @classmethod
    def from_settings(cls, settings: object) -> "Limits":
        """The limits named like this class's fields on ``settings`` (others default)."""
        return cls(**{f.name: getattr(settings, f.name) for f in fields(cls) if hasattr(settings, f.name)})


DEFAULT_LIMITS = Limits()


def exceeded(code: str, what: str, setting: str) -> ExtractionError:
    """The failure for a file over a limit: what was too large, and which setting allows more."""
    return ExtractionError(
        f"{what} This limit protects the other jobs in the queue; the original file is kept, and an "
        f"administrator can raise it with the setting WORKBENCH_{setting.upper()}.",
        code=code,
    )
