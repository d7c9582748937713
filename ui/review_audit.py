"""The Review queue's Audit tab: every review decision on the chart in plain words,
filters, a CSV download, and Undo beside each decision that can be undone (any
finding's decision, a conflict resolution, a bulk approval's items, a drawn box, a
patient match), with a reason box. After an undo the page says, in words, what left
the chart and what is current again.

Thin over core.services.review.audit_log and core.services.review.undo."""

from __future__ import annotations

import streamlit as st

from domain.errors import WorkbenchError
from core.services.review.audit_log import decisions, decisions_csv
from core.services.review.undo import undo_decision, undo_offers
from core.services.workbench import Workbench
from ui import labels
from ui.inert import md_text, plain, plain_text
from ui.media import download_button

ALL = "All"
NOTICE_KEY = "au_notice"
SHOWN_UNDO = 20  # newest first: older decisions are usually overtaken by newer ones anyway


def section(wb: Workbench, patient_id: int, *, reviewer: str | None, may_decide: bool) -> None:
    """Draw the tab (the caller wraps it in a fragment). ``may_decide``: Undo controls."""
    if notice := st.session_state.pop(NOTICE_KEY, None):
        st.success(notice)
    everything = decisions(wb, patient_id)
    if not everything:
        st.info("No review decisions on this chart yet.")
        return
    a1, a2, a3 = st.columns(3)
    who = a1.selectbox("Reviewer", [ALL, *sorted({r["who"] for r in everything})], key="au_who", format_func=plain_text)
    kind = a2.selectbox("Item", [ALL, "fact", "identity_check"], key="au_item",
                        format_func=lambda k: {"fact": "findings", "identity_check": "patient matches"}.get(k, k))
    what = a3.selectbox("Decision", [ALL, *sorted({r["decision"] for r in everything})], key="au_decision")
    rows = [r for r in everything if who in (ALL, r["who"]) and kind in (ALL, r["item_type"])
            and what in (ALL, r["decision"])]
    # The account id next to the name (decisions from before sign-in existed have none).
    with_ids = any(r.get("user_id") is not None for r in rows)
    st.dataframe(plain([{"Decision": r["decision_id"], "When": r["when"], "Who": r["who"],
                         **({"User id": r.get("user_id")} if with_ids else {}),
                         "Document": r["filename"], "What happened": r["summary"], "Reason": r["reason"] or ""}
                        for r in rows]), hide_index=True, key="au_table")
    # Built when clicked, never left at a /media address (ui/media.py).
    download_button("Download CSV", lambda: decisions_csv(rows), file_name=f"review-audit-patient-{patient_id}.csv",
                    mime="text/csv", key="au_csv")
    with st.expander("Before and after (internal detail)"):
        st.json(plain([{"decision_id": r["decision_id"], "before": r["before"], "after": r["after"]}
                       for r in rows[:50]]), expanded=False)
    if may_decide and reviewer:
        undo_list(wb, patient_id, rows, everything, reviewer=reviewer)


def undo_list(wb: Workbench, patient_id: int, rows: list[dict], everything: list[dict], *, reviewer: str) -> None:
    """Undo beside each decision that can be undone (of the rows the filters keep)."""
    offers = undo_offers(wb, patient_id, everything)
    shown = [r for r in rows if r["decision_id"] in offers]
    if not shown:
        return
    st.markdown("**Undo a decision** — the chart goes back to what it was before it")
    for r in shown[:SHOWN_UNDO]:
        with st.container(border=True, key=f"au_row_{r['decision_id']}"):
            st.markdown(f"{md_text(r['summary'])} · {md_text(r['filename'] or '')} · "
                        f"decision {r['decision_id']}, {md_text(str(r['when'])[:16])}")
            c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
            why = c1.text_input("Why undo it", key=f"au_why_{r['decision_id']}",
                                placeholder="kept in the audit")
            if c2.button("Undo decision", key=f"au_undo_{r['decision_id']}"):
                undo(wb, r["decision_id"], reviewer=reviewer, reason=why)
    if len(shown) > SHOWN_UNDO:
        st.caption(f"{len(shown) - SHOWN_UNDO} older decisions can be undone too; narrow the filters to see them.")


def undo(wb: Workbench, decision_id: int, *, reviewer: str, reason: str) -> None:
    try:
        result = undo_decision(wb, decision_id, by=reviewer, reason=reason or None)
    except WorkbenchError as exc:
        st.error(md_text(exc.message))
        return
    if result.get("item_type") == "identity_check":
        st.session_state[NOTICE_KEY] = ("Decision undone; the patient match is now: "
                                        + labels.identity_status(result["status"]) + ".")
    else:
        st.session_state[NOTICE_KEY] = md_text(result["summary"])
    st.rerun()
