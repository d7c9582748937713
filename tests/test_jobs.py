"""Jobs and the worker: exclusive claims, stale reclaim, failures that do not stop the loop."""

import threading
import time

import pytest

from core.errors import ExtractionError
from core.models import DocType
from core.services.ingestion import attach_and_extract
from core.services.worker import Worker
from extract import registry
from storage import jobs_repo

PDF = b"%PDF-1.4\n% not really a pdf but sniffed as one\n"


@pytest.fixture
def queued(wb, demo_patient, tmp_path):
    f = tmp_path / "lab.pdf"
    f.write_bytes(PDF)
    return attach_and_extract(wb, patient_id=demo_patient["id"], source=f, doc_type="lab_pdf")


def test_claim_is_exclusive_under_two_threads(wb, demo_patient):
    with wb.db.cursor() as cur:
        for i in range(20):
            jobs_repo.enqueue(cur, patient_id=demo_patient["id"], document_id=1000 + i, doc_type="lab_pdf")
    claimed: dict[str, list[int]] = {"a": [], "b": []}
    start = threading.Barrier(2)

    def claimant(name):
        start.wait()
        while True:
            with wb.db.cursor() as cur:
                job = jobs_repo.claim_next(cur, name)
                if job is None:
                    if jobs_repo.queue_counts(cur)["pending"] == 0:
                        return
                    continue
            claimed[name].append(job["id"])

    threads = [threading.Thread(target=claimant, args=(n,)) for n in claimed]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    all_ids = claimed["a"] + claimed["b"]
    assert len(all_ids) == 20 and len(set(all_ids)) == 20  # every job once, none twice


def test_stale_running_job_is_reclaimed_then_exhausted(wb, queued):
    job_id = queued.job["id"]
    with wb.db.cursor() as cur:
        assert jobs_repo.claim_next(cur, "dead-worker")["id"] == job_id
        # The worker died: its heartbeat is old.
        cur.execute("UPDATE processing_jobs SET heartbeat_at = heartbeat_at - INTERVAL 1 HOUR WHERE id = ?", [job_id])
        assert jobs_repo.reclaim_stale(cur, stale_after=60, max_attempts=2) == {"requeued": 1, "failed": 0}
        assert jobs_repo.by_id(cur, job_id)["status"] == "pending"
        assert jobs_repo.claim_next(cur, "dead-again")["attempts"] == 2
        cur.execute("UPDATE processing_jobs SET heartbeat_at = heartbeat_at - INTERVAL 1 HOUR WHERE id = ?", [job_id])
        assert jobs_repo.reclaim_stale(cur, stale_after=60, max_attempts=2) == {"requeued": 0, "failed": 1}
        job = jobs_repo.by_id(cur, job_id)
        cur.execute("SELECT count(*) FROM processing_jobs WHERE document_id = ?", [queued.document["id"]])
        assert cur.fetchone()[0] == 1  # reclaiming never clones the job
    assert job["status"] == "failed" and job["error_code"] == "attempts_exhausted"


def test_extractor_error_fails_the_job_with_its_code(wb, queued, monkeypatch):
    def refuses(content, source_id):
        raise ExtractionError("This lab layout has no readable results table.", code="no_results_table")

    monkeypatch.setitem(registry.EXTRACTORS, DocType.LAB_PDF, refuses)
    monkeypatch.setattr("core.services.processing.normalize", lambda data, **kw: None)
    job = Worker(wb).run_once()
    assert job["status"] == "failed"
    assert job["error_code"] == "no_results_table"
    assert "no readable results table" in job["error_message"]


def test_a_defect_fails_the_job_but_not_the_worker(wb, queued, demo_patient, tmp_path, monkeypatch, capsys):
    calls = []

    def crashes(content, source_id):
        calls.append(source_id)
        raise ZeroDivisionError("bug")

    monkeypatch.setitem(registry.EXTRACTORS, DocType.LAB_PDF, crashes)
    monkeypatch.setattr("core.services.processing.normalize", lambda data, **kw: None)
    second = tmp_path / "second.pdf"
    second.write_bytes(PDF + b"2")
    attach_and_extract(wb, patient_id=demo_patient["id"], source=second, doc_type="lab_pdf")
    worker = Worker(wb)
    first, then = worker.run_once(), worker.run_once()
    assert [first["status"], then["status"]] == ["failed", "failed"]
    assert first["error_code"] == "internal_error" and "ZeroDivisionError" in first["error_message"]
    assert len(calls) == 2 and worker.failed == 2


def test_worker_thread_processes_queue_and_writes_heartbeat(wb, queued, monkeypatch):
    from core.models import ExtractionResult
    from core.content import NormalizedContent

    monkeypatch.setitem(registry.EXTRACTORS, DocType.LAB_PDF,
                        lambda content, source_id: ExtractionResult(doc_type=DocType.LAB_PDF))
    monkeypatch.setattr("core.services.processing.normalize", lambda data, **kw: NormalizedContent("pdf_text"))
    monkeypatch.setattr(wb.settings, "worker_idle_sleep", 0.05)
    worker = Worker(wb)
    thread = worker.start_thread()
    deadline = time.time() + 20
    while time.time() < deadline:
        with wb.db.cursor() as cur:
            if jobs_repo.by_id(cur, queued.job["id"])["status"] == "succeeded":
                break
        time.sleep(0.05)
    worker.stop()
    thread.join(5)
    with wb.db.cursor() as cur:
        job = jobs_repo.by_id(cur, queued.job["id"])
    assert job["status"] == "succeeded" and job["timings"]["total"] >= 0
    from storage.heartbeat import read_heartbeat

    beat = read_heartbeat(wb.settings.heartbeat_path)
    assert beat["worker"] == "intake-extractor" and beat["queue"]["succeeded"] == 1


def test_an_answer_for_another_doc_type_is_rejected_whole(wb, queued, monkeypatch):
    from core.content import NormalizedContent
    from core.models import ExtractionResult

    monkeypatch.setitem(registry.EXTRACTORS, DocType.LAB_PDF,
                        lambda content, source_id: ExtractionResult(doc_type=DocType.INTAKE_FORM))
    monkeypatch.setattr("core.services.processing.normalize", lambda data, **kw: NormalizedContent("pdf_text"))
    job = Worker(wb).run_once()
    assert job["status"] == "failed" and job["error_code"] == "doc_type_mismatch"
    with wb.db.cursor() as cur:
        assert cur.execute("SELECT count(*) FROM document_facts").fetchone()[0] == 0
