"""Identity review beyond approve/reject: the field-by-field comparison a reviewer
needs to decide, and undoing a decision.

Undo writes a NEW identity check holding what the gate says about the stored
identifiers, instead of clearing the decided row: the decided row stays exactly as
it was (who, when, what) next to its ``review_decisions`` rows, the check in force
is always the latest row (``current_identity_checks``), and any page still showing
the old check id is refused as stale rather than deciding the wrong thing.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from core import telemetry
from domain.clock import utcnow
from domain.errors import BadInput, NotFound
from domain.models import IdentifierKind, IdentityCandidate, UnreadIdentifier
from domain.policy.facts.chart_rules import APPROVED_AWAITING_IDENTITY, CLOSED_PROMOTION_STATES, identity_trusted
from domain.policy.identity.gate import IdentityOutcome, check_identity
from domain.policy.facts.review_rules import (MIN_UNDO_REASON, approval_needs_reason, closing_decision,
                                              reason_long_enough)
from core.services.review.fact_vectors import index_pending, remove_vectors
from core.services.review.retraction import retract_promotions
from core.services.review.decisions import (activate_trusted_facts, authorize_decision, current_check, parts_outcome,
                                  refresh_document_summary, sums_up_parts)
from core.services.checks.alerts import refresh_alerts
from core.services.workbench import Workbench
from storage import audit_repo, documents_repo, facts_repo, patients_repo, promotions_repo
from storage.rows import FactRow, IdentityCheckRow

_KINDS = (IdentifierKind.NAME, IdentifierKind.DOB, IdentifierKind.MRN)
# The comparison row an unread value belongs to: an identifier-like number under an
# unknown label may be the record number, so it sits in the MRN row.
_ROW_OF_UNREAD = {"name": "name", "dob": "dob", "record_number": "mrn", "identifier": "mrn"}


def _chart_value(kind: IdentifierKind, patient: dict[str, Any]) -> str:
    if kind is IdentifierKind.NAME:
        return " ".join(p for p in (patient["first_name"], patient.get("middle_name"), patient["last_name"]) if p)
    if kind is IdentifierKind.DOB:
        dob = patient["dob"]
        return dob.isoformat() if isinstance(dob, date) else str(dob)
    return str(patient["mrn"])


def identity_comparison(wb: Workbench, check_id: int) -> dict[str, Any]:
    """The document's name, DOB and MRN beside the chart's, field by field, with each
    printed identifier's citation (page and box) so a page can draw them. The verdict
    per field comes from the identity gate: ``match``, ``mismatch``, ``unclear`` (printed
    but too partial or misread to judge), ``not_read`` (printed, but no reader read it:
    ``unread`` lists each such value with its label, reason and region) or ``absent``
    (not on the document). A printed value is never ``absent``."""
    with wb.db.cursor() as cur:
        check = facts_repo.identity_by_id(cur, check_id)
        if check is None:
            raise NotFound(f"No identity check with id {check_id}.", code="unknown_identity_check")
        patient = patients_repo.by_id(cur, check.patient_id)
        parts = ([c for c in facts_repo.identity_checks_for_document(cur, check.document_id) if c.scope]
                 if sums_up_parts(check) else [])
    candidates = [IdentityCandidate.model_validate(i) for i in check.extracted_identifiers or []]
    unread = [UnreadIdentifier.model_validate(u) for u in check.unread_identifiers or []]
    fields = []
    for kind in _KINDS:
        printed = [c for c in candidates if c.kind is kind]
        not_read = [u for u in unread if _ROW_OF_UNREAD[u.kind] == kind.value]
        verdict = check_identity(printed, patient).matched.get(kind.value) if printed else None
        if printed:
            word = {True: "match", False: "mismatch", None: "unclear"}[verdict]
        else:
            word = "not_read" if not_read else "absent"
        fields.append({
            "kind": kind.value,
            # An open date of birth shows both readings ("1950-11-03 or 1950-03-11").
            "document": [f"{c.value} or {c.other_reading}" if c.other_reading else c.value for c in printed],
            "not_read": [u.value for u in not_read],
            "chart": _chart_value(kind, patient),
            "verdict": word,
            "citations": [c.citation.model_dump(mode="json") for c in printed if c.citation is not None],
        })
    return {"identity_check_id": check.id, "document_id": check.document_id, "scope": check.scope,
            "status": check.identity_status, "mismatch_reason": check.mismatch_reason,
            "reviewed_by": check.reviewed_by, "reviewed_at": check.reviewed_at, "fields": fields,
            # Account, visit, NHS numbers: shown; one agrees only when it is the chart MRN itself.
            "other_identifiers": [{"value": c.value, "citation": c.citation.model_dump(mode="json")
                                   if c.citation else None}
                                  for c in candidates if c.kind is IdentifierKind.OTHER_ID],
            "unread": [{"kind": u.kind, "row": _ROW_OF_UNREAD[u.kind], "label": u.label, "value": u.value,
                        "reason": u.reason, "citation": u.citation.model_dump(mode="json")} for u in unread],
            "reason_required": approval_needs_reason(check.identity_status or "", len(unread))
            and not check.review_decision,
            "parts": [{"identity_check_id": p.id, "scope": p.scope, "status": p.identity_status}
                      for p in parts]}


def _gate(cur, check: IdentityCheckRow, patient: dict[str, Any]) -> IdentityOutcome:
    """What the identity gate says today about the check's stored identifiers (a
    packet's summary without identifiers of its own sums up its parts)."""
    if sums_up_parts(check) and (outcome := parts_outcome(cur, check.document_id)) is not None:
        return outcome
    return check_identity([IdentityCandidate.model_validate(i) for i in check.extracted_identifiers or []], patient,
                          [UnreadIdentifier.model_validate(u) for u in check.unread_identifiers or []])


def _status_after_undo(fact: FactRow, own: dict[str, Any] | None, prior: dict[str, Any] | None) -> str | None:
    """A fact's promotion status once the identity decision is undone: a person's own
    decision on the fact stands; otherwise it is what it was before the identity decision
    (None: decided afresh by promotion)."""
    if own is not None:
        return {"reject": "rejected", "keep": "not_promotable", "keep-chart": "not_promotable",
                "acknowledge": "acknowledged"}.get(own["decision"], APPROVED_AWAITING_IDENTITY)
    if fact.promotion_status == "superseded":
        return "superseded"  # another value was approved over it: never comes back
    before = (prior or {}).get("promotion_status")
    return before if before in CLOSED_PROMOTION_STATES else None


def undo_identity_decision(wb: Workbench, check_id: int, *, by: str, reason: str,
                           undoes: int | None = None) -> dict[str, Any]:
    """Reverse the last approve/reject of an identity check: the gate is run again on
    the stored identifiers and its answer becomes the check in force. Facts the
    approval activated go inactive again and their promotions are retracted (chart
    rows follow the lifetime rule); facts a rejection closed come back to where they
    were. Decisions on single findings stand. The old decision rows stay; an "undo"
    row naming the undone decision is added. ``undoes``: the decision id the caller
    means; refused when that is no longer the check's decision in force."""
    by = authorize_decision(wb, by)  # undoing is a decision too: the same role
    if not reason_long_enough(reason, MIN_UNDO_REASON):
        raise BadInput(f"Say why the decision is undone (at least {MIN_UNDO_REASON} characters); the reason is "
                       "kept in the audit.", code="reason_required")
    with wb.db.transaction() as cur:
        check = current_check(cur, check_id)
        decided = closing_decision(audit_repo.review_decisions(cur, "identity_check", check.id))
        if decided is None:
            raise BadInput("This identity check has no reviewer decision to undo.", code="not_decided")
        if undoes is not None and decided["id"] != undoes:
            raise BadInput(f"Decision {undoes} no longer decides this patient match (decision {decided['id']} does); "
                           "nothing was undone.", code="overtaken")
        document = documents_repo.by_id(cur, check.document_id)
        if document["deleted"]:
            raise BadInput("The document was deleted; its identity can no longer be reviewed.", code="document_deleted")
        patient = patients_repo.by_id(cur, check.patient_id)
        outcome = _gate(cur, check, patient)
        new_check = facts_repo.insert_identity_check(
            cur, patient_id=check.patient_id, document_id=check.document_id, job_id=check.job_id,
            doc_type=check.doc_type, scope=check.scope, status=outcome.status.value,
            identifiers=check.extracted_identifiers or [], matched=outcome.matched,
            mismatch_reason=outcome.mismatch_reason, review_required=outcome.review_required,
            unread=check.unread_identifiers or [])
        facts = [f for f in facts_repo.facts_for_document(cur, check.document_id)
                 if f.scope == check.scope and f.retracted_at is None]
        own = {fid: closing_decision(rows) for fid, rows in
               audit_repo.decisions_for_items(cur, "fact", [f.id for f in facts]).items()}
        prior = (decided.get("before_state") or {}).get("facts") or {}
        trusted = identity_trusted(outcome.status)
        changed: list[int] = []
        if trusted and decided["decision"] == "reject":
            # The gate trusts the document by itself: the rejection's effects are undone.
            for fact in facts:
                status = _status_after_undo(fact, own.get(fact.id), prior.get(str(fact.id)))
                facts_repo.update_fact(cur, fact.id, promotion_status=status)
            changed = activate_trusted_facts(cur, _reloaded(cur, facts), document)
        elif not trusted:
            for fact in facts:
                status = _status_after_undo(fact, own.get(fact.id), prior.get(str(fact.id)))
                facts_repo.update_fact(cur, fact.id, active=False, deactivated_at=utcnow(),
                                       promotion_status=status or "awaiting_identity")
                if fact.active:
                    changed.append(fact.id)
            retract_promotions(cur, [p for f in facts for p in promotions_repo.promotions_for_fact(cur, f.id)],
                               by=by, reason=f"identity decision undone by {by}: {reason}")
        undo_id = audit_repo.add_review_decision(
            cur, item_type="identity_check", item_id=check.id, decision="undo", actor=by, reason=reason,
            before={"identity_status": check.identity_status, "decision": decided["decision"],
                    "decided_by": decided["actor"], "document_id": check.document_id, "scope": check.scope},
            after={"identity_status": outcome.status.value, "identity_check_id": new_check.id,
                   "undoes": decided["id"]})
        if check.scope is not None:
            refresh_document_summary(cur, check.document_id)
        refresh_alerts(cur, check.patient_id)
    if trusted:
        index_pending(wb)
    else:
        remove_vectors(wb, [f.id for f in facts])
    telemetry.emit("identity_reviewed", settings=wb.settings, patient_id=check.patient_id,
                   document_id=check.document_id, identity_status=outcome.status.value,
                   counts={"changed": len(changed)})
    return {"identity_check_id": new_check.id, "undone_check_id": check.id, "document_id": check.document_id,
            "scope": check.scope, "status": outcome.status.value, "undone_decision": decided["decision"],
            "changed_facts": len(changed), "decision_id": undo_id, "undone_decision_id": decided["id"]}


def _reloaded(cur, facts: list[FactRow]) -> list[FactRow]:
    found = facts_repo.facts_by_ids(cur, [f.id for f in facts])
    return [found[f.id] for f in facts]


def undoable_decisions(wb: Workbench, patient_id: int) -> list[dict[str, Any]]:
    """Identity decisions a reviewer may still undo: the check decided is the one in
    force and its document is live."""
    with wb.db.cursor() as cur:
        checks = facts_repo.decided_identity_checks(cur, patient_id)
    return [{"identity_check_id": c.id, "document_id": c.document_id, "filename": c.filename,
             "scope": c.scope, "decision": c.review_decision, "reviewed_by": c.reviewed_by,
             "reviewed_at": c.reviewed_at, "status": c.identity_status} for c in checks]
