"""A referral letter printed as a PDF (typed, or scanned and OCRed), read as the
paragraphs the DOCX reader reads: the page's rows grouped into paragraphs, each a
``Section`` that keeps its words, so a quote read out of it is cited by page and the
box of exactly those words.

A row ends its paragraph when the next row starts after a gap wider than the page's
usual line spacing, or when it stops well short of the text's right edge (the last
line of a paragraph, a label line, a salutation), or ends with ":" (a label whose
list follows), and a row opening with a label the letter is read by ("Allergies:")
starts one; wrapped lines of one paragraph run on.

A row printed in columns, one of which opens with such a label ("Patient ID: 12345"
at the right of a letterhead), is read as one row per column.

A row that is only such a label, without its colon (a discharge summary's "Principal
diagnosis" or "Medications on discharge" set as a heading), is a paragraph of its own,
however closely the lines are set. Under a list's heading, a row that starts at the
list's left edge with a capital letter starts the next item (a medicine's item only
when it prints a dose), unless the row above breaks off mid-phrase ("with", ",").

A list printed as a table ("Medication  Dose  Route  Frequency  Status") is read as a
DOCX table is: its header row names the columns, and each row under it becomes a
``table_row`` section whose cells are cut at the header's column edges (``_table_at``).
"""

from __future__ import annotations

import re
from statistics import median

from domain.content import NormalizedContent, PageContent, Section, Word
from domain.models import Citation
from domain.policy.facts.citations import quote_from_words
from extract.layout import Row, page_rows
from extract.referral.labels import INLINE, LIST_FIELDS, header_kind, is_other_heading, label_field
from extract.values.lists import parse_medication

# A gap between rows wider than this many times the page's usual one starts a paragraph.
PARAGRAPH_GAP = 1.45
# A row ending before this share of the text's width is a paragraph's last line.
SHORT_ROW = 0.8


def _ends_paragraph(row: Row, nxt: Row, pitch: float, right: float, left: float) -> bool:
    if nxt.y0 - row.y0 > PARAGRAPH_GAP * pitch:
        return True
    if row.text.rstrip().endswith((":", "\uff1a")):
        return True
    if _opens_with_label(nxt.text) or _opens_with_short_label(nxt.text):
        return True  # "Allergies: ..." under a line of prose starts its own paragraph, however spaced
    if _opens_with_label(row.text) and nxt.x0 < row.x0 - COLUMN_GAP * row.height:
        return True  # a labelled line in a right-hand column; the next row is the left column's
    if _label_alone(row.text) or _label_alone(nxt.text):
        return True  # a heading without its colon, set as close as the lines around it
    return row.x1 < left + SHORT_ROW * (right - left)


def _opens_with_label(text: str) -> bool:
    """Whether a row opens with a label a letter is read by ("Re:", "Allergies:",
    "Current medications:")."""
    m = INLINE.match(text)
    return bool(m) and label_field(m.group(1)) is not None


# A clinic note's own section labels ("S:", "O/E:", "Imp:", "Bloods today:"): a few
# words and a colon opening the row.
_SHORT_LABEL = re.compile(r"^\s*[A-Z][A-Za-z/&.'-]*(?:\s+[A-Za-z/&.'-]+){0,2}\s*:\s+\S")


def _opens_with_short_label(text: str) -> bool:
    """Whether a row opens with a short label of any kind ("O/E: T 38.1 C, ..."): a new
    section of a note, not more of the line above, which a label the reader does not
    know would otherwise run into (a PMH list took the examination's readings)."""
    return _SHORT_LABEL.match(text) is not None


def _label_alone(text: str) -> bool:
    """A row that is a label the letter is read by, or another section's heading, and
    nothing else ("Comorbidities", "Results")."""
    t = text.strip()
    return 0 < len(t) <= 50 and len(t.split()) <= 6 and (label_field(t) is not None or is_other_heading(t))


# What a row ending mid-phrase ends with: the next row carries on the same item.
_BREAKS_OFF = re.compile(r"(?:[,;/(&+\-\u2013]|\b(?:and|or|with|of|for|to|then|in|on|at|by|the|a|an|plus))\s*$",
                         re.IGNORECASE)


def _next_item(row: Row, nxt: Row, kind: str, list_left: float, pitch: float) -> bool:
    """Under a list's heading: whether ``nxt`` starts the list's next item rather than
    carrying on ``row`` (each item on a row of its own, long ones reaching the margin)."""
    first = nxt.text.lstrip()
    if abs(nxt.x0 - list_left) > 0.5 * pitch or not first[:1].isupper() or _BREAKS_OFF.search(row.text):
        return False
    return kind != "medications" or parse_medication(first)["dose"] is not None


# Words further apart than this many times the row's text height stand in columns.
COLUMN_GAP = 2.5


def _label_columns(row: Row) -> list[Row]:
    """A row printed in columns, one of which opens with a label the letter is read by
    ("Community Health Hospital      Patient ID: 12345"; "Patient Name: Levin, Henry L.
    Discharge Summary"), as one row per column, so the label's value is only its own
    column's words. Other rows, columns of a table among them, stay whole."""
    cuts = [k for k in range(1, len(row.words))
            if row.words[k].x0 - row.words[k - 1].x1 > COLUMN_GAP * row.height]
    if not cuts:
        return [row]
    bounds = [0, *cuts, len(row.words)]
    columns = [Row(row.page, row.words[a:b], row.index) for a, b in zip(bounds, bounds[1:])]
    return columns if any(_opens_with_label(c.text) for c in columns) else [row]


# Words of a table row further apart than this many times the row's height are in
# different cells (a header's "Medication      Dose"); a cell's own words are closer.
CELL_GAP = 1.5
# A cell starts at its column's edge within this many times the row's height.
ALIGNED = 0.25


def _cells(row: Row) -> list[list[Word]]:
    cells: list[list[Word]] = [[row.words[0]]]
    for prev, w in zip(row.words, row.words[1:]):
        if w.x0 - prev.x1 > CELL_GAP * row.height:
            cells.append([w])
        else:
            cells[-1].append(w)
    return cells


def _table_at(rows: list[Row], i: int, pitch: float) -> tuple[list[float], int] | None:
    """(the columns' left edges, the index after the table's last row) when ``rows[i]``
    heads a list table ("Medication  Dose  Route  Frequency  Status", "Allergen  Reaction
    Severity"). The rows under it are the table's while they start at or right of its
    first column, hold words in at least two of its columns (a row in one column carries
    on the row above), follow within two line pitches, and are no label or heading."""
    head = _cells(rows[i])
    if len(head) < 2 or header_kind([" ".join(w.text for w in c) for c in head]) is None:
        return None
    starts = [c[0].x0 for c in head]
    end = i + 1
    while end < len(rows):
        row, above = rows[end], rows[end - 1]
        slack = 0.5 * row.height
        if (row.y0 - above.y0 > 2 * pitch or row.x0 < starts[0] - slack or _label_alone(row.text)
                or _opens_with_label(row.text) or row.text.rstrip().endswith((":", "\uff1a"))):
            break
        if len({_column(w, starts, slack) for w in row.words}) < 2 and end == i + 1:
            break  # the row under the header is no row of it: no table
        if any(_column(a, starts, slack) != (k := _column(b, starts, slack)) and b.x0 - a.x1 < CELL_GAP * row.height
               and abs(b.x0 - starts[k]) > ALIGNED * row.height for a, b in zip(row.words, row.words[1:])):
            # A line of running text under the table: its words run on across the columns
            # (a long cell that nearly reaches the next column still has its next cell
            # start right at the column's edge).
            break
        end += 1
    return (starts, end) if end > i + 1 else None


def _column(w: Word, starts: list[float], slack: float) -> int:
    return max((k for k, x in enumerate(starts) if x <= w.x0 + slack), default=0)


def _table_sections(rows: list[Row], starts: list[float], page: PageContent, table: str,
                    index: int) -> list[Section]:
    """The table's rows as ``table_row`` sections, as a DOCX table's are read: cells by
    column, each row citing its own words. A row in one column only carries on the row
    above it (a long frequency wrapped under itself)."""
    out: list[Section] = []
    for row in rows:
        slack = 0.5 * row.height
        by_column: dict[int, list[Word]] = {}
        for w in row.words:
            by_column.setdefault(_column(w, starts, slack), []).append(w)
        if out and len(by_column) < 2:
            last = out[-1]
            cells = dict(last.meta["cells"])
            for k, ws in by_column.items():
                cells[k] = f"{cells.get(k, '')} {' '.join(w.text for w in ws)}".strip()
            last.meta["cells"] = sorted(cells.items())
            last.meta["words"] += row.words
            last.text = " ".join(w.text for w in last.meta["words"])
            continue
        cells = [(k, " ".join(w.text for w in by_column.get(k, []))) for k in range(len(starts))]
        out.append(Section(locator=f"page {page.number}", text=row.text, section_type="table_row",
                           meta={"table": table, "row": len(out) + 1, "cells": cells, "page": page,
                                 "words": list(row.words), "index": index + len(out)}))
    return out


def paragraphs(page: PageContent, start_index: int = 0) -> list[Section]:
    """The page's paragraphs and list tables as sections ("page 1"), with their words in
    reading order."""
    rows = [column for row in page_rows(page) for column in _label_columns(row)]
    if not rows:
        return []
    steps = [b.y0 - a.y0 for a, b in zip(rows, rows[1:]) if b.y0 > a.y0]
    pitch = median(steps) if steps else max(r.height for r in rows) * 1.5
    bounds = (min(r.x0 for r in rows), max(r.x1 for r in rows))
    out: list[Section] = []
    run_start, i = 0, 0
    while i < len(rows):
        table = _table_at(rows, i, pitch)
        if table is None:
            i += 1
            continue
        starts, end = table
        out += _paragraphs_of(rows[run_start:i], page, start_index + len(out), pitch, bounds)
        out += _table_sections(rows[i:end], starts, page, f"page {page.number} row {i}", start_index + len(out))
        run_start = i = end
    return out + _paragraphs_of(rows[run_start:], page, start_index + len(out), pitch, bounds)


def _paragraphs_of(rows: list[Row], page: PageContent, start_index: int, pitch: float,
                   bounds: tuple[float, float]) -> list[Section]:
    """Rows between tables grouped into paragraphs; ``bounds``: the page text's left and
    right edges."""
    if not rows:
        return []
    left, right = bounds
    groups: list[list[Row]] = [[rows[0]]]
    listing: str | None = None  # the list whose heading was the last label alone
    for row, nxt in zip(rows, rows[1:]):
        if _label_alone(row.text):
            field = label_field(row.text.strip())  # None under "Results": no list
            listing = field if field in LIST_FIELDS else None
        elif _opens_with_label(row.text) or nxt.y0 - row.y0 > 2 * PARAGRAPH_GAP * pitch:
            listing = None  # another label, or a wide gap: the list is over
        if _ends_paragraph(row, nxt, pitch, right, left) or (
                listing and _next_item(row, nxt, listing, groups[-1][0].x0, pitch)):
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
