"""The citation verifier: quotes re-found as page words, boxes snapped to them."""

from __future__ import annotations

import pytest

from domain.content import Line, NormalizedContent, PageContent, Section, Word
from domain.models import BoundingBox, Citation
from domain.policy.facts.citations import quote_from_words, reading_rows, verify_citation, verify_citations


def _page(rows: list[list[tuple[str, float]]], number: int = 1, width: float = 600, height: float = 800,
          top: float = 100, pitch: float = 20) -> PageContent:
    """A page whose rows hold (text, x0) words, 10 pt tall, 6 pt per character."""
    words = []
    for r, row in enumerate(rows):
        y0 = top + r * pitch
        for text, x0 in row:
            words.append(Word(text, x0, y0, x0 + 6 * len(text), y0 + 10, line=r))
    for i, w in enumerate(words):
        w.index = i
    return PageContent(number, width, height, words, [Line([w for w in words if w.line == r]) for r in range(len(rows))])


def _content(*pages: PageContent) -> NormalizedContent:
    return NormalizedContent(source_kind="pdf_text", pages=list(pages))


def _cite(quote: str, page: int | None = 1, box: BoundingBox | None = None, where: str = "page 1") -> Citation:
    return Citation(source_type="lab_pdf", source_id="documents:1", page_or_section=where,
                    field_or_chunk_id="results[0]", quote_or_value=quote, page=page, bounding_box=box)


PAGE = _page([
    [("Patient:", 50), ("DOE,", 110), ("JANE", 145)],
    [("LDL", 50), ("Cholesterol", 80), ("148", 250), ("H", 290), ("mg/dL", 320), ("<100", 400)],
    [("HDL", 50), ("Cholesterol", 80), ("38", 250), ("L", 290), ("mg/dL", 320), (">39", 400)],
    [("Comment:", 50), ("fasting", 110), ("specimen", 160)],
])


def test_found_quote_is_verified_and_box_snapped_to_its_words():
    out = verify_citation(_cite("LDL Cholesterol 148 H mg/dL <100"), _content(PAGE))
    assert out.verified is True
    b = out.bounding_box
    assert b is not None
    assert b.x == pytest.approx(50 / 600) and b.y == pytest.approx(120 / 800)
    assert b.x + b.width == pytest.approx((400 + 24) / 600)
    assert b.height == pytest.approx(10 / 800)


def test_whitespace_differences_do_not_matter():
    assert verify_citation(_cite("LDL   Cholesterol\n148"), _content(PAGE)).verified


def test_quote_must_start_and_end_on_word_boundaries():
    # "DL Cholesterol" is inside "LDL Cholesterol" but does not start on a word.
    assert not verify_citation(_cite("DL Cholesterol 148"), _content(PAGE)).verified
    assert not verify_citation(_cite("LDL Cholesterol 14"), _content(PAGE)).verified


def test_quote_may_span_consecutive_lines():
    out = verify_citation(_cite("<100 HDL Cholesterol"), _content(PAGE))
    assert out.verified
    assert out.bounding_box.height == pytest.approx(30 / 800)  # two rows: y 120..150


def test_words_out_of_order_are_not_a_run():
    assert not verify_citation(_cite("148 LDL Cholesterol"), _content(PAGE)).verified


def test_missing_quote_keeps_claimed_box_and_is_unverified():
    claimed = BoundingBox(x=0.1, y=0.1, width=0.2, height=0.05)
    out = verify_citation(_cite("LDL Cholesterol 150", box=claimed), _content(PAGE))
    assert out.verified is False
    assert out.bounding_box == claimed


def test_wrong_claimed_box_is_replaced_by_snapped_box():
    claimed = BoundingBox(x=0.8, y=0.9, width=0.1, height=0.05)  # nowhere near the words
    out = verify_citation(_cite("HDL Cholesterol 38", box=claimed), _content(PAGE))
    assert out.verified
    assert out.bounding_box != claimed
    assert out.bounding_box.y == pytest.approx(140 / 800)


def test_repeated_quote_snaps_to_the_occurrence_nearest_the_claimed_box():
    claimed = BoundingBox(x=50 / 600, y=140 / 800, width=0.2, height=10 / 800)
    out = verify_citation(_cite("Cholesterol", box=claimed), _content(PAGE))
    assert out.bounding_box.y == pytest.approx(140 / 800)
    first = verify_citation(_cite("Cholesterol"), _content(PAGE))
    assert first.bounding_box.y == pytest.approx(120 / 800)


def test_wrong_page_or_page_out_of_range_is_unverified():
    other = _page([[("nothing", 50), ("here", 120)]], number=2)
    content = _content(PAGE, other)
    assert not verify_citation(_cite("LDL Cholesterol", page=2), content).verified
    assert not verify_citation(_cite("LDL Cholesterol", page=3), content).verified


def test_box_stays_inside_page_even_if_words_overhang():
    page = _page([[("overhanging", 560)]])  # 560 + 66 > 600
    out = verify_citation(_cite("overhanging"), _content(page))
    assert out.verified
    assert out.bounding_box.x + out.bounding_box.width <= 1.0 + 1e-9


def test_compatibility_characters_match():
    page = _page([[("10", 50), ("\u00b5g/L", 80)]])  # micro sign
    assert verify_citation(_cite("10 \u03bcg/L"), _content(page)).verified  # greek mu


def test_words_stored_in_another_order_still_verify_in_visual_order():
    page = _page([[("Glucose", 50), ("105", 250), ("mg/dL", 320)]])
    # A normalizer that stored the value column before the name column:
    page.words[0].index, page.words[1].index = 1, 0
    assert verify_citation(_cite("Glucose 105 mg/dL"), _content(page)).verified


def test_section_citation_needs_matching_locator_and_text():
    content = NormalizedContent(source_kind="hl7", sections=[
        Section("OBX[1]-5", "LDL  Cholesterol 148"), Section("OBX[2]-5", "HDL 38"),
    ])
    assert verify_citation(_cite("LDL Cholesterol 148", page=None, where="OBX[1]-5"), content).verified
    assert not verify_citation(_cite("LDL Cholesterol 148", page=None, where="OBX[2]-5"), content).verified
    assert not verify_citation(_cite("LDL Cholesterol 148", page=None, where="OBX[9]-5"), content).verified


def test_verify_citations_handles_many_and_keeps_order():
    cits = [_cite("HDL Cholesterol 38"), _cite("not there"), _cite("Comment: fasting specimen")]
    assert [c.verified for c in verify_citations(cits, _content(PAGE))] == [True, False, True]


def test_quote_from_words_builds_a_verifiable_quote():
    words = PAGE.words[3:9]
    quote, box = quote_from_words(PAGE, words)
    assert quote == "LDL Cholesterol 148 H mg/dL <100"
    out = verify_citation(_cite(quote, box=box), _content(PAGE))
    assert out.verified and out.bounding_box == box


def test_quote_from_words_needs_words():
    with pytest.raises(ValueError):
        quote_from_words(PAGE, [])


def test_reading_rows_groups_by_baseline_and_sorts_left_to_right():
    a = Word("right", 300, 100, 340, 110)
    b = Word("left", 50, 101, 80, 111)  # one point lower: same row
    c = Word("next", 50, 120, 80, 130)
    big = Word("Heading", 100, 97, 180, 112)  # larger font on the same baseline
    rows = reading_rows([c, a, big, b])
    assert [[w.text for w in r] for r in rows] == [["left", "Heading", "right"], ["next"]]
