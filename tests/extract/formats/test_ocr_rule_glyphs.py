"""A table's column rules read as characters ("Troponin | 0.52 1 ng/mL ]") are dropped
from an OCR reading (extract.formats.ocr.cells.without_rule_glyphs), also where the
column rules stop at every section heading, so that no piece is as long as a whole
table's rule; a "1" or a flag "L" inside its cell stays. The page is drawn here, not
taken from the bench's layouts."""

from __future__ import annotations

from PIL import Image, ImageDraw

from domain.content import Word
from extract.formats.ocr import cells

GLYPH = 24  # px: the glyph height the page is measured with
COLUMNS = (100, 520, 760, 1010, 1240)  # x of the vertical rules
SECTIONS = ((300, 440), (500, 620))  # (top, bottom) of each section's rows: the rules stop between them


def _page() -> Image.Image:
    img = Image.new("L", (1400, 800), 255)
    draw = ImageDraw.Draw(img)
    for top, bottom in SECTIONS:
        draw.line((COLUMNS[0], top, COLUMNS[-1], top), fill=0, width=3)
        draw.line((COLUMNS[0], bottom, COLUMNS[-1], bottom), fill=0, width=3)
        for x in COLUMNS:
            draw.line((x, top, x, bottom), fill=0, width=3)
        for y in range(top + 20, bottom - 20, 40):  # text-like blobs inside the cells
            for left, right in zip(COLUMNS, COLUMNS[1:]):
                draw.rectangle((left + 20, y, left + 20 + min(120, right - left - 40), y + GLYPH - 6), fill=0)
    return img


def test_rule_glyphs_on_short_rule_pieces_are_dropped_and_cell_words_stay():
    img = _page()
    ink = cells.page_ink(img, GLYPH)
    # Each section's rules are 120-140 px: shorter than a whole-table rule (8 glyphs).
    assert ink.rules is not None and ink.rules.vertical == 0
    on_rules = [Word(text, x - 6, 330, x + 8, 356) for text, x in (("|", 520), ("1", 760), ("]", 1010), ("I", 1240))]
    in_cells = [Word("1", 600, 330, 612, 356), Word("L", 1100, 530, 1114, 556), Word("4.4", 560, 530, 600, 556),
                Word("|", 300, 530, 306, 556)]  # a bar in the middle of a cell is no rule
    kept = cells.without_rule_glyphs(on_rules + in_cells, ink)
    assert kept == in_cells


def test_a_page_without_rules_keeps_every_word():
    img = Image.new("L", (800, 400), 255)
    ImageDraw.Draw(img).rectangle((100, 100, 220, 118), fill=0)
    words = [Word("|", 50, 100, 56, 124), Word("1", 300, 100, 310, 124)]
    assert cells.without_rule_glyphs(words, cells.page_ink(img, GLYPH)) == words
