"""Promotion of verified facts into chart tables, with provenance.

Every decision leaves a ``promotions`` row. The chart itself is the reference for
duplicates: the same clinical content already active in the chart resolves to
``duplicate_skipped`` (the same bytes uploaded again) or ``already_exists``
(another document, or a manual entry); the same test on the same date with
another value is ``conflict_needs_review`` and writes nothing to the chart.

Facts are promoted a document at a time: the chart is read once per table and
all rows are written in a few multi-row statements (per-row round trips were
most of the ingestion time).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

import duckdb

from domain.models import Certainty, PromotionOutcome
from domain.policy.facts.chart_row_checks import chart_row_problem
from domain.policy.facts.chart_rules import CHART_DESTINATIONS, held_for_item_review, past_entry
from domain.policy.facts.fingerprints import clinical_content_fingerprint, clinical_key, same_measurement
from domain.policy.facts.review_rules import KEEP_BOTH, REPLACE
from storage import audit_repo, facts_repo, promotions_repo
from storage.rows import FactRow

_SETTLED = {o.value for o in (PromotionOutcome.PROMOTED, PromotionOutcome.ALREADY_EXISTS,
                              PromotionOutcome.DUPLICATE_SKIPPED, PromotionOutcome.CONFLICT_NEEDS_REVIEW,
                              PromotionOutcome.NOT_PROMOTABLE, PromotionOutcome.NEEDS_REVIEW)}


def _row_value(fact_type: str, row: dict[str, Any]) -> dict[str, Any]:
    _, columns = CHART_DESTINATIONS[fact_type]
    value = {c: row.get(c) for c in columns}
    if value.get("collection_date") is not None:
        value["collection_date"] = str(value["collection_date"])
    return value


@dataclass
class _ChartIndex:
    """Active chart rows of one table for one patient, by content and by key."""

    by_content: dict[str, dict[str, Any]] = field(default_factory=dict)
    by_key: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, patient_id: int, fact_type: str, row: dict[str, Any]) -> None:
        value = _row_value(fact_type, row)
        self.by_content.setdefault(clinical_content_fingerprint(patient_id, fact_type, value, ""), row)
        self.by_key.setdefault(clinical_key(patient_id, fact_type, value, ""), row)


@dataclass
class PromotionPlan:
    """What promoting one document's facts will do, decided before anything is written:
    each fact's outcome, the promotion rows (ids not yet reserved), the new chart rows
    (ids reserved while planning; each with the index of its promotion) and the chart
    rows a reviewer's approval supersedes (table, the rival row, the approved fact)."""

    document: dict[str, Any]
    outcomes: dict[int, str] = field(default_factory=dict)
    promotions: list[dict[str, Any]] = field(default_factory=list)
    new_chart_rows: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    supersessions: list[tuple[str, dict[str, Any], FactRow]] = field(default_factory=list)


class _Planner:
    """Decides a PromotionPlan. It reads the chart (once per table) and reserves chart
    row ids, but writes nothing."""

    def __init__(self, cur: duckdb.DuckDBPyConnection, document: dict[str, Any], *, reviewed: bool = False,
                 resolution: str | None = None):
        self.cur = cur
        self.reviewed = reviewed
        self.resolution = resolution if reviewed else None
        self.plan = PromotionPlan(document)
        self._charts: dict[str, _ChartIndex] = {}
        self._id_pool: dict[str, Iterator[int]] = {}

    def reserve_ids(self, facts: list[FactRow]) -> None:
        """One sequence call per chart table for every fact that might be promoted
        (unused ids leave harmless gaps)."""
        wanted: dict[str, int] = {}
        for fact in facts:
            if fact.certainty == Certainty.VERIFIED.value and fact.fact_type in CHART_DESTINATIONS:
                table = CHART_DESTINATIONS[fact.fact_type][0]
                wanted[table] = wanted.get(table, 0) + 1
        for table, n in wanted.items():
            self._id_pool[table] = iter(promotions_repo.next_ids(self.cur, table, n))

    def chart(self, patient_id: int, fact_type: str) -> _ChartIndex:
        table, _ = CHART_DESTINATIONS[fact_type]
        if table not in self._charts:
            index = _ChartIndex()
            for row in promotions_repo.chart_rows_with_origin(self.cur, table, patient_id):
                index.add(patient_id, fact_type, row)
            self._charts[table] = index
        return self._charts[table]

    def record(self, fact: FactRow, outcome: PromotionOutcome, **extra: Any) -> None:
        self.plan.outcomes[fact.id] = outcome.value
        self.plan.promotions.append(dict(
            patient_id=fact.patient_id, document_id=fact.document_id, job_id=fact.job_id,
            fact_id=fact.id, fact_fingerprint=fact.fact_fingerprint,
            clinical_content_fingerprint=fact.clinical_content_fingerprint, outcome=outcome.value,
            citation=fact.citation, confidence=fact.confidence, **extra,
        ))

    def decide(self, fact: FactRow) -> None:
        fact_type = fact.fact_type
        certainty = Certainty(fact.certainty)
        if certainty is Certainty.NEEDS_REVIEW:
            return self.record(fact, PromotionOutcome.NEEDS_REVIEW, review_status="pending")
        if certainty is Certainty.DOCUMENT_FACT or fact_type not in CHART_DESTINATIONS:
            return self.record(fact, PromotionOutcome.NOT_PROMOTABLE)
        stored = fact.to_dict()
        if past := past_entry(stored):
            # Approved or not, a medicine told as stopped or a problem recorded as resolved
            # is history, never a current chart row.
            return self.record(fact, PromotionOutcome.NOT_PROMOTABLE, conflict_reason=past)
        if not self.reviewed and (held := held_for_item_review(stored)):
            # Hedged, negated, family or hypothetical wording: only a person deciding on
            # this very item may put it in the chart, never a document-level decision.
            return self.record(fact, PromotionOutcome.NEEDS_REVIEW, review_status="pending", conflict_reason=held)
        table, columns = CHART_DESTINATIONS[fact_type]
        value = fact.structured_value or {}
        if not str(value.get(columns[0]) or "").strip():
            # The chart row would have no subject (no test name, substance, drug, problem).
            return self.record(fact, PromotionOutcome.NOT_PROMOTABLE, conflict_reason=f"no {columns[0]} for {table}")
        if (problem := chart_row_problem(fact_type, value)) is not None:
            # The chart cannot hold this value: the fact says so and waits for a person.
            return self.record(fact, PromotionOutcome.PROMOTION_FAILED, promoted_table=table,
                               conflict_reason=problem, review_status="pending")
        patient_id = fact.patient_id
        sha256 = self.plan.document["sha256"]
        chart = self.chart(patient_id, fact_type)
        content_fp = fact.clinical_content_fingerprint
        same = chart.by_content.get(content_fp)
        if same is not None:
            duplicate = same.get("origin_sha256") == sha256
            outcome = PromotionOutcome.DUPLICATE_SKIPPED if duplicate else PromotionOutcome.ALREADY_EXISTS
            return self.record(fact, outcome, promoted_table=table, promoted_record_id=same["id"],
                               duplicate_key=content_fp)
        key = clinical_key(patient_id, fact_type, value, fact.fact_text)
        rival = chart.by_key.get(key)
        if rival is not None and same_measurement(fact_type, value, _row_value(fact_type, rival)):
            # The same quantity in another unit (88 umol/L beside 1.0 mg/dL): no conflict.
            duplicate = rival.get("origin_sha256") == sha256
            outcome = PromotionOutcome.DUPLICATE_SKIPPED if duplicate else PromotionOutcome.ALREADY_EXISTS
            return self.record(fact, outcome, promoted_table=table, promoted_record_id=rival["id"], duplicate_key=key)
        # A reviewer's approval changes the chart's value only by the choice made for this
        # very conflict (issue 26): replace it, or keep both. Without one it stays a conflict.
        kept_beside = None
        if rival is not None and self.resolution == REPLACE:
            self.plan.supersessions.append((table, rival, fact))
            del chart.by_key[key]
            rival = None
        elif rival is not None and self.resolution == KEEP_BOTH:
            kept_beside, rival = rival, None
        if rival is not None:
            shown = _row_value(fact_type, rival)
            reason = "chart already holds " + ", ".join(f"{k}={v}" for k, v in shown.items() if v not in (None, ""))
            return self.record(fact, PromotionOutcome.CONFLICT_NEEDS_REVIEW, promoted_table=table,
                               promoted_record_id=rival["id"], conflict_reason=reason, review_status="pending")
        record_id = next(self._id_pool[table])  # in order, O(1) (pop(0) is O(n))
        new_row = {"id": record_id, **value, "origin_sha256": sha256}
        chart.add(patient_id, fact_type, new_row)  # a repeat later in this document is a duplicate
        self.plan.new_chart_rows.setdefault(table, []).append((len(self.plan.promotions), new_row))
        extra = {"conflict_reason": f"kept beside chart row {kept_beside['id']} by the reviewer"} if kept_beside else {}
        self.record(fact, PromotionOutcome.PROMOTED, promoted_table=table, promoted_record_id=record_id, **extra)


def plan_promotions(cur: duckdb.DuckDBPyConnection, facts: list[FactRow], document: dict[str, Any],
                    *, reviewed: bool = False, resolution: str | None = None,
                    just_stored: bool = False) -> PromotionPlan:
    """Decide the outcome of each fact of one document (a fact with a settled outcome
    keeps it). Reads the chart and reserves chart row ids; writes nothing.
    ``just_stored``: the caller's transaction stored every one of these facts, so none
    has a promotion to read yet (a document's first reading)."""
    settled = {} if just_stored else promotions_repo.settled_outcomes(cur, [f.id for f in facts], _SETTLED)
    planner = _Planner(cur, document, reviewed=reviewed, resolution=resolution)
    planner.reserve_ids([f for f in facts if f.id not in settled])
    for fact in facts:
        if fact.id in settled:
            planner.plan.outcomes[fact.id] = settled[fact.id]
        else:
            planner.decide(fact)
    return planner.plan


def _supersede(cur: duckdb.DuckDBPyConnection, table: str, rival: dict[str, Any], fact: FactRow) -> None:
    """A reviewer approved this value over the one in the chart. The old row goes
    inactive with a note, and the facts behind it stop supporting it (their
    promotions are retracted and they are marked superseded), so that no later
    deletion can bring the value the reviewer turned down back into the chart."""
    note = f"superseded by reviewer-approved fact {fact.id} of document {fact.document_id}"
    promotions_repo.deactivate_chart_row(cur, table, rival["id"], f"[{note}]")
    audit_repo.add_retraction(
        cur, patient_id=fact.patient_id, document_id=fact.document_id, fact_id=fact.id,
        promoted_table=table, promoted_record_id=rival["id"], prior_state="active", new_state="superseded",
        action="chart_row_superseded", actor_type="reviewer", reason="conflict resolved by review")
    for promo in promotions_repo.live_supporters(cur, table, [rival["id"]]).get(rival["id"], []):
        promotions_repo.retract_promotion(cur, promo.id, note)
        facts_repo.update_fact(cur, promo.fact_id, active=False, promotion_status="superseded")
        audit_repo.add_retraction(
            cur, patient_id=promo.patient_id, document_id=promo.document_id, fact_id=promo.fact_id,
            promotion_id=promo.id, promoted_table=table, promoted_record_id=rival["id"],
            prior_state=promo.outcome, new_state="superseded", action="promotion_superseded",
            actor_type="reviewer", reason=note)


def write_plan(cur: duckdb.DuckDBPyConnection, plan: PromotionPlan) -> None:
    """Carry out a plan in the caller's transaction: the superseded chart rows first,
    then the promotion ids, the new chart rows and the promotion rows."""
    for table, rival, fact in plan.supersessions:
        _supersede(cur, table, rival, fact)
    if not plan.promotions:
        return
    ids = promotions_repo.next_ids(cur, "promotions", len(plan.promotions))
    for promo, pid in zip(plan.promotions, ids):
        promo["id"] = pid
    for table, rows in plan.new_chart_rows.items():
        promotions_repo.insert_chart_rows(
            cur, table, plan.document["patient_id"],
            [(row, plan.promotions[index]["id"]) for index, row in rows])
    promotions_repo.insert_promotions(cur, plan.promotions)
    for promo in plan.promotions:
        if promo["outcome"] == PromotionOutcome.PROMOTION_FAILED.value:
            facts_repo.update_fact(cur, promo["fact_id"],
                                   review_reason=f"could not be added to the chart: {promo['conflict_reason']}")


def promote_facts(cur: duckdb.DuckDBPyConnection, facts: list[FactRow], document: dict[str, Any],
                  *, reviewed: bool = False, resolution: str | None = None,
                  just_stored: bool = False) -> dict[int, str]:
    """Decide and record promotion outcomes for facts of one document (idempotent:
    a fact with a settled outcome keeps it). Returns fact_id -> outcome.
    ``reviewed``: a reviewer decided on these very facts, so hedged wording no longer
    holds them back; ``resolution`` (review_rules.RESOLUTIONS) is what the reviewer chose
    for a chart value the fact differs from: without one, the difference stays a conflict.
    ``just_stored``: as for ``plan_promotions``."""
    plan = plan_promotions(cur, facts, document, reviewed=reviewed, resolution=resolution, just_stored=just_stored)
    write_plan(cur, plan)
    return plan.outcomes


def promote_fact(cur: duckdb.DuckDBPyConnection, fact: FactRow, document: dict[str, Any],
                 *, reviewed: bool = False, resolution: str | None = None) -> str:
    return promote_facts(cur, [fact], document, reviewed=reviewed, resolution=resolution)[fact.id]
