"""The day a question asks about ("What was her sodium on 2 Dec?") (pure).

A day and a month written out in words, either way round, with or without a year ("on 2
December", "on Dec 2nd, 2026", "from 3 Dec"), or an ISO date. A date written in figures
only ("on 02/12") is day or month first by the reader's custom, which a question does
not settle: it names no day here (the answer then shows every date, latest first).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MONTHS = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10,
           "nov": 11, "dec": 12}
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|" \
         r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_ASKED = re.compile(
    rf"\b(?:on|from|of|dated|taken|collected)\s+(?:the\s+)?"
    rf"(?:(?P<d1>{_DAY})(?:\s+of)?\s+(?P<m1>{_MONTH})|(?P<m2>{_MONTH})\s+(?:the\s+)?(?P<d2>{_DAY}))"
    r"(?:,?\s+(?P<y>(?:19|20)\d\d))?\b"
    r"|\b(?P<iso>(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01]))\b", re.I)


@dataclass(frozen=True, slots=True)
class AskedDate:
    month: int
    day: int
    year: int | None = None

    def matches(self, iso: str | None) -> bool:
        """Whether an ISO date (or date-time) is this day."""
        m = re.match(r"(\d{4})-(\d\d)-(\d\d)", iso or "")
        return bool(m) and (int(m[2]), int(m[3])) == (self.month, self.day) and \
            (self.year is None or int(m[1]) == self.year)


def asked_date(text: str) -> AskedDate | None:
    """The day the question names, or None."""
    m = _ASKED.search(text or "")
    if m is None:
        return None
    if m["iso"]:
        year, month, day = map(int, m["iso"].split("-"))
        return AskedDate(month, day, year)
    month = _MONTHS[(m["m1"] or m["m2"]).lower()[:3]]
    day = int(re.match(r"\d+", m["d1"] or m["d2"])[0])
    return AskedDate(month, day, int(m["y"]) if m["y"] else None)
