"""Process-wide resources for the Streamlit app and session helpers.

The serving process owns the DuckDB file, so the workbench and its worker thread
are created once per server (``st.cache_resource``) and shared by every session.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.collector import settle_for_serving
from core.commands.handover import serve_request
from core.services.admin.accounts import ensure_initial_admin
from core.services.interfaces.app_endpoint import AppEndpoint
from core.services.interfaces.mllp import MllpListener, write_out_left_journals
from core.services.admin.patients import list_patients, seed_demo_patients
from core.services.ingest.worker import Worker
from core.services.workbench import Workbench, open_workbench
from domain.settings import get_settings
from ui import labels
from ui.inert import md_text, plain_text


@dataclass
class Runtime:
    wb: Workbench
    worker: Worker
    mllp: MllpListener | None = None  # HL7 interfaces, when WORKBENCH_START_MLLP is on
    endpoint: AppEndpoint | None = None  # runs CLI commands beside the app (issue 13)


_STARTED: Runtime | None = None


def start() -> Runtime:
    """Open the workbench and start the worker thread for this server process.

    ``ui.serve`` calls this before Streamlit starts, so the worker is live as soon
    as the server is, not only once a browser opens a page.
    """
    global _STARTED
    if _STARTED is None:
        settings = get_settings()
        wb = open_workbench(settings)
        seed_demo_patients(wb)  # a no-op once init has run
        if settings.auth == "local":
            # `make run` (core init) made it already; a bare `streamlit run` on a fresh data
            # dir would otherwise have no account anyone could sign in with.
            ensure_initial_admin(wb)
        worker = Worker(wb, worker_id="intake-extractor:ui")
        if settings.start_worker:
            worker.start_thread()
        # HL7 interfaces store into this process's database: DuckDB has one writer.
        mllp = MllpListener(wb, port=settings.mllp_port).start_thread() if settings.start_mllp else None
        if mllp is None:  # what a stopped `core mllp` acknowledged and had not written reaches its chart now
            write_out_left_journals(wb)
        # A CLI command beside the app cannot open the database; it hands its command line
        # to this loopback endpoint, which runs it on this workbench.
        endpoint = AppEndpoint(settings, lambda request: serve_request(wb, request)).start() \
            if settings.start_cli_endpoint else None
        _STARTED = Runtime(wb, worker, mllp, endpoint)
        settle_for_serving()  # after the set-up: what exists now lives as long as the server
    return _STARTED


@st.cache_resource(show_spinner="Opening the workbench…")
def _lazy_runtime() -> Runtime:
    return start()


def started() -> Runtime | None:
    """The runtime if this process has started it; the sign-in route and the session
    guard (ui.session_cookie) run outside any script and never start it themselves."""
    return _STARTED


def runtime() -> Runtime:
    # Started by ui.serve, or lazily when Home.py is run by plain `streamlit run` / AppTest.
    return _STARTED or _lazy_runtime()


def workbench() -> Workbench:
    return runtime().wb


def select_patient(patient_id: int) -> None:
    """Make ``patient_id`` the chosen patient for this session and in the URL; the
    sidebar select follows on the next run."""
    st.session_state["patient_id"] = int(patient_id)
    st.query_params["patient"] = str(patient_id)


def patient_picker() -> dict | None:
    """Sidebar patient select and who that patient is; None while no patient is chosen
    (a session starts on the patient its user viewed last, ui.auth, or on none: the
    first patient of the list is never opened for someone who did not choose it). The
    choice lives in session_state['patient_id'], a plain key rather than the widget's
    own, so it survives moving between pages (Streamlit forgets a widget's state on a
    page where that widget is not drawn)."""
    patients = list_patients(workbench())
    if not patients:
        st.sidebar.info("No patients yet: add one on the Chart overview page.")
        return None
    ids = [p["id"] for p in patients]
    by_id = {p["id"]: p for p in patients}
    # The URL names the patient (?patient=<patient id>), so a reload, a bookmark or a new
    # tab opens the same chart.
    wanted = str(st.query_params.get("patient", ""))
    if "patient_id" not in st.session_state and wanted.isdigit() and int(wanted) in by_id:
        st.session_state["patient_id"] = int(wanted)
    if st.session_state.get("patient_id") not in by_id:
        st.session_state.pop("patient_id", None)

        def chose() -> None:
            if st.session_state.get("patient_select_none") is not None:
                st.session_state["patient_id"] = st.session_state["patient_select_none"]

        st.sidebar.selectbox("Patient", ids, index=None, placeholder="Choose a patient",
                             format_func=lambda i: option(by_id[i]), key="patient_select_none",
                             on_change=chose)
        return None
    chosen_id = st.session_state["patient_id"]
    # The select is keyed by the chosen patient and defaults to it: Streamlit treats a
    # keyed widget on another page as a new widget and would fall back to the first
    # option, showing one patient in the select and another in the card below it.
    key = f"patient_select_{chosen_id}"

    def remember() -> None:
        st.session_state["patient_id"] = st.session_state[key]

    st.sidebar.selectbox("Patient", ids, index=ids.index(chosen_id),
                         format_func=lambda i: option(by_id[i]), key=key, on_change=remember)
    chosen = by_id[st.session_state["patient_id"]]
    if st.query_params.get("patient") != str(chosen["id"]):
        st.query_params["patient"] = str(chosen["id"])
    _patient_card(chosen)
    return chosen


def option(patient: dict) -> str:
    """A patient in the sidebar select: the MRN first, so a narrow sidebar never cuts it."""
    return plain_text(f"{patient['mrn']} · {patient['last_name']}, {patient['first_name']}")


def _patient_card(patient: dict) -> None:
    # Names and MRN are typed by people: shown inert like any document text.
    st.sidebar.markdown(f"**{md_text(labels.full_name(patient))}**  \n"
                        f"MRN {md_text(patient['mrn'])}  \n"
                        f"Born {labels.birth_date(patient['dob'])} · {labels.sex(patient.get('sex'))}")
