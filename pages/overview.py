"""Chart overview: pick a patient, upload documents, watch jobs, see cited facts."""

import streamlit as st

from core.errors import WorkbenchError
from core.services.facts import chart_view, patient_documents, patient_facts
from core.services.ingestion import attach_and_extract, list_categories
from ui.runtime import patient_picker, workbench
from ui.widgets import IDENTITY_BADGE, STATUS_BADGE, show_fact

wb = workbench()
patient = patient_picker()
st.title("Chart overview")
if patient is None:
    st.stop()
st.caption(f"{patient['first_name']} {patient['last_name']} · MRN {patient['mrn']} · DOB {patient['dob']}")

with st.form("upload", clear_on_submit=True):
    st.subheader("Upload a document")
    categories = list_categories(wb)
    names = [c["name"] for c in categories]
    category = st.selectbox("Category", names, help="Mapped categories are extracted automatically.")
    upload = st.file_uploader("Document", type=None, key="upload_file")
    if st.form_submit_button("Attach to chart") and upload is not None:
        try:
            attached = attach_and_extract(wb, patient_id=patient["id"], source=upload.name, category=category,
                                          data=upload.getvalue(), filename=upload.name)
        except WorkbenchError as exc:
            st.error(f"Not attached: {exc.message}")
        else:
            queued = "queued for extraction" if attached.job else "stored (this category is not extracted)"
            st.success(f"{upload.name} attached as document {attached.document['id']}, {queued}.")


@st.fragment(run_every=2.0)
def documents_panel() -> None:
    docs = patient_documents(wb, patient["id"])
    st.subheader(f"Documents ({len(docs)})")
    if not docs:
        st.info("No documents on this chart yet.")
        return
    st.dataframe(
        [{"id": d["id"], "file": d["filename"], "category": d["category"],
          "job": STATUS_BADGE.get(d["job_status"], d["job_status"]),
          "identity": IDENTITY_BADGE.get(d["identity_status"], d["identity_status"]),
          "error": (f"{d['error_code']}: {d['error_message']}" if d["error_code"] else ""),
          "uploaded": str(d["uploaded_at"])[:19]} for d in docs],
        hide_index=True, width="stretch",
    )


documents_panel()

groups = patient_facts(wb, patient["id"])
charted = chart_view(wb, patient["id"])
critical = [r for r in charted["labs"] if r["critical"]]
c1, c2, c3 = st.columns(3)
c1.metric("Critical lab results in the chart", len(critical))
c2.metric("Findings waiting for review", len(groups["needs_review"]))
c3.metric("Facts held (identity not confirmed)", len(groups["held"]))
for row in critical:
    st.error(f"Critical: {row['test_name']} {row['value']} {row['unit'] or ''} (reference {row['reference_range'] or 'not printed'}), "
             f"collected {row['collection_date'] or 'date not stated'}")
st.subheader("Extracted facts")
labels = {
    "verified": "Verified (promoted to the chart)", "document_fact": "Document facts (cited, not chart truth)",
    "needs_review": "Needs human review", "held": "Held: document identity not confirmed",
}
for group, label in labels.items():
    facts = groups[group]
    with st.expander(f"{label} — {len(facts)}", expanded=group in ("verified", "needs_review")):
        if not facts:
            st.caption("None.")
        for fact in facts:
            show_fact(wb, fact, key=f"ov-{fact['fact_id']}")

with st.expander("Active chart rows"):
    for section, rows in charted.items():
        st.markdown(f"**{section}** ({len(rows)})")
        if rows:
            st.dataframe(rows, hide_index=True, width="stretch")
