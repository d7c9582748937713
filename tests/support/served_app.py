"""One served app per test worker, shared by the browser tests that need nothing of the
app but its production defaults (tests/browser/conftest.py: the ``served`` fixture).

Started as `make run` serves it: `core init` (a copy of the test worker's one run, the
``cli_init`` fixture), then `python -m ui.serve` with make run's
environment (browser_support.server_env: only the data dir and the port set, every other
WORKBENCH_* and STREAMLIT_* variable unset, so jobs are read in the forkserver child and
the worker thread and the CLI's endpoint run). What differs from a fresh `make run` is
only what is in the data dir before the server opens it, and each test module that
shares the app has its own part of that, so that none sees another's:

  accounts   REVIEWER and ADMIN made as an operator makes them (`core user add`, then
             the person's first change of the password), and the accounts every test
             workbench holds (tests/support/accounts.py), seeded
  patients   UPLOAD_PATIENT, PROXY_PATIENT and COVERAGE_PATIENT, an empty chart each for the
             uploads of test_browser, test_proxy_nginx and test_browser_coverage;
             INERT_PATIENT, the chart of test_browser_inert's payload documents;
             DEMO-1001's chart holds test_browser_media's documents; DEMO-1003 is left
             without documents (test_browser asks it for an A1c it does not have)
  eval runs  written by test_browser_evals into the data dir while the app runs (the
             Evals page reads them from there)

The database has one writer, so a module's documents are read into the data dir before
the server starts, in this process and without a job child (WORKBENCH_JOB_PROCESS=off,
for speed, as the unit tests read; tests/conftest.py's table says what covers the
child); only the server runs with the production defaults. A module that needs the app
started another way (another setting, the first admin's one-time password, the database
read after the server stops) starts its own server: tests/browser/conftest.py lists them.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from tests.support.browser_support import ADMIN, REVIEWER, add_account, core_json, server_env, serving

UPLOAD_PATIENT = {"first": "Theodora", "last": "Pembleton", "dob": "1966-11-02", "mrn": "BROWSER-UPLOAD-1",
                  "sex": "F"}
PROXY_PATIENT = {"first": "Aurelio", "last": "Brancaleone", "dob": "1971-04-18", "mrn": "PROXY-UPLOAD-1", "sex": "M"}
INERT_PATIENT = {"first": "Rosalind", "last": "Ashgrove", "dob": "1957-09-23", "mrn": "INERT-1001", "sex": "F"}
# test_browser_coverage uploads a cumulative sheet no reader reads in full to this empty chart.
COVERAGE_PATIENT = {"first": "Odile", "last": "Trevellian", "dob": "1961-11-03", "mrn": "HG-448102", "sex": "F"}
MEDIA_MRN = "DEMO-1001"
# An HL7 batch uploaded under a Markdown name with a right-to-left override before a fake
# extension, read in parts of two messages (issue 21, item 5).
MEDIA_BATCH_NAME = "**bold**[x](http://e)\u202efdp.hl7"


@dataclass
class ServedApp:
    url: str
    env: dict[str, str]
    data: Path
    # `core health --json` as it answered once the server was up, before any browser connected
    health_before_any_page: dict[str, Any]
    patients: dict[str, int] = field(default_factory=dict)  # "upload", "proxy", "inert", "coverage", "media" -> id
    media: dict[str, int] = field(default_factory=dict)  # test_browser_media's document ids
    inert: dict[str, int] = field(default_factory=dict)  # test_browser_inert's document ids by payload key


@contextmanager
def filling(data: Path) -> Iterator[Any]:
    """The data dir's workbench, opened in this process before the server holds it."""
    from core.services.workbench import open_workbench
    from domain.settings import reload_settings

    keys = ("WORKBENCH_DATA_DIR", "WORKBENCH_JOB_PROCESS")
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update(WORKBENCH_DATA_DIR=str(data), WORKBENCH_JOB_PROCESS="off")
    try:
        wb = open_workbench(reload_settings())
        try:
            yield wb
        finally:
            wb.close()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        reload_settings()


def _add_patient(wb, person: dict[str, str]) -> int:
    from datetime import date

    from core.services.admin.patients import add_patient

    return add_patient(wb, mrn=person["mrn"], first=person["first"], last=person["last"],
                       dob=date.fromisoformat(person["dob"]), sex=person["sex"], by="dr.reviewer")["id"]


def fill_media(wb) -> tuple[int, dict[str, int]]:
    """test_browser_media's documents on DEMO-1001's chart: a three-page report, another
    patient's report rejected by a reviewer, and the batch read in parts of two messages."""
    from core.services.admin.patients import get_patient
    from core.services.ingest.ingestion import attach_and_extract
    from core.services.ingest.worker import Worker
    from core.services.review.decisions import decide_identity
    from core.services.review.facts import document_report
    from golden.fixtures import LAB_CASES, render_lab
    from tests.support.file_builders import pdf
    from tests.support.hl7_messages import batch

    patient = get_patient(wb, mrn=MEDIA_MRN)

    def read(data: bytes, doc_type: str, name: str):
        attached = attach_and_extract(wb, patient_id=patient["id"], source=name, data=data, filename=name,
                                      doc_type=doc_type, by="dr.reviewer")
        for job in attached.jobs:
            assert Worker(wb).run_specific(job["id"])["status"] == "succeeded", name
        return attached

    ids = {"pages": read(pdf(pages=3), "lab_pdf", "three-pages.pdf").document["id"]}
    wrong = read(render_lab(LAB_CASES[0]), "lab_pdf", "someone-elses-lab.pdf")
    check = document_report(wb, wrong.document["id"])["identity"]["identity_check_id"]
    decide_identity(wb, check, approve=False, by="dr.reviewer", reason="another patient's report")
    per_job = wb.settings.hl7_messages_per_job
    wb.settings.hl7_messages_per_job = 2  # this upload only: 5 messages read in 3 parts
    try:
        attached = read(batch(5), "hl7v2_message", MEDIA_BATCH_NAME)
    finally:
        wb.settings.hl7_messages_per_job = per_job
    assert len(attached.parts) == 3
    ids["batch"] = attached.document["id"]
    return patient["id"], ids


@contextmanager
def served_app(root: Path, cli_init) -> Iterator[ServedApp]:
    """The shared app on a data dir under ``root``, filled as the module docstring says;
    ``cli_init``: the conftest fixture (a copy of a `core init` data dir)."""
    from tests.support.accounts import seed_test_accounts
    from tests.support.inert_support import ingest_payload_documents

    data = cli_init(root / "data")
    env = server_env(data)
    add_account(env, REVIEWER, "reviewer")
    add_account(env, ADMIN, "admin")  # the Evals page's "Run the gate" and Operations are an admin's
    with filling(data) as wb:
        seed_test_accounts(wb)
        patients = {name: _add_patient(wb, person) for name, person in
                    (("upload", UPLOAD_PATIENT), ("proxy", PROXY_PATIENT), ("inert", INERT_PATIENT),
                     ("coverage", COVERAGE_PATIENT))}
        _, inert = ingest_payload_documents(wb, INERT_PATIENT)
        patients["media"], media = fill_media(wb)
    with serving(env, log=root / "server.log") as (url, _proc):
        health = core_json(env, "health")  # before any browser has connected
        yield ServedApp(url, env, data, health, patients, media, inert)
