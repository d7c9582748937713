"""The non-paged citation rule, checked locally by the format tests.

A citation to a DOCX/XLSX/HL7 source is good when a section with exactly its locator
exists and that section's text contains the quote once whitespace is normalised; a
workbook range over several rows (a reading joined from two rows, "Obs!A3:D4") is good
when the rows' texts joined by " | " contain it, and one down a single column
("Obs!C3:C4") when its cells' texts joined so do. Kept here (not imported from the policy
module) so these tests pin the contract itself.
"""

from __future__ import annotations

import re

from domain.content import NormalizedContent
from domain.models import Citation, ExtractionResult


def _ws(text: str) -> str:
    return " ".join(text.split())


def _rows(content: NormalizedContent, citation: Citation) -> list:
    """The rows of a workbook range over several rows, as one section of their joined texts."""
    from domain.content import Section

    m = re.match(r"^(.+)!([A-Z]+)(\d+):([A-Z]+)(\d+)$", citation.page_or_section)
    if not m or int(m[5]) <= int(m[3]):
        return []
    if m[2] == m[4]:  # down one column: its cells joined
        cells = [s for s in content.sections if s.section_type == "cell" and s.meta.get("sheet") == m[1]
                 and s.meta["coord"].rstrip("0123456789") == m[2] and int(m[3]) <= s.meta["row"] <= int(m[5])]
        return [Section(citation.page_or_section, " | ".join(s.text for s in sorted(cells, key=lambda s: s.meta["row"])))
                ] if cells else []
    m = re.match(r"^(.+)![A-Z]+(\d+):[A-Z]+(\d+)$", citation.page_or_section)
    rows = [s for s in content.sections if s.meta.get("sheet") == m[1] and int(m[2]) <= s.meta.get("row", 0) <= int(m[3])
            and (s.section_type == "row" or s.meta.get("only_cell_in_row"))]
    if not rows:
        return []
    return [Section(citation.page_or_section, " | ".join(s.text for s in sorted(rows, key=lambda s: s.meta["row"])))]


def citation_problems(content: NormalizedContent, citation: Citation) -> list[str]:
    problems = []
    if citation.page is not None or citation.bounding_box is not None:
        problems.append(f"{citation.page_or_section}: a non-paged citation carries a page or box")
    matches = [s for s in content.sections if s.locator == citation.page_or_section] or _rows(content, citation)
    if not matches:
        problems.append(f"no section has locator {citation.page_or_section!r}")
    elif not any(_ws(citation.quote_or_value) in _ws(s.text) for s in matches):
        problems.append(f"{citation.page_or_section}: quote {citation.quote_or_value!r} is not in {matches[0].text[:120]!r}")
    return problems


def assert_all_citations_verifiable(content: NormalizedContent, result: ExtractionResult, source_id: str) -> int:
    """Every fact and identifier citation satisfies the rule; returns how many were checked."""
    citations = [f.citation for f in result.facts] + [i.citation for i in result.identifiers if i.citation]
    problems = []
    for c in citations:
        problems += citation_problems(content, c)
        if c.source_id != source_id or c.source_type != result.doc_type.value:
            problems.append(f"{c.page_or_section}: wrong source {c.source_type}/{c.source_id}")
        if not c.field_or_chunk_id:
            problems.append(f"{c.page_or_section}: no field path")
    assert not problems, "\n".join(problems)
    locators = [s.locator for s in content.sections]
    assert len(locators) == len(set(locators)), "section locators must be unique"
    return len(citations)
