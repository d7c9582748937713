"""The one place the DOCX normaliser reaches into python-docx's private names.

Checked against python-docx 1.2.0 (requirements.txt). Why the public API is not enough:

* ``Document._body`` - the normaliser walks the body's XML itself (``w:p``, ``w:tbl``
  and, unlike ``Document.iter_inner_content``, the content controls ``w:sdt`` whose
  paragraphs a form letter keeps its text in), so it builds each ``Paragraph`` and
  ``Table`` from its element. They need the body proxy python-docx gives its own
  ``Document.paragraphs`` and ``tables`` as their parent, through which they reach the
  document part (styles, numbering). No public property returns it.
* ``_Cell._tc`` - ``row.cells`` gives a merged cell once per grid column it spans. What
  makes two of them the same cell is the ``w:tc`` element underneath, which is not
  public. (1.2.0 happens to hand out the same ``_Cell`` object for each column, but its
  documentation does not promise that; the element is what the cell is. Comparing
  texts would wrongly drop a neighbour that holds the same text.)

What breaks if python-docx renames either: every DOCX (``body``) or every DOCX with a
table (``distinct_cells``) fails with an AttributeError, which the job reports as an
internal error; tests/extract/referral/test_docx.py reads letters with merged cells and
content controls (test_merged_cells_header_tables_and_content_controls), so an upgrade
that breaks either fails there first.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def body(document) -> Any:
    """The body proxy of ``document``: the parent for a ``Paragraph`` or ``Table`` built
    from an element of ``document.element.body``."""
    return document._body


def distinct_cells(cells: Iterable) -> list[tuple[int, Any]]:
    """Each cell of a table row once, with its 1-based grid column where it first
    appears: a merged cell, which python-docx repeats for every column it spans, comes
    only at its first column."""
    seen: set[int] = set()
    out: list[tuple[int, Any]] = []
    for col, cell in enumerate(cells, start=1):
        key = id(cell._tc)
        if key not in seen:
            seen.add(key)
            out.append((col, cell))
    return out
