"""Human review decisions: identity approval/rejection and fact approval/rejection.

Every decision is an append-only ``review_decisions`` row with before/after
state. Approving an identity activates and promotes what was held back;
rejecting it leaves everything inactive.
"""

from __future__ import annotations

from typing import Any

from core import telemetry
from domain.clock import utcnow
from domain.errors import BadInput, NotFound
from domain.models import Certainty, IdentityStatus
from domain.policy.access.permissions import Permission
from domain.policy.identity.gate import IdentityOutcome, combine_parts
from domain.policy.facts.chart_row_checks import approval_refusal
from domain.policy.facts.review_rules import (CONFLICT, KEEP_CHART, MIN_OVERRIDE_REASON, REPLACE,
                                             already_decided_message, approval_needs_reason, check_resolution,
                                             closing_decision, may_replace_in_bulk, queue_reason, reason_long_enough,
                                             resolution_needed_message)
from domain.policy.facts.chart_rules import (ACKNOWLEDGED, APPROVED_AWAITING_IDENTITY, CLOSED_PROMOTION_STATES,
                                     acknowledge_only, activated_by_identity_approval, critical_result,
                                     identity_trusted)
from core.services.admin.accounts import authorize
from core.services.checks.alerts import refresh_alerts
from core.services.review.effects import changes_since, snapshot
from core.services.review.facts import patient_facts
from core.services.review.fact_vectors import index_pending, remove_vectors
from core.services.review.promotion import promote_fact, promote_facts
from core.services.review.retraction import retract_promotions
from core.services.workbench import Workbench
from storage import audit_repo, documents_repo, facts_repo, promotions_repo, record_version
from storage.rows import FactRow, IdentityCheckRow

ACTIONS = ("approve-identity", "reject-identity", "approve-fact", "reject-fact")


def ensure_open(cur, item_type: str, item_id: int) -> None:
    """Refuse a decision on an item a person already decided, saying who and when
    ("already approved by dr.alice at 10:42"), instead of silently deciding it again.
    Whether it is decided is read from its ``review_decisions`` rows only."""
    closing = closing_decision(audit_repo.review_decisions(cur, item_type, item_id))
    if closing is not None:
        what = "This finding" if item_type == "fact" else "This document's identity"
        raise BadInput(f"{what} was {already_decided_message(closing)}.", code="already_decided")


def live_fact(cur, fact_id: int) -> tuple[FactRow, dict[str, Any]]:
    """The fact and its document, or why a person can no longer act on it: unknown,
    retracted, or its document deleted."""
    fact = facts_repo.fact_by_id(cur, fact_id)
    if fact is None:
        raise NotFound(f"No fact with id {fact_id}.", code="unknown_fact")
    if fact.retracted_at is not None:
        raise BadInput("This fact was retracted with its document.", code="fact_retracted")
    document = documents_repo.by_id(cur, fact.document_id)
    if document["deleted"]:
        raise BadInput("The document was deleted; its findings can no longer be reviewed.", code="document_deleted")
    return fact, document


def decidable_fact(cur, fact_id: int, *, approving: bool) -> tuple[FactRow, dict[str, Any], IdentityStatus]:
    """The fact, its document and its identity status, or the reason no decision may be
    taken on it: unknown, retracted, deleted document, already decided, or (when the
    decision would put it in the chart) a rejected or quarantined identity."""
    fact, document = live_fact(cur, fact_id)
    ensure_open(cur, "fact", fact_id)
    check = facts_repo.latest_identity(cur, fact.document_id, fact.scope)
    status = IdentityStatus(check.identity_status) if check is not None else IdentityStatus.UNCHECKED
    if approving and status in (IdentityStatus.REJECTED, IdentityStatus.MISMATCH):
        raise BadInput(
            f"Finding {fact_id} comes from a document whose identity is "
            + ("rejected" if status is IdentityStatus.REJECTED else "quarantined as another patient's")
            + "; it cannot be approved into this chart. Review the document's identity first.",
            code="identity_not_trusted")
    return fact, document, status


def authorize_decision(wb: Workbench, by: str | None) -> str:
    """The name of the account deciding, once it is known to be an active reviewer or
    admin (never the shell or the system: a decision always names a person's account).
    Called before anything is read or written, so a refusal changes nothing."""
    return authorize(wb, by, Permission.DECIDE).name


def fact_state(fact: FactRow) -> dict[str, Any]:
    """What a decision on a finding changes, for the audit's before/after."""
    return {"certainty": fact.certainty, "active": fact.active, "promotion_status": fact.promotion_status}


def withdraw_from_chart(cur, fact_id: int, *, closed_as: str, by: str, reason: str) -> None:
    """A person decided the finding is not (or no longer) chart truth as it stands: its
    open review rows close as ``closed_as`` and its promotions are retracted (chart rows
    follow the lifetime rule)."""
    promotions_repo.close_pending_reviews(cur, fact_id, closed_as)
    retract_promotions(cur, promotions_repo.promotions_for_fact(cur, fact_id), by=by, reason=reason)


def verify_and_promote(cur, fact_id: int, document: dict[str, Any], status: IdentityStatus,
                       resolution: str | None = None) -> FactRow:
    """A reviewer vouches for the finding (approved, or corrected): it becomes verified
    evidence and, once its identity is trusted, is promoted as reviewed like any
    verified fact; until then it waits for the identity decision. A chart value for the
    same test and date changes only by ``resolution``; without one the finding stays a
    conflict. Returns the fact."""
    trusted = identity_trusted(status)
    facts_repo.update_fact(cur, fact_id, certainty=Certainty.VERIFIED.value, active=trusted, review_reason=None)
    fact = facts_repo.fact_by_id(cur, fact_id)
    outcome = (promote_fact(cur, fact, document, reviewed=True, resolution=resolution) if trusted
               else APPROVED_AWAITING_IDENTITY)
    facts_repo.update_fact(cur, fact_id, promotion_status=outcome)
    return facts_repo.fact_by_id(cur, fact_id)


def current_check(cur, check_id: int) -> IdentityCheckRow:
    check = facts_repo.identity_by_id(cur, check_id)
    if check is None:
        raise NotFound(f"No identity check with id {check_id}.", code="unknown_identity_check")
    current = facts_repo.latest_identity(cur, check.document_id, check.scope)
    if current is not None and current.id != check.id:
        raise BadInput(f"Identity check {check_id} was replaced by check {current.id} when the document was "
                       "processed again; decide on the current check.", code="stale_identity_check")
    return check


def check_for_document(wb: Workbench, document_id: int) -> int:
    """The identity check a decision on a whole document means. A document checked in
    parts (fax pages, HL7 messages) has several checks; then the reviewer must name one."""
    with wb.db.cursor() as cur:
        if documents_repo.by_id(cur, document_id) is None:
            raise NotFound(f"No document with id {document_id}.", code="unknown_document")
        checks = facts_repo.identity_checks_for_document(cur, document_id)
    if not checks:
        raise BadInput(f"Document {document_id} has no identity check yet (is it still processing?).",
                       code="no_identity_check")
    if len(checks) > 1:
        listing = "; ".join(f"check {c.id} ({c.scope or 'whole document'}: "
                            f"{c.identity_status})" for c in checks)
        raise BadInput(f"Document {document_id} has {len(checks)} identity checks: {listing}. "
                       "Name the one you mean with --check.", code="ambiguous_identity_check")
    return int(checks[0].id)


def sums_up_parts(check: IdentityCheckRow) -> bool:
    """A whole-document check without identifiers of its own only summarises the checks
    of the document's parts (fax pages, HL7 messages)."""
    return check.scope is None and not check.extracted_identifiers


def parts_outcome(cur, document_id: int) -> IdentityOutcome | None:
    """The identity gate's summary of a document's part checks in force (None: no parts)."""
    parts = {c.scope: IdentityStatus(c.identity_status)
             for c in facts_repo.identity_checks_for_document(cur, document_id) if c.scope is not None}
    return combine_parts(parts) if parts else None


def refresh_document_summary(cur, document_id: int) -> None:
    """Once a person decides a part, the document's summary check is recomputed, so a
    packet whose every part is now trusted no longer waits in the queue as a whole."""
    summary = facts_repo.latest_identity(cur, document_id, None)
    if summary is None or summary.review_decision or not sums_up_parts(summary):
        return  # a person decided the whole, or it stands on identifiers of its own
    outcome = parts_outcome(cur, document_id)
    if outcome is None or outcome.status.value == summary.identity_status:
        return
    facts_repo.insert_identity_check(
        cur, patient_id=summary.patient_id, document_id=document_id, job_id=summary.job_id,
        doc_type=summary.doc_type, scope=None, status=outcome.status.value, identifiers=[],
        matched=outcome.matched, mismatch_reason=outcome.mismatch_reason, review_required=outcome.review_required)


def activate_trusted_facts(cur, facts: list[FactRow], document: dict[str, Any]) -> list[int]:
    """A document part's identity is now trusted: its live facts become active and are
    promoted. Returns the ids made active."""
    live = [f for f in facts if activated_by_identity_approval(f.to_dict())]
    for fact in live:
        facts_repo.update_fact(cur, fact.id, active=True)
    # Findings a person already approved one by one keep that decision; the rest
    # are promoted on the document's strength (hedged wording stays held).
    item_approved = [f for f in live if f.promotion_status == APPROVED_AWAITING_IDENTITY]
    on_document = [f for f in facts if f.promotion_status not in CLOSED_PROMOTION_STATES
                   and f.promotion_status != APPROVED_AWAITING_IDENTITY]  # review items recorded as such
    facts_repo.set_promotion_status(cur, promote_facts(cur, item_approved, document, reviewed=True)
                                    | promote_facts(cur, on_document, document))
    return [f.id for f in live]


def decide_identity(wb: Workbench, check_id: int, *, approve: bool, by: str, reason: str | None = None) -> dict[str, Any]:
    """Approve or reject one identity check (an identity check id, never a document id)."""
    by = authorize_decision(wb, by)
    activated: list[int] = []
    with wb.db.transaction() as cur:
        check = current_check(cur, check_id)
        status = IdentityStatus(check.identity_status)
        ensure_open(cur, "identity_check", check.id)
        if identity_trusted(status) and approve:
            raise BadInput("This document's identity is already trusted.", code="already_decided")
        unread = len(check.unread_identifiers or [])
        if approve and approval_needs_reason(status.value, unread) and not reason_long_enough(reason):
            what = ("This document names another patient." if status is IdentityStatus.MISMATCH else
                    f"This document prints {unread} identity value(s) that were not read.")
            raise BadInput(f"{what} Approving it into this chart needs a written "
                           f"reason of at least {MIN_OVERRIDE_REASON} characters, kept in the audit.",
                           code="reason_required")
        document = documents_repo.by_id(cur, check.document_id)
        if document["deleted"]:
            raise BadInput("The document was deleted; its identity can no longer be reviewed.", code="document_deleted")
        new = IdentityStatus.APPROVED if approve else IdentityStatus.REJECTED
        facts = [f for f in facts_repo.facts_for_document(cur, check.document_id)
                 if f.scope == check.scope and f.retracted_at is None]
        # What each fact was before, so an undo can put it back.
        prior = {str(f.id): {"active": f.active, "promotion_status": f.promotion_status} for f in facts}
        state = snapshot(cur, check.patient_id)
        facts_repo.set_identity_review(cur, check.id, status=new.value, decision="approved" if approve else "rejected",
                                       by=by)
        if check.scope is not None:
            refresh_document_summary(cur, check.document_id)
        if approve:
            activated = activate_trusted_facts(cur, facts, document)
        else:
            for fact in facts:
                facts_repo.update_fact(cur, fact.id, active=False, promotion_status="rejected",
                                       deactivated_at=utcnow())
            # A document once trusted may already back chart rows: they lose that support.
            retract_promotions(cur, [p for f in facts for p in promotions_repo.promotions_for_fact(cur, f.id)],
                               by=by, reason=f"identity rejected by {by}" + (f": {reason}" if reason else ""))
            promotions_repo.insert_promotions(cur, [
                dict(patient_id=f.patient_id, document_id=f.document_id, job_id=f.job_id, fact_id=f.id,
                     fact_fingerprint=f.fact_fingerprint, clinical_content_fingerprint=f.clinical_content_fingerprint,
                     outcome="rejected", citation=f.citation, confidence=f.confidence, review_status="rejected",
                     active=False) for f in facts])
        # Recorded last, with every row the decision changed (what a later undo of a
        # finding's decision checks it did not overtake).
        decision_id = audit_repo.add_review_decision(
            cur, item_type="identity_check", item_id=check.id, decision="approve" if approve else "reject", actor=by,
            reason=reason, before={"identity_status": status.value, "document_id": check.document_id,
                                   "scope": check.scope, "facts": prior},
            after={"identity_status": new.value}, effects=changes_since(cur, state))
        refresh_alerts(cur, check.patient_id)
        updated = facts_repo.identity_by_id(cur, check.id)
    if approve:
        index_pending(wb)
    else:
        remove_vectors(wb, [f.id for f in facts])
    telemetry.emit("identity_reviewed", settings=wb.settings, patient_id=check.patient_id,
                   document_id=check.document_id, identity_status=new.value, counts={"activated": len(activated)})
    return {"identity_check_id": updated.id, "document_id": updated.document_id, "scope": updated.scope,
            "status": updated.identity_status, "reviewed_by": updated.reviewed_by,
            "activated_facts": len(activated), "decision_id": decision_id}


def chart_value_and_source(cur, fact_id: int) -> tuple[str, str]:
    """The chart's value a finding differs from, and where it came from, in words."""
    promo = next((p for p in reversed(promotions_repo.promotions_for_fact(cur, fact_id))
                  if p.outcome == CONFLICT and p.promoted_table), None)
    row = facts_repo.chart_row_for_comparison(cur, promo.promoted_table, int(promo.promoted_record_id)) \
        if promo else None
    if row is None:
        return "another value", "the chart"
    shown = " ".join(str(row[k]) for k in ("test_name", "value", "unit", "collection_date", "substance", "name",
                                            "dose", "frequency", "description") if row.get(k) not in (None, ""))
    support = promotions_repo.live_supporters(cur, promo.promoted_table, [row["id"]]).get(row["id"], [])
    names = [documents_repo.by_id(cur, d)["filename"] for d in dict.fromkeys(p.document_id for p in support)]
    return shown or "another value", ", ".join(names) or "an entry made by hand"


def decide_fact(wb: Workbench, fact_id: int, *, approve: bool, by: str, reason: str | None = None,
                resolution: str | None = None) -> dict[str, Any]:
    """Approve or reject one finding. Approval is refused, changing nothing, while the
    fact's document is deleted, rejected or quarantined as another patient's, and any
    decision is refused once a person already decided the finding. Approving a finding
    that differs from the chart's value for the same test and date needs ``resolution``
    (review_rules.RESOLUTIONS: replace, keep-both, keep-chart); without it the approval
    is refused (``resolution_required``), naming the chart's value and source."""
    try:
        resolution = check_resolution(resolution)
    except ValueError as exc:
        raise BadInput(str(exc), code="bad_resolution") from None
    if resolution is not None and not approve:
        raise BadInput("A resolution goes with approving a finding, not rejecting it.", code="bad_resolution")
    if resolution == KEEP_CHART:
        return keep_as_document_fact(wb, fact_id, by=by, reason=reason, decision=KEEP_CHART)
    by = authorize_decision(wb, by)
    with wb.db.transaction() as cur:
        fact = facts_repo.fact_by_id(cur, fact_id)
        if approve and fact is not None and acknowledge_only(fact.fact_type):
            return _acknowledge(cur, fact_id, by=by, reason=reason)
        fact, document, status = decidable_fact(cur, fact_id, approving=approve)
        if approve and (refusal := approval_refusal(fact.fact_type, fact.structured_value or {})):
            raise BadInput(refusal, code="not_chartable")
        before = fact_state(fact)
        state = snapshot(cur, fact.patient_id, fact.id)
        if approve:
            promotions_repo.close_pending_reviews(cur, fact_id, "approved")
            fact = verify_and_promote(cur, fact_id, document, status, resolution)
            if fact.promotion_status == CONFLICT:  # raised inside the transaction: nothing is kept
                raise BadInput(resolution_needed_message(*chart_value_and_source(cur, fact_id)),
                               code="resolution_required")
        else:
            # A rejected finding must not stay in the chart through an earlier promotion.
            facts_repo.update_fact(cur, fact_id, active=False, promotion_status="rejected", deactivated_at=utcnow())
            withdraw_from_chart(cur, fact_id, closed_as="rejected", by=by,
                                reason=f"finding rejected by {by}" + (f": {reason}" if reason else ""))
            fact = facts_repo.fact_by_id(cur, fact_id)
        after = fact_state(fact)
        if resolution is not None:
            after = {**after, "resolution": resolution}
        decision_id = audit_repo.add_review_decision(
            cur, item_type="fact", item_id=fact_id, decision="approve" if approve else "reject", actor=by,
            reason=reason, before=before, after=after, effects=changes_since(cur, state))
        refresh_alerts(cur, fact.patient_id)
    if approve and fact.active:
        index_pending(wb)
    elif not approve:
        remove_vectors(wb, [fact_id])
    return {"fact_id": fact_id, **after, "decision_id": decision_id}


def _acknowledge(cur, fact_id: int, *, by: str, reason: str | None) -> dict[str, Any]:
    """Approving a coverage record (results the readers did not read) means a person read
    them on the page: the item closes as acknowledged. Nothing reaches the chart or the
    evidence an answer uses; the results themselves are entered or corrected by hand."""
    fact, _document = live_fact(cur, fact_id)
    ensure_open(cur, "fact", fact_id)
    before = fact_state(fact)
    state = snapshot(cur, fact.patient_id, fact.id)
    promotions_repo.close_pending_reviews(cur, fact_id, ACKNOWLEDGED)
    facts_repo.update_fact(cur, fact_id, active=False, promotion_status=ACKNOWLEDGED, review_reason=None)
    after = fact_state(facts_repo.fact_by_id(cur, fact_id))
    decision_id = audit_repo.add_review_decision(cur, item_type="fact", item_id=fact_id, decision="acknowledge",
                                                 actor=by, reason=reason, before=before, after=after,
                                                 effects=changes_since(cur, state))
    return {"fact_id": fact_id, **after, "decision_id": decision_id}


def keep_as_document_fact(wb: Workbench, fact_id: int, *, by: str, reason: str | None = None,
                          decision: str = "keep") -> dict[str, Any]:
    """The finding is right but is not chart truth: it stays cited with its document,
    is never promoted, and leaves the queue. ``decision`` "keep-chart": the reviewer chose
    the chart's value over this finding, which differs from it."""
    by = authorize_decision(wb, by)
    with wb.db.transaction() as cur:
        fact, _document, status = decidable_fact(cur, fact_id, approving=True)
        if acknowledge_only(fact.fact_type):
            raise BadInput("Results that were not read are not a finding to keep; acknowledge them once you "
                           "have read them on the page.", code="not_a_finding")
        before = fact_state(fact)
        state = snapshot(cur, fact.patient_id, fact.id)
        withdraw_from_chart(cur, fact_id, closed_as="kept", by=by,
                            reason=f"the chart's value kept over it by {by}" if decision == KEEP_CHART
                            else f"kept as a document fact by {by}")
        facts_repo.update_fact(cur, fact_id, certainty=Certainty.DOCUMENT_FACT.value, active=identity_trusted(status),
                               review_reason=None, promotion_status="not_promotable")
        fact = facts_repo.fact_by_id(cur, fact_id)
        after = fact_state(fact)
        decision_id = audit_repo.add_review_decision(cur, item_type="fact", item_id=fact_id, decision=decision,
                                                     actor=by, reason=reason, before=before, after=after,
                                                     effects=changes_since(cur, state))
        refresh_alerts(cur, fact.patient_id)
    if fact.active:
        index_pending(wb)
    return {"fact_id": fact_id, **after, "decision_id": decision_id}


class _DryRun(Exception):
    """Raised to roll back a transaction that only looked at what a decision would do."""


def approval_preview(wb: Workbench, fact_ids: list[int]) -> dict[str, Any]:
    """What approving these findings together would do, before anything is done: how
    many go to the chart as they are, which differ from a chart value (with that value,
    its source, and whether a bulk approval may replace it), and which would be refused.
    Found by deciding them in a transaction that is then rolled back."""
    ids = list(dict.fromkeys(fact_ids))
    out: dict[str, Any] = {"approvable": 0, "replaces": [], "own_decision": [], "refused": []}
    try:
        with wb.db.transaction() as cur:
            for fact_id in ids:
                try:
                    fact, document, status = decidable_fact(cur, fact_id, approving=True)
                except (BadInput, NotFound) as exc:
                    out["refused"].append({"fact_id": fact_id, "error": exc.message})
                    continue
                if refusal := approval_refusal(fact.fact_type, fact.structured_value or {}):
                    out["refused"].append({"fact_id": fact_id, "error": refusal})
                    continue
                bulk_ok = may_replace_in_bulk(fact.review_reason, fact.certainty)
                promotions_repo.close_pending_reviews(cur, fact_id, "approved")
                if verify_and_promote(cur, fact_id, document, status).promotion_status != CONFLICT:
                    out["approvable"] += 1
                    continue
                chart, source = chart_value_and_source(cur, fact_id)
                entry = {"fact_id": fact_id, "finding": fact.fact_text, "chart": chart, "source": source}
                out["replaces" if bulk_ok else "own_decision"].append(entry)
            raise _DryRun
    except _DryRun:
        pass
    return out


def approve_facts(wb: Workbench, fact_ids: list[int], *, by: str,
                  replace_chart_values: bool = False) -> list[dict[str, Any]]:
    """Approve a selected group of findings that wait for one reason (the queue's bulk
    approval). A group whose open items wait for different reasons is refused whole
    (``mixed_reasons``), writing nothing: each reason needs its own look. Otherwise each
    item is approved, and audited, on its own: one that fails (already decided,
    untrusted identity, unknown) is reported and does not undo the others.

    A finding that differs from a chart value replaces it only with
    ``replace_chart_values`` (the page has said "replaces N chart values" first,
    ``approval_preview``), and only when its own reading was not in doubt
    (review_rules.may_replace_in_bulk); otherwise it is reported as needing a decision
    on its own, and the chart keeps its value."""
    by = authorize_decision(wb, by)
    ids = list(dict.fromkeys(fact_ids))
    with wb.db.cursor() as cur:
        facts = facts_repo.facts_by_ids(cur, ids)
        decided = audit_repo.decisions_for_items(cur, "fact", list(facts))
    reasons = {queue_reason(f.promotion_status, f.review_reason) for fid, f in facts.items()
               if closing_decision(decided.get(fid, [])) is None}
    if len(reasons) > 1:
        raise BadInput("Bulk approval takes findings that wait for one reason; these wait for: "
                       + "; ".join(sorted(reasons)) + ". Approve them by reason.", code="mixed_reasons")
    results: list[dict[str, Any]] = []
    for fact_id in ids:
        fact = facts.get(fact_id)
        replace = replace_chart_values and fact is not None and may_replace_in_bulk(fact.review_reason, fact.certainty)
        try:
            results.append({"ok": True, **decide_fact(wb, fact_id, approve=True, by=by,
                                                      resolution=REPLACE if replace else None)})
        except (BadInput, NotFound) as exc:
            results.append({"ok": False, "fact_id": fact_id, "code": exc.code, "error": exc.message})
    return results


def review(wb: Workbench, action: str, *, check_id: int | None = None, document_id: int | None = None,
           fact_id: int | None = None, by: str, reason: str | None = None,
           resolution: str | None = None) -> dict[str, Any]:
    """One decision on one item, named by exactly one kind of id: identity actions take
    a check id or a document id (resolved only when it has a single check), fact
    actions take a fact id. An id is never guessed to be another kind."""
    by = authorize_decision(wb, by)  # before any id is looked up: a refused actor learns nothing
    if action not in ACTIONS:
        raise BadInput(f"Unknown review action {action!r}; use one of: {', '.join(ACTIONS)}.")
    given = {k: v for k, v in (("--check", check_id), ("--document", document_id), ("--fact", fact_id))
             if v is not None}
    if len(given) != 1:
        raise BadInput(f"Name exactly one item: --check ID or --document ID for identity decisions, --fact ID for "
                       f"findings (got {', '.join(given) or 'none'}).", code="bad_item")
    approve = action.startswith("approve")
    if action.endswith("identity"):
        if fact_id is not None:
            raise BadInput(f"{action} decides on an identity check: use --check ID or --document ID, not --fact.",
                           code="bad_item")
        if check_id is None:
            check_id = check_for_document(wb, document_id)
        return decide_identity(wb, check_id, approve=approve, by=by, reason=reason)
    if fact_id is None:
        raise BadInput(f"{action} decides on a finding: use --fact ID.", code="bad_item")
    return decide_fact(wb, fact_id, approve=approve, by=by, reason=reason, resolution=resolution)


def review_queue(wb: Workbench, patient_id: int) -> dict[str, list[dict[str, Any]]]:
    """Open review work for a patient: identity checks awaiting a decision and
    findings that need a human (uncertain facts and promotion conflicts)."""
    with wb.db.cursor() as cur:
        identities = facts_repo.pending_identity_reviews(cur, patient_id)
    # A whole-document check that only sums up its parts is decided through those parts:
    # while one of them waits in the queue, the summary is not a second decision to take.
    parts_pending = {c.document_id for c in identities if c.scope is not None}
    identities = [c for c in identities if not (sums_up_parts(c) and c.document_id in parts_pending)]
    groups = patient_facts(wb, patient_id)
    # Critical results first, then conflicts with the chart, then the rest, newest first.
    facts = sorted(groups["needs_review"], key=lambda f: (
        not critical_result(f["fact_type"], f["structured_value"]),
        f["promotion_status"] != CONFLICT, -f["fact_id"]))
    return {"identity": [c.to_dict() for c in identities], "facts": facts, "held": groups["held"]}


def queue_items(wb: Workbench, patient_id: int) -> list[dict[str, Any]]:
    """The review queue as one list of items (identity checks and findings), each with
    what the page filters and groups on: document, doc type, reason, certainty,
    critical. ``reason`` is an identity status or promotion code, or the finding's own
    review reason (plain words written by the rules); the page words the codes.
    Built once per version of the patient's record (a key press on the queue reads and
    sorts none of it again until a write); each call gets its own dicts."""
    items = record_version.kept(wb.db, patient_id, "review.queue_items", lambda: _queue_items(wb, patient_id))
    return [_own_item(i) for i in items]


def _own_item(item: dict[str, Any]) -> dict[str, Any]:
    """A copy of a kept item a caller may change: the item and the check or finding in it."""
    own = dict(item)
    for part in ("check", "fact"):
        if part in own:
            own[part] = dict(own[part])
    return own


def _queue_items(wb: Workbench, patient_id: int) -> list[dict[str, Any]]:
    queue = review_queue(wb, patient_id)
    with wb.db.cursor() as cur:
        documents = {d["id"]: d for d in documents_repo.for_patient(cur, patient_id)}
    items: list[dict[str, Any]] = []
    for check in queue["identity"]:
        doc = documents.get(check["document_id"], {})
        items.append({"key": f"identity:{check['id']}", "kind": "identity", "item_id": check["id"],
                      "document_id": check["document_id"], "filename": check["filename"],
                      "doc_type": doc.get("doc_type") or check["doc_type"], "reason": check["identity_status"],
                      "certainty": None, "critical": False, "conflict": False, "scope": check["scope"],
                      "check": check})
    for fact in queue["facts"]:
        doc = documents.get(fact["document_id"], {})
        reason = queue_reason(fact["promotion_status"], fact["review_reason"])
        conflict = reason == CONFLICT
        items.append({"key": f"fact:{fact['fact_id']}", "kind": "fact", "item_id": fact["fact_id"],
                      "document_id": fact["document_id"], "filename": fact["filename"], "doc_type": doc.get("doc_type"),
                      "reason": reason,
                      "certainty": fact["certainty"],
                      "critical": critical_result(fact["fact_type"], fact["structured_value"]),
                      "conflict": conflict, "scope": None, "fact": fact})
    return items


def filter_queue(items: list[dict[str, Any]], *, document_id: int | None = None, doc_type: str | None = None,
                 reason: str | None = None, certainty: str | None = None,
                 critical_first: bool = True) -> list[dict[str, Any]]:
    """Items matching every given filter, grouped by document (newest first; with
    ``critical_first`` the documents holding a critical result come first), and
    within a document: identity, critical, conflicts, the rest."""
    kept = [i for i in items
            if (document_id is None or i["document_id"] == document_id) and (doc_type is None or i["doc_type"] == doc_type)
            and (reason is None or i["reason"] == reason) and (certainty is None or i["certainty"] == certainty)]
    critical_docs = {i["document_id"] for i in kept if i["critical"]} if critical_first else set()
    return sorted(kept, key=lambda i: (i["document_id"] not in critical_docs, -i["document_id"], i["kind"] != "identity",
                                       not (critical_first and i["critical"]), not i["conflict"], i["item_id"]))


def queue_counts(items: list[dict[str, Any]]) -> dict[str, dict[Any, int]]:
    """How many items each filter value would keep (for the filter labels)."""
    counts: dict[str, dict[Any, int]] = {"document_id": {}, "doc_type": {}, "reason": {}, "certainty": {}}
    for item in items:
        for field, seen in counts.items():
            if item[field] is not None:
                seen[item[field]] = seen.get(item[field], 0) + 1
    return counts


# The fields shown side by side for a finding that differs from the chart.
_COMPARED = ("test_name", "value", "unit", "reference_range", "collection_date", "abnormal_flag",
             "substance", "reaction", "name", "dose", "frequency", "description")


def conflict_detail(wb: Workbench, fact_id: int) -> dict[str, Any] | None:
    """For a finding that differs from the chart: the chart row's values beside the
    document's (``fields``: field, document, chart) and the live documents behind the
    row. None otherwise."""
    with wb.db.cursor() as cur:
        promo = next((p for p in reversed(promotions_repo.promotions_for_fact(cur, fact_id))
                      if p.outcome == CONFLICT and p.promoted_table), None)
        if promo is None:
            return None
        row = facts_repo.chart_row_for_comparison(cur, promo.promoted_table, int(promo.promoted_record_id))
        if row is None:
            return None
        value = facts_repo.fact_by_id(cur, fact_id).structured_value or {}
        support = promotions_repo.live_supporters(cur, promo.promoted_table, [row["id"]]).get(row["id"], [])
        sources = [documents_repo.by_id(cur, d) for d in dict.fromkeys(p.document_id for p in support)]
    return {"table": promo.promoted_table, "conflict_reason": promo.conflict_reason,
            "fields": [{"field": k, "document": value.get(k), "chart": row.get(k)} for k in _COMPARED if k in row],
            "sources": [{"document_id": d["id"], "filename": d["filename"]} for d in sources if d],
            "manual": row.get("source") != "promoted"}
