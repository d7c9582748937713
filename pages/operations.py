"""Operations: worker heartbeat, queue and database health."""

import streamlit as st

from core.services.health import health
from ui.runtime import workbench

wb = workbench()
st.title("Operations")


@st.fragment(run_every=3.0)
def panel() -> None:
    report = health(wb.settings, db=wb.db)
    st.metric("Status", report["status"])
    worker = report["components"]["worker"]
    c1, c2, c3 = st.columns(3)
    c1.metric("Worker", worker["status"], help=f"state: {worker.get('state')}")
    c2.metric("Processed", worker.get("processed") or 0)
    c3.metric("Failed", worker.get("failed") or 0)
    st.json(report, expanded=False)


panel()
