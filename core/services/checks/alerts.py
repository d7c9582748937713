"""The chart checks as a use case.

``refresh_alerts(cur, patient_id)`` is the one call the chart's writers make, inside
their own transaction, after promotion, a review decision or a retraction: it reads
the patient's live, trusted, active facts (one patient, live documents, unretracted
facts, trusted identity: ``storage.evidence_repo.chart_check_facts``), runs every rule
and stores the result. Same rule and same facts: the same alert (its acknowledgement kept). An
open alert the rules no longer raise is withdrawn, kept for the audit, with why:
a fact it rests on was retracted or superseded, or the chart no longer meets the rule.
"""

from __future__ import annotations

from typing import Any

from domain.errors import BadInput, NotFound
from domain.policy.access.permissions import Permission
from domain.policy.checks.evaluate import (ChartFact, Evaluation, counts_for_checks, evaluate,
                                          results_only_beside_a_medication)
from domain.policy.checks.rules import rules_version
from domain.policy.facts.chart_rules import CLOSED_PROMOTION_STATES, needs_review
from core.services.admin.accounts import authorize
from core.services.workbench import Workbench
from storage import alerts_repo, evidence_repo

MIN_NOTE = 3  # an acknowledgement says something, if only "seen"


def _chart_facts(cur, patient_id: int) -> list[ChartFact]:
    out = []
    for f in evidence_repo.chart_check_facts(cur, patient_id,
                                             results_only_beside_a_medication=results_only_beside_a_medication()):
        if needs_review(f):
            continue
        value = f["structured_value"] or {}
        text = " ".join(filter(None, [f["fact_text"], str(f["quote"] or "")]))
        if counts_for_checks(f["fact_type"], f["certainty"], value, text):
            out.append(ChartFact(int(f["id"]), f["fact_type"], value, text, f["document_id"]))
    return out


def evaluate_patient(cur, patient_id: int) -> Evaluation:
    return evaluate(_chart_facts(cur, patient_id))


def _why_withdrawn(alert: dict[str, Any], states: dict[int, dict[str, Any]]) -> str:
    gone = [fid for fid in alert["fact_ids"] if fid not in states or states[fid]["retracted_at"] is not None
            or states[fid]["document_deleted"] or not states[fid]["active"]
            or states[fid]["promotion_status"] in CLOSED_PROMOTION_STATES]
    if gone:
        return ("a finding it rests on was taken out of the chart, rejected or replaced "
                f"({len(gone)} of {len(alert['fact_ids'])})")
    return "the chart no longer meets the rule (a newer result, or an entry changed)"


def refresh_alerts(cur, patient_id: int) -> dict[str, int]:
    """Run the checks for one patient on the caller's cursor (its transaction)."""
    result = evaluate_patient(cur, patient_id)
    version = rules_version()
    counts = alerts_repo.save(cur, patient_id, [
        {"alert_key": a.key, "rule_id": a.rule_id, "rule_version": a.rule_version, "rules_version": version,
         "kind": a.kind, "priority": a.priority, "message": a.message, "fact_ids": list(a.fact_ids),
         "references": list(a.references)} for a in result.alerts])
    current = {a.key for a in result.alerts}
    stale = [a for a in alerts_repo.for_patient(cur, patient_id) if a["alert_key"] not in current]
    states = alerts_repo.fact_states(cur, sorted({fid for a in stale for fid in a["fact_ids"]}))
    alerts_repo.withdraw(cur, {a["id"]: _why_withdrawn(a, states) for a in stale})
    counts["withdrawn"] = len(stale)
    counts["not_checked"] = len(result.not_checked)
    return counts


def run_checks(wb: Workbench, patient_id: int) -> dict[str, int]:
    """Run the checks now, in a transaction of their own (the CLI's and the tests')."""
    with wb.db.transaction() as cur:
        return refresh_alerts(cur, patient_id)


def _cited(fact_id: int, state: dict[str, Any] | None) -> dict[str, Any]:
    if state is None:
        return {"fact_id": fact_id, "text": None, "document_id": None, "filename": None, "live": False}
    citation = state["citation"] or {}
    live = (state["retracted_at"] is None and not state["document_deleted"] and bool(state["active"])
            and state["promotion_status"] not in CLOSED_PROMOTION_STATES)
    return {"fact_id": fact_id, "fact_type": state["fact_type"], "text": state["fact_text"],
            "document_id": state["document_id"], "filename": state["filename"],
            "page_or_section": citation.get("page_or_section"), "quote": citation.get("quote_or_value"),
            "citation": citation, "live": live}


def alert_view(alert: dict[str, Any], states: dict[int, dict[str, Any]]) -> dict[str, Any]:
    return {
        "alert_id": alert["id"], "rule_id": alert["rule_id"], "rule_version": alert["rule_version"],
        "kind": alert["kind"], "priority": alert["priority"], "message": alert["message"],
        "status": alert["status"], "acknowledged": alert["acknowledged_at"] is not None,
        "acknowledged_by": alert["acknowledged_by"],
        "acknowledged_at": str(alert["acknowledged_at"]) if alert["acknowledged_at"] else None,
        "acknowledgement_note": alert["acknowledgement_note"], "raised_at": str(alert["raised_at"]),
        "withdrawn_at": str(alert["withdrawn_at"]) if alert["withdrawn_at"] else None,
        "withdrawn_reason": alert["withdrawn_reason"], "references": alert["references"] or [],
        "facts": [_cited(fid, states.get(fid)) for fid in alert["fact_ids"]],
    }


def patient_alerts(wb: Workbench, patient_id: int, *, include_withdrawn: bool = False,
                   unacknowledged_only: bool = False) -> list[dict[str, Any]]:
    """The patient's alerts (open ones; withdrawn too when asked), high priority first,
    each with the facts it cites (their words, document and place)."""
    with wb.db.cursor() as cur:
        alerts = alerts_repo.for_patient(cur, patient_id, include_withdrawn=include_withdrawn)
        states = alerts_repo.fact_states(cur, sorted({fid for a in alerts for fid in a["fact_ids"]}))
    views = [alert_view(a, states) for a in alerts]
    return [v for v in views if not (unacknowledged_only and v["acknowledged"])]


def acknowledge_alert(wb: Workbench, alert_id: int, *, by: str, note: str | None) -> dict[str, Any]:
    """A clinician has seen the alert: who, when and a note. The alert stays on the
    chart (marked acknowledged) while its facts hold it up."""
    by = authorize(wb, by, Permission.DECIDE).name
    text = (note or "").strip()
    if len(text) < MIN_NOTE:
        raise BadInput(f"Acknowledging an alert needs a note of at least {MIN_NOTE} characters.", code="note_required")
    with wb.db.transaction() as cur:
        alert = alerts_repo.by_id(cur, alert_id)
        if alert is None:
            raise NotFound(f"No alert {alert_id}.", code="not_found")
        if alert["status"] != alerts_repo.OPEN:
            raise BadInput("This alert was withdrawn (its facts no longer hold it up); there is nothing to "
                           "acknowledge.", code="alert_withdrawn")
        if alert["acknowledged_at"] is not None:
            raise BadInput(f"This alert was already acknowledged by {alert['acknowledged_by']}.",
                           code="already_decided")
        alerts_repo.acknowledge(cur, alert_id, by=by, note=text)
        alert = alerts_repo.by_id(cur, alert_id)
        states = alerts_repo.fact_states(cur, alert["fact_ids"])
    return alert_view(alert, states)
