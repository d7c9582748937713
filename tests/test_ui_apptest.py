"""Page logic through Streamlit's AppTest (headless, no browser)."""

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def app_env(wb, monkeypatch):
    monkeypatch.setenv("WORKBENCH_START_WORKER", "false")
    from core.settings import reload_settings

    reload_settings()
    st.cache_resource.clear()
    monkeypatch.setattr("ui.runtime._STARTED", None)  # one runtime per test data dir
    yield wb
    st.cache_resource.clear()


def run_home(**session) -> AppTest:
    at = AppTest.from_file(str(ROOT / "Home.py"), default_timeout=60)
    for k, v in session.items():
        at.session_state[k] = v
    return at.run()


def test_home_shows_patient_picker_upload_and_documents(app_env, demo_patient):
    at = run_home()
    assert not at.exception, at.exception
    picker = at.sidebar.selectbox[0]
    assert any("Quintero-Vale" in str(o) for o in picker.options)
    assert at.title[0].value == "Chart overview"
    assert any(s.label == "Category" for s in at.selectbox)
    assert any("No documents on this chart yet" in i.value for i in at.info)


def test_home_lists_a_stored_document_with_its_job(app_env, demo_patient, tmp_path):
    from core.services.ingestion import attach_and_extract

    f = tmp_path / "lab.pdf"
    f.write_bytes(b"%PDF-1.4 not parsed in this test")
    attach_and_extract(app_env, patient_id=demo_patient["id"], source=f, doc_type="lab_pdf")
    at = run_home(patient_id=demo_patient["id"])
    assert not at.exception, at.exception
    table = at.get("dataframe")[0].value
    assert list(table["file"]) == ["lab.pdf"]
    assert "pending" in table["job"].iloc[0]
