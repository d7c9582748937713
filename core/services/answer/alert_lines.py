"""The chart checks' alerts in an attention answer ("what needs attention?"): listed
first, beside the critical results, each citing the evidence of the facts it rests on.

An alert's facts are found among this request's candidates by their citation (a
promoted fact is represented by its chart row, which cites the same place), so the
verifier accepts the line only on evidence this request retrieved."""

from __future__ import annotations

from domain.models import AnswerItem, EvidenceItem
from domain.policy.answers.verifier import citation_key
from core.services.checks.alerts import patient_alerts
from core.services.workbench import Workbench
from storage import record_version

PRIORITY_WORDS = {"high": "Chart alert", "medium": "Chart alert", "low": "Chart note"}


def alert_evidence(wb: Workbench, patient_id: int,
                   items: list[EvidenceItem]) -> list[tuple[dict, list[EvidenceItem]]]:
    """Each open alert with the evidence items that stand for the facts it cites."""
    alerts = record_version.kept(wb.db, patient_id, "answer.alerts", lambda: patient_alerts(wb, patient_id))
    if not alerts:
        return []
    by_citation: dict[tuple, EvidenceItem] = {}
    by_id: dict[str, EvidenceItem] = {}
    for item in items:
        by_id.setdefault(item.evidence_id, item)
        for c in item.citations:
            by_citation.setdefault(citation_key(c), item)
    out = []
    for alert in alerts:
        cited: list[EvidenceItem] = []
        for fact in alert["facts"]:
            hit = by_id.get(f"fact:{fact['fact_id']}")
            if hit is None and fact.get("citation"):
                c = fact["citation"]
                hit = by_citation.get((c.get("source_id"), c.get("field_or_chunk_id"), c.get("quote_or_value")))
            if hit is not None and hit not in cited:
                cited.append(hit)
        if cited:
            out.append((alert, cited))
    return out


def alert_lines(alerts: list[tuple[dict, list[EvidenceItem]]], *, notes: bool) -> list[AnswerItem]:
    """The alerts (high and medium priority, listed before the critical results) or the
    low-priority notes (listed after the attention lines)."""
    return [alert_line(a, cited) for a, cited in alerts if (a["priority"] == "low") == notes]


def alert_line(alert: dict, cited: list[EvidenceItem]) -> AnswerItem:
    ack = (f" (acknowledged by {alert['acknowledged_by']}: {alert['acknowledgement_note']})"
           if alert["acknowledged"] else "")
    return AnswerItem(text=f"{PRIORITY_WORDS.get(alert['priority'], 'Chart alert')}: {alert['message']}{ack}",
                      citations=[c for e in cited for c in e.citations],
                      evidence_ids=[e.evidence_id for e in cited], kind="finding")
