"""The formats the workbench reads and the doc_types it extracts, in one table each.

A format takes the bytes ``extract.sniff.sniff_format`` names as one of its own, or an
ambiguous sniffed format (a damaged zip, text that may hold an HL7 message, JSON that
may be FHIR) when the job's doc_type says so, and its normaliser turns them into
``NormalizedContent``; an extractor turns content into an ``ExtractionResult`` for one
doc_type. Neither touches the database.

Like docling's ``FormatOption``: a small frozen record per format and one mapping.
Both tables are read-only; a test swaps an extractor by replacing ``EXTRACTORS`` with
a changed copy (``monkeypatch.setattr``), which a job's child forked afterwards sees.
Format modules are imported when first used, so a CLI start does not pay for PyMuPDF
or openpyxl; the jobs' forkserver loads the extractors up front (``preload``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from domain.content import NormalizedContent
from domain.errors import ExtractionError
from domain.models import DocType, ExtractionResult
from domain.limits import Limits


class Normaliser(Protocol):
    def __call__(self, data: bytes, *, render_dir: Path | None, allow_ocr: bool, ocr_engine: str | None,
                 limits: Limits) -> NormalizedContent: ...


class Extractor(Protocol):
    def __call__(self, content: NormalizedContent, source_id: str) -> ExtractionResult: ...


@dataclass(frozen=True)
class Lazy:
    """A function named by its module, imported when first called."""

    module: str
    name: str

    def load(self) -> Callable[..., Any]:
        return getattr(import_module(self.module), self.name)


@dataclass(frozen=True)
class Format:
    """One file format: what ``sniff_format`` calls the bytes it takes, the ambiguous
    sniffed format (a damaged zip, plain text) it takes only for the doc_type that
    settles it, and its normaliser."""

    sniffed: frozenset[str]
    normalise: Normaliser
    ambiguous: str | None = None
    settled_by: DocType | None = None

    def accepts(self, sniffed: str | None, doc_type: DocType | None) -> bool:
        return sniffed in self.sniffed or (sniffed == self.ambiguous and doc_type is self.settled_by)


def _read_pdf(data: bytes, *, render_dir: Path | None, allow_ocr: bool, ocr_engine: str | None,
              limits: Limits) -> NormalizedContent:
    """The text layer; a PDF without one is OCRed when that is allowed."""
    from extract.formats.pdf import normalize_pdf

    try:
        return normalize_pdf(data, render_dir=render_dir, limits=limits)
    except ExtractionError as exc:
        if exc.code != "needs_ocr" or not allow_ocr:
            raise
    from extract.formats.images import ocr_pdf
    from extract.formats.ocr.engines import default_engine
    from extract.formats.pdf import repair_warnings

    content = ocr_pdf(data, render_dir=render_dir, engine=default_engine(ocr_engine), limits=limits)
    content.warnings += repair_warnings(data)  # a rebuilt scan is as doubtful as a rebuilt text PDF
    return content


def _read_image(data: bytes, *, render_dir: Path | None, allow_ocr: bool, ocr_engine: str | None,
                limits: Limits) -> NormalizedContent:
    if not allow_ocr:
        raise ExtractionError("This image needs OCR, which was not allowed here.", code="needs_ocr")
    from extract.formats.images import normalize_image
    from extract.formats.ocr.engines import default_engine

    return normalize_image(data, render_dir=render_dir, engine=default_engine(ocr_engine), limits=limits)


def _read_docx(data: bytes, *, limits: Limits, **_: Any) -> NormalizedContent:
    from extract.formats.office.docx import normalize_docx

    return normalize_docx(data, limits)


def _read_xlsx(data: bytes, *, limits: Limits, **_: Any) -> NormalizedContent:
    from extract.formats.office.xlsx import normalize_xlsx

    return normalize_xlsx(data, limits)


def _read_hl7(data: bytes, *, limits: Limits, **_: Any) -> NormalizedContent:
    from extract.formats.hl7.normalize import normalize_hl7

    return normalize_hl7(data, limits)


def _read_fhir(data: bytes, *, limits: Limits, **_: Any) -> NormalizedContent:
    from extract.formats.fhir.normalize import normalize_fhir

    return normalize_fhir(data, limits)


FORMATS: Mapping[str, Format] = MappingProxyType({
    "pdf": Format(frozenset({"pdf"}), _read_pdf),
    "image": Format(frozenset({"png", "jpeg", "webp", "tiff"}), _read_image),
    "docx": Format(frozenset({"docx"}), _read_docx, ambiguous="zip", settled_by=DocType.REFERRAL_DOCX),
    "xlsx": Format(frozenset({"xlsx"}), _read_xlsx, ambiguous="zip", settled_by=DocType.CLINICAL_WORKBOOK),
    "hl7": Format(frozenset({"hl7"}), _read_hl7, ambiguous="text", settled_by=DocType.HL7V2_MESSAGE),
    "fhir": Format(frozenset({"fhir"}), _read_fhir, ambiguous="json", settled_by=DocType.FHIR_BUNDLE),
})

EXTRACTORS: Mapping[DocType, Lazy | Extractor] = MappingProxyType({
    DocType.LAB_PDF: Lazy("extract.lab.extractor", "extract_lab"),
    DocType.INTAKE_FORM: Lazy("extract.intake.extractor", "extract_intake"),
    DocType.REFERRAL_DOCX: Lazy("extract.referral.extractor", "extract_referral"),
    DocType.CLINICAL_WORKBOOK: Lazy("extract.workbook.extractor", "extract_workbook"),
    DocType.HL7V2_MESSAGE: Lazy("extract.hl7.facts", "extract_hl7"),
    DocType.FAX_PACKET: Lazy("extract.fax.extractor", "extract_fax"),
    DocType.FHIR_BUNDLE: Lazy("extract.fhir.facts", "extract_fhir"),
})


def format_for(sniffed: str | None, doc_type: DocType | None = None) -> Format:
    """The format that takes bytes sniffed as ``sniffed`` for a job of this doc_type."""
    for fmt in FORMATS.values():
        if fmt.accepts(sniffed, doc_type):
            return fmt
    raise ExtractionError(
        "The file is not a format the workbench can read (PDF, image, TIFF, DOCX, XLSX, HL7 v2 or FHIR JSON).",
        code="unsupported_format",
    )


def require_extractor(doc_type: DocType) -> None:
    """Fail with ``unsupported_doc_type`` unless the table has an extractor for the
    doc_type, without importing it (the worker checks before handing a job to a child)."""
    if doc_type not in EXTRACTORS:
        raise ExtractionError(
            f"No extractor is available for {doc_type.value} documents yet.",
            code="unsupported_doc_type",
        )


def extractor_for(doc_type: DocType) -> Extractor:
    """The extractor function for a doc_type (imported now if it was not yet)."""
    require_extractor(doc_type)
    entry = EXTRACTORS[doc_type]
    return entry.load() if isinstance(entry, Lazy) else entry


def preload() -> None:
    """Import every extractor (and with it its format's module) now."""
    for doc_type in EXTRACTORS:
        extractor_for(doc_type)
