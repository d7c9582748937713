"""Chart alerts (core/services/checks) as the overview and the review queue show them:
the message, every fact it cites (words, document, place), and its acknowledgement.
Acknowledging takes one click and a note; a viewer reads them without the control."""

from __future__ import annotations

from typing import Any

import streamlit as st

from domain.errors import WorkbenchError
from core.services.checks.alerts import MIN_NOTE, acknowledge_alert
from core.services.workbench import Workbench
from ui import labels
from ui.inert import md_text

PRIORITY = {"high": "High", "medium": "Medium", "low": "Low (note)"}
KIND = {"drug-lab": "drug–lab", "drug-allergy": "drug–allergy", "record-consistency": "record consistency",
        "missing-indication": "no documented indication"}


def cited_lines(alert: dict[str, Any]) -> list[str]:
    out = []
    for f in alert["facts"]:
        place = labels.location({"page_or_section": f["page_or_section"]}) if f.get("page_or_section") else None
        where = " · ".join(md_text(x) for x in (f.get("filename"), place) if x)
        state = "" if f.get("live") else " (no longer in the record)"
        # The finding's words and where it is, not its id.
        out.append(f"{md_text(f.get('text') or '—')}" + (f" · {where}" if where else "") + state)
    return out


def acknowledgement(alert: dict[str, Any]) -> str:
    if not alert["acknowledged"]:
        return "not acknowledged yet"
    return (f"acknowledged by {md_text(alert['acknowledged_by'])} at {md_text(alert['acknowledged_at'][:16])}: "
            f"“{md_text(alert['acknowledgement_note'])}”")


def alert_text(alert: dict[str, Any]) -> str:
    head = f"**Alert · {PRIORITY.get(alert['priority'], alert['priority'])} · {KIND.get(alert['kind'], alert['kind'])}** · "
    cites = "  \n".join(f"↳ {line}" for line in cited_lines(alert))
    return f"{head}{md_text(alert['message'])}  \n{cites}  \n_{acknowledgement(alert)}_"


def show(alerts: list[dict[str, Any]]) -> None:
    """Each open alert in its colour: high as an error, medium a warning, a note as info;
    an acknowledged one says so (by whom, when, the note)."""
    for alert in alerts:
        box = {"high": st.error, "medium": st.warning}.get(alert["priority"], st.info)
        box(alert_text(alert), icon=":material/medication:" if alert["kind"] != "record-consistency"
            else ":material/fact_check:")


def acknowledge_controls(wb: Workbench, alert: dict[str, Any], *, by: str, key: str) -> bool:
    """A note and one button; True when the alert was acknowledged."""
    note = st.text_input("Note", key=f"{key}-note", placeholder="what you checked or did (kept in the audit)")
    if not st.button("Acknowledge", key=f"{key}-ack", type="primary"):
        return False
    if len(note.strip()) < MIN_NOTE:
        st.error(f"Write a note of at least {MIN_NOTE} characters first.")
        return False
    try:
        acknowledge_alert(wb, alert["alert_id"], by=by, note=note)
    except WorkbenchError as exc:
        (st.warning if exc.code == "already_decided" else st.error)(md_text(exc.message))
        return False
    return True
