"""When a "no known allergies" statement may stand as a confirmed fact (pure).

"NKDA" on an intake form and "penicillin - hives" in a referral cannot both be true. The
workbench cannot tell a drug from a food or a material in every charted substance, so
any allergy on the chart contradicts a "no known (drug) allergies" statement: the
statement is then a review item, never sent or shown as confirmed beside the allergy.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping


def is_no_known_allergies(value: Mapping[str, Any] | None) -> bool:
    """An allergy fact's structured value that states there are none (NKDA, "none known")."""
    value = value or {}
    return bool(value.get("no_known_allergies")) or value.get("status") == "no_known_allergies"


def contradicted_by(charted_substances: Iterable[str | None]) -> str | None:
    """Why a "no known allergies" statement needs review, given the substances of the
    allergies the chart holds; None when the chart holds none."""
    named = sorted({str(s).strip() for s in charted_substances if s and str(s).strip()}, key=str.lower)
    if not named:
        return None
    return "the chart lists an allergy (" + ", ".join(named[:3]) + (", ..." if len(named) > 3 else "") + \
        "), which a 'no known allergies' statement contradicts"
