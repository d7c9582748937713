"""What a medication or an allergy names, by the local class table
(medication_classes.json): ingredients, their classes, and whether an allergy
entry says "no known allergies". Whole words only, so "Amoxicillin-clavulanate"
names two ingredients and "sulfa" never matches "sulfasalazine"."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from domain.policy.facts.no_known_allergies import no_known_kind

CLASS_TABLE_PATH = Path(__file__).with_name("medication_classes.json")


@dataclass(frozen=True, slots=True)
class _Table:
    version: str
    class_names: dict[str, str]
    ingredients: dict[str, tuple[str, ...]]
    brands: dict[str, tuple[str, ...]]
    allergy_terms: dict[str, tuple[str, ...]]
    non_drug: tuple[str, ...]


def words(text: str | None) -> str:
    """Lower case, punctuation as spaces, one space between words, padded with spaces
    so a phrase is found on word boundaries with ``in``."""
    t = re.sub(r"[^a-z0-9\u00e0-\u00ff]+", " ", (text or "").lower())
    return f" {t.strip()} "


@lru_cache(maxsize=1)
def _table() -> _Table:
    data = json.loads(CLASS_TABLE_PATH.read_text(encoding="utf-8"))
    key = lambda k: words(k).strip()  # noqa: E731 - table keys are spelled as the text is normalised
    # Every table longest key first, so a phrase wins over a word inside it (``_found``).
    longest = lambda d: dict(sorted(d.items(), key=lambda kv: -len(kv[0])))  # noqa: E731
    return _Table(
        version=data["version"], class_names=dict(data["classes"]),
        ingredients=longest({key(k): tuple(v) for k, v in data["ingredients"].items()}),
        brands=longest({key(k): tuple(v) for k, v in data["brands"].items()}),
        allergy_terms=longest({key(k): tuple(v) for k, v in data["allergy_terms"].items()}),
        non_drug=tuple(sorted({key(k) for k in data["non_drug_allergens"]}, key=len, reverse=True)))


def table_version() -> str:
    return _table().version


def class_name(class_id: str) -> str:
    return _table().class_names.get(class_id, class_id.replace("_", " "))


def known_classes() -> frozenset[str]:
    return frozenset(_table().class_names)


def _found(text: str, keys: tuple[str, ...]) -> list[str]:
    # Keys come longest first (the tables are built so): a key inside a longer one already
    # found does not count again ("penicillin" inside "penicillin v").
    hits: list[str] = []
    for k in keys:
        if f" {k} " in text and not any(f" {k} " in f" {h} " for h in hits):
            hits.append(k)
    return hits


@lru_cache(maxsize=4096)
def ingredients_of(name: str | None) -> frozenset[str]:
    """The ingredients a medication (or allergy) entry names, by ingredient or brand."""
    t = _table()
    text = words(name)
    found = set(_found(text, tuple(t.ingredients)))
    for brand in _found(text, tuple(t.brands)):
        found |= set(t.brands[brand])
    return frozenset(found)


def classes_of_ingredients(ingredients: frozenset[str]) -> frozenset[str]:
    t = _table()
    return frozenset(c for i in ingredients for c in t.ingredients.get(i, ()))


def medication_classes(name: str | None) -> frozenset[str]:
    return classes_of_ingredients(ingredients_of(name))


@lru_cache(maxsize=4096)
def allergy_classes(substance: str | None) -> frozenset[str]:
    """The classes an allergy entry covers: the words a list uses for a group
    ("penicillin", "sulfa", "NSAIDs") and the classes of any ingredient it names."""
    t = _table()
    text = words(substance)
    groups = {c for term in _found(text, tuple(t.allergy_terms)) for c in t.allergy_terms[term]}
    return frozenset(groups) | classes_of_ingredients(ingredients_of(substance))


def non_drug_allergen(substance: str | None) -> bool:
    """An allergy to a food, latex, a sting or the like, and to no drug the table knows."""
    text = words(substance)
    return bool(_found(text, _table().non_drug)) and not allergy_classes(substance)


_NO_KNOWN = re.compile(r"\b(?:nkda|nka|nkma|nkfa|no known (?:\w+ )?(?:allerg\w*|adverse)|none known|nil known|"
                       r"no (?:drug |medication )?allergies)\b", re.IGNORECASE)
_FOOD_ONLY = re.compile(r"\b(?:nkfa|no known food)\b", re.IGNORECASE)
_DRUG_ONLY = re.compile(r"\b(?:nkda|nkma|no known (?:drug|medication|medicine)|no (?:drug|medication) allerg)",
                        re.IGNORECASE)


def no_known_allergies(value: dict, text: str) -> str | None:
    """Whether an allergy fact is a "no known allergies" statement, and of what:
    "drug" (NKDA: foods and stings may still be listed), "all" (NKA), or None (an
    allergy, or a statement about foods only)."""
    kind = no_known_kind(value)
    if kind in ("food", "environmental"):
        return None
    if kind is not None and kind != "all":
        return kind
    if kind is None and not (not (value.get("substance") or "").strip() and _NO_KNOWN.search(text or "")):
        return None
    if _FOOD_ONLY.search(text or "") and not _DRUG_ONLY.search(text or ""):
        return None
    return "drug" if _DRUG_ONLY.search(text or "") else "all"
