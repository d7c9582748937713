"""Helpers shared by the per-format extractor tests (DOCX, XLSX, HL7, ...): read bytes
with a format's normaliser, extract, and check every citation against the content."""

from __future__ import annotations

from typing import Callable

from domain.content import NormalizedContent
from domain.models import ExtractionResult, FactProposal
from tests.support.citation_check import assert_all_citations_verifiable


def read_and_extract(data: bytes, normalise: Callable[[bytes], NormalizedContent],
                     extract: Callable[[NormalizedContent, str], ExtractionResult],
                     source: str) -> tuple[NormalizedContent, ExtractionResult]:
    """Normalise, extract, and fail unless every citation re-finds its quote and the
    worker would take the answer (its doc_type, every clinical value's shape)."""
    from core.services.ingest.processing import validate_response

    content = normalise(data)
    result = extract(content, source)
    assert_all_citations_verifiable(content, result, source)
    validate_response(result, result.doc_type)
    return content, result


def of_type(result: ExtractionResult, fact_type: str) -> list[FactProposal]:
    return [f for f in result.facts if f.fact_type == fact_type]


def identity(result: ExtractionResult, scope: str | None = None) -> dict[str, str]:
    """The identifiers the document states, by kind, for one identity scope."""
    return {i.kind.value: i.value for i in result.identifiers if i.scope == scope}


def read_referral_docx(data: bytes, source: str = "documents:21") -> tuple[NormalizedContent, ExtractionResult]:
    """A letter read by the DOCX normaliser and the referral extractor; every citation verifies."""
    from extract.formats.office.docx import normalize_docx
    from extract.referral.extractor import extract_referral

    return read_and_extract(data, normalize_docx, extract_referral, source)
