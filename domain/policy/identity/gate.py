"""Identity gate: does this document belong to the chart patient?

Deterministic rules over the identifiers the extractor found (each cited):
- any identifier present on the document that contradicts the chart -> mismatch,
  quarantined (a wrong-patient document must never feed the chart);
- two independent identifiers agree (name + DOB, or MRN + name/DOB) -> verified;
- fewer than that (missing or partial identifiers) -> ambiguous, human review;
- an identity value the document prints but no reader attributed (``UnreadIdentifier``)
  -> never verified by itself: ambiguous, and the check names what was not read (a
  contradiction among what was read still quarantines). Other identifiers (account,
  visit, NHS numbers) never reach the gate as an MRN: by nature they differ from it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Iterable

from domain.models import IdentifierKind, IdentityCandidate, IdentityStatus, UnreadIdentifier
from domain.policy.facts.chart_rules import identity_trusted

_DOB_FORMATS = ("%Y-%m-%d", "%m/%d/%Y", "%m/%d/%y", "%m-%d-%Y", "%Y%m%d", "%d %B %Y", "%d %b %Y",
                "%B %d, %Y", "%b %d, %Y", "%B %d %Y", "%b %d %Y", "%d-%b-%Y", "%Y/%m/%d")


@dataclass
class IdentityOutcome:
    status: IdentityStatus
    matched: dict[str, bool] = field(default_factory=dict)
    mismatch_reason: str | None = None
    unread: list[UnreadIdentifier] = field(default_factory=list)  # printed, not attributed

    @property
    def review_required(self) -> bool:
        return self.status in (IdentityStatus.AMBIGUOUS, IdentityStatus.MISMATCH)


def parse_dob(text: str) -> date | None:
    cleaned = re.sub(r"\s+", " ", text.strip().rstrip(".")).replace(",", ", ").replace(" ,", ",")
    cleaned = re.sub(r",\s+", ", ", cleaned)
    for fmt in _DOB_FORMATS:
        try:
            parsed = datetime.strptime(cleaned, fmt).date()
        except ValueError:
            continue
        if parsed.year < 1900 or parsed > date.today():
            # Two-digit years can land in the future; a birth date cannot.
            if fmt.endswith("%y") and parsed.year > date.today().year:
                parsed = parsed.replace(year=parsed.year - 100)
            else:
                continue
        return parsed
    return None


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not unicodedata.combining(c)).lower()


# Characters OCR puts for letters in a printed name, and the letters each may stand
# for. None of them can be part of a real name, so a name holding one was misread (or
# mistyped), never printed for another person: "IKWUEMES!-DALGAARD", "J0HN", "5MITH".
OCR_NAME_LOOKALIKES: dict[str, str] = {
    "!": "il", "|": "il", "1": "il", "0": "o", "5": "s", "$": "s", "8": "b", "6": "g", "@": "a", "2": "z",
}
_LOOKALIKE_CHARS = re.escape("".join(OCR_NAME_LOOKALIKES))


_SURNAME_STOP = re.compile(r"^\s*(?!(?:MRS?|MS|MISS|DR|PROF|SR|JR|ST)[.;:])([A-Z][A-Z'-]{1,}(?:[ -][A-Z][A-Z'-]+)*)[.;:]\s+(?=[A-Z][a-z])")


def name_parts(text: str) -> tuple[list[str], list[str]] | None:
    """Split a printed name into (given names, family names) as lower-case tokens.

    "LAST, FIRST M" puts the family name first (so does "LAST. First", the comma
    misread by OCR after a surname in capitals); otherwise the last token is the
    family name. Hyphens split a compound surname into parts so that
    "Garcia-Lopez" and "Garcia Lopez" agree. An OCR look-alike inside a word
    ("ikwuemes!") stays in its token (see ``OCR_NAME_LOOKALIKES``).
    """
    if "," not in text:  # "DUBOIS. Helene": OCR reads the comma after a capitalised surname as a stop
        text = _SURNAME_STOP.sub(r"\1, ", text)
    text = _fold(text).strip()
    text = re.sub(r"\b(mr|mrs|ms|miss|dr|jr|sr|ii|iii|iv)\b\.?", " ", text)
    if "," in text:
        last, _, first = text.partition(",")
    else:
        tokens = text.split()
        if len(tokens) < 2:
            return None
        last, first = tokens[-1], " ".join(tokens[:-1])
    tok = lambda s: [t for t in (_trim_lookalikes(x) for x in re.split(rf"[^a-z'{_LOOKALIKE_CHARS}]+",  # noqa: E731
                                                                     s.replace("'", ""))) if t]
    given, family = tok(first), tok(last)
    if not given or not family:
        return None
    return given, family


def _trim_lookalikes(token: str) -> str:
    """A token counts when it holds a letter: "2" after a name is a suffix, not a word."""
    return token if any(c.isalpha() for c in token) else ""


def _same(doc: str, chart: str, lookalikes: bool) -> bool:
    """A document token against a chart token: equal, or (``lookalikes``) equal once
    each look-alike is read as one of its letters or as a speck of noise."""
    if doc == chart:
        return True
    if not lookalikes or not re.search(f"[{_LOOKALIKE_CHARS}]", doc):
        return False
    pattern = "".join(f"[{OCR_NAME_LOOKALIKES[c]}]?" if c in OCR_NAME_LOOKALIKES else re.escape(c) for c in doc)
    return re.fullmatch(pattern, chart) is not None


def _within(doc: list[str], chart: list[str], lookalikes: bool) -> bool:
    """Every document token is one of the chart tokens."""
    return all(any(_same(d, c, lookalikes) for c in chart) for d in doc)


def _holds(doc: list[str], chart: list[str], lookalikes: bool) -> bool:
    """Every chart token is one of the document tokens."""
    return all(any(_same(d, c, lookalikes) for d in doc) for c in chart)


def _names_agree(given: list[str], family: list[str], chart_given: list[str], chart_family: list[str],
                 lookalikes: bool) -> bool:
    # A compound family name printed in part ("Quintero" of "Quintero-Vale") or in full.
    family_ok = _holds(family, chart_family, lookalikes) or _within(family, chart_family, lookalikes)
    first_doc = given[0]
    first_ok = _same(first_doc, chart_given[0], lookalikes) or (
        len(first_doc) == 1 and chart_given[0].startswith(first_doc)
    )
    if family_ok and first_ok:
        return True
    # "LAST, FIRST" printed the other way round still names the same person.
    return _same(given[-1], chart_family[-1], lookalikes) and _same(family[0], chart_given[0], lookalikes)


def names_match(document_name: str, first: str, last: str) -> bool | None:
    """True/False when the name can be judged, None when it cannot.

    None when the name is too partial, and when it agrees with the chart only once
    the OCR look-alikes in it are read as the letters they stand for
    ("IKWUEMES!-DALGAARD" for Ikwuemesi-Dalgaard): a misread name neither confirms
    the patient nor names another one, so the other identifiers decide (MRN and DOB
    verify; DOB alone leaves the document for review). A name of letters only is
    compared strictly, as a text layer prints it."""
    parts = name_parts(document_name)
    if parts is None:
        return None
    given, family = parts
    chart_family = [t for t in re.split(r"[^a-z]+", _fold(last).replace("'", "")) if t]
    chart_given = [t for t in re.split(r"[^a-z]+", _fold(first)) if t]
    if not chart_family or not chart_given:
        return None
    if _names_agree(given, family, chart_given, chart_family, lookalikes=False):
        return True
    if _names_agree(given, family, chart_given, chart_family, lookalikes=True):
        return None
    return False


def _norm_mrn(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower()).lstrip("0")


def mrn_key(text: str) -> str:
    """An MRN as ``same_mrn`` compares it, for looking one up among many ('' for none)."""
    return _norm_mrn(text or "")


_SITE_CODED = re.compile(r"([A-Za-z]{2,5})[\s:#-]*(\d[\w-]*)")


def _site_code(document_mrn: str, chart_mrn: str) -> str | None:
    """The letter code a document prints before the chart's own record number ("RMH" of
    "RMH 0442917" for chart 0442917: a facility's code for its unit record), or None."""
    m = _SITE_CODED.fullmatch(document_mrn.strip())
    if m is None or not _norm_mrn(chart_mrn) or _norm_mrn(chart_mrn)[:1].isalpha():
        return None
    return m[1] if _norm_mrn(m[2]) == _norm_mrn(chart_mrn) else None


def same_mrn(document_mrn: str, chart_mrn: str) -> bool:
    """The MRN rule of ``check_identity`` on its own (case, punctuation and leading zeros
    do not count), for routing a message that names its patient only by MRN."""
    printed = _norm_mrn(document_mrn or "")
    return bool(printed) and printed == _norm_mrn(str(chart_mrn))


def unread_summary(unread: Iterable[UnreadIdentifier]) -> str:
    """What the check says it could not read, by kind, label and place, never by value
    (the reason travels further than the values): "printed but not read: dob under
    'Born' (page 1)"."""
    parts = []
    for u in unread:
        label = f" under {u.label!r}" if u.label else " without a label"
        parts.append(f"{u.kind.replace('_', ' ')}{label} ({u.citation.page_or_section})")
    return "printed but not read: " + "; ".join(dict.fromkeys(parts))


def check_identity(candidates: Iterable[IdentityCandidate], patient: dict[str, Any],
                   unread: Iterable[UnreadIdentifier] = ()) -> IdentityOutcome:
    """Compare a document's identifiers with a chart patient row. ``unread``: identity
    values the document prints that were not read; with any, the document is at best
    ambiguous (a person compares them), never verified."""
    outcome = _check_read(candidates, patient)
    unread = list(unread)
    if not unread:
        return outcome
    outcome.unread = unread
    if outcome.status is IdentityStatus.MISMATCH:
        outcome.mismatch_reason = f"{outcome.mismatch_reason}; {unread_summary(unread)}"
        return outcome
    reason = unread_summary(unread)
    if outcome.status is IdentityStatus.AMBIGUOUS and outcome.mismatch_reason:
        reason = f"{reason}; {outcome.mismatch_reason}"
    return IdentityOutcome(IdentityStatus.AMBIGUOUS, outcome.matched, reason, unread)


def _check_read(candidates: Iterable[IdentityCandidate], patient: dict[str, Any]) -> IdentityOutcome:
    """The gate over the identifiers that were read."""
    matched: dict[str, bool] = {}
    reasons: list[str] = []
    open_points: list[str] = []
    for cand in candidates:
        key = cand.kind.value
        if cand.kind is IdentifierKind.NAME:
            verdict = names_match(cand.value, patient["first_name"], patient["last_name"])
            if verdict is None:
                continue
        elif cand.kind is IdentifierKind.DOB:
            parsed = parse_dob(cand.value)
            if parsed is None:
                continue
            chart_dob = patient["dob"]
            if isinstance(chart_dob, str):
                chart_dob = date.fromisoformat(chart_dob)
            verdict = parsed == chart_dob
            if not verdict and cand.other_reading and parse_dob(cand.other_reading) == chart_dob:
                # Read the other way round it is the chart's: neither a match nor a contradiction.
                printed = cand.citation.quote_or_value if cand.citation else cand.value
                open_points.append(f"the date of birth ({printed}) reads {cand.value} month first or "
                                  f"{cand.other_reading} day first, the chart's; nothing on the document settles which")
                continue
        elif cand.kind is IdentifierKind.OTHER_ID:
            # Agrees when the chart's record number is this very number; a different
            # account, visit or NHS number is expected and says nothing.
            if not same_mrn(cand.value, str(patient["mrn"])):
                continue
            key, verdict = IdentifierKind.MRN.value, True
        else:
            if not _norm_mrn(cand.value):
                continue
            verdict = _norm_mrn(cand.value) == _norm_mrn(str(patient["mrn"]))
            if not verdict and (code := _site_code(cand.value, str(patient["mrn"]))):
                # Neither a match nor a contradiction: a person confirms whose number it is.
                open_points.append(f"the record number on the document is the chart's with a facility code "
                                   f"{code!r} before it; confirm it is this clinic's number")
                continue
        # Several printings of one identifier: one contradiction is enough to stop.
        matched[key] = matched.get(key, True) and verdict
        if not verdict:
            reasons.append(f"{key} on the document does not match the chart")
    if any(v is False for v in matched.values()):
        return IdentityOutcome(IdentityStatus.MISMATCH, matched, "; ".join(dict.fromkeys(reasons + open_points)))
    if open_points:  # a person settles it (fail closed), whatever else agrees
        return IdentityOutcome(IdentityStatus.AMBIGUOUS, matched, "; ".join(dict.fromkeys(open_points)))
    agreeing = set(k for k, v in matched.items() if v)
    if {"name", "dob"} <= agreeing or ("mrn" in agreeing and agreeing & {"name", "dob"}):
        return IdentityOutcome(IdentityStatus.VERIFIED, matched)
    missing = sorted({"name", "dob", "mrn"} - agreeing)
    return IdentityOutcome(
        IdentityStatus.AMBIGUOUS, matched, "not enough identifiers to confirm the patient (missing: "
        + ", ".join(missing) + ")",
    )


def combine_parts(parts: dict[str, IdentityStatus]) -> IdentityOutcome:
    """The document-level view of a document checked part by part (fax pages, HL7
    messages): verified only when every part is trusted, quarantined when every
    part belongs to someone else, otherwise a mixed document for review (the
    matching parts stay usable on their own)."""
    trusted = sorted(s for s, st in parts.items() if identity_trusted(st))
    wrong = sorted(s for s, st in parts.items() if st is IdentityStatus.MISMATCH)
    matched = {"parts_trusted": len(trusted), "parts": len(parts)}
    if parts and len(trusted) == len(parts):
        return IdentityOutcome(IdentityStatus.VERIFIED, matched)
    if parts and len(wrong) == len(parts):
        return IdentityOutcome(IdentityStatus.MISMATCH, matched, "every part names another patient")
    reason = f"{len(trusted)} of {len(parts)} parts match the chart"
    if wrong:
        reason += "; quarantined: " + ", ".join(wrong)
    return IdentityOutcome(IdentityStatus.AMBIGUOUS, matched, reason)
