"""Shared fixtures: a throwaway data dir per test, and the real sample data dir; and
the markers that let a developer leave out the slow groups (pytest.ini names them)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.support.accounts import seed_test_accounts
from tests.support.app_support import fresh_app_runtime
from tests.support.file_builders import FAKE_PDF
from tests.support.markers import LEAD_FILES, TESTS_DIR, markers_for
from tests.support.paths import SHARED_DATA


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


# Which tests may leave the production defaults, and why (issue 21: every job failed in
# the app once a page was opened, and the suite stayed green because no test read a
# document the way the app does). `make run` sets none of these: jobs are read in a
# forkserver child (WORKBENCH_JOB_PROCESS=forkserver), the app runs its worker thread
# (START_WORKER), the CLI's endpoint (START_CLI_ENDPOINT) and loads the demo (LOAD_DEMO),
# and its worker sleeps 1 s when idle (WORKER_IDLE_SLEEP).
#
#   tests                                | set here                      | why
#   -------------------------------------+-------------------------------+-------------------------------------------
#   unit tests (data_dir, settings, wb,  | JOB_PROCESS=off               | in-process speed: a child per job would add
#   queued, the session template)        |                               | a process start to thousands of test jobs
#   AppTest page tests (app_env,         | JOB_PROCESS=off,              | the page runs in the test's process; a
#   fresh_app_runtime)                   | START_WORKER=false,           | worker thread or endpoint there would race
#                                        | START_CLI_ENDPOINT=false      | the test's own calls on the workbench
#   test_job_ceiling (some tests)        | job_process=fork              | its monkeypatched readers reach the child
#   the browser tests' shared app, while | JOB_PROCESS=off               | in-process speed; the server then starts
#   its data dir is filled before the    |                               | with make run's environment
#   server starts (support/served_app.py)|                               |
#
# No end-to-end test sets any of them: a served app (browser_support.server_env) and a CLI
# run beside it or alone (browser_support.make_run_env) get make run's environment, with
# nothing inherited from a fixture here; such a test adds only the setting it is about
# (test_browser_held_messages: START_MLLP; test_hl7_batch_split's CLI: HL7_MESSAGES_PER_JOB;
# test_damaged_files' CLI: UPLOAD_MAX_BYTES). The real forkserver and the ceilings are
# covered by test_job_ceiling, test_job_child_main (a page script as __main__, as under
# Streamlit), test_malformed_corpus, the golden gate (`make test` runs `core eval`), and
# test_browser_real_config: the app as `make run` starts it, every page opened, then five
# formats uploaded and one handed over from the CLI.
@pytest.fixture
def data_dir(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "data"
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(d))
    # In-process, for speed (the table above says which tests may and what covers the rest).
    monkeypatch.setenv("WORKBENCH_JOB_PROCESS", "off")
    return d


@pytest.fixture
def settings(data_dir):
    from domain.settings import reload_settings

    s = reload_settings()
    yield s
    reload_settings()


def _seeded_workbench(settings):
    from core.services.admin.patients import seed_demo_patients
    from core.services.workbench import open_workbench

    bench = open_workbench(settings)
    seed_demo_patients(bench)
    seed_test_accounts(bench)
    return bench


@pytest.fixture(scope="session")
def workbench_template(tmp_path_factory) -> Path:
    """One data dir per session (per xdist worker) opened and seeded as ``wb`` opens
    one, then closed: a real, migrated DuckDB file holding the demo patients and the
    test accounts. ``wb`` copies it rather than running every migration again for each
    of about a thousand tests. Read-only: nothing opens it after this."""
    from domain.settings import reload_settings

    template = tmp_path_factory.mktemp("workbench-template") / "data"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORKBENCH_DATA_DIR", str(template))
        mp.setenv("WORKBENCH_JOB_PROCESS", "off")
        _seeded_workbench(reload_settings()).close()
    reload_settings()
    return template


@pytest.fixture
def wb(settings, workbench_template):
    # A fresh copy of the session's template; opening and seeding it again is then a
    # check that finds everything in place, so ``wb`` still holds what it always held.
    shutil.copytree(workbench_template, settings.data_dir, dirs_exist_ok=True)
    bench = _seeded_workbench(settings)
    yield bench
    bench.close()


@pytest.fixture
def demo_patient(wb):
    from core.services.admin.patients import get_patient

    return get_patient(wb, mrn="DEMO-1001")


@pytest.fixture
def app_env(wb, monkeypatch):
    """The test's workbench, with the app's pages opened on it through AppTest."""
    import streamlit as st

    fresh_app_runtime(monkeypatch)
    yield wb
    st.cache_resource.clear()
    st.cache_data.clear()


@pytest.fixture
def queued(wb, demo_patient, tmp_path):
    """One lab-report job waiting in the queue (its file is FAKE_PDF)."""
    from core.services.ingest.ingestion import attach_and_extract

    f = tmp_path / "lab.pdf"
    f.write_bytes(FAKE_PDF)
    return attach_and_extract(wb, patient_id=demo_patient["id"], source=f, doc_type="lab_pdf", by="dr.reviewer")


# -- `core init` once per test worker, for the CLI tests that only start from it -----
@pytest.fixture(scope="session")
def cli_init(tmp_path_factory):
    """``cli_init(data_dir)`` gives a test a data dir as `core init --json` leaves it: the
    command is run once per test worker, as a user runs it (cli_support.cli, make run's
    environment), and each caller gets a copy (modes kept: owner-only). ``init`` costs
    ~5 s on a busy machine (importing LanceDB, embedding the guideline corpus), and a
    dozen end-to-end tests start from it without being about it; the tests of `init`
    itself (test_cli, test_cli_users, test_hardening's file modes) still run it."""
    from tests.support.cli_support import as_json, cli

    template = tmp_path_factory.mktemp("cli-init") / "data"
    as_json(cli(template, "init", "--json"))

    def copy(data_dir: Path) -> Path:
        shutil.copytree(template, data_dir)
        return data_dir

    return copy


# -- one demo-loaded data dir for the browser modules that start from the demo --------
@pytest.fixture(scope="session")
def demo_loaded(tmp_path_factory, worker_id, cli_init):
    """``demo_loaded(data_dir)`` copies to ``data_dir`` a data dir as an operator leaves it
    after `core init`, the browser tests' two accounts (``add_account``: REVIEWER and
    ADMIN, first passwords changed) and `core demo --json`; it returns what those
    commands answered: {"demo": the demo's JSON, "accounts": user name -> account id}.
    Three browser modules start from exactly this, and `core demo` reads a dozen
    documents (OCR'd pages among them), so it is built once per run, not once per
    module: the first test worker to ask builds it while the other waits on a file lock
    in the run's shared temp dir. A copy is a whole data dir of its own: originals are
    found by their content hash under the copy's data dir (the documents table's
    ``stored_path`` still names the template's file, and nothing reads it)."""
    import fcntl
    import json

    from tests.support.browser_support import ADMIN, REVIEWER, add_account, core_json, server_env

    root = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        root = root.parent  # shared by the xdist workers of this run
    home = root / "demo-template"
    home.mkdir(exist_ok=True)
    answers = home / "answers.json"
    with open(home / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not answers.exists():
            data = cli_init(home / "data")
            env = server_env(data)
            accounts = {name: add_account(env, name, role)["user_id"] for name, role in ((REVIEWER, "reviewer"),
                                                                                          (ADMIN, "admin"))}
            loaded = core_json(env, "demo")
            assert all(d["job"]["status"] == "succeeded" for d in loaded["documents"]), loaded
            answers.write_text(json.dumps({"demo": loaded, "accounts": accounts}))
        fcntl.flock(lock, fcntl.LOCK_UN)
    said = json.loads(answers.read_text())

    def copy(data_dir: Path) -> dict:
        shutil.copytree(home / "data", data_dir)
        return said

    return copy


# -- OCR kept by image hash, for the readers' unit tests ------------------------------
@pytest.fixture(scope="session")
def _ocr_store() -> dict:
    return {"readings": {}, "engines": {}}


@pytest.fixture
def cached_ocr(_ocr_store, monkeypatch):
    """For this test, ``default_engine()`` hands out its engine wrapped so that an image
    read before in this run (same pixels, same engine and settings) is not read again:
    tests/support/ocr_cache.py says what is kept and who may use it. Opted into by the
    readers' unit tests that read an image again (test_images, the viewer's real samples);
    never by an end-to-end test, by test_ocr (each engine, uncached), or by a test timing
    OCR. (test_scanned reads each of its scans once, in processes of its own.)"""
    from extract.formats.ocr import engines

    from tests.support.ocr_cache import CachedEngine

    real = engines._engine

    def cached(name: str):
        wrapped = _ocr_store["engines"]
        if name not in wrapped:
            wrapped[name] = CachedEngine(real(name), _ocr_store["readings"])
        return wrapped[name]

    monkeypatch.setattr(engines, "_engine", cached)
    return _ocr_store


# -- markers and the order of the files -----------------------------------------------
# Markers by folder where every test of a folder belongs to a group, by module or single
# test only where a folder mixes: tests/support/markers.py holds the tables and says why.
# `make test` runs every marker; `make test-fast` runs `-m "not slow and not ocr and not
# browser"`.
#
# Then the files are put in the order they are handed to the test workers: xdist's
# loadfile gives each worker one file at a time, in collection order, so the files that
# take minutes (browser, then slow or OCR) go first and the quick ones, last, fill in
# until both workers are done; in alphabetical order a long file picked up near the end
# kept one worker busy while the other sat idle. Tests keep their order within a file.
# Among the browser files, the longest (LEAD_FILES) goes first, then those on the shared
# app: while one worker is on the first, the other takes the shared app's files one after
# another, so that only it starts the app (tests/browser/conftest.py).
_RANK = {"browser": 0, "slow": 1, "ocr": 1}  # any other file: 2


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank: dict[Path, int] = {}
    shared_app: set[Path] = set()
    for item in items:
        for mark in sorted(markers_for(item.path, getattr(item, "originalname", item.name))):
            item.add_marker(getattr(pytest.mark, mark))
        ranks = [_RANK[m.name] for m in item.iter_markers() if m.name in _RANK]  # the table's and the file's own
        rank[item.path] = min([rank.get(item.path, 2), *ranks])
        if "served" in getattr(item, "fixturenames", ()):
            shared_app.add(item.path)
    collected = {path: n for n, path in enumerate(dict.fromkeys(item.path for item in items))}
    lead = {TESTS_DIR / name for name in LEAD_FILES}

    def place(path: Path) -> tuple[int, int, int]:
        return rank[path], 0 if path in lead else 1 if path in shared_app else 2, collected[path]

    items.sort(key=lambda item: place(item.path))
