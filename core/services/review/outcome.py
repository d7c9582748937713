"""What happened to a document, as the upload notice, the Documents page and the chart
overview all say it: held as another patient's, could not be read, N conflicts with the
chart, N need review, N added to the chart. One pure function (``document_outcome``)
computes it from the document's job, its patient match and its facts as they stand
now (after any decision), so the three places cannot disagree and never count an
extraction check ("verified") for a document that is held back.

Also the overview's counts (``chart_counts``), taken from the review queue itself so the
two always agree, and each page's patient match for the viewer's banner (``page_matches``).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping

from domain.models import IdentityStatus
from domain.policy.facts.chart_rules import (
    CLOSED_PROMOTION_STATES, SUPPORTING_OUTCOMES, UNREAD_CONTENT, identity_trusted, needs_review,
)
from domain.policy.facts.review_rules import CONFLICT
from core.services.review.decisions import queue_items
from core.services.workbench import Workbench
from storage import documents_repo, facts_repo, jobs_repo

# The document's state, before any count: the first that holds wins.
WAITING, READING, FAILED, STORED_ONLY, DELETED = "waiting", "reading", "failed", "stored_only", "deleted"
OTHER_PATIENT, MATCH_UNCLEAR, NOT_THIS_PATIENT, READ = "other_patient", "match_unclear", "not_this_patient", "read"
_JOB_STATE = {"pending": WAITING, "running": READING, "failed": FAILED, "retracted": DELETED, None: STORED_ONLY}
# A whole-document patient match that keeps every finding off the chart.
_DOCUMENT_HELD = {IdentityStatus.MISMATCH.value: OTHER_PATIENT, IdentityStatus.AMBIGUOUS.value: MATCH_UNCLEAR,
                  IdentityStatus.REJECTED.value: NOT_THIS_PATIENT}


@dataclass(frozen=True)
class DocumentOutcome:
    state: str
    added: int = 0  # live findings that stand behind a chart row (added, or already there)
    conflicts: int = 0  # findings that differ from the chart, waiting for a decision
    need_review: int = 0  # other findings waiting for a person
    unread: int = 0  # printed results no finding reads (the coverage guard's count), not yet acknowledged
    kept_with_document: int = 0  # cited findings that are not chart items
    held: int = 0  # findings waiting on a patient-match decision
    other_patient_parts: tuple[str, ...] = ()  # parts ("page 3", a message) that name another patient

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def document_outcome(job_status: str | None, identity_status: str | None,
                     facts: Iterable[Mapping[str, Any]], *, part_statuses: Iterable[str | None] = (),
                     deleted: bool = False) -> DocumentOutcome:
    """A document's outcome from its latest job's status, its whole-document patient
    match, the patient match of each of its parts (a fax packet's pages, a batch's
    messages; none for a document checked as a whole) and its facts (dicts with
    fact_type, certainty, promotion_status, active, scope and the ``identity_status``
    of the fact's own part). Pure.

    A document checked in parts is held as a whole only when no part of it matches:
    a fax packet with one page of another patient is read, and that page is named."""
    if deleted:
        return DocumentOutcome(DELETED)
    if job_status != "succeeded":
        return DocumentOutcome(_JOB_STATE.get(job_status, WAITING))
    counts = dict(added=0, conflicts=0, need_review=0, unread=0, kept_with_document=0, held=0)
    other_parts: list[str] = []
    for fact in facts:
        promotion = fact.get("promotion_status")
        if fact.get("retracted_at") is not None or promotion in CLOSED_PROMOTION_STATES:
            continue  # a person closed it, or it was taken out: nothing waits on it
        if fact.get("fact_type") == UNREAD_CONTENT:  # one record lists every result no reader read
            # How the document was read, whoever's it is: said even when held.
            counts["unread"] += int((fact.get("structured_value") or {}).get("count") or 1)
            continue
        status = fact.get("identity_status")
        if not identity_trusted(status):
            scope = fact.get("scope")
            if status == IdentityStatus.MISMATCH.value and scope is not None and scope not in other_parts:
                other_parts.append(str(scope))
            if status != IdentityStatus.REJECTED.value:  # rejected: decided, not held
                counts["held"] += 1
            continue
        if promotion == CONFLICT:
            counts["conflicts"] += 1
        elif needs_review(fact):
            counts["need_review"] += 1
        elif promotion in SUPPORTING_OUTCOMES and fact.get("active", True):
            counts["added"] += 1
        else:
            counts["kept_with_document"] += 1
    parts = list(part_statuses)
    if parts and any(identity_trusted(s) for s in parts):
        state = READ
    else:
        state = _DOCUMENT_HELD.get(identity_status or (parts[0] if parts else "") or "", READ)
    if state == MATCH_UNCLEAR and not any(counts.values()):
        state = READ  # nothing was found that could wait on the match: "read, nothing found"
    return DocumentOutcome(state, other_patient_parts=tuple(other_parts), **counts)


def _fact_dicts(rows) -> list[dict[str, Any]]:
    return [r.to_dict() | {"identity_status": r.identity_status} for r in rows]


def patient_outcomes(wb: Workbench, patient_id: int) -> dict[int, DocumentOutcome]:
    """Every live document of a patient -> its outcome."""
    with wb.db.cursor() as cur:
        docs = documents_repo.for_patient(cur, patient_id)
        rows = facts_repo.facts_for_patient(cur, patient_id)
        parts = {d["id"]: [c.identity_status for c in facts_repo.identity_checks_for_document(cur, d["id"])
                           if c.scope is not None] for d in docs}
    by_document: dict[int, list[dict[str, Any]]] = {}
    for fact in _fact_dicts(rows):
        by_document.setdefault(fact["document_id"], []).append(fact)
    return {d["id"]: document_outcome(d["job_status"], d["identity_status"], by_document.get(d["id"], []),
                                      part_statuses=parts[d["id"]], deleted=bool(d["deleted"])) for d in docs}


def outcomes(wb: Workbench, document_ids: Iterable[int]) -> dict[int, DocumentOutcome]:
    """The outcome of each given document (the upload notices' documents)."""
    out: dict[int, DocumentOutcome] = {}
    ids = list(document_ids)
    with wb.db.cursor() as cur:
        latest = jobs_repo.latest_for_documents(cur, ids)
        for document_id in ids:
            document = documents_repo.by_id(cur, document_id)
            if document is None:
                continue
            checks = facts_repo.identity_checks_for_document(cur, document_id)
            by_scope = {c.scope: c.identity_status for c in checks}
            facts = [f.to_dict() | {"identity_status": by_scope.get(f.scope)}
                     for f in facts_repo.facts_for_document(cur, document_id)]
            job = latest.get(document_id)
            out[document_id] = document_outcome(job.status if job else None, by_scope.get(None), facts,
                                                part_statuses=[s for k, s in by_scope.items() if k is not None],
                                                deleted=bool(document["deleted"]))
    return out


def chart_counts(wb: Workbench, patient_id: int) -> dict[str, int]:
    """The overview's counts, from the review queue itself: ``to_review`` is the queue's
    length (patient-match checks included), ``held`` the findings waiting on a
    patient-match decision (rejected ones are decided, not held; the coverage guard's
    records of unread results are no findings)."""
    items = queue_items(wb, patient_id)
    with wb.db.cursor() as cur:
        rows = facts_repo.facts_for_patient(cur, patient_id)
    held = sum(1 for f in rows if not f.document_deleted and not identity_trusted(f.identity_status)
               and f.identity_status != IdentityStatus.REJECTED.value and f.fact_type != UNREAD_CONTENT
               and f.promotion_status not in CLOSED_PROMOTION_STATES)
    return {"to_review": len(items), "patient_match": sum(i["kind"] == "identity" for i in items),
            "findings": sum(i["kind"] == "fact" for i in items), "held": held}


_SCOPE = re.compile(r"^pages? (\d+)(?:-(\d+))?$")


def page_matches(wb: Workbench, document_id: int) -> dict[int, str]:
    """Page number -> the patient match of the part that page belongs to (a fax packet's
    pages, each checked on its own); pages of no checked part are absent."""
    with wb.db.cursor() as cur:
        checks = facts_repo.identity_checks_for_document(cur, document_id)
    out: dict[int, str] = {}
    for check in checks:
        found = _SCOPE.match(check.scope or "")
        if not found:
            continue
        first = int(found[1])
        for n in range(first, int(found[2] or first) + 1):
            out[n] = check.identity_status
    return out
