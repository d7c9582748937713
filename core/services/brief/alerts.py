"""Clinical alerts for the brief, from the chart checks (``core.services.checks``).

High- and medium-priority alerts are brief lines of the never-cut "alerts" section; the
checks' low-priority notes (a medication with no indication on record) go to their own
section, cut before the rest, so that notes never push allergies out of a brief.
"""

from __future__ import annotations

from typing import Any

from domain.models import Citation
from domain.policy.answers.brief_budget import MISSING, BriefLine
from core.services.checks.alerts import patient_alerts
from core.services.workbench import Workbench


def _citations(alert: dict[str, Any]) -> tuple[Citation, ...]:
    out = []
    for fact in alert.get("facts") or []:
        if fact.get("citation"):
            out.append(Citation.model_validate(fact["citation"]))
    return tuple(out)


def alert_lines(wb: Workbench, patient_id: int) -> list[BriefLine]:
    """One line per open alert, in the checks' order (most urgent first), citing every
    fact it rests on."""
    lines = []
    for alert in patient_alerts(wb, patient_id):
        text = str(alert.get("message") or alert.get("rule_id") or "alert")
        if alert.get("acknowledged"):
            text += f" (acknowledged by {alert.get('acknowledged_by')})"
        citations = _citations(alert)
        section = "notes" if alert.get("priority") == "low" else "alerts"
        lines.append(BriefLine(section, text if citations else f"{text} — its facts: {MISSING}",
                               citations, () if citations else (MISSING,)))
    return lines
