"""Synthetic text pages for layout tests: words placed where a test says."""

from __future__ import annotations

from core.content import NormalizedContent, PageContent, Word


def words_page(rows: list[list[tuple[str, float]]], pitch: float = 14) -> NormalizedContent:
    """Words at (text, x0) on rows ``pitch`` points apart, 10 points high, 5 points per character."""
    words = []
    for r, row in enumerate(rows):
        for text, x0 in row:
            words.append(Word(text, x0, 100 + r * pitch, x0 + 5 * len(text), 110 + r * pitch))
    for i, w in enumerate(words):
        w.index = i
    return NormalizedContent(source_kind="pdf_text", pages=[PageContent(1, 612, 792, words)])
