"""What may reach the chart, stated once (pure).

Every layer that asks "is this identity trusted?", "is this fact a review item?",
"which chart table does this fact type go to?" or "is this chart row still
supported?" takes the answer from here, so the rules cannot drift apart.
"""

from __future__ import annotations

from typing import Any, Mapping

from domain.models import ClinicalContext, IdentityStatus
from domain.policy.facts.certainty import hedged, not_current, not_the_patients_fact
from domain.policy.context.mentions import hedge_cue

# Only a verified or human-approved identity lets a document's facts become active.
TRUSTED_IDENTITY_STATES: tuple[str, ...] = (IdentityStatus.VERIFIED.value, IdentityStatus.APPROVED.value)

# fact_type -> (chart table, columns taken from structured_value). The first column
# is the row's subject: without it there is nothing to put in the chart.
CHART_DESTINATIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "lab_result": ("chart_lab_results", ("test_name", "value", "unit", "reference_range", "collection_date",
                                         "abnormal_flag", "loinc", "critical_basis")),
    "allergy": ("chart_allergies", ("substance", "reaction", "severity")),
    "medication": ("chart_medications", ("name", "dose", "frequency")),
    "problem": ("chart_problems", ("description", "code")),
    "vital_sign": ("chart_vital_signs", ("kind", "value", "unit", "systolic", "diastolic", "measured_at")),
}
CHART_TABLES: dict[str, str] = {fact_type: table for fact_type, (table, _) in CHART_DESTINATIONS.items()}
FACT_TYPE_OF_TABLE: dict[str, str] = {table: fact_type for fact_type, table in CHART_TABLES.items()}

# Promotion outcomes through which a fact stands behind a chart row: it created the
# row, or it says the same thing as a row that is already there.
SUPPORTING_OUTCOMES: tuple[str, ...] = ("promoted", "already_exists", "duplicate_skipped")

# Review items that are not findings: the coverage guard's record of result-like content
# no fact cites (``extract/coverage.py``). They never reach the chart, never stand as
# evidence for an answer, and approving one only records that a person read the page.
UNREAD_CONTENT = "unread_content"
ACKNOWLEDGE_ONLY_FACT_TYPES: frozenset[str] = frozenset({UNREAD_CONTENT})
ACKNOWLEDGED = "acknowledged"  # the promotion status of an acknowledged coverage record

CRITICAL_FLAGS: frozenset[str] = frozenset({"critical_high", "critical_low"})
ABNORMAL_FLAGS: frozenset[str] = frozenset({"high", "low", "critical_high", "critical_low", "abnormal"})


def identity_trusted(status: str | IdentityStatus | None) -> bool:
    if isinstance(status, IdentityStatus):
        status = status.value
    return status in TRUSTED_IDENTITY_STATES


# ``promotion_failed``: the chart could not hold the fact's values; a person corrects it.
REVIEW_PROMOTION_STATES: frozenset[str] = frozenset({"conflict_needs_review", "needs_review", "promotion_failed"})
# A person decided against these facts (rejected, or another value approved over them):
# no later decision on their document brings them back.
# An acknowledged coverage record (a person read the page) is closed the same way.
CLOSED_PROMOTION_STATES: frozenset[str] = frozenset({"rejected", "superseded", ACKNOWLEDGED})
# A person approved the finding itself while its document's identity was still open.
APPROVED_AWAITING_IDENTITY = "approved_awaiting_identity"


def needs_review(fact: Mapping[str, Any]) -> bool:
    """A stored fact that waits for a person: uncertain, held back from the chart, or
    in conflict with it."""
    return fact.get("certainty") == "needs_review" or fact.get("promotion_status") in REVIEW_PROMOTION_STATES


def review_group(fact: Mapping[str, Any]) -> str | None:
    """Where a live fact stands for a reader: "held" (its document's identity is not
    trusted), "needs_review", or its certainty ("verified" / "document_fact"); None when
    a person closed it (rejected, or another value approved over it). The chart overview
    groups facts by it and the viewer colours their boxes by it."""
    if not identity_trusted(fact.get("identity_status")):
        return "held"
    if fact.get("promotion_status") in CLOSED_PROMOTION_STATES:
        return None
    if needs_review(fact):
        return "needs_review"
    return fact.get("certainty")


def activated_by_identity_approval(fact: Mapping[str, Any]) -> bool:
    """Whether approving a document's identity makes this fact live: not a review item
    and not one a person already closed."""
    return fact.get("certainty") != "needs_review" and fact.get("promotion_status") not in CLOSED_PROMOTION_STATES


def held_for_item_review(fact: Mapping[str, Any]) -> str | None:
    """Why a fact may enter the chart only through a decision on that very item (not a
    document-level identity approval), or None. Checked again at promotion, whatever
    bucket the fact was classified into: hedged, negated, family or hypothetical
    wording never reaches the chart on the strength of its document alone. The
    meanings come from the certainty policy; this only applies them to a stored fact."""
    ctx = ClinicalContext.model_validate(fact["context"]) if fact.get("context") else None
    if doubt := hedged(ctx) or not_the_patients_fact(ctx):
        return doubt
    if fact.get("fact_type") not in ("lab_result", "vital_sign"):  # table values, no wording to hedge
        # Facts stored before context attributes existed still carry their words.
        quote = str((fact.get("citation") or {}).get("quote_or_value") or "")
        if cue := hedge_cue(f"{fact.get('fact_text') or ''} {quote}"):
            return f'hedged: "{cue}"'
    return None


def past_entry(fact: Mapping[str, Any]) -> str | None:
    """Why a stored medication or problem fact is history, not a current chart row,
    even once a person approves it (``certainty.not_current``), or None."""
    ctx = ClinicalContext.model_validate(fact["context"]) if fact.get("context") else None
    return not_current(fact.get("fact_type"), fact.get("structured_value"), ctx)


def acknowledge_only(fact_type: str | None) -> bool:
    """A review item a person can only acknowledge (read the page themselves), never
    approve into the chart or into evidence."""
    return fact_type in ACKNOWLEDGE_ONLY_FACT_TYPES


def is_critical(flag: str | None) -> bool:
    return flag in CRITICAL_FLAGS


def critical_result(fact_type: str | None, structured: Mapping[str, Any] | None) -> bool:
    """A fact that must be shown first and marked critical: a lab result flagged
    critical (a critical flag on any other kind of fact means nothing here)."""
    return fact_type == "lab_result" and is_critical((structured or {}).get("abnormal_flag"))


def is_abnormal(flag: str | None) -> bool:
    return flag in ABNORMAL_FLAGS
