"""How a case's expectations name facts and chart rows.

A fact matcher is a mapping; every key it has must hold:

* ``fact_type`` - equal;
* ``where`` - each field of the structured value equals the given value (text compared
  without case or surrounding space; a list means any of them);
* ``text_contains`` / ``quote_contains`` - a piece of the fact's sentence / citation quote;
* ``certainty``, ``promotion_status``, ``active``, ``page`` - equal (a list means any of).

``document`` (an uploaded name) is applied by the caller, which knows the uploads.
"""

from __future__ import annotations

from typing import Any

IDENTIFYING = ("fact_type", "where", "text_contains", "quote_contains", "page")
STATE = ("certainty", "promotion_status", "active")


def same(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, list):
        return any(same(actual, w) for w in wanted)
    if isinstance(wanted, str) and actual is not None:
        return " ".join(str(actual).split()).casefold() == " ".join(wanted.split()).casefold()
    if isinstance(wanted, bool) or wanted is None:
        return actual is wanted or actual == wanted
    if isinstance(wanted, int | float) and isinstance(actual, str):
        try:
            return float(actual) == float(wanted)
        except ValueError:
            return False
    return actual == wanted


def _contains(text: Any, piece: str | list[str]) -> bool:
    pieces = piece if isinstance(piece, list) else [piece]
    low = " ".join(str(text or "").split()).casefold()
    return all(" ".join(p.split()).casefold() in low for p in pieces)


def _citation(fact: dict[str, Any]) -> dict[str, Any]:
    return fact.get("citation") or {}


def fact_matches(fact: dict[str, Any], matcher: dict[str, Any], keys: tuple[str, ...] = IDENTIFYING + STATE) -> bool:
    for key in keys:
        if key not in matcher:
            continue
        wanted = matcher[key]
        if key == "where":
            value = fact.get("structured_value") or {}
            if not all(same(value.get(k), v) for k, v in wanted.items()):
                return False
        elif key == "text_contains":
            if not _contains(fact.get("fact_text"), wanted):
                return False
        elif key == "quote_contains":
            if not _contains(_citation(fact).get("quote_or_value"), wanted):
                return False
        elif key == "page":
            if not same(_citation(fact).get("page"), wanted):
                return False
        elif not same(fact.get(key), wanted):
            return False
    return True


def describe(matcher: dict[str, Any]) -> str:
    parts = [f"{k}={v}" for k, v in matcher.items() if k != "where"]
    parts += [f"{k}={v}" for k, v in (matcher.get("where") or {}).items()]
    return ", ".join(parts)


def row_matches(row: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """A chart row matches when every named column holds the value (``~`` before a text
    value means "contains")."""
    for column, value in wanted.items():
        actual = row.get(column)
        if isinstance(value, str) and value.startswith("~"):
            if not _contains(actual, value[1:]):
                return False
        elif not same(actual if not hasattr(actual, "isoformat") else actual.isoformat(), value):
            return False
    return True
