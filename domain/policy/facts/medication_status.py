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
    # a discharge list's changes: still taken, at the dose printed
    "unchanged", "no change", "dose increased", "dose reduced", "dose decreased", "dose changed", "dose adjusted",
    "increased", "reduced", "decreased", "changed", "new medication", "new medicine",
})
# Recorded, but not taken now: history, never a current chart medication.
NOT_CURRENT = frozenset({
    "stopped", "stop", "discontinued", "discontinue", "d/c", "dc", "d/c'd", "dc'd", "ceased", "completed",
    "complete", "finished", "course completed", "inactive", "held", "hold", "on hold", "suspended",
    "paused", "no longer taking", "not taking", "not taken", "completed course", "past", "previous", "former", "prior", "expired",
    "cancelled", "canceled", "no", "n", "withheld", "withhold", "withdrawn", "omitted",
})
def _words_pattern(words) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True) if len(w) > 2)


# Status-column words that, after a medicine, are its frequency ("ibuprofen as needed").
_SCHEDULE = frozenset({"prn", "as needed", "regular", "scheduled"})
# A status printed in its own part of a medicine's line: the whole part, or followed
# by a date or why ("STOPPED 03/2026", "held due to AKI"). Parts are split at
# punctuation and at a dash between spaces.
_STATUS_PART = re.compile(
    rf"^({_words_pattern((CURRENT - _SCHEDULE) | NOT_CURRENT)})"
    r"(?:\s*$|\s+(?=\d)|\s+(?:due\s+to|because|owing\s+to|following|since|on|in|from|until|till|pending)\b)",
    re.IGNORECASE)
# Words about stopping a medicine that, in another phrase, may still say so ("hold if
# systolic < 100"); "prior to meals" and "complete the course" do not.
_STOPPING = ("stopped", "stop", "discontinued", "discontinue", "ceased", "cease", "held", "hold", "withheld",
             "withhold", "suspended", "paused", "omitted", "omit", "cancelled", "canceled")
_NOT_CURRENT_WORD = re.compile(rf"(?<![\w'])(?:{_words_pattern(_STOPPING)})(?![\w'])", re.IGNORECASE)
_PARTS = re.compile(r"[,;:()\[\]]|\s[-\u2013\u2014]\s|^\s*[-\u2013\u2014]")


def status_after(text: str) -> str | None:
    """The status a medicine's line prints after its name, dose and frequency
    (``text`` is what follows them), as printed: "STOPPED" of " - STOPPED (two
    hypoglycaemic episodes)", "NEW" of " for 3 days - NEW, last dose 06/12". Words
    about stopping it in another phrase ("hold if systolic < 100") are returned whole: a status the vocabulary does not know, which a
    person reads (fail closed). None when nothing is said."""
    for part in _PARTS.split(text or ""):
        m = _STATUS_PART.match(part.strip())
        if m:
            return m.group(1)
    for part in _PARTS.split(text or ""):
        if _NOT_CURRENT_WORD.search(part):
            return re.sub(r"\s+", " ", part).strip(" ,;:-\u2013\u2014()[]")
    return None


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
