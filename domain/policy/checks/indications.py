"""Labelled indications per medication class (indications.json): whether a problem
entry names one. A class the table does not hold cannot be checked."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from domain.policy.checks.vocabulary import words

INDICATIONS_PATH = Path(__file__).with_name("indications.json")


@lru_cache(maxsize=1)
def _table() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    data = json.loads(INDICATIONS_PATH.read_text(encoding="utf-8"))
    return {cls: (tuple(words(p).strip() for p in row["problems"]), tuple(c.upper() for c in row["icd10"]))
            for cls, row in data["indications"].items()}


def classes_with_indications() -> frozenset[str]:
    return frozenset(_table())


def names_indication(class_id: str, description: str | None, code: str | None) -> bool:
    """Whether a problem entry (its words or its ICD-10 code) is a labelled indication
    for the class."""
    terms, prefixes = _table().get(class_id, ((), ()))
    text = words(description)
    if any(f" {t} " in text for t in terms):
        return True
    c = (code or "").strip().upper()
    return bool(c) and any(c.startswith(p) for p in prefixes)


CONDITIONS_PATH = Path(__file__).with_name("conditions.json")


@lru_cache(maxsize=1)
def _conditions() -> dict:
    return json.loads(CONDITIONS_PATH.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def named_conditions() -> tuple[str, ...]:
    """Every condition the workbench knows by name (lower-case, longest first): the
    indications of this table and the common conditions of conditions.json, which a
    letter's plain "she has ..." may introduce."""
    terms = {t for terms, _ in _table().values() for t in terms}
    terms |= {words(n).strip() for n in _conditions()["names"]}
    terms |= {a.lower() for a in _conditions()["abbreviations"]}
    return tuple(sorted(terms, key=len, reverse=True))


@lru_cache(maxsize=1)
def condition_words() -> frozenset[str]:
    """The names of conditions.json, which match in any case however short ("gout");
    other short names (the indications' "af", "ckd") count only in capitals."""
    return frozenset(words(n).strip() for n in _conditions()["names"])


# A checklist's label of more words than this is a question or a sentence, not a condition.
MAX_CONDITION_LABEL_WORDS = 5


def names_a_condition(label: str) -> bool:
    """Whether a short label names a condition: one the workbench knows by name
    (``named_conditions``), or one made of a few words with a condition's head word
    ("Kidney disease", "Thyroid problems", "Cancer"; conditions.json's head_words). For a
    medical-history checklist's rows ("Asthma  [x] Y  [ ] N")."""
    said = words(label).strip()
    if not said or len(said.split()) > MAX_CONDITION_LABEL_WORDS:
        return False
    padded = f" {said} "
    if any(f" {name} " in padded for name in named_conditions()):
        return True
    return any(w in _conditions()["head_words"] for w in said.split())
