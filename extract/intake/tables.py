"""Medicines and allergies a form lists as a table (pure): a header row of column names
("Medicine | Strength | How often | What for", "Allergic to | What happened") and rows
whose cells line up under it, or rows of cells lining up with each other under a list's
label ("Current medications:" over "Levothyroxine   100 mcg   every morning").

Read as labels and answers, the header's "Medicine" became a medicine named "Strength",
the other columns margin notes, and rows below the first were lost without a word. A
table row is one item of the list, its cells kept apart so that a reader can tell the
substance from the reaction. What the column names mean is the one vocabulary every
reader uses (``extract.values.lists``).
"""

from __future__ import annotations

import re

from extract.layout import Row, segments
from extract.values.lists import ALLERGY_COLUMNS, MEDICATION_COLUMNS

# kind of list -> its columns, and the column that must be there
TABLE_COLUMNS = {"medications": (MEDICATION_COLUMNS, "name"), "allergies": (ALLERGY_COLUMNS, "substance")}
ALIGN = 0.6  # cells line up when their left edges are within this many text heights


def _norm(text: str) -> str:
    # A scan may read the space in "Allergic to" as a hyphen, and a speck before a
    # heading as a quote ("‘Dose").
    t = " ".join(text.lower().replace("-", " ").split())
    return re.sub(r"[:*#?]+$", "", re.sub(r"^[\u2018\u2019'`\"]+", "", t)).strip()


def table_header(row: Row) -> str | None:
    """The kind of list ("medications", "allergies") whose table this row heads: two or
    more cells, each a column name of that list, one of them its main column."""
    cells = [_norm(" ".join(w.text for w in seg)) for seg in segments(row.words)]
    if len(cells) < 2:
        return None
    for kind, (columns, main) in TABLE_COLUMNS.items():
        roles = [next((r for r, names in columns.items() if c in names), None) for c in cells]
        if None not in roles and main in roles and len(set(roles)) == len(roles):
            return kind
    return None


def _starts(row: Row) -> list[float]:
    return [seg[0].x0 for seg in segments(row.words)]


def _aligned(upper: Row, lower: Row) -> bool:
    """Two or more of the lower row's cells start under the upper row's, the first under the first."""
    a, b = _starts(upper), _starts(lower)
    tol = ALIGN * max(upper.height, lower.height)
    if len(a) < 2 or len(b) < 2 or abs(a[0] - b[0]) > tol:
        return False
    return sum(any(abs(x - y) <= tol for y in a) for x in b) >= 2


def _near(upper: Row, lower: Row) -> bool:
    return lower.page is upper.page and lower.y0 - upper.y1 <= 1.2 * max(upper.height, lower.height)


def table_rows(rows: list[Row]) -> tuple[dict[int, str], set[int]]:
    """(header rows by index -> the kind of list they head, the indices of rows whose
    cells line up in columns: under a header, or two or more in a run)."""
    headers = {i: kind for i, row in enumerate(rows) if (kind := table_header(row))}
    body: set[int] = set()
    for i in range(len(rows) - 1):
        upper, lower = rows[i], rows[i + 1]
        if _near(upper, lower) and _aligned(upper, lower) and i + 1 not in headers:
            body.add(i + 1)
            if i not in headers:
                body.add(i)
    return headers, body
