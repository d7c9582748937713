"""Human review decisions: identity approval/rejection and fact approval/rejection.

Every decision is an append-only ``review_decisions`` row with before/after
state. Approving an identity activates and promotes what was held back;
rejecting it leaves everything inactive.
"""

from __future__ import annotations

from typing import Any

from core import telemetry
from core.errors import BadInput, NotFound
from core.models import Certainty, IdentityStatus
from core.services.facts import patient_facts
from core.services.fact_vectors import index_pending, remove_vectors
from core.services.promotion import promote_fact, promote_facts
from core.services.retraction import retract_promotions
from core.services.workbench import Workbench
from storage import audit_repo, documents_repo, facts_repo, promotions_repo
from storage.jobs_repo import utcnow

ACTIONS = ("approve-identity", "reject-identity", "approve-fact", "reject-fact")


def _identity_for(cur, item_id: int) -> dict[str, Any]:
    """Accept an identity check id; fall back to a document id (its latest
    document-level check) because that is what a reviewer has at hand."""
    check = facts_repo.identity_by_id(cur, item_id)
    if check is None:
        check = facts_repo.latest_identity(cur, item_id, None)
    if check is None:
        raise NotFound(f"No identity check or document with id {item_id}.", code="unknown_item")
    return check


def decide_identity(wb: Workbench, item_id: int, *, approve: bool, by: str, reason: str | None = None) -> dict[str, Any]:
    if not by:
        raise BadInput("A review decision needs the reviewer's name (--by).")
    activated: list[int] = []
    with wb.db.transaction() as cur:
        check = _identity_for(cur, item_id)
        status = IdentityStatus(check["identity_status"])
        if status.trusted and approve:
            raise BadInput("This document's identity is already trusted.", code="already_decided")
        if status is IdentityStatus.REJECTED and not approve:
            raise BadInput("This document's identity was already rejected.", code="already_decided")
        document = documents_repo.by_id(cur, check["document_id"])
        if document["deleted"]:
            raise BadInput("The document was deleted; its identity can no longer be reviewed.", code="document_deleted")
        new = IdentityStatus.APPROVED if approve else IdentityStatus.REJECTED
        facts_repo.set_identity_review(cur, check["id"], status=new.value, decision="approved" if approve else "rejected",
                                       by=by)
        audit_repo.add_review_decision(cur, item_type="identity_check", item_id=check["id"],
                                       decision="approve" if approve else "reject", actor=by, reason=reason,
                                       before={"identity_status": status.value},
                                       after={"identity_status": new.value})
        facts = [f for f in facts_repo.facts_for_document(cur, check["document_id"])
                 if f["scope"] == check["scope"] and f["retracted_at"] is None]
        if approve:
            for fact in facts:
                fact["active"] = fact["certainty"] != Certainty.NEEDS_REVIEW.value
                facts_repo.update_fact(cur, fact["id"], active=fact["active"])
            facts_repo.set_promotion_status(cur, promote_facts(cur, facts, document))
            activated = [f["id"] for f in facts if f["active"]]
        else:
            for fact in facts:
                facts_repo.update_fact(cur, fact["id"], active=False, promotion_status="rejected",
                                       deactivated_at=utcnow())
            promotions_repo.insert_promotions(cur, [
                dict(patient_id=f["patient_id"], document_id=f["document_id"], job_id=f["job_id"], fact_id=f["id"],
                     fact_fingerprint=f["fact_fingerprint"], clinical_content_fingerprint=f["clinical_content_fingerprint"],
                     outcome="rejected", citation=f["citation"], confidence=f["confidence"], review_status="rejected",
                     active=False) for f in facts])
        updated = facts_repo.identity_by_id(cur, check["id"])
    index_pending(wb)
    telemetry.emit("identity_reviewed", settings=wb.settings, patient_id=check["patient_id"],
                   document_id=check["document_id"], identity_status=new.value, counts={"activated": len(activated)})
    return {"identity_check_id": updated["id"], "document_id": updated["document_id"], "scope": updated["scope"],
            "status": updated["identity_status"], "reviewed_by": updated["reviewed_by"],
            "activated_facts": len(activated)}


def decide_fact(wb: Workbench, fact_id: int, *, approve: bool, by: str, reason: str | None = None) -> dict[str, Any]:
    if not by:
        raise BadInput("A review decision needs the reviewer's name (--by).")
    with wb.db.transaction() as cur:
        fact = facts_repo.fact_by_id(cur, fact_id)
        if fact is None:
            raise NotFound(f"No fact with id {fact_id}.", code="unknown_item")
        if fact["retracted_at"] is not None:
            raise BadInput("This fact was retracted with its document.", code="fact_retracted")
        document = documents_repo.by_id(cur, fact["document_id"])
        check = facts_repo.latest_identity(cur, fact["document_id"], fact["scope"])
        trusted = check is not None and IdentityStatus(check["identity_status"]).trusted
        before = {"certainty": fact["certainty"], "active": fact["active"], "promotion_status": fact["promotion_status"]}
        if approve:
            # A reviewer vouches for the finding; it becomes verified evidence and,
            # once the identity is trusted, is promoted like any verified fact.
            promotions_repo.close_pending_reviews(cur, fact_id, "approved")
            facts_repo.update_fact(cur, fact_id, certainty=Certainty.VERIFIED.value, active=trusted,
                                   review_reason=None)
            fact = facts_repo.fact_by_id(cur, fact_id)
            outcome = promote_fact(cur, fact, document, supersede=True) if trusted else "awaiting_identity"
            facts_repo.update_fact(cur, fact_id, promotion_status=outcome)
        else:
            # A rejected finding must not stay in the chart through an earlier promotion.
            promotions_repo.close_pending_reviews(cur, fact_id, "rejected")
            retract_promotions(cur, promotions_repo.promotions_for_fact(cur, fact_id), by=by,
                               reason=f"finding rejected by {by}" + (f": {reason}" if reason else ""))
            facts_repo.update_fact(cur, fact_id, active=False, promotion_status="rejected", deactivated_at=utcnow())
        fact = facts_repo.fact_by_id(cur, fact_id)
        after = {"certainty": fact["certainty"], "active": fact["active"], "promotion_status": fact["promotion_status"]}
        audit_repo.add_review_decision(cur, item_type="fact", item_id=fact_id, decision="approve" if approve else "reject",
                                       actor=by, reason=reason, before=before, after=after)
    if approve and fact["active"]:
        index_pending(wb)
    elif not approve:
        remove_vectors(wb, [fact_id])
    return {"fact_id": fact_id, **after}


def review(wb: Workbench, action: str, item_id: int, *, by: str, reason: str | None = None) -> dict[str, Any]:
    if action not in ACTIONS:
        raise BadInput(f"Unknown review action {action!r}; use one of: {', '.join(ACTIONS)}.")
    approve = action.startswith("approve")
    if action.endswith("identity"):
        return decide_identity(wb, item_id, approve=approve, by=by, reason=reason)
    return decide_fact(wb, item_id, approve=approve, by=by, reason=reason)


def review_queue(wb: Workbench, patient_id: int) -> dict[str, list[dict[str, Any]]]:
    """Open review work for a patient: identity checks awaiting a decision and
    findings that need a human (uncertain facts and promotion conflicts)."""
    with wb.db.cursor() as cur:
        identities = facts_repo.pending_identity_reviews(cur, patient_id)
    groups = patient_facts(wb, patient_id)
    return {"identity": identities, "facts": groups["needs_review"], "held": groups["held"]}
