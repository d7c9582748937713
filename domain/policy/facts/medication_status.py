"""Whether a medication's recorded status says the patient takes it now (pure).

A medication list (a workbook's "Status" column, an intake table) may record a drug as
stopped, completed or on hold. Such an entry is the patient's history, shown and cited,
never a current chart medication. A status the vocabulary does not know is in doubt,
so the entry goes to a person (fail closed). The words are data, below; no status
printed at all means the list is of current medications, as lists are.
"""

from __future__ import annotations

import re

# A person takes it now.
CURRENT = frozenset({
    "active", "current", "currently taking", "taking", "ongoing", "continue", "continued", "continuing",
    "yes", "y", "new", "started", "restarted", "resumed", "prn", "as needed", "regular", "scheduled",
    "intended",  # FHIR MedicationStatement: the patient is to take it (fhir_reading charts it too)
})
# Recorded, but not taken now: history, never a current chart medication.
NOT_CURRENT = frozenset({
    "stopped", "stop", "discontinued", "discontinue", "d/c", "dc", "d/c'd", "dc'd", "ceased", "completed",
    "complete", "finished", "course completed", "inactive", "held", "hold", "on hold", "suspended",
    "paused", "no longer taking", "not taking", "not taken", "completed course", "past", "previous", "former", "prior", "expired",
    "cancelled", "canceled", "no", "n",
})


def _key(status: str) -> str:
    """Case, punctuation, hyphens ("on-hold", FHIR's "not-taken") and spacing off."""
    return re.sub(r"\s+", " ", re.sub(r"[.:;,!()\[\]_-]", " ", status.lower())).strip()


def status_reading(status: str | None) -> str | None:
    """"current", "not_current" or "unknown" for a recorded status; None when none is
    recorded. A status with a date after it ("Stopped 03/2026") reads by its words."""
    if status is None or not status.strip():
        return None
    key = _key(status)
    words = re.sub(r"\b\d[\d/.\-]*\b", " ", key).split()
    for candidate in (key, " ".join(words)):
        if candidate in CURRENT:
            return "current"
        if candidate in NOT_CURRENT:
            return "not_current"
    return "unknown"
