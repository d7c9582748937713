"""Tick boxes a PDF draws as squares (and ticks as an "X" inside or a few strokes) are
read as the box glyphs the form readers know; squares that are no tick boxes stay out.
Written after a form made in a layout tool read its unticked "No" as the answer."""

from __future__ import annotations

import pymupdf

from extract.formats.pdf import normalize_pdf


def _line_texts(draw) -> list[str]:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    draw(page)
    content = normalize_pdf(doc.tobytes())
    return [" ".join(w.text for w in line.words) for line in content.pages[0].lines]


def _box(page, x: float, y: float, size: float = 8.0) -> None:
    page.draw_rect(pymupdf.Rect(x, y - size, x + size, y), width=0.6)


def test_a_drawn_box_is_a_box_glyph_and_an_x_inside_it_ticks_it():
    def draw(page):
        page.insert_text((50, 100), "Any allergies?", fontsize=10)
        _box(page, 150, 100)
        page.insert_text((162, 100), "No", fontsize=10)
        _box(page, 200, 100)
        page.insert_text((201, 99), "X", fontsize=8)
        page.insert_text((212, 100), "Yes", fontsize=10)
    assert _line_texts(draw) == ["Any allergies? \u2610 No \u2612 Yes"]


def test_strokes_drawn_inside_a_box_tick_it():
    def draw(page):
        _box(page, 50, 100)
        page.draw_line((51, 96), (53, 98.5), width=0.8)  # a tick drawn as two strokes
        page.draw_line((53, 98.5), (57, 93), width=0.8)
        page.insert_text((62, 100), "Asthma", fontsize=10)
        _box(page, 150, 100)
        page.insert_text((162, 100), "Diabetes", fontsize=10)
    assert _line_texts(draw) == ["\u2612 Asthma \u2610 Diabetes"]


def test_squares_that_are_no_tick_boxes_stay_out():
    def draw(page):
        page.insert_text((50, 100), "Date:", fontsize=10)
        for k in range(8):  # a comb field: one square per digit, touching
            _box(page, 90 + 9 * k, 100, size=9)
        page.insert_text((50, 130), "Code", fontsize=10)
        _box(page, 90, 131, size=12)
        page.insert_text((92, 129), "7", fontsize=10)  # a square around a printed digit
        page.draw_rect(pymupdf.Rect(50, 150, 56, 156), color=(0, 0, 0), fill=(0, 0, 0))  # a bullet
        page.insert_text((60, 156), "Bring your medicines", fontsize=10)
    assert _line_texts(draw) == ["Date:", "Code 7", "Bring your medicines"]
