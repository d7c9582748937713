"""One document at a time: job, identity, facts with their source, and delete."""

import streamlit as st

from core.errors import WorkbenchError
from core.services.facts import document_report, patient_documents
from core.services.retraction import delete_document
from ui.runtime import patient_picker, workbench
from ui.widgets import IDENTITY_BADGE, STATUS_BADGE, show_fact

wb = workbench()
patient = patient_picker()
st.title("Documents")
if patient is None:
    st.stop()
docs = patient_documents(wb, patient["id"])
if not docs:
    st.info("No documents on this chart yet. Upload one on the Chart overview page.")
    st.stop()
by_id = {d["id"]: d for d in docs}
doc_id = st.selectbox("Document", list(by_id), format_func=lambda i: f"#{i} {by_id[i]['filename']} ({by_id[i]['category']})")
doc = by_id[doc_id]
report = document_report(wb, doc_id)
job = report["job"]
cols = st.columns(3)
cols[0].metric("Job", STATUS_BADGE.get(job["status"] if job else None, "—"))
cols[1].metric("Identity", IDENTITY_BADGE.get(report["identity"]["status"], report["identity"]["status"]))
cols[2].metric("Facts", len(report["facts"]))
if job and job["error_code"]:
    st.error(f"{job['error_code']}: {job['error_message']} — the original file is kept.")
for warning in (job or {}).get("warnings") or []:
    where = f" (page {warning['page']})" if warning.get("page") else ""
    st.warning(f"{warning['code']}{where}: {warning['message']}")
if report["identity"].get("mismatch_reason"):
    st.warning(report["identity"]["mismatch_reason"])

for fact in report["facts"]:
    with st.container(border=True):
        state = "active" if fact["active"] else "inactive"
        st.caption(f"{fact['certainty']} · {state}")
        show_fact(wb, fact, key=f"doc-{fact['fact_id']}")

st.divider()
if st.button("Delete this document", type="secondary"):
    st.session_state["confirm_delete"] = doc_id
if st.session_state.get("confirm_delete") == doc_id:
    st.warning("Deleting retracts every fact, promotion and chart row derived from this document. "
               "The audit trail is kept.")
    c1, c2 = st.columns(2)
    if c1.button("Yes, delete and retract", type="primary"):
        try:
            result = delete_document(wb, doc_id)
        except WorkbenchError as exc:
            st.error(exc.message)
        else:
            st.session_state.pop("confirm_delete", None)
            st.success(f"Deleted. Retracted: {result['retracted']}")
    if c2.button("Cancel"):
        st.session_state.pop("confirm_delete", None)
        st.rerun()
