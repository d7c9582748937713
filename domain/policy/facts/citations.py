"""Citation verification: re-find a cited quote in the normalized source.

A citation is only as good as our ability to find its quote again. For paged
sources the quote must be a contiguous run of the page's own words (whitespace
does not matter, so "11.8H" and "11.8 H" are different quotes but a quote that
wraps onto the next line is fine); the verified box is then the union of exactly
those words, clamped to the page. For non-paged sources (DOCX, XLSX, HL7) the quote
must sit inside the section the citation names.

"Reading order" here is the visual one: rows of words that share a baseline, top
to bottom, each left to right. Extractors build quotes in that order (see
``reading_rows``), and normalizers are free to store words in their own order;
both orders are tried.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Iterable, Sequence

from domain.content import NormalizedContent, PageContent, Word
from domain.models import BoundingBox, Citation

# Two words are on one visual row when their vertical centres differ by less than
# this share of the smaller word's height: loose enough for a 14 pt heading beside
# 10 pt text on one baseline, tight enough to keep single-spaced rows apart.
ROW_TOLERANCE = 0.45


def reading_rows(words: Iterable[Word]) -> list[list[Word]]:
    """Group words into visual rows (top to bottom), each sorted left to right."""
    ordered = sorted(words, key=lambda w: (w.y0 + w.y1) / 2)
    rows: list[list[Word]] = []
    row_cy = row_h = 0.0
    for w in ordered:
        cy, h = (w.y0 + w.y1) / 2, max(w.y1 - w.y0, 1e-6)
        if rows and abs(cy - row_cy) <= ROW_TOLERANCE * min(h, row_h):
            rows[-1].append(w)
            n = len(rows[-1])
            row_cy += (cy - row_cy) / n  # running mean keeps a long row from drifting
            row_h = min(row_h, h)
        else:
            rows.append([w])
            row_cy, row_h = cy, h
    for row in rows:
        row.sort(key=lambda w: w.x0)
    return rows


def union_box(page: PageContent, words: Sequence[Word]) -> BoundingBox:
    """The normalized box covering ``words`` (clamped to the page)."""
    if not words:
        raise ValueError("a box needs at least one word")
    x, y, w, h = page.normalize(
        min(w.x0 for w in words), min(w.y0 for w in words),
        max(w.x1 for w in words), max(w.y1 for w in words),
    )
    return BoundingBox(x=x, y=y, width=w, height=h)


def quote_from_words(page: PageContent, words: Sequence[Word]) -> tuple[str, BoundingBox]:
    """A citation quote and box built from the page's own words, in the order given.

    Extractors pass words row by row, left to right, so the quote is exactly what
    the verifier will look for. Pieces a reader cut from one printed word (an OCR'd
    "DOB:7/22/58" or "Patient-name:", cut at the label) are joined back as printed.
    """
    texts: list[str] = []
    prev: Word | None = None
    for w in words:
        if prev is not None and w.index == prev.index and w.x0 == prev.x1 and w.y0 == prev.y0:
            texts[-1] += w.text
        else:
            texts.append(w.text)
        prev = w
    return " ".join(texts), union_box(page, words)


# --------------------------------------------------------------------------- matching


def _squash(text: str) -> str:
    """Compatibility-normalize and drop all whitespace (µ/μ, ligatures, NBSP)."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


@dataclass(slots=True)
class _Sequence:
    """One ordering of a page's words, joined without whitespace for searching."""

    words: list[Word]
    joined: str
    starts: dict[int, int]  # char offset where a word starts -> word position
    ends: dict[int, int]  # char offset just past a word -> word position

    @classmethod
    def build(cls, words: list[Word]) -> "_Sequence":
        parts, starts, ends, pos = [], {}, {}, 0
        for i, w in enumerate(words):
            t = _squash(w.text)
            if not t:
                continue
            starts.setdefault(pos, i)
            pos += len(t)
            ends[pos] = i
            parts.append(t)
        return cls(words, "".join(parts), starts, ends)

    def find_all(self, needle: str) -> list[list[Word]]:
        runs, at = [], self.joined.find(needle)
        while at >= 0:
            first, last = self.starts.get(at), self.ends.get(at + len(needle))
            if first is not None and last is not None and last >= first:
                runs.append(self.words[first : last + 1])
            at = self.joined.find(needle, at + 1)
        return runs


class _PageIndex:
    """Lazily built word orderings of one page, reused across its citations."""

    def __init__(self, page: PageContent):
        self.page = page
        self._orders: list[_Sequence] | None = None

    def orders(self) -> list[_Sequence]:
        if self._orders is None:
            stored = sorted(self.page.words, key=lambda w: w.index)
            visual = [w for row in reading_rows(self.page.words) for w in row]
            self._orders = [_Sequence.build(stored)]
            if [id(w) for w in visual] != [id(w) for w in stored]:
                self._orders.append(_Sequence.build(visual))
        return self._orders

    def find(self, quote: str) -> list[list[Word]]:
        needle = _squash(quote)
        if not needle:
            return []
        for seq in self.orders():
            runs = seq.find_all(needle)
            if runs:
                return runs
        return []


def _overlap(a: BoundingBox, b: BoundingBox) -> float:
    """Intersection over union of two normalized boxes."""
    ix = max(0.0, min(a.x + a.width, b.x + b.width) - max(a.x, b.x))
    iy = max(0.0, min(a.y + a.height, b.y + b.height) - max(a.y, b.y))
    inter = ix * iy
    union = a.width * a.height + b.width * b.height - inter
    return inter / union if union > 0 else 0.0


def _verify_paged(citation: Citation, index: _PageIndex) -> Citation:
    runs = index.find(citation.quote_or_value)
    if not runs:
        return citation.model_copy(update={"verified": False})
    boxes = [union_box(index.page, run) for run in runs]
    # Several identical quotes on a page: keep the one the citation pointed at.
    best = boxes[0]
    if citation.bounding_box is not None and len(boxes) > 1:
        best = max(boxes, key=lambda b: _overlap(b, citation.bounding_box))
    return citation.model_copy(update={"verified": True, "bounding_box": best})


def _section_texts(content: NormalizedContent) -> dict[str | None, list[str]]:
    """Each section's whitespace-squashed text by locator, built once per source: a
    batch has thousands of sections and citations, and a scan per citation is quadratic."""
    texts: dict[str | None, list[str]] = {}
    for s in content.sections:
        texts.setdefault(s.locator, []).append(" ".join(s.text.split()))
    return texts


_CELL_RANGE = re.compile(r"^(?P<sheet>.+)!(?P<c0>[A-Z]{1,3})(?P<r0>\d+)(?::(?P<c1>[A-Z]{1,3})(?P<r1>\d+))?$")


def _rows_text(locator: str, sections: dict[str | None, list[str]]) -> list[str]:
    """A workbook range over several rows ("Obs!A12:D13", a reading joined from two rows):
    its rows' texts joined in order with " | ", as one row's cells are; a range down one
    column ("Obs!C3:C4", a reading from two rows of a column per date) is that column's
    cells joined so. Nothing else."""
    m = _CELL_RANGE.match(locator or "")
    if not m or not m["r1"] or int(m["r1"]) <= int(m["r0"]):
        return []
    if m["c0"] == m["c1"]:
        cells = [sections.get(f"{m['sheet']}!{m['c0']}{r}") for r in range(int(m["r0"]), int(m["r1"]) + 1)]
        return [" | ".join(found[0] for found in cells if found)] if any(cells) else []
    rows: dict[int, list[tuple[bool, str]]] = {}
    for loc, texts in sections.items():
        part = _CELL_RANGE.match(loc or "")
        if part and part["sheet"] == m["sheet"] and int(m["r0"]) <= int(part["r0"]) <= int(m["r1"]) \
                and (part["r1"] is None or part["r1"] == part["r0"]):
            rows.setdefault(int(part["r0"]), []).extend((part["r1"] is not None, t) for t in texts)
    joined = []
    for r in sorted(rows):
        spans = [t for is_row, t in rows[r] if is_row]
        joined += spans[:1] or ([rows[r][0][1]] if len(rows[r]) == 1 else [])  # the row, or its lone cell
    return [" | ".join(joined)] if joined else []


def rows_text(sections: Iterable, locator: str) -> str | None:
    """The text a workbook range over several rows stands for (its rows joined by " | "),
    or None when ``locator`` is no such range: what a viewer shows for it."""
    texts: dict[str | None, list[str]] = {}
    for s in sections:
        texts.setdefault(s.locator, []).append(" ".join(s.text.split()))
    found = _rows_text(locator, texts)
    return found[0] if found else None


def _verify_section(citation: Citation, sections: dict[str | None, list[str]]) -> Citation:
    needle = " ".join(citation.quote_or_value.split())
    texts = sections.get(citation.page_or_section) or _rows_text(citation.page_or_section, sections)
    found = any(needle in text for text in texts)
    return citation.model_copy(update={"verified": found})


def verify_citations(citations: Sequence[Citation], content: NormalizedContent) -> list[Citation]:
    """Verify many citations against one source, indexing each page and the sections once."""
    indexes: dict[int, _PageIndex] = {}
    sections: dict[str | None, list[str]] | None = None
    out = []
    for c in citations:
        if c.page is None:
            sections = _section_texts(content) if sections is None else sections
            out.append(_verify_section(c, sections))
        elif not 1 <= c.page <= len(content.pages):
            out.append(c.model_copy(update={"verified": False}))
        else:
            index = indexes.setdefault(c.page, _PageIndex(content.page(c.page)))
            out.append(_verify_paged(c, index))
    return out


def verify_citation(citation: Citation, content: NormalizedContent) -> Citation:
    """A copy of ``citation`` with ``verified`` set (and, on pages, the box snapped
    to the matched words). Not found leaves the claimed box untouched."""
    return verify_citations([citation], content)[0]
