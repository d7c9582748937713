"""The patient's trusted chart as a FHIR R4 bundle, downloaded from the overview (issue
25). Built only when asked (a button), because an export is recorded under its bundle id;
then offered as a JSON file. The export itself is core.services.exchange.fhir_export."""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from core.services.exchange.fhir_export import export_fhir
from domain.errors import WorkbenchError
from ui import auth
from ui.inert import md_text

_READY = "fhir_export_ready"


def fhir_download(wb, patient: dict[str, Any]) -> None:
    """An expander on the overview: build the bundle, then download it."""
    with st.expander("Export as FHIR R4"):
        _panel(wb, patient)


@st.fragment
def _panel(wb, patient: dict[str, Any]) -> None:
    st.caption("One FHIR R4 Bundle (collection) of the trusted chart, with the source documents and a Provenance "
               "per resource citing where each value was read.")
    include_review = st.checkbox("Include items waiting for review (marked unconfirmed)", key="fhir_include_review")
    bundle_id = st.text_input("Bundle id (optional)", key="fhir_bundle_id",
                              help="Export the same id again later and rows withdrawn since are sent as "
                                   "entered-in-error. Letters, digits, '-' and '.'.").strip() or None
    if st.button("Build FHIR bundle", key="fhir_build"):
        try:
            export = export_fhir(wb, mrn=patient["mrn"], include_review=include_review, bundle_id=bundle_id,
                                 by=auth.username(), channel="ui")
        except WorkbenchError as exc:
            st.error(f"No bundle: {md_text(exc.message)}")
        else:
            st.session_state[_READY] = (patient["id"], export.bundle_id,
                                        json.dumps(export.bundle, indent=2, ensure_ascii=False), export.counts)
    ready = st.session_state.get(_READY)
    if ready and ready[0] == patient["id"]:
        _, built_id, text, counts = ready
        st.caption(md_text("Bundle " + built_id + ": " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))))
        st.download_button("Download FHIR bundle (JSON)", data=text, file_name=f"fhir-{built_id}.json",
                           mime="application/fhir+json", key="fhir_download", on_click="ignore")
