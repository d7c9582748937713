"""Clinical alerts for the brief, from the chart checks (issue 24's
``core.services.checks``) when this build has them.

This is the brief's one door to the checks: ``alert_lines`` returns [] when the checks
package is not installed, and ``checks_available`` lets the brief say so instead of
implying that nothing was found. Any other failure of the checks is raised: a brief
never hides an alert it could not read.
"""

from __future__ import annotations

from typing import Any

from domain.models import Citation
from domain.policy.answers.brief_budget import MISSING, BriefLine
from core.services.workbench import Workbench

_CHECKS_PACKAGE = "core.services.checks"


def _patient_alerts():
    """The checks' reader, or None when the checks package is absent."""
    try:
        from core.services.checks.alerts import patient_alerts
    except ModuleNotFoundError as exc:
        if exc.name in (_CHECKS_PACKAGE, f"{_CHECKS_PACKAGE}.alerts"):
            return None
        raise
    return patient_alerts


def checks_available() -> bool:
    return _patient_alerts() is not None


def _citations(alert: dict[str, Any]) -> tuple[Citation, ...]:
    out = []
    for fact in alert.get("facts") or []:
        if fact.get("citation"):
            out.append(Citation.model_validate(fact["citation"]))
    return tuple(out)


def alert_lines(wb: Workbench, patient_id: int) -> list[BriefLine]:
    """One line per open alert, in the checks' order (most urgent first), citing every
    fact it rests on; [] when the checks package is absent."""
    reader = _patient_alerts()
    if reader is None:
        return []
    lines = []
    for alert in reader(wb, patient_id):
        text = str(alert.get("message") or alert.get("rule_id") or "alert")
        if alert.get("acknowledged"):
            text += f" (acknowledged by {alert.get('acknowledged_by')})"
        citations = _citations(alert)
        lines.append(BriefLine("alerts", text if citations else f"{text} — its facts: {MISSING}",
                               citations, () if citations else (MISSING,)))
    return lines
