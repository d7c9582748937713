"""How often, by which route and how much of a medication, read as one value (pure).

"BID", "twice a day" and "q12h" are one frequency; "PO" and "by mouth" one route;
"1 g" and "1000 mg" one dose. Comparing two medication entries on these values is
what keeps "metformin 1000 mg BID" and "metformin 1000 mg twice a day" from being a
conflict. The vocabulary is data (``medication_schedule.json`` beside this module,
with its sources); a wording it does not know is compared as printed, so a real
difference still goes to review.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

VOCABULARY_PATH = Path(__file__).with_name("medication_schedule.json")


@lru_cache(maxsize=1)
def _vocabulary() -> dict[str, Any]:
    return json.loads(VOCABULARY_PATH.read_text(encoding="utf-8"))


def _key(text: str) -> str:
    """Lower case, dots/hyphens/slashes read as spaces, spaces collapsed ("b.i.d." -> "b i d")."""
    return " ".join(re.sub(r"[.\-/,()]+", " ", str(text or "").lower()).split())


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, str], dict[str, str]]:
    vocab = _vocabulary()
    frequencies = {_key(p): row["value"] for row in vocab["frequencies"] for p in row["phrases"]}
    routes = {_key(p): row["value"] for row in vocab["routes"] for p in row["phrases"]}
    return frequencies, routes


def frequency(text: str | None) -> str | None:
    """The canonical frequency a field's wording stands for ("BID" -> "twice daily"), or None."""
    return _tables()[0].get(_key(text or "")) if text else None


def route(text: str | None) -> str | None:
    """The canonical route a field's wording stands for ("PO" -> "oral"), or None."""
    return _tables()[1].get(_key(text or "")) if text else None


_DOSE = re.compile(r"^\s*(\d+(?:[.,]\d+)?)\s*([a-zµμ]+)\s*$", re.I)


def dose(text: str | None) -> str | None:
    """A single amount in one canonical unit ("1 g" -> "1000 mg", "500mg" -> "500 mg"), or None."""
    m = _DOSE.match(str(text or ""))
    if not m:
        return None
    unit = _vocabulary()["dose_units"]["units"].get(m.group(2).lower())
    if unit is None:
        return None
    amount = float(m.group(1).replace(",", ".")) * unit[1]
    return f"{amount:g} {unit[0]}"


def dose_unit_words() -> frozenset[str]:
    """Every word that makes a number an amount of a medicine ("500 mg", "2 tablets"):
    the units doses are compared in and the dosage forms counted, lower case."""
    vocab = _vocabulary()
    return frozenset(vocab["dose_units"]["units"]) | frozenset(vocab["dose_forms"]["words"])


@lru_cache(maxsize=2)
def dose_amount_pattern(*, strengths: bool = True) -> str:
    """A regular expression (no groups; compile it case-insensitive) for a dose as
    printed: "500 mg", "0.5mg", "5/325 mg", "1-2 puffs", "1 or 2 tablets", and with ``strengths`` also
    "10 mg/ml", "1%", "20 mmol". The one pattern every reader of a dose uses; its
    words are this vocabulary's."""
    vocab = _vocabulary()
    words = set(dose_unit_words()) | (set(vocab["dose_strengths"]["units"]) if strengths else set())
    units = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    number = r"\d+(?:\.\d+)?"
    return rf"{number}(?:\s*(?:-|\u2013|to|or)\s*{number})?(?:\s*/\s*{number})?\s*(?:{units})(?!\w)"


@lru_cache(maxsize=1)
def _leading_preparation() -> re.Pattern[str]:
    words = sorted(_vocabulary()["preparations"]["words"], key=len, reverse=True)
    return re.compile(r"^(?:(?:" + "|".join(r"\s+".join(map(re.escape, w.split())) for w in words) + r")(?!\w)[\s,]*)+",
                      re.I)


def without_leading_preparation(text: str) -> str:
    """What follows a dose, less the preparation it opens with ("cream apply thinly" ->
    "apply thinly", "patch every 72 hours" -> "every 72 hours"): a preparation is part
    of what the medicine is, never how often it is taken."""
    return _leading_preparation().sub("", text.strip())


_READERS = {"frequency": frequency, "route": route, "dose": dose}


def comparable(field: str, value: Any) -> Any:
    """What a medication field is compared on: its canonical value when the vocabulary
    knows the wording, else the value as given (compared as printed)."""
    reader = _READERS.get(field)
    canonical = reader(value) if reader and value not in (None, "") else None
    return canonical if canonical is not None else value


@lru_cache(maxsize=2)
def running_text_pattern(kind: str) -> re.Pattern[str]:
    """A pattern that finds the ``kind`` ("frequencies" or "routes") wordings inside a
    line of text, longest first, leaving out those that are ordinary words in a sentence."""
    vocab = _vocabulary()
    skip = {_key(p) for p in vocab["not_found_in_running_text"]["phrases"]}
    phrases = sorted({p for row in vocab[kind] for p in row["phrases"] if _key(p) not in skip}, key=len, reverse=True)
    # Letters may be written with dots ("b.i.d."): each space or letter boundary of a
    # short abbreviation may hold a dot.
    alternatives = []
    for p in phrases:
        if re.fullmatch(r"[a-z0-9]{2,4}", p):
            alternatives.append(r"\.?".join(map(re.escape, p)) + r"\.?")
        else:
            spaced = r"[\s.-]+".join(map(re.escape, p.split()))
            alternatives.append(spaced + (r"\.?" if len(p.split()[-1]) == 1 else ""))
    return re.compile(r"(?<![\w.])(" + "|".join(alternatives) + r")(?![\w])", re.I)


def says_as_needed(text: str | None) -> bool:
    """Whether a frequency as printed says the medicine is taken only when needed ("q4h
    prn", "twice daily when required"), by the vocabulary's "as needed" wordings."""
    return any(frequency(m.group(1)) == "as needed" for m in running_text_pattern("frequencies").finditer(text or ""))
