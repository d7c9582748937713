"""Shared fixtures: a throwaway data dir per test, and the real sample data dir."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _keep_main_module():
    """Streamlit's AppTest runs a page as ``__main__`` and leaves it there; a process
    pool spawned later would re-run that page in its children. Put the real one back."""
    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


@pytest.fixture
def shared_data() -> Path:
    """Real sample files written by others; skip cleanly in a clone without them."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real sample data not found at {SHARED_DATA} (clone without ../shared)")
    return SHARED_DATA


@pytest.fixture
def data_dir(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "data"
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(d))
    return d


@pytest.fixture
def settings(data_dir):
    from core.settings import reload_settings

    s = reload_settings()
    yield s
    reload_settings()


@pytest.fixture
def wb(settings):
    from core.services.patients import seed_demo_patients
    from core.services.workbench import open_workbench

    bench = open_workbench(settings)
    seed_demo_patients(bench)
    yield bench
    bench.close()


@pytest.fixture
def demo_patient(wb):
    from core.services.patients import get_patient

    return get_patient(wb, mrn="DEMO-1001")


def fresh_app_runtime(monkeypatch) -> None:
    """A Streamlit runtime (AppTest) opened on this test's data dir: no worker thread,
    settings re-read, and nothing cached from another test's data dir."""
    import streamlit as st

    from core.services import document_view
    from core.settings import reload_settings

    monkeypatch.setenv("WORKBENCH_START_WORKER", "false")
    reload_settings()
    st.cache_resource.clear()
    st.cache_data.clear()
    document_view.clear_caches()
    monkeypatch.setattr("ui.runtime._STARTED", None)  # one runtime per test data dir


@pytest.fixture
def app_env(wb, monkeypatch):
    """The test's workbench, with the app's pages opened on it through AppTest."""
    import streamlit as st

    fresh_app_runtime(monkeypatch)
    yield wb
    st.cache_resource.clear()
    st.cache_data.clear()
