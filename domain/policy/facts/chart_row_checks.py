"""Whether a fact's values can be written as a chart row (pure).

Promotion writes a fact's structured values into the chart table's columns; a value
the column cannot hold (a collection date that is no calendar date, a list where text
belongs, an empty required value) would make the whole write fail. Such a fact is not
put in the chart: its promotion is ``promotion_failed``, with this reason, and it waits
in the review queue for a person to correct it (fails closed, never a silent skip).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from domain.policy.facts.chart_rules import CHART_DESTINATIONS

# The key a reader sets on a lab result whose value cell holds no single value ("haemolysed",
# "10-20", an unreadable scrawl): the row is held for review, and approving it as it is
# writes nothing to the chart. A person's corrected value takes the key away.
VALUE_PROBLEM = "value_problem"
# Columns a chart row cannot be without (NOT NULL), beyond its subject (the first column).
_REQUIRED = {"lab_result": ("value",), "vital_sign": ("value",)}
# Columns stored as a calendar date (YYYY-MM-DD).
_DATE_COLUMNS = {"collection_date"}


def chart_row_problem(fact_type: str, value: dict[str, Any]) -> str | None:
    """Why ``value`` cannot be written as a row of ``fact_type``'s chart table, or None."""
    if fact_type not in CHART_DESTINATIONS:
        return None
    if fact_type == "lab_result" and value.get(VALUE_PROBLEM):
        return f"no single result value to write: {value[VALUE_PROBLEM]}"
    _, columns = CHART_DESTINATIONS[fact_type]
    for column in (columns[0], *_REQUIRED.get(fact_type, ())):
        if value.get(column) is None:  # a NOT NULL column (an empty subject is not promotable before this)
            return f"no {column.replace('_', ' ')} to write"
    for column in columns:
        v = value.get(column)
        if v is None:
            continue
        if not isinstance(v, (str, int, float)) or isinstance(v, bool):
            return f"{column.replace('_', ' ')} is not a single value ({type(v).__name__})"
        if column in _DATE_COLUMNS and str(v).strip():
            try:
                date.fromisoformat(str(v).strip())
            except ValueError:
                return f"{column.replace('_', ' ')} {str(v)!r} is not a calendar date (YYYY-MM-DD)"
    return None


def approval_refusal(fact_type: str, value: dict[str, Any]) -> str | None:
    """Why a person's approval of the finding as it is would put nothing in the chart,
    said before anything is decided (so the finding stays open for a correction or to be
    kept with its document), or None. Refused after the decision, the finding would stay
    decided and out of the chart, with nothing left to decide."""
    if fact_type == "lab_result" and value.get(VALUE_PROBLEM):
        return (f"This row prints no single result value: {value[VALUE_PROBLEM]}. Correct it with the value, "
                "or keep it with its document.")
    if problem := chart_row_problem(fact_type, value):
        return f"The chart cannot hold this finding as it is ({problem}). Correct it, or keep it with its document."
    return None
