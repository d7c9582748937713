"""The brief as a printable PDF (PyMuPDF): the same lines as the text, each citation a
numbered mark whose footnote (document, place, quote) is printed at the foot of the page
where it is first cited."""

from __future__ import annotations

import html

import pymupdf

from domain.policy.answers.brief_budget import SECTIONS
from core.services.brief.render import Footnote, cut_lines, footnotes, section_title

PAGE = pymupdf.paper_rect("a4")
MARGIN = 50
GAP = 14  # between the body and the footnote rule
CSS = ("* {font-family: sans-serif; font-size: 9.5pt;} h1 {font-size: 14pt; margin: 0;} "
       "h2 {font-size: 11pt; margin: 6pt 0 2pt 0;} p {margin: 0 0 2pt 0;} .note {font-size: 7.5pt;}")


def _measure(body: str, width: float) -> float:
    """Height ``body`` takes at ``width``, laid out as it will be printed."""
    doc = pymupdf.open()
    page = doc.new_page(width=width + 2, height=10000)
    spare, _ = page.insert_htmlbox(pymupdf.Rect(0, 0, width, 9000), body, css=CSS, scale_low=1)
    doc.close()
    return 9000 - spare


def _blocks(brief) -> list[tuple[str, list[Footnote]]]:
    """(html, the footnotes first cited in it) per printed block, in reading order."""
    lines = brief.lines
    notes, marks = footnotes(lines, brief.names)
    by_number = {n.number: n for n in notes}
    seen: set[int] = set()
    blocks: list[tuple[str, list[Footnote]]] = [("<h1>Patient brief</h1>", [])]
    for key in SECTIONS:
        mine = [(line, m) for line, m in zip(lines, marks) if line.section == key]
        shown = brief.fitted.shown.get(key)
        if not shown:
            continue
        blocks.append((f"<h2>{html.escape(section_title(key, shown))}</h2>", []))
        for line, m in mine:
            new = [by_number[n] for n in m if n not in seen]
            seen.update(m)
            sup = f"<sup>{','.join(map(str, m))}</sup>" if m else ""
            blocks.append((f"<p>• {html.escape(line.text)}{sup}</p>", new))
    cut = cut_lines(brief.fitted.cut, brief.fitted.budget)
    blocks.append(("<h2>Cut to fit the budget</h2>" + "".join(f"<p>{html.escape(t)}</p>" for t in cut), []))
    return blocks


def _note_html(notes: list[Footnote]) -> str:
    return "".join(f'<p class="note"><sup>{n.number}</sup> {html.escape(n.text)}</p>' for n in notes)


def brief_pdf(brief) -> bytes:
    """The brief as PDF bytes: body blocks flow down each page; a page ends when the next
    block and the footnotes it brings no longer fit above the bottom margin."""
    width = PAGE.width - 2 * MARGIN
    bottom = PAGE.height - MARGIN
    doc = pymupdf.open()
    doc.set_metadata({"title": "Patient brief", "creator": "clinical document review workbench"})
    pages: list[tuple[list[str], list[Footnote]]] = [([], [])]
    used = 0.0
    for block, new in _blocks(brief):
        body, notes = pages[-1]
        height = _measure(block, width)
        notes_height = _measure(_note_html(notes + new), width) + GAP if notes or new else 0
        if body and MARGIN + used + height + notes_height > bottom:
            pages.append(([], []))
            body, notes, used = *pages[-1], 0.0
        body.append(block)
        notes.extend(new)
        used += height
    for body, notes in pages:
        page = doc.new_page(width=PAGE.width, height=PAGE.height)
        page.insert_htmlbox(pymupdf.Rect(MARGIN, MARGIN, MARGIN + width, bottom), "".join(body), css=CSS)
        if notes:
            note_html = _note_html(notes)
            top = bottom - _measure(note_html, width)
            page.draw_line(pymupdf.Point(MARGIN, top - 4), pymupdf.Point(MARGIN + 120, top - 4), width=0.5)
            page.insert_htmlbox(pymupdf.Rect(MARGIN, top, MARGIN + width, bottom + 2), note_html, css=CSS)
    data = doc.tobytes(garbage=3, deflate=True)
    doc.close()
    return data
