"""A wall-clock and memory ceiling per job (issue 13): reading runs in a child process
that is killed at either ceiling; the job fails with resource_limit, the original is
kept and the worker goes on.

The hostile readers are monkeypatched extractors; jobs here use the ``fork`` start
method so they reach the child. The last test uses the app's default,
a forkserver, on real documents. No test here times anything: what proves a ceiling
fired is the job's recorded failure and what the parent's watch did with the child (the
``watch`` fixture); how soon past its ceiling a child is stopped is printed by
bench/job_ceiling.py."""

import signal
import time

import pytest

from domain.models import DocType
from core.services.ingest.ingestion import attach_and_extract
from core.services.ingest.worker import Worker
from extract import registry as formats
from golden.fixtures import LAB_CASES, render_lab

MB = 1024 * 1024


@pytest.fixture(autouse=True)
def forked_children(settings, monkeypatch):
    """A fresh fork per job, so the monkeypatched extractors below reach the child."""
    monkeypatch.setattr(settings, "job_process", "fork")


@pytest.fixture
def watch(monkeypatch):
    """What the parent's watch over each job's child did (core.services.ingest.sandbox):
    ``ended_on``, how each wait ended ("time" or "memory" at a ceiling, "ok", "error"...),
    with the child process it watched, and ``killed``, the pids of the children it killed."""
    from core.services.ingest import sandbox

    seen: dict[str, list] = {"ended_on": [], "killed": []}
    wait, kill = sandbox._wait, sandbox._kill  # noqa: SLF001 - the events are observed, not changed

    def watched_wait(proc, receiver, **limits):
        kind, payload = wait(proc, receiver, **limits)
        seen["ended_on"].append((kind, proc))
        return kind, payload

    def watched_kill(proc):
        seen["killed"].append(proc.pid)
        kill(proc)

    monkeypatch.setattr(sandbox, "_wait", watched_wait)
    monkeypatch.setattr(sandbox, "_kill", watched_kill)
    return seen


def attach_lab(wb, patient, name: str):
    data = render_lab(LAB_CASES[0]) + name.encode()  # distinct bytes: distinct documents
    return attach_and_extract(wb, patient_id=patient["id"], source=name, data=data, filename=name,
                              doc_type="lab_pdf", by="dr.reviewer")


def stalls(content, source_id):
    time.sleep(60)


def hogs_memory_gradually(content, source_id):
    hoard = []
    while True:  # resident pages, 20 MB at a time: the parent's watch catches it
        hoard.append(b"x" * (20 * MB))
        time.sleep(0.01)


def hogs_memory_at_once(content, source_id):
    return b"x" * (4096 * MB)  # one allocation past the address-space limit: MemoryError


def assert_failed_on_ceiling(wb, job, words: str) -> None:
    assert job["status"] == "failed" and job["error_code"] == "resource_limit"
    assert words in job["error_message"] and "original is kept" in job["error_message"]
    assert "Traceback" not in job["error_message"]
    with wb.db.cursor() as cur:  # the original is still stored
        sha = cur.execute("SELECT sha256 FROM documents WHERE id = ?", [job["document_id"]]).fetchone()[0]
    assert wb.blobs.get(sha)


def test_a_job_past_its_time_fails_and_the_next_job_still_runs(wb, demo_patient, monkeypatch, watch):
    slow, normal = attach_lab(wb, demo_patient, "slow.pdf"), attach_lab(wb, demo_patient, "normal.pdf")
    monkeypatch.setattr(wb.settings, "job_timeout_seconds", 1.5)
    table = formats.EXTRACTORS
    monkeypatch.setattr(formats, "EXTRACTORS", {**formats.EXTRACTORS, DocType.LAB_PDF: stalls})
    worker = Worker(wb, worker_id="w")
    job = worker.run_specific(slow.job["id"])
    assert_failed_on_ceiling(wb, job, "longer than the 1.5 s allowed")
    # The time ceiling fired and the parent killed the child, still inside its 60 s sleep.
    [(ended_on, child)] = watch["ended_on"]
    assert ended_on == "time" and watch["killed"] == [child.pid]
    assert child.exitcode == -signal.SIGKILL
    monkeypatch.setattr(formats, "EXTRACTORS", table)
    monkeypatch.setattr(wb.settings, "job_timeout_seconds", 60.0)
    then = worker.run_specific(normal.job["id"])
    assert then["status"] == "succeeded" and then["counts"]["stored"] > 0
    assert worker.failed == 1 and worker.processed == 1


@pytest.mark.parametrize("hog", [hogs_memory_gradually, hogs_memory_at_once])
def test_a_job_past_its_memory_fails_with_resource_limit(wb, demo_patient, monkeypatch, hog, watch):
    attached = attach_lab(wb, demo_patient, "hog.pdf")
    monkeypatch.setattr(wb.settings, "job_memory_mb", 300)
    monkeypatch.setattr(wb.settings, "job_timeout_seconds", 30.0)
    monkeypatch.setattr(formats, "EXTRACTORS", {**formats.EXTRACTORS, DocType.LAB_PDF: hog})
    job = Worker(wb, worker_id="w").run_specific(attached.job["id"])
    assert_failed_on_ceiling(wb, job, "more than the 300 MB of memory")
    # The memory ceiling ended the child - the parent's watch of its resident size, or its
    # address-space limit (a MemoryError it reports) - not the 30 s time ceiling.
    [(ended_on, child)] = watch["ended_on"]
    assert ended_on == "memory" and child.exitcode is not None
    assert "longer than" not in job["error_message"]


def test_an_extraction_error_in_the_child_keeps_its_code(wb, demo_patient, monkeypatch):
    from domain.errors import ExtractionError

    def refuses(content, source_id):
        raise ExtractionError("This lab layout has no readable results table.", code="no_results_table")

    attached = attach_lab(wb, demo_patient, "odd.pdf")
    monkeypatch.setattr(formats, "EXTRACTORS", {**formats.EXTRACTORS, DocType.LAB_PDF: refuses})
    job = Worker(wb, worker_id="w").run_specific(attached.job["id"])
    assert (job["status"], job["error_code"]) == ("failed", "no_results_table")


def test_normal_jobs_in_the_default_forkserver_are_unaffected(wb, demo_patient, monkeypatch):
    from bench.hl7_batch import batch
    from core.services.admin.patients import DEMO_PATIENTS

    monkeypatch.setattr(wb.settings, "job_process", "forkserver")
    lab = attach_lab(wb, demo_patient, "lab.pdf")
    hl7 = attach_and_extract(wb, patient_id=demo_patient["id"], source="batch.hl7", data=batch(DEMO_PATIENTS[0], 5),
                             filename="batch.hl7", doc_type="hl7v2_message", by="dr.reviewer")
    worker = Worker(wb, worker_id="w")
    jobs = [worker.run_specific(lab.job["id"]), worker.run_specific(hl7.job["id"])]
    assert [j["status"] for j in jobs] == ["succeeded", "succeeded"], [j["error_message"] for j in jobs]
    assert jobs[0]["counts"]["stored"] > 0 and jobs[1]["counts"]["stored"] == 15
    assert all(j["timings"]["normalize"] >= 0 and j["timings"]["extract"] >= 0 for j in jobs)
