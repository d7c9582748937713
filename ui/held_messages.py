"""The Review queue's section for HL7 messages an interface sent for a patient on no
chart (core/services/interfaces/mllp.py): what each says of its patient, a chart to put it on
(the charts that agree with it first), or set aside as not for this clinic.

Reviewers and admins only (DECIDE): the page does not draw it for a viewer. The
patient a message names is PHI, so showing it is written to the access audit, once
per message while it stays on screen."""

from __future__ import annotations

from datetime import date

import streamlit as st

from domain.errors import WorkbenchError
from core.services.admin.access_audit import VIEW_MESSAGE
from core.services.interfaces.held_messages import (attach_held_message, dismiss_held_message, held_count, holding_full,
                                         held_for_review)
from core.services.admin.patients import display_name, list_patients
from core.services.workbench import Workbench
from ui import auth, labels
from ui.inert import md_text, plain_text

TAB = "Messages waiting for a chart"
SHOWN = 20  # oldest first; each is decided one at a time, so a longer page helps nobody
NOTICE_KEY, GONE_KEY = "held_notices", "held_gone"  # [(kind, text)] to show on the next run / this run
SHOWN_KEY, DECIDED_KEY = "held_shown", "held_decided"  # message ids on screen / decided here


def tab_label(wb: Workbench) -> str:
    """The tab's name with the count, so a reviewer sees at a glance that some wait."""
    return f"{TAB} ({held_count(wb)})"


def keep_tab_open(label: str, key: str) -> None:
    """The count is in the label: a tab chosen under its old count stays chosen (else
    Streamlit finds no tab of that name and opens the first). Call before ``st.tabs``."""
    if str(st.session_state.get(key, "")).startswith(TAB):
        st.session_state[key] = label


def section(wb: Workbench) -> None:
    st.subheader("Messages from interfaces waiting for a chart")
    total = held_count(wb)
    messages = held_for_review(wb, limit=SHOWN)
    notices = st.session_state.pop(NOTICE_KEY, [])
    gone = _left_elsewhere({m["id"] for m in messages})
    # A decision below reruns the page, which drops this run's output: it carries this over.
    st.session_state[GONE_KEY] = [("info", gone)] if gone else []
    notices += st.session_state[GONE_KEY]
    for kind, text in notices:
        {"success": st.success, "warning": st.warning}.get(kind, st.info)(text)
    if not total:
        st.info("No message from an interface is waiting for a chart.")
        return
    if holding_full(wb, total):
        st.warning(f"The holding area is full ({total} messages). Interfaces that send another message for a patient "
                   "who matches no single chart are refused until some below are put on a chart or set aside; "
                   "the senders keep those messages and can send them again.", icon=":material/inbox:")
    st.caption("These arrived from a lab or hospital interface for a patient the workbench could not match to "
               "one chart. Nothing in them is on a chart yet. Oldest first"
               + (f"; the {SHOWN} oldest of {total} are shown." if total > SHOWN else "."))
    patients = {p["id"]: p for p in list_patients(wb)}
    for message in messages:
        with st.container(border=True, key=f"held-{message['id']}"):
            _message(wb, message, patients)


def _left_elsewhere(shown: set[int]) -> str | None:
    """A sentence when messages this screen showed were decided by someone else
    meanwhile: a click on one of them would otherwise vanish with it unexplained."""
    before = set(st.session_state.get(SHOWN_KEY, ())) - set(st.session_state.pop(DECIDED_KEY, ()))
    st.session_state[SHOWN_KEY] = sorted(shown)
    if gone := before - shown:
        return (f"{len(gone)} message{'s' if len(gone) > 1 else ''} you were looking at left this list: "
                "decided by someone else meanwhile (see the review audit).")
    return None


def _when(value) -> str:
    return f"{value:%d %b %Y %H:%M} UTC" if hasattr(value, "strftime") else str(value or "—")


def _stated_rows(message: dict) -> list[dict]:
    rows = []
    for person in message["stated"]:
        name = md_text(person["name"]) or "—"
        if person["placeholder_name"]:
            name += " (a placeholder, not a name)"
        if person["dob"]:
            born = labels.birth_date(date.fromisoformat(person["dob"]))
        elif person["dob_printed"]:
            born = f"{md_text(person['dob_printed'])} (not a full date)"
        else:
            born = "—"
        rows.append({"Name": name, "Date of birth": born, "MRN": md_text(person["mrn"]) or "—"})
    return rows


def _message(wb: Workbench, message: dict, patients: dict[int, dict]) -> None:
    mid = message["id"]
    st.markdown(f"**{labels.message_kind(message['message_type'])}** from "
                f"{md_text(labels.message_sender(message['sender']))}",
                help=labels.code_hint(md_text(message["message_type"]), message["hold_reason"], f"message {mid}"))
    resent = f" · sent again {message['resent']}×" if message["resent"] else ""
    st.caption(f"Received {_when(message['received_at'])} · the sender's message number "
               f"{md_text(message['control_id'])}{resent}")
    st.markdown(f"Why it waits: {labels.hold_reason(message['hold_reason'])}")
    if message["stated"]:
        auth.log_view(VIEW_MESSAGE, None, "inbound_message", mid, slot=f"held-message-{mid}")
        st.markdown("What the message says about the patient:")
        st.table(_stated_rows(message))
    elif not message["readable"]:
        st.warning("The stored message could not be read back, so who it is about cannot be shown.")
    else:
        st.caption("The message names no patient.")

    suggested = {s["patient_id"]: s for s in message["suggested"] if s["patient_id"] in patients}
    options = [*suggested, *(pid for pid in patients if pid not in suggested)]

    def option(pid: int) -> str:  # a select's option: plain text, not Markdown
        text = plain_text(display_name(patients[pid]))
        if pid in suggested:
            s = suggested[pid]
            text += " — " + labels.agreeing(s["agrees"])
            if s["differs"]:
                text += ", " + labels.differing(s["differs"])
        return text

    chart = st.selectbox("Chart", options, index=None, format_func=option, key=f"held-chart-{mid}",
                         placeholder="Choose the patient's chart" + (" (charts that agree come first)"
                                                                     if suggested else ""))
    buttons = st.container(horizontal=True)
    if buttons.button("Put on this chart", key=f"held-attach-{mid}", type="primary", disabled=chart is None,
                      help="It is then read like an upload, and its patient match is checked against this chart."):
        _decide(mid, lambda: attach_held_message(wb, mid, patient_id=chart, by=auth.username()),
                f"The message was put on the chart of {md_text(display_name(patients[chart]))}; it is waiting "
                "to be read, and its patient match will be checked as for any upload.")
    with buttons.popover("Not for this clinic"):
        st.markdown("Set this message aside: it leaves this list and goes on no chart. It stays stored, and "
                    "the decision is kept in the audit with your name.")
        if st.button("Set it aside", key=f"held-dismiss-{mid}"):
            _decide(mid, lambda: dismiss_held_message(wb, mid, by=auth.username()),
                    "The message was set aside as not for this clinic.")


def _decide(message_id: int, action, success: str) -> None:
    """Run the decision, then draw the list again from the database: the message leaves
    it, and the tab's count follows. A message someone else decided meanwhile says so."""
    st.session_state[DECIDED_KEY] = [message_id]
    try:
        action()
    except WorkbenchError as exc:
        outcome = ("warning", md_text(exc.message))
    else:
        outcome = ("success", success)
    st.session_state[NOTICE_KEY] = [*st.session_state.get(GONE_KEY, []), outcome]
    st.rerun()
