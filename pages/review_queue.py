"""Review queue: identity decisions and findings that need a human."""

import streamlit as st

from core.errors import WorkbenchError
from core.services.review import approval_needs_reason, decide_fact, decide_identity, review_queue
from ui.runtime import patient_picker, workbench
from ui.widgets import IDENTITY_BADGE, show_fact

wb = workbench()
patient = patient_picker()
st.title("Review queue")
if patient is None:
    st.stop()
reviewer = st.sidebar.text_input("Reviewer", value=wb.settings.user, key="reviewer")
queue = review_queue(wb, patient["id"])


def _decide(fn, item_id: int, approve: bool, reason: str | None = None) -> None:
    try:
        fn(wb, item_id, approve=approve, by=reviewer, reason=reason)
    except WorkbenchError as exc:
        st.error(exc.message)
    else:
        st.rerun()


st.subheader(f"Identity checks ({len(queue['identity'])})")
for check in queue["identity"]:
    with st.container(border=True):
        scope = f" · {check['scope']}" if check["scope"] else ""
        st.markdown(f"**{check['filename']}** (document {check['document_id']}{scope}) — "
                    f"{IDENTITY_BADGE.get(check['identity_status'], check['identity_status'])}")
        st.caption(check["mismatch_reason"] or "")
        for ident in check["extracted_identifiers"] or []:
            st.caption(f"{ident['kind']}: “{ident['value']}”")
        reason = None
        if approval_needs_reason(check["identity_status"]):
            reason = st.text_input("Reason for approving a document that names another patient",
                                   key=f"why-{check['id']}")
        c1, c2 = st.columns(2)
        if c1.button("Approve identity", key=f"ai-{check['id']}"):
            _decide(decide_identity, check["id"], True, reason)
        if c2.button("Reject identity", key=f"ri-{check['id']}"):
            _decide(decide_identity, check["id"], False, reason)

st.subheader(f"Findings needing review ({len(queue['facts'])})")
for fact in queue["facts"]:
    with st.container(border=True):
        show_fact(wb, fact, key=f"rq-{fact['fact_id']}")
        c1, c2 = st.columns(2)
        if c1.button("Approve finding", key=f"af-{fact['fact_id']}"):
            _decide(decide_fact, fact["fact_id"], True)
        if c2.button("Reject finding", key=f"rf-{fact['fact_id']}"):
            _decide(decide_fact, fact["fact_id"], False)
