"""Synthetic inputs for extractor tests, and the check that their citations hold.

``words_page`` places words where a layout test says; ``docx_letter`` writes a
Word file of plain paragraphs; ``assert_page_citations_verify`` checks every
citation of a page-based result (PDF, OCR) against the content it came from.
"""

from __future__ import annotations


from domain.content import NormalizedContent, PageContent, Word
from domain.models import ExtractionResult
from domain.policy.facts.citations import verify_citations


def words_page(rows: list[list[tuple[str, float]]], pitch: float = 14) -> NormalizedContent:
    """Words at (text, x0) on rows ``pitch`` points apart, 10 points high, 5 points per character."""
    words = []
    for r, row in enumerate(rows):
        for text, x0 in row:
            words.append(Word(text, x0, 100 + r * pitch, x0 + 5 * len(text), 110 + r * pitch))
    for i, w in enumerate(words):
        w.index = i
    return NormalizedContent(source_kind="pdf_text", pages=[PageContent(1, 612, 792, words)])


def docx_letter(*paragraphs: str) -> bytes:
    """A DOCX whose body is these paragraphs, in the default style."""
    from golden.documents import build_spec

    return build_spec({"kind": "docx", "paragraphs": list(paragraphs)}, {})[0]


def assert_page_citations_verify(content: NormalizedContent, result: ExtractionResult) -> list:
    """Every fact and identifier citation of ``result`` verifies against ``content``
    (the quote is on its page, in its box); returns the checked citations."""
    citations = [f.citation for f in result.facts] + [i.citation for i in result.identifiers]
    checked = verify_citations(citations, content)
    for original, check in zip(citations, checked):
        assert check.verified, original.quote_or_value
    return checked


class LetterLines:
    """A letter printed to PDF line by line: ``line(text, x, size, font, gap)`` sets each
    below the last, ``read(source_id)`` reads the page as a letter (``extract_referral``)
    and checks that every citation verifies and that the response is valid."""

    def __init__(self, top: float = 60, font: str = "helv", gap: float = 13):
        self.rows: list[tuple] = []
        self.y, self.font, self.gap = top, font, gap

    def line(self, text: str, x: float = 56, size: float = 10, font: str | None = None,
             gap: float | None = None) -> None:
        self.rows.append((x, self.y, text, size, font or self.font))
        self.y += self.gap if gap is None else gap

    def read(self, source_id: str) -> ExtractionResult:
        from core.services.ingest.processing import validate_response
        from domain.limits import Limits
        from extract.formats.pdf import normalize_pdf
        from extract.referral.extractor import extract_referral
        from golden.drawing import placed_text_pdf

        content = normalize_pdf(placed_text_pdf(self.rows), render_dir=None, limits=Limits())
        result = extract_referral(content, source_id)
        assert_page_citations_verify(content, result)
        validate_response(result, result.doc_type)
        return result


def certainty_of(fact, paged: bool = True):
    """The certainty the policy gives ``fact`` read in context, its citation verified."""
    from domain.policy.context.mentions import apply_to
    from domain.policy.facts.certainty import classify

    return classify(apply_to(fact), citation_verified=True, paged=paged).certainty


def read_lab_table(title: str, identity: str, cols: list[int], header: list[str], rows: list[list[str]]):
    """A one-page typed lab report (a bold title, one identity line, a header row and
    one row per result at the x positions ``cols``) read by the lab extractor, every
    citation checked: (content, result)."""
    from extract.formats.pdf import normalize_pdf
    from extract.lab.extractor import extract_lab
    from golden.drawing import placed_text_pdf

    lines = [(cols[0], 40, title, 12, "hebo"), (cols[0], 58, identity),
             *[(x, 80, label) for x, label in zip(cols, header)]]
    for i, row in enumerate(rows):
        lines += [(x, 96 + 14 * i, cell) for x, cell in zip(cols, row) if cell]
    content = normalize_pdf(placed_text_pdf(lines, width=612))
    result = extract_lab(content, "documents:4")
    assert_page_citations_verify(content, result)
    return content, result
