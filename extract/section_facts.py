"""What an extractor of a non-paged source (DOCX, XLSX) collects, and how it cites:
a quote must be a substring of the cited section, else the section's own text."""

from __future__ import annotations

from dataclasses import dataclass, field

from domain.content import NormalizedContent, Section
from domain.errors import ExtractionError
from domain.models import Citation, ExtractionWarning, FactProposal, IdentityCandidate
from extract.values import numbers as V


@dataclass(slots=True)
class SectionFacts:
    source_type: str
    source_id: str
    facts: list[FactProposal] = field(default_factory=list)
    identifiers: list[IdentityCandidate] = field(default_factory=list)
    warnings: list[ExtractionWarning] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    cited: list[Section] = field(default_factory=list)  # every section a citation names, in order

    @classmethod
    def for_content(cls, content: NormalizedContent, expected_kind: str, source_type: str, source_id: str):
        """Start collecting for ``content`` of the expected kind, carrying its warnings."""
        if content.source_kind != expected_kind:
            raise ExtractionError(f"Expected {expected_kind.upper()} content but got {content.source_kind!r} content.",
                                  code="wrong_content_kind")
        return cls(source_type, source_id,
                   warnings=[ExtractionWarning(code=w.code, message=w.message) for w in content.warnings])

    def path(self, collection: str) -> str:
        """The next schema path in a collection: ``medications[0]``, ``medications[1]``…"""
        k = self.counts.get(collection, 0)
        self.counts[collection] = k + 1
        return f"{collection}[{k}]"

    def cite(self, section: Section, quote: str, path: str) -> Citation:
        self.cited.append(section)
        q = quote.strip() if quote and V.contains_normalized(section.text, quote) else section.text.strip()
        return Citation(source_type=self.source_type, source_id=self.source_id, page_or_section=section.locator,
                        field_or_chunk_id=path, quote_or_value=q)
