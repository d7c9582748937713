"""The one place the XLSX normaliser reaches into openpyxl's private names.

Checked against openpyxl 3.1.5 (requirements.txt). Why the public API is not enough:
``Worksheet._cells`` is openpyxl's own store of the cells it loaded, a dict keyed by
(row, column). Every public way to walk a sheet (``iter_rows``, ``rows``, ``values``,
``ws[...]``) goes coordinate by coordinate from row 1 to ``max_row`` and creates each
empty cell it passes (``Worksheet.cell``), so a sheet formatted down to row 1,048,576
would be walked, and filled with empty cells, a million rows deep. Only the store knows
which few coordinates hold something.

What breaks if openpyxl renames or reshapes the store: every workbook fails with an
AttributeError (reported as an internal error) or reads no cells;
tests/extract/workbook/test_xlsx.py reads workbooks through ``filled_coordinates`` and
fails first.
"""

from __future__ import annotations


def filled_coordinates(ws) -> set[tuple[int, int]]:
    """(row, column), 1-based, of every cell of ``ws`` that holds a value (a formula
    counts on a sheet loaded with formulas), without visiting the empty ones."""
    return {rc for rc, cell in ws._cells.items() if cell.value is not None}
