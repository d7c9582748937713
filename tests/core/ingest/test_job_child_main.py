"""A job's child process never runs a page script (issue 21).

Streamlit points ``sys.modules['__main__']`` at the page script it ran last (Home.py).
multiprocessing would tell every forkserver child to run that script again, which opened
the database the app holds and failed every job after the first page view. These tests
put a page-like script in ``__main__`` the way Streamlit does and run real children."""

from __future__ import annotations

import os
import sys
import time
import types
from pathlib import Path

import pytest


from core.services.ingest.ingestion import attach_and_extract
from core.services.ingest.forkserver_internals import preparation_data
from core.services.ingest.sandbox import run_isolated
from core.services.ingest.worker import Worker
from golden.fixtures import LAB_CASES, render_lab

HOME = Path(__file__).resolve().parents[3] / "Home.py"


def _as_streamlit_main(monkeypatch, script: Path) -> None:
    """``__main__`` as Streamlit's script runner leaves it: a module named __main__ whose
    __file__ is the page script, with no import spec."""
    page = types.ModuleType("__main__")
    page.__file__ = str(script)
    page.__spec__ = None
    monkeypatch.setitem(sys.modules, "__main__", page)


def test_preparation_data_never_names_main(monkeypatch, tmp_path):
    _as_streamlit_main(monkeypatch, HOME)
    data = preparation_data("job")
    assert "init_main_from_path" not in data and "init_main_from_name" not in data
    assert data["sys_path"] == sys.path  # the rest of the preparation is kept


def test_a_forkserver_child_does_not_run_the_page_script_in_main(monkeypatch, tmp_path):
    marker = tmp_path / "page-ran"
    page = tmp_path / "page.py"
    # Like Home.py beside a running app: it would open the held database and die.
    page.write_text(f"open({str(marker)!r}, 'w').close()\nraise SystemExit(1)\n")
    _as_streamlit_main(monkeypatch, page)
    pid = run_isolated(os.getpid, (), timeout=60, memory_mb=512, method="forkserver")
    assert pid != os.getpid()
    assert not marker.exists(), "the child ran the page script named by __main__"


def test_a_real_job_succeeds_with_home_py_as_main_while_the_app_holds_the_database(wb, demo_patient, monkeypatch):
    """The served app's situation end to end: the workbench holds the DuckDB file, Home.py
    is __main__, and a lab job runs in the production default (a forkserver child)."""
    monkeypatch.setattr(wb.settings, "job_process", "forkserver")
    _as_streamlit_main(monkeypatch, HOME)
    attached = attach_and_extract(wb, patient_id=demo_patient["id"], source="lab.pdf", data=render_lab(LAB_CASES[0]),
                                  filename="lab.pdf", doc_type="lab_pdf", by="dr.reviewer")
    job = Worker(wb, worker_id="test:main").run_specific(attached.job["id"])
    assert (job["status"], job["error_code"]) == ("succeeded", None), job["error_message"]
    assert job["counts"]["stored"] > 0


def exits_with_status_one():
    os._exit(1)  # as a child that fails in its start-up, before it can answer


def test_a_child_that_exits_with_a_status_is_a_workbench_fault_not_a_damaged_file():
    from domain.errors import ExtractionError

    with pytest.raises(ExtractionError) as caught:
        run_isolated(exits_with_status_one, (), timeout=60, memory_mb=512, method="forkserver")
    assert caught.value.code == "internal_error"
    assert "fault in the workbench, not in the file" in caught.value.message
    assert "damaged" not in caught.value.message


def test_a_child_killed_by_a_signal_is_still_reported_as_the_reader_ending_abruptly():
    from core.services.ingest.sandbox import died_error

    error = died_error(-11)
    assert error.code == "resource_limit" and "signal 11" in error.message and "damaged" in error.message


def test_a_jobs_child_is_out_of_reach_of_signals_sent_to_the_apps_process_group():
    """Ctrl-C in the terminal running `make run` signals the whole foreground group; the
    reading child must not die of it while the app shuts down in order."""
    child_group = run_isolated(os.getpgid, (0,), timeout=60, memory_mb=512, method="forkserver")
    assert child_group != os.getpgrp()


def test_a_reading_broken_off_while_the_worker_stops_goes_back_to_the_queue(wb, demo_patient, monkeypatch):
    from domain.errors import ExtractionError
    from core.services.ingest import processing

    attached = attach_and_extract(wb, patient_id=demo_patient["id"], source="lab.pdf", data=render_lab(LAB_CASES[0]),
                                  filename="lab.pdf", doc_type="lab_pdf", by="dr.reviewer")
    worker = Worker(wb, worker_id="test:stopping")

    def broken_off(*args, **kwargs):
        worker.stop()  # the app is shutting down while the document is read...
        raise ExtractionError("The process reading this document stopped before it could read it (exit 1).",
                              code="internal_error")  # ...and the reading child went with it

    monkeypatch.setattr(processing, "read_isolated", broken_off)
    job = worker.run_specific(attached.job["id"])
    assert job["status"] == "pending" and job["error_code"] is None  # read again at the next start


def test_the_same_fault_while_the_worker_runs_on_fails_the_job(wb, demo_patient, monkeypatch):
    from domain.errors import ExtractionError
    from core.services.ingest import processing

    attached = attach_and_extract(wb, patient_id=demo_patient["id"], source="lab.pdf", data=render_lab(LAB_CASES[0]),
                                  filename="lab.pdf", doc_type="lab_pdf", by="dr.reviewer")

    def fault(*args, **kwargs):
        raise ExtractionError("The process reading this document stopped before it could read it (exit 1).",
                              code="internal_error")

    monkeypatch.setattr(processing, "read_isolated", fault)
    job = Worker(wb, worker_id="test:running").run_specific(attached.job["id"])
    assert (job["status"], job["error_code"]) == ("failed", "internal_error")


def ocr_engines_loaded() -> int:
    from extract.formats.ocr.rapid import rapid_reader

    return rapid_reader.cache_info().currsize  # nothing in the child has asked for it yet


def test_a_forkserver_child_starts_with_the_ocr_engines_already_loaded():
    """Loaded once in the forkserver (sandbox_preload), not per scanned job's child: a
    warm-up that broke would only show as slower jobs, so it is checked here."""
    assert run_isolated(ocr_engines_loaded, (), timeout=120, memory_mb=1024, method="forkserver") == 1


@pytest.mark.parametrize("kept_for", [1, 50])
def test_a_child_retired_after_its_answer_is_gone_soon_after(monkeypatch, kept_for):
    """A child retired when its answer is taken (its share of jobs read; with ``kept_for``
    50, retired by the pool being emptied) is reaped off the job's path, but reaped: no
    child outlives the jobs it was kept for."""
    import psutil

    from core.services.ingest import sandbox

    monkeypatch.setattr(sandbox, "REUSE_JOBS", kept_for)
    pid = run_isolated(os.getpid, (), timeout=60, memory_mb=512, method="forkserver")
    with sandbox._readers_lock:  # noqa: SLF001 - retire what is idle, as the pool does
        idle, sandbox._idle_readers[:] = list(sandbox._idle_readers), []  # noqa: SLF001
    assert (kept_for > 1) == any(r.proc.pid == pid for r in idle)
    for reader in idle:
        sandbox._retire(reader)  # noqa: SLF001
    for _ in range(200):  # up to 10 s: the reaper's grace is 2 s, then it kills
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                break  # exited; its parent (the forkserver) collects it
        except psutil.NoSuchProcess:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the job's child {pid} still runs after its answer was taken")
