"""Typed rows the repositories hand out: one small frozen dataclass per row kind, built
from a DuckDB cursor by ``fetch_all`` / ``fetch_one``.

A query may select a subset of a table's columns or join a few more (a document's
file name, whether it is deleted); fields not every query selects default to None, and
each row remembers the columns its query selected, so ``to_dict`` gives exactly the
keys and values the query returned: the shape the CLI JSON and the pages were built on.
A column the row kind does not know is an error here, not a silently dropped value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import duckdb

from storage.db import rows


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    _columns: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @classmethod
    def from_mapping(cls: type[R], values: dict[str, Any]) -> R:
        return cls(_columns=tuple(values), **values)

    def to_dict(self) -> dict[str, Any]:
        """The row as its query returned it (same keys, same order)."""
        return {name: getattr(self, name) for name in self._columns}


R = TypeVar("R", bound=Row)


def fetch_all(cur: duckdb.DuckDBPyConnection, kind: type[R]) -> list[R]:
    """The last result as rows of ``kind`` (JSON columns decoded)."""
    return [kind.from_mapping(r) for r in rows(cur)]


def fetch_one(cur: duckdb.DuckDBPyConnection, kind: type[R]) -> R | None:
    found = fetch_all(cur, kind)
    return found[0] if found else None


@dataclass(frozen=True, slots=True, kw_only=True)
class JobRow(Row):
    """A processing_jobs row (recent_jobs adds ``document_deleted``)."""

    id: int
    patient_id: int | None = None
    document_id: int | None = None
    doc_type: str | None = None
    status: str | None = None
    attempts: int | None = None
    created_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    heartbeat_at: datetime | None = None
    worker_id: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    timings: dict[str, Any] | None = None
    counts: dict[str, Any] | None = None
    engine: str | None = None
    warnings: list[dict[str, Any]] | None = None
    worker_process: str | None = None
    reclaims: int | None = None
    reclaimed_at: datetime | None = None
    reclaim_reason: str | None = None
    document_deleted: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PromotionRow(Row):
    """A promotions row: one decision about one fact and the chart row it concerns."""

    id: int
    patient_id: int | None = None
    document_id: int | None = None
    job_id: int | None = None
    fact_id: int | None = None
    fact_fingerprint: str | None = None
    clinical_content_fingerprint: str | None = None
    promoted_table: str | None = None
    promoted_record_id: int | None = None
    outcome: str | None = None
    duplicate_key: str | None = None
    conflict_reason: str | None = None
    citation: dict[str, Any] | None = None
    confidence: float | None = None
    review_status: str | None = None
    active: bool | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    retracted_at: datetime | None = None
    retraction_reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FactRow(Row):
    """A document_facts row (facts_for_patient adds ``filename``, ``document_deleted`` and
    the part's ``identity_status``)."""

    id: int
    patient_id: int | None = None
    document_id: int | None = None
    job_id: int | None = None
    identity_check_id: int | None = None
    doc_type: str | None = None
    fact_type: str | None = None
    certainty: str | None = None
    fact_fingerprint: str | None = None
    clinical_content_fingerprint: str | None = None
    fact_text: str | None = None
    structured_value: dict[str, Any] | None = None
    citation: dict[str, Any] | None = None
    confidence: float | None = None
    promotion_status: str | None = None
    review_reason: str | None = None
    scope: str | None = None
    active: bool | None = None
    created_at: datetime | None = None
    deactivated_at: datetime | None = None
    retracted_at: datetime | None = None
    retraction_reason: str | None = None
    vector_indexed_at: datetime | None = None
    context: dict[str, Any] | None = None
    corrected_by: str | None = None
    corrected_at: datetime | None = None
    correction: dict[str, Any] | None = None
    filename: str | None = None
    document_deleted: bool | None = None
    identity_status: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class IdentityCheckRow(Row):
    """An identity_checks row: whether a document (or one part: a fax page, an HL7
    message) names the patient it was filed under (the review lists add ``filename``)."""

    id: int
    patient_id: int | None = None
    document_id: int | None = None
    job_id: int | None = None
    doc_type: str | None = None
    scope: str | None = None
    identity_status: str | None = None
    extracted_identifiers: list[dict[str, Any]] | None = None
    unread_identifiers: list[dict[str, Any]] | None = None  # printed but not read (UnreadIdentifier)
    matched_fields: dict[str, Any] | None = None
    mismatch_reason: str | None = None
    review_required: bool | None = None
    review_decision: str | None = None
    reviewed_by: str | None = None
    reviewed_at: datetime | None = None
    checked_at: datetime | None = None
    filename: str | None = None
