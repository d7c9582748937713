"""What a FHIR export reads from the workbench: the patient, the trusted chart rows with
the live facts that stand behind them, the trusted facts that have no chart table
(family history, "no known allergies"), and, when asked, the items waiting for review.

The lifetime rules are the chart's own: a chart row counts while it is active, promoted,
and a live promotion stands behind it (``promotions_repo.live_supporters``: its fact
unretracted, its document undeleted, its identity trusted); a fact's standing for a
reader is ``chart_rules.review_group``. Nothing here decides trust again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.services.workbench import Workbench
from domain.models import IdentityStatus
from domain.policy.facts.chart_rules import CHART_DESTINATIONS, acknowledge_only, review_group
from domain.policy.facts.no_known_allergies import contradicted_by, is_no_known_allergies
from domain.policy.facts.review_rules import closing_decision
from storage import audit_repo, documents_repo, facts_repo, jobs_repo, promotions_repo
from storage.rows import FactRow

# Facts with no chart table that are exported when trusted: what the chart cannot hold
# but a receiving system needs (family history; an explicit "no known allergies").
_UNCHARTED_KINDS = ("family_history", "allergy")
# Fact types a review item may be exported as (others have no FHIR resource here).
EXPORTABLE_FACT_TYPES = ("lab_result", "vital_sign", "allergy", "medication", "problem", "family_history")


@dataclass
class Support:
    """One fact standing behind an exported item, with what its Provenance names."""

    fact: FactRow
    document: dict[str, Any]
    engine: str | None
    decision: dict[str, Any] | None  # the closing approve / correct decision, if a person made one
    identity_approver: str | None = None  # who approved the document's patient identity, if a person did


@dataclass
class ExportItem:
    kind: str  # a fact type: lab_result, vital_sign, allergy, medication, problem, family_history
    key: str  # the resource id: "lab-12" (a chart row), "fact-33" (a fact without a chart row)
    values: dict[str, Any]  # the chart row's columns, or the fact's structured value
    supports: list[Support] = field(default_factory=list)
    review: bool = False  # waits for review: exported only on request, as unconfirmed
    review_reason: str | None = None  # why, when the export itself held it back (a contradiction)
    chart_table: str | None = None
    chart_row_id: int | None = None

    @property
    def fact(self) -> FactRow:
        return self.supports[0].fact


@dataclass
class ChartSource:
    patient: dict[str, Any]
    items: list[ExportItem]
    documents: dict[int, dict[str, Any]]  # id -> documents row, every document an item cites


_KEY_PREFIX = {"lab_result": "lab", "vital_sign": "vital", "allergy": "allergy", "medication": "medication",
               "problem": "problem"}


def read_chart_source(wb: Workbench, patient: dict[str, Any], *, include_review: bool) -> ChartSource:
    with wb.db.cursor() as cur:
        items = _chart_items(cur, patient["id"])
        charted_facts = {s.fact.id for item in items for s in item.supports}
        items += _fact_items(cur, patient["id"], charted_facts, include_review)
        _hold_contradicted_statements(items)
        fact_ids = [s.fact.id for item in items for s in item.supports]
        decisions = audit_repo.decisions_for_items(cur, "fact", fact_ids)
        job_ids = sorted({s.fact.job_id for item in items for s in item.supports if s.fact.job_id is not None})
        engines = {job_id: (job.engine if (job := jobs_repo.by_id(cur, job_id)) else None) for job_id in job_ids}
        doc_ids = sorted({s.fact.document_id for item in items for s in item.supports})
        documents = {doc_id: documents_repo.by_id(cur, doc_id) for doc_id in doc_ids}
        parts = sorted({(s.fact.document_id, s.fact.scope) for item in items for s in item.supports},
                       key=lambda k: (k[0], k[1] or ""))
        checks = {part: facts_repo.latest_identity(cur, *part) for part in parts}
    for item in items:
        for s in item.supports:
            s.document = documents[s.fact.document_id]
            s.engine = engines.get(s.fact.job_id)
            closing = closing_decision(decisions.get(s.fact.id, []))
            s.decision = dict(closing) if closing and closing["decision"] in ("approve", "correct") else None
            check = checks.get((s.fact.document_id, s.fact.scope))
            if check is not None and check.identity_status == IdentityStatus.APPROVED.value and check.reviewed_by:
                s.identity_approver = check.reviewed_by
    return ChartSource(patient=patient, items=items, documents=documents)


def _chart_items(cur, patient_id: int) -> list[ExportItem]:
    items: list[ExportItem] = []
    for fact_type, (table, columns) in CHART_DESTINATIONS.items():
        charted = [r for r in promotions_repo.patient_chart_rows(cur, table, patient_id) if r["source"] == "promoted"]
        supporters = promotions_repo.live_supporters(cur, table, [r["id"] for r in charted])
        facts = facts_repo.facts_by_ids(cur, sorted({p.fact_id for ps in supporters.values() for p in ps}))
        for row in charted:
            fact_ids = dict.fromkeys(p.fact_id for p in supporters.get(row["id"], []))  # once each, oldest first
            backing = [facts[i] for i in fact_ids if i in facts]
            if not backing:  # no live, trusted source stands behind it: not exported
                continue
            values = {c: (str(row[c]) if row.get(c) is not None else None) for c in columns}
            items.append(ExportItem(kind=fact_type, key=f"{_KEY_PREFIX[fact_type]}-{row['id']}", values=values,
                                    supports=[Support(f, {}, None, None) for f in backing],
                                    chart_table=table, chart_row_id=int(row["id"])))
    return items


def _fact_items(cur, patient_id: int, charted: set[int], include_review: bool) -> list[ExportItem]:
    """Review items one by one; trusted uncharted facts once per clinical content (two
    documents saying "NKDA" are one statement with two sources), like a chart row."""
    items: list[ExportItem] = []
    said: dict[tuple[str, str], ExportItem] = {}
    for row in sorted(facts_repo.facts_for_patient(cur, patient_id), key=lambda r: r.id):
        if row.document_deleted or row.id in charted or acknowledge_only(row.fact_type):
            continue
        group = review_group(row.to_dict())
        if group == "needs_review" and include_review and row.fact_type in EXPORTABLE_FACT_TYPES:
            items.append(ExportItem(kind=row.fact_type, key=f"fact-{row.id}", values=dict(row.structured_value or {}),
                                    supports=[Support(row, {}, None, None)], review=True))
        elif group in ("verified", "document_fact") and row.active and _uncharted_trusted(row):
            same = said.get((row.fact_type, row.clinical_content_fingerprint))
            if same is not None:
                same.supports.append(Support(row, {}, None, None))
                continue
            item = ExportItem(kind=row.fact_type, key=f"fact-{row.id}", values=dict(row.structured_value or {}),
                              supports=[Support(row, {}, None, None)])
            said[(row.fact_type, row.clinical_content_fingerprint)] = item
            items.append(item)
    items.sort(key=lambda i: i.fact.id)
    return items


def _hold_contradicted_statements(items: list[ExportItem]) -> None:
    """A trusted "no known allergies" beside a charted allergy becomes a review item."""
    reason = contradicted_by(i.values.get("substance") for i in items if i.kind == "allergy" and i.chart_table)
    for item in items:
        if reason and item.kind == "allergy" and not item.chart_table and is_no_known_allergies(item.values):
            item.review, item.review_reason = True, reason


def _uncharted_trusted(row: FactRow) -> bool:
    """A trusted fact the chart has no table for: family history, or an explicit "no
    known allergies" (an allergy fact with a substance is a chart row's business)."""
    if row.fact_type not in _UNCHARTED_KINDS:
        return False
    if row.fact_type == "allergy":
        return is_no_known_allergies(row.structured_value)
    ctx = row.context or {}
    return not ctx.get("negated") and not ctx.get("uncertain") and ctx.get("temporality") != "hypothetical"
