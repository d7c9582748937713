"""Whether a problem's recorded status says it is the patient's problem now (pure).

A problem list may print each problem's status ("Active", "Resolved") in a column of
its own. A problem recorded as resolved, inactive or in remission is the patient's
history: shown and cited as a document fact, never a current chart problem, as a FHIR
Condition whose clinical status says so already is (``fhir_reading``). One recorded as
ruled out was never the patient's. Any other status word, or none, leaves the problem
to the usual rules: most lists print no status, and a past problem told in words ("a
stroke in 2019") stays the patient's history in the chart.
"""

from __future__ import annotations

# Recorded, but not the patient's problem now: the words FHIR's Condition clinical
# status uses for it, and their plain synonyms. "History" or "past" is no such word: a
# past stroke is the patient's history, and the chart keeps it.
PAST = frozenset({"resolved", "inactive", "remission", "in remission", "healed", "cured", "resolved/inactive"})
# Recorded as never the patient's.
NOT_THEIRS = frozenset({"ruled out", "excluded", "refuted", "not confirmed", "entered in error"})


def not_a_current_problem(fact_type: str | None, value: dict | None) -> str | None:
    """Why a problem is no current chart problem by its recorded status ("recorded as
    'Resolved': a past problem"), or None."""
    if fact_type != "problem":
        return None
    printed = str((value or {}).get("status") or "").strip()
    said = " ".join(printed.lower().replace("-", " ").split()).strip(" .")
    if said in PAST:
        return f"recorded as {printed!r}: a past problem, not a current one"
    if said in NOT_THEIRS:
        return f"recorded as {printed!r}: not the patient's problem"
    return None
