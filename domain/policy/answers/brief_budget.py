"""The patient brief's rules (pure): its sections, the sentinels that stand where the
record is silent, unsure or contradicts itself, and how a brief is cut to a token budget.

A brief is read in a minute before a visit, so it is cut to a budget; what is cut is
said, never dropped quietly. Cutting follows one fixed priority: the patient's identity,
critical results and clinical alerts are never cut; then the lowest-priority section
loses its last line first (each section's lines are ordered most important first).
Identity is kept with critical results: a brief whose patient is cut is not safe to read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from domain.models import Citation
from domain.policy.facts.no_known_allergies import is_no_known_allergies

# What stands in for data that is absent, contradicted, unconfirmed or unreadable:
# written, never guessed around.
MISSING = "[MISSING — not documented in the record]"
CONFLICT = "[CONFLICT — see review]"
PENDING = "[PENDING REVIEW]"
UNCLEAR = "[UNCLEAR — source illegible]"
SENTINELS: tuple[str, ...] = (MISSING, CONFLICT, PENDING, UNCLEAR)

DEFAULT_BUDGET_TOKENS = 1500

# Display order and titles.
SECTIONS: dict[str, str] = {
    "identity": "Patient",
    "critical": "Critical results",
    "alerts": "Clinical alerts",
    "allergies": "Allergies",
    "medications": "Medications",
    "problems": "Active problems",
    "abnormal": "Abnormal results and trends",
    "review": "Waiting for review and open conflicts",
    "quarantined": "Documents that name another patient (kept off the chart)",
    "notes": "Notes from the chart checks (low priority)",
}
NEVER_CUT: frozenset[str] = frozenset({"identity", "critical", "alerts"})
# Most kept first. Allergies and what waits for a person are safety items; the
# quarantined documents' content is already kept out of the chart, and the checks'
# low-priority notes (no indication on record) are notes, so those go first.
KEEP_PRIORITY: tuple[str, ...] = ("identity", "critical", "alerts", "allergies", "review", "medications",
                                  "problems", "abnormal", "quarantined", "notes")

# Review reasons that say the source itself could not be read with confidence (words,
# not one extractor's sentences: OCR confidence, unreadable pages or ranges).
_ILLEGIBLE = re.compile(r"low confidence|could not be read|cannot be read|illegible|unreadable|not legible"
                        r"|smudged|faint", re.IGNORECASE)
_UNREAD_CONTENT = "unread_content"
_CONFLICT_STATUS = "conflict_needs_review"


@dataclass(frozen=True)
class BriefLine:
    """One line of a brief: its words, the facts it rests on, and any sentinels in it.
    ``notice`` lines speak about the brief itself (no alerts computed, nothing cut) and
    cite nothing; every other line cites its facts or carries a sentinel."""

    section: str
    text: str
    citations: tuple[Citation, ...] = ()
    sentinels: tuple[str, ...] = ()
    notice: bool = False

    def __post_init__(self) -> None:
        if self.section not in SECTIONS:
            raise ValueError(f"unknown brief section: {self.section}")
        if not (self.citations or self.sentinels or self.notice):
            raise ValueError("a brief line cites its facts, carries a sentinel, or is a notice")

    @property
    def cited(self) -> bool:
        return bool(self.citations)


def review_sentinel(fact_type: str | None, promotion_status: str | None, review_reason: str | None) -> str:
    """The sentinel of an item waiting for a person: a conflict with the chart, a source
    that could not be read with confidence, else pending review."""
    if promotion_status == _CONFLICT_STATUS:
        return CONFLICT
    if fact_type == _UNREAD_CONTENT or _ILLEGIBLE.search(review_reason or ""):
        return UNCLEAR
    return PENDING


def states_no_known_allergies(value: Mapping[str, Any]) -> bool:
    """An allergy entry that is the record's statement "no known (drug) allergies"."""
    return is_no_known_allergies(value)


def field_or_missing(value: Any) -> str:
    """A documented value as written, or the missing sentinel (never a guess)."""
    text = "" if value is None else str(value).strip()
    return text or MISSING


@dataclass
class Fitted:
    lines: list[BriefLine]  # kept, in display order
    cut: list[tuple[str, int, int]]  # (section, lines cut, lines it had), in display order
    tokens: int
    budget: int
    over_budget: bool = False  # only when what is never cut alone exceeds the budget
    shown: dict[str, tuple[int, int]] = field(default_factory=dict)  # section -> (kept, total)


def ordered(lines: Sequence[BriefLine]) -> list[BriefLine]:
    """Display order: by section; inside a section, as given (the composer ranks them)."""
    index = list(SECTIONS)
    return sorted(lines, key=lambda line: index.index(line.section))  # stable


def cut_order(lines: Sequence[BriefLine]) -> list[int]:
    """Indices of the lines that may be cut, in the order they are cut: the lowest
    priority section first, each section from its last line up."""
    out: list[int] = []
    for section in reversed(KEEP_PRIORITY):
        if section in NEVER_CUT:
            continue
        out += [i for i in reversed(range(len(lines))) if lines[i].section == section]
    return out


def fit(lines: Sequence[BriefLine], budget: int,
        measure: Callable[[list[BriefLine], list[tuple[str, int, int]]], int]) -> Fitted:
    """Cut lines in ``cut_order`` until ``measure`` (the tokens of the whole brief as it
    would be written: kept lines, the cut list, the citations) is within ``budget``."""
    lines = ordered(lines)
    totals: dict[str, int] = {}
    for line in lines:
        totals[line.section] = totals.get(line.section, 0) + 1
    dropped: set[int] = set()
    queue = cut_order(lines)

    def state() -> tuple[list[BriefLine], list[tuple[str, int, int]]]:
        kept = [line for i, line in enumerate(lines) if i not in dropped]
        counts: dict[str, int] = {}
        for i in dropped:
            counts[lines[i].section] = counts.get(lines[i].section, 0) + 1
        cut = [(s, counts[s], totals[s]) for s in SECTIONS if s in counts]
        return kept, cut

    kept, cut = state()
    tokens = measure(kept, cut)
    while tokens > budget and queue:
        dropped.add(queue.pop(0))
        kept, cut = state()
        tokens = measure(kept, cut)
    shown = {s: (totals[s] - dict((c[0], c[1]) for c in cut).get(s, 0), totals[s]) for s in totals}
    return Fitted(kept, cut, tokens, budget, over_budget=tokens > budget, shown=shown)
