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
def status_with_stop(status: str | None, stop: str | None, today: str) -> tuple[str | None, str | None]:
    """(the status to record, a doubt for a person or None) for a medicine whose list
    prints when it was stopped in a column of its own (``stop``: the date as ISO when
    it reads as one, else as printed; None or "" when the cell holds none). A stop
    still to come is a course that ends: a person checks it. A status that already
    says it is not taken keeps its words ("Discontinued" beside its date); otherwise
    the stop joins it ("stopped 2022-01-25"), and a status that said current beside a
    stop reads as unknown to ``status_reading``: to review (fail closed)."""
    if not stop:
        return status, None
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", stop) and stop > today:
        return status, f"a stop date still to come ({stop})"
    if status_reading(status) == "not_current":
        return status, None
    said = f"stopped {stop}"
    return (f"{status}; {said}" if status else said), None


def _words_pattern(words) -> str:
    """Longest first, spaces as any run of them; words of two letters or fewer ("no",
    "y") are too short to tell after a medicine."""
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True) if len(w) > 2)


# Status-column words that, after a medicine, are its frequency ("ibuprofen as needed").
_SCHEDULE = frozenset({"prn", "as needed", "regular", "scheduled"})
# A status printed in its own part of a medicine's line: the whole part, or followed
# by a date or why ("STOPPED 03/2026", "held due to AKI"). Parts are split at
# punctuation and at a dash between spaces.
_STATUS_PART = re.compile(
    rf"^({_words_pattern((CURRENT - _SCHEDULE) | NOT_CURRENT)})"
    r"(?:\s*$|\s+(?=\d)|\s+(?:due\s+to|because|owing\s+to|following|since|on|in|from|until|till|pending|"
    r"during|while|whilst|after|at)\b)",
    re.IGNORECASE)
# Words about stopping a medicine that, in another phrase, may still say so ("hold if
# systolic < 100"); "prior to meals" and "complete the course" do not.
_STOPPING = ("stopped", "stop", "discontinued", "discontinue", "ceased", "cease", "held", "hold", "withheld",
             "withhold", "suspended", "paused", "omitted", "omit", "cancelled", "canceled")
# A status that ends a part after the dose and frequency, as a table's last column
# does ("400 mg as needed Stopped"); an instruction ("stop", "hold") is no status there.
_LAST_WORDS = (CURRENT - _SCHEDULE - {"continue", "taking", "yes"}) | (
    NOT_CURRENT - {"stop", "hold", "discontinue", "withhold", "no"})
_STATUS_LAST = re.compile(rf"\s({_words_pattern(_LAST_WORDS)})$", re.IGNORECASE)
_NOT_CURRENT_WORD = re.compile(rf"(?<![\w'])(?:{_words_pattern(_STOPPING)})(?![\w'])", re.IGNORECASE)
_PARTS = re.compile(r"[,;:()\[\]]|\s[-\u2013\u2014]\s|^\s*[-\u2013\u2014]")


def status_after(text: str) -> str | None:
    """The status a medicine's line prints after its name, dose and frequency
    (``text`` is what follows them), as printed: "STOPPED" of " - STOPPED (two
    hypoglycaemic episodes)", "NEW" of " for 3 days - NEW, last dose 06/12". Words
    about stopping it in another phrase ("hold if systolic < 100") are returned whole:
    a status the vocabulary does not know, which a person reads (fail closed). None
    when nothing is said."""
    for part in _PARTS.split(text or ""):
        m = _STATUS_PART.match(part.strip()) or _STATUS_LAST.search(part.strip())
        if m:
            return m.group(1)
    for part in _PARTS.split(text or ""):
        if (word := _NOT_CURRENT_WORD.search(part)) is not None:
            # From the stopping word on: "40 mg each morning withheld until reviewed" (a
            # fax lost the dash) says "withheld", not its dose and frequency again.
            said = re.sub(r"\s+", " ", part[word.start():]).strip(" ,;:-\u2013\u2014()[]")
            m = _STATUS_PART.match(said)
            return m.group(1) if m else said
    return None


def status_in_note(note: str | None) -> str | None:
    """The status a free note beside a medicine opens with or speaks of ("Stopped
    01/11/2026 - hyponatraemia" -> "Stopped"; "stop if dizzy" whole, a status the policy
    does not know), read as ``status_after`` reads what follows a dose; None for a note
    that says none ("for AF")."""
    return status_after(" " + " ".join((note or "").split()))


# A status printed before the medicine, as a discharge summary's list of changes does
# ("STOPPED: Ramipril 5 mg", "Held - metformin 1 g BD", "Started amlodipine 5 mg"):
# any status word with a colon or a dash after it; without one, only a verb of
# starting, stopping or keeping, followed by the medicine's name.
_LEAD_VERBS = frozenset({"stopped", "started", "restarted", "resumed", "ceased", "discontinued", "held", "withheld",
                         "suspended", "continue", "continued", "omitted", "paused",
                         # as a list of changes prints them when a scan loses the colon ("NEW Linagliptin")
                         "new", "changed"})
_STATUS_LEAD = re.compile(
    rf"^\s*(?:({_words_pattern((CURRENT - _SCHEDULE) | NOT_CURRENT)})\s*(?::|[-\u2013\u2014](?=\s))"
    rf"|({_words_pattern(_LEAD_VERBS)})(?=\s+[A-Za-z]))\s*",
    re.IGNORECASE)
# A change of dose printed after the medicine's name ("Bisoprolol increased from 2.5 mg to
# 5 mg"): still taken, at the dose it was changed to. Every one is a current status above.
DOSE_CHANGES = ("dose increased", "dose reduced", "dose decreased", "dose changed", "dose adjusted", "increased",
                "reduced", "decreased", "changed")


def status_before(text: str) -> tuple[str, str] | None:
    """(the status, the rest of the line) when a medicine's line opens with its status
    ("STOPPED: Ramipril 5 mg once daily" -> ("STOPPED", "Ramipril 5 mg once daily")),
    else None."""
    m = _STATUS_LEAD.match(text or "")
    if m is None:
        return None
    return (m.group(1) or m.group(2)), text[m.end():]


# A sentence tells of starting, stopping or changing a medicine with a verb before its
# name ("stop amlodipine", "we have discontinued her ramipril", "was started on apixaban",
# "increase bisoprolol") or after it ("ramipril 5 mg was withheld", "metformin has been
# stopped"). Each verb reads as the status a list would print for it.
SENTENCE_VERBS: dict[str, str] = {
    **dict.fromkeys(("stop", "stopped", "stopping"), "stopped"),
    **dict.fromkeys(("discontinue", "discontinued", "discontinuing"), "discontinued"),
    **dict.fromkeys(("cease", "ceased"), "ceased"),
    **dict.fromkeys(("hold", "held", "holding"), "held"),
    **dict.fromkeys(("withhold", "withheld", "withholding"), "withheld"),
    **dict.fromkeys(("suspend", "suspended"), "suspended"),
    **dict.fromkeys(("omit", "omitted"), "omitted"),
    **dict.fromkeys(("start", "started", "starting", "commence", "commenced", "initiate", "initiated"), "started"),
    **dict.fromkeys(("restart", "restarted", "resume", "resumed"), "restarted"),
    **dict.fromkeys(("increase", "increased", "uptitrate", "uptitrated"), "dose increased"),
    **dict.fromkeys(("reduce", "reduced", "decrease", "decreased", "wean", "weaned"), "dose reduced"),
}
_VERBS = _words_pattern(SENTENCE_VERBS)
_OBJECT_WORDS = r"(?:\s+(?:her|his|their|the|taking|using|on|with|treatment\s+with|therapy\s+with|regular|oral|all))*"
_NEGATION = r"(?:(not|n't|never)\s+(?:be\s+)?)?"
_VERB_BEFORE = re.compile(rf"(?<![\w'])(?:{_NEGATION})({_VERBS}){_OBJECT_WORDS}\s*$", re.IGNORECASE)
_SWITCHED_FROM = re.compile(r"\b(?:switched|changed|converted)\s+(?:\w+\s+){0,2}from\s*$", re.IGNORECASE)
_SWITCHED_TO = re.compile(r"\b(?:switched|changed|converted)\b.*\bto\s*$", re.IGNORECASE)
_NO_LONGER = re.compile(r"\bno\s+longer\s+(?:takes?|taking|on|uses?|using)\s*$", re.IGNORECASE)
_VERB_AFTER = re.compile(
    rf"^\s*(?:\([^)]*\)\s*)?(?:(?:has|have|had|was|were|is|are|will|should|must|to|would)\s+)?{_NEGATION}"
    rf"(?:been\s+|be\s+)?({_VERBS})(?![\w'])", re.IGNORECASE)


def status_in_sentence(before: str, after: str) -> str | None:
    """The status a sentence gives a medicine it names: ``before`` is the clause's text
    up to the name, ``after`` what follows the medicine's dose and frequency in it. A
    verb of stopping, starting or changing reads as its status ("stop amlodipine" ->
    "stopped"); one said not to happen ("do not stop", "was not started") is returned as
    printed, a status no list prints, so a person reads it (fail closed). None when the
    sentence says neither."""
    if _SWITCHED_FROM.search(before):
        return "stopped"  # "switched from amlodipine to lercanidipine"
    if _SWITCHED_TO.search(before):
        return "started"
    if _NO_LONGER.search(before):
        return "no longer taking"
    for m in (_VERB_BEFORE.search(before), _VERB_AFTER.match(after)):
        if m is None:
            continue
        if m.group(1):
            return re.sub(r"\s+", " ", m.group(0)).strip(" ()")
        return SENTENCE_VERBS[m.group(2).lower()]
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


def status_words(status: str) -> str:
    """A status as a medicine's line shows it: as printed, but a bare "Yes"/"No" of a
    "Current?" column in words that say what it answers."""
    if status.strip().lower() in ("yes", "y", "no", "n"):
        return "taken now" if status_reading(status) == "current" else "not taken now"
    return status
