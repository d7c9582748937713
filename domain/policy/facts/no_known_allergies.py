"""When a "no known allergies" statement may stand as a confirmed fact (pure).

"NKDA" on an intake form and "penicillin - hives" in a referral cannot both be true. The
workbench cannot tell a drug from a food or a material in every charted substance, so
any allergy on the chart contradicts a "no known (drug) allergies" statement: the
statement is then a review item, never sent or shown as confirmed beside the allergy.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping


# The statuses the one list parser (extract/values/lists.py) gives a "no known ..."
# statement, and what each says there are none of. This is the one place that reads them.
NO_KNOWN_KINDS: dict[str, str] = {
    "no_known_allergies": "all",  # NKA, "none known"
    "no_known_drug_allergies": "drug",  # NKDA: foods, stings, latex may still be listed
    "no_known_food_allergies": "food",  # NKFA: says nothing about drugs
    "no_known_environmental_allergies": "environmental",  # read from FHIR (SNOMED CT 428607008)
}


# How a sentence says each kind (lower case).
NO_KNOWN_WORDS: dict[str, str] = {"all": "no known allergies", "drug": "no known drug allergies",
                                  "food": "no known food allergies", "environmental": "no known environmental allergies"}


def no_known_kind(value: Mapping[str, Any] | None) -> str | None:
    """What a "no known ... allergies" statement says there are none of ("all", "drug",
    "food"), or None for an allergy. Rows written before the statuses were split carry
    only the flag ``no_known_allergies``: "all"."""
    value = value or {}
    if kind := NO_KNOWN_KINDS.get(str(value.get("status") or "")):
        return kind
    return "all" if value.get("no_known_allergies") is True else None


def is_no_known_allergies(value: Mapping[str, Any] | None) -> bool:
    """An allergy fact's structured value that states there are none (NKDA, NKA, NKFA)."""
    return no_known_kind(value) is not None


def contradicted_by(charted_substances: Iterable[str | None]) -> str | None:
    """Why a "no known allergies" statement needs review, given the substances of the
    allergies the chart holds; None when the chart holds none."""
    named = sorted({str(s).strip() for s in charted_substances if s and str(s).strip()}, key=str.lower)
    if not named:
        return None
    return "the chart lists an allergy (" + ", ".join(named[:3]) + (", ..." if len(named) > 3 else "") + \
        "), which a 'no known allergies' statement contradicts"
