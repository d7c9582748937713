"""Whether an engine's reading of a page reads the right way up.

One rule for the page code (which asks the engine for the page's orientation when it
does not: extract/formats/ocr/page.py) and for Tesseract's own page pass (which spends no
re-reads or vote on a turned page: extract/formats/ocr/tesseract.py). It is judged on
words of three letters or digits: the specks of a dotted leader or a speckled scan read
as short low-confidence marks, and table rules read as "|" or "———", on an upright page
as on a turned one. A turned page's words stand on end (sideways) or read at a low mean
confidence (upside down); how low is the engine's own ``upright_min_conf``.
"""

from __future__ import annotations

from domain.content import Word


def long_words(words: list[Word]) -> list[Word]:
    """The words that say which way a page is turned: three letters or digits or more."""
    return [w for w in words if sum(ch.isalnum() for ch in w.text) >= 3]


def reads_upright(words: list[Word], min_conf: float) -> bool:
    """Mostly lying down and read at ``min_conf`` or better; False with no such words."""
    found = long_words(words)
    if not found:
        return False
    standing = sum(1 for w in found if (w.y1 - w.y0) > (w.x1 - w.x0))
    mean_conf = sum(w.conf or 0.0 for w in found) / len(found)
    return standing <= len(found) / 2 and mean_conf >= min_conf
