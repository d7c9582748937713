"""A referral letter printed as a PDF (typed, or scanned and OCRed), read as the
paragraphs the DOCX reader reads: the page's rows grouped into paragraphs, each a
``Section`` that keeps its words, so a quote read out of it is cited by page and the
box of exactly those words.

A row ends its paragraph when the next row starts after a gap wider than the page's
usual line spacing, or when it stops well short of the text's right edge (the last
line of a paragraph, a label line, a salutation), or ends with ":" (a label whose
list follows), and a row opening with a label the letter is read by ("Allergies:")
starts one; wrapped lines of one paragraph run on.
"""

from __future__ import annotations

from statistics import median

from domain.content import NormalizedContent, PageContent, Section, Word
from domain.models import Citation
from domain.policy.facts.citations import quote_from_words
from extract.layout import Row, page_rows
from extract.referral.labels import INLINE, label_field

# A gap between rows wider than this many times the page's usual one starts a paragraph.
PARAGRAPH_GAP = 1.45
# A row ending before this share of the text's width is a paragraph's last line.
SHORT_ROW = 0.8


def _ends_paragraph(row: Row, nxt: Row, pitch: float, right: float, left: float) -> bool:
    if nxt.y0 - row.y0 > PARAGRAPH_GAP * pitch:
        return True
    if row.text.rstrip().endswith((":", "\uff1a")):
        return True
    if _opens_with_label(nxt.text):
        return True  # "Allergies: ..." under a line of prose starts its own paragraph, however spaced
    return row.x1 < left + SHORT_ROW * (right - left)


def _opens_with_label(text: str) -> bool:
    """Whether a row opens with a label a letter is read by ("Re:", "Allergies:",
    "Current medications:")."""
    m = INLINE.match(text)
    return bool(m) and label_field(m.group(1)) is not None


def paragraphs(page: PageContent, start_index: int = 0) -> list[Section]:
    """The page's paragraphs as sections ("page 1"), with their words in reading order."""
    rows = page_rows(page)
    if not rows:
        return []
    steps = [b.y0 - a.y0 for a, b in zip(rows, rows[1:]) if b.y0 > a.y0]
    pitch = median(steps) if steps else max(r.height for r in rows) * 1.5
    left, right = min(r.x0 for r in rows), max(r.x1 for r in rows)
    groups: list[list[Row]] = [[rows[0]]]
    for row, nxt in zip(rows, rows[1:]):
        if _ends_paragraph(row, nxt, pitch, right, left):
            groups.append([nxt])
        else:
            groups[-1].append(nxt)
    out = []
    for k, group in enumerate(groups):
        words = [w for r in group for w in r.words]
        out.append(Section(locator=f"page {page.number}", text=" ".join(w.text for w in words),
                           section_type="paragraph",
                           meta={"index": start_index + k, "page": page, "words": words}))
    return out


def as_sections(content: NormalizedContent) -> NormalizedContent:
    """The letter's pages as paragraph sections, for the paragraph reader."""
    sections: list[Section] = []
    for page in content.pages:
        sections += paragraphs(page, len(sections))
    return NormalizedContent(source_kind=content.source_kind, sections=sections, warnings=content.warnings,
                             engine=content.engine)


def words_of(section: Section, quote: str) -> list[Word] | None:
    """The section's words that print ``quote`` (whole words, whitespace aside), or None."""
    words: list[Word] = section.meta.get("words") or []
    needle = "".join(quote.split())
    if not needle:
        return None
    joined, starts = "", []
    for w in words:
        starts.append(len(joined))
        joined += "".join(w.text.split())
    at = joined.find(needle)
    if at < 0:
        return None
    first = max(i for i, s in enumerate(starts) if s <= at)
    last = max(i for i, s in enumerate(starts) if s < at + len(needle))
    return words[first: last + 1]


def cite_words(source_type: str, source_id: str, section: Section, path: str, words: list[Word]) -> Citation:
    """A page citation of ``words`` of ``section`` (those that print the quote, ``words_of``)."""
    page: PageContent = section.meta["page"]
    printed, box = quote_from_words(page, words)
    return Citation(source_type=source_type, source_id=source_id, page_or_section=f"page {page.number}",
                    field_or_chunk_id=path, quote_or_value=printed, page=page.number, bounding_box=box)
