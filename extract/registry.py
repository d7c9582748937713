"""Format backends and doc_type extractors, picked from registries.

A *normalizer* turns stored bytes into ``NormalizedContent``; an *extractor* turns
content into an ``ExtractionResult`` for one doc_type. Neither touches the database.
"""

from __future__ import annotations

from typing import Protocol

from core.content import NormalizedContent
from core.errors import ExtractionError
from core.models import DocType, ExtractionResult


class Extractor(Protocol):
    def __call__(self, content: NormalizedContent, source_id: str) -> ExtractionResult: ...


# doc_type -> extractor; extract.extractors.load_all() fills every entry (tests may swap one).
EXTRACTORS: dict[DocType, Extractor] = {}


def extractor_for(doc_type: DocType) -> Extractor:
    try:
        return EXTRACTORS[doc_type]
    except KeyError:
        raise ExtractionError(
            f"No extractor is available for {doc_type.value} documents yet.",
            code="unsupported_doc_type",
        ) from None
