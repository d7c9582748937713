"""Jobs and the worker: exclusive claims, stale reclaim, failures that do not stop the loop."""

import threading
import time

import pytest

from domain.errors import ExtractionError
from domain.models import DocType
from core.services.ingest.ingestion import attach_and_extract
from core.services.ingest.worker import Worker
from extract import registry as formats
from storage import jobs_repo
from tests.support.accounts import seed_test_accounts
from tests.support.file_builders import FAKE_PDF

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
            claimed[name].append(job.id)

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
        assert jobs_repo.claim_next(cur, "dead-worker").id == job_id
        # The worker died: its heartbeat is old.
        cur.execute("UPDATE processing_jobs SET heartbeat_at = heartbeat_at - INTERVAL 1 HOUR WHERE id = ?", [job_id])
        assert jobs_repo.reclaim_stale(cur, stale_after=60, max_attempts=2) == {
            "requeued": 1, "failed": 0, "jobs": {job_id: "heartbeat_stopped"}}
        assert jobs_repo.by_id(cur, job_id).status == "pending"
        assert jobs_repo.claim_next(cur, "dead-again").attempts == 2
        cur.execute("UPDATE processing_jobs SET heartbeat_at = heartbeat_at - INTERVAL 1 HOUR WHERE id = ?", [job_id])
        assert jobs_repo.reclaim_stale(cur, stale_after=60, max_attempts=2) == {
            "requeued": 0, "failed": 1, "jobs": {job_id: "heartbeat_stopped"}}
        job = jobs_repo.by_id(cur, job_id)
        cur.execute("SELECT count(*) FROM processing_jobs WHERE document_id = ?", [queued.document["id"]])
        assert cur.fetchone()[0] == 1  # reclaiming never clones the job
    assert job.status == "failed" and job.error_code == "attempts_exhausted"
    assert (job.reclaims, job.reclaim_reason) == (2, "heartbeat_stopped")


def test_extractor_error_fails_the_job_with_its_code(wb, queued, monkeypatch):
    def refuses(content, source_id):
        raise ExtractionError("This lab layout has no readable results table.", code="no_results_table")

    monkeypatch.setattr(formats, "EXTRACTORS", {**formats.EXTRACTORS, DocType.LAB_PDF: refuses})
    monkeypatch.setattr("core.services.ingest.processing.normalize", lambda data, **kw: None)
    job = Worker(wb).run_once()
    assert job["status"] == "failed"
    assert job["error_code"] == "no_results_table"
    assert "no readable results table" in job["error_message"]


def test_a_defect_fails_the_job_but_not_the_worker(wb, queued, demo_patient, tmp_path, monkeypatch, capsys):
    calls = tmp_path / "calls"  # a file: the extractor runs in the job's child process

    def crashes(content, source_id):
        with calls.open("a") as fh:
            fh.write(source_id + "\n")
        raise ZeroDivisionError("bug")

    monkeypatch.setattr(formats, "EXTRACTORS", {**formats.EXTRACTORS, DocType.LAB_PDF: crashes})
    monkeypatch.setattr("core.services.ingest.processing.normalize", lambda data, **kw: None)
    second = tmp_path / "second.pdf"
    second.write_bytes(FAKE_PDF + b"2")
    attach_and_extract(wb, patient_id=demo_patient["id"], source=second, doc_type="lab_pdf", by="dr.reviewer")
    worker = Worker(wb)
    first, then = worker.run_once(), worker.run_once()
    assert [first["status"], then["status"]] == ["failed", "failed"]
    assert first["error_code"] == "internal_error" and "ZeroDivisionError" in first["error_message"]
    assert len(calls.read_text().split()) == 2 and worker.failed == 2


def test_worker_thread_processes_queue_and_writes_heartbeat(wb, queued, monkeypatch):
    from domain.models import ExtractionResult
    from domain.content import NormalizedContent

    monkeypatch.setattr(formats, "EXTRACTORS", {**formats.EXTRACTORS, DocType.LAB_PDF:
                                                lambda content, source_id: ExtractionResult(doc_type=DocType.LAB_PDF)})
    monkeypatch.setattr("core.services.ingest.processing.normalize", lambda data, **kw: NormalizedContent("pdf_text"))
    monkeypatch.setattr(wb.settings, "worker_idle_sleep", 0.05)
    worker = Worker(wb)
    thread = worker.start_thread()
    deadline = time.time() + 20
    while time.time() < deadline:
        with wb.db.cursor() as cur:
            if jobs_repo.by_id(cur, queued.job["id"]).status == "succeeded":
                break
        time.sleep(0.05)
    worker.stop()
    thread.join(5)
    with wb.db.cursor() as cur:
        job = jobs_repo.by_id(cur, queued.job["id"])
    assert job.status == "succeeded" and job.timings["total"] >= 0
    from storage.heartbeat import read_heartbeat

    beat = read_heartbeat(wb.settings.heartbeat_path)
    assert beat["worker"] == "intake-extractor" and beat["queue"]["succeeded"] == 1


def test_an_answer_for_another_doc_type_is_rejected_whole(wb, queued, monkeypatch):
    from domain.content import NormalizedContent
    from domain.models import ExtractionResult

    monkeypatch.setattr(formats, "EXTRACTORS", {**formats.EXTRACTORS, DocType.LAB_PDF:
                                                lambda content, source_id: ExtractionResult(doc_type=DocType.INTAKE_FORM)})
    monkeypatch.setattr("core.services.ingest.processing.normalize", lambda data, **kw: NormalizedContent("pdf_text"))
    job = Worker(wb).run_once()
    assert job["status"] == "failed" and job["error_code"] == "doc_type_mismatch"
    with wb.db.cursor() as cur:
        assert cur.execute("SELECT count(*) FROM document_facts").fetchone()[0] == 0


@pytest.mark.parametrize("fact_type, value", [
    ("allergy", {"substance": ["Penicillin"], "reaction": "rash"}),
    ("medication", {"name": "Metformin", "dose": 500}),
    ("problem", {"description": {"text": "Asthma"}}),
    ("lab_result", {"test_name": "Potassium"}),
])
def test_a_malformed_clinical_value_rejects_the_answer_whole(wb, queued, monkeypatch, fact_type, value):
    from domain.content import NormalizedContent
    from domain.models import Citation, ExtractionResult, FactProposal

    cite = Citation(source_type="document", source_id="documents:1", page_or_section="page 1",
                    field_or_chunk_id="x", quote_or_value="x")
    answer = ExtractionResult(doc_type=DocType.LAB_PDF, facts=[FactProposal(
        fact_type=fact_type, fact_text="x", structured_value=value, citation=cite, confidence=0.9)])
    monkeypatch.setattr(formats, "EXTRACTORS", {**formats.EXTRACTORS, DocType.LAB_PDF: lambda content, source_id: answer})
    monkeypatch.setattr("core.services.ingest.processing.normalize", lambda data, **kw: NormalizedContent("pdf_text"))
    job = Worker(wb).run_once()
    assert job["status"] == "failed" and job["error_code"] == "malformed_value"
    with wb.db.cursor() as cur:
        assert cur.execute("SELECT count(*) FROM document_facts").fetchone()[0] == 0


# --- one writer at a time: a person's decision and the worker at the same moment -------------

def _in_thread(fn):
    """Start ``fn`` in a thread; the returned dict gets its ``result`` or ``error``."""
    out: dict = {}

    def run():
        try:
            out["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            out["error"] = exc

    out["thread"] = threading.Thread(target=run, daemon=True)
    out["thread"].start()
    return out


def test_deleting_a_document_while_the_worker_claims_its_job(wb, queued, monkeypatch):
    """The deletion retracts the pending job in its transaction; a worker pass that
    starts meanwhile waits for it instead of claiming the row (which made the deletion
    fail with a write conflict)."""
    from core.services.review.retraction import delete_document
    from storage import documents_repo

    worker, started = Worker(wb, worker_id="w"), {}
    real = documents_repo.mark_deleted

    def mark_deleted(cur, document_id, by):
        real(cur, document_id, by)
        started["pass"] = _in_thread(worker.run_once)  # the worker wakes up mid-deletion
        started["pass"]["thread"].join(0.5)

    monkeypatch.setattr(documents_repo, "mark_deleted", mark_deleted)
    assert delete_document(wb, queued.document["id"], by="dr.a")["document_id"] == queued.document["id"]
    worker_pass = started["pass"]
    worker_pass["thread"].join(20)
    assert "error" not in worker_pass and worker_pass["result"] is None  # nothing left to claim
    with wb.db.cursor() as cur:
        assert jobs_repo.by_id(cur, queued.job["id"]).status == "retracted"


class _RecordingIndex:
    """A fact index that keeps the text each fact was embedded from."""

    def __init__(self):
        self.texts: dict[int, str] = {}

    def add_facts(self, facts):
        self.texts.update({f["id"]: f["fact_text"] for f in facts if f.get("active")})
        return len(facts)

    def remove_facts(self, fact_ids):
        return sum(self.texts.pop(i, None) is not None for i in fact_ids)


def _lab_fact(wb):
    from core.services.admin.patients import add_patient
    from golden.fixtures import LAB_CASES, render_lab

    p = LAB_CASES[0].patient
    patient = add_patient(wb, mrn=p.mrn, first=p.first, last=p.last, dob=p.dob, by="dr.reviewer")
    attached = attach_and_extract(wb, patient_id=patient["id"], source="lab.pdf", data=render_lab(LAB_CASES[0]),
                                  filename="lab.pdf", doc_type="lab_pdf", by="dr.reviewer")
    Worker(wb, worker_id="w").run_specific(attached.job["id"])
    from storage import facts_repo

    with wb.db.cursor() as cur:
        return next(f for f in facts_repo.facts_for_document(cur, attached.document["id"])
                    if f.active and f.fact_type == "lab_result")


@pytest.fixture
def indexed(settings):
    """A workbench with a recording fact index and one active lab finding awaiting its vector."""
    from core.services.workbench import open_workbench
    from storage import facts_repo

    index = _RecordingIndex()
    wb = open_workbench(settings, fact_index=index)
    seed_test_accounts(wb)
    fact = _lab_fact(wb)
    with wb.db.cursor() as cur:
        facts_repo.mark_vectors(cur, [fact.id], False)
    index.texts.clear()
    yield wb, index, fact
    wb.close()


def test_a_decision_and_the_workers_vector_pass_write_the_same_row_one_after_the_other(indexed, monkeypatch):
    """A correction embeds its finding again and marks the row; while that transaction
    is open the worker marks the same row from its own pass: the worker waits for it
    (storage.db's write lock) instead of failing with 'Conflict on update'."""
    from core.services.review.corrections import correct_fact
    from storage import facts_repo

    wb, index, fact = indexed
    real_mark, real_add, held = facts_repo.mark_vectors, index.add_facts, threading.Event()
    decision: dict = {}

    def mark_held_open(cur, fact_ids, indexed_now):  # the decision's own vector pass stays uncommitted a while
        marked = real_mark(cur, fact_ids, indexed_now)
        if indexed_now and threading.current_thread() is decision.get("thread") and not held.is_set():
            held.set()
            time.sleep(0.5)
        return marked

    def add_during_the_decision(facts):  # the worker's pass; the decision's own pass embeds as usual
        monkeypatch.setattr(index, "add_facts", real_add)
        decision.update(_in_thread(lambda: correct_fact(wb, fact.id, by="dr.a", value="99.9", reason="misread")))
        assert held.wait(20)
        return real_add(facts)

    monkeypatch.setattr(facts_repo, "mark_vectors", mark_held_open)
    monkeypatch.setattr(index, "add_facts", add_during_the_decision)
    worker_pass = _in_thread(Worker(wb, worker_id="w").index_vectors)
    worker_pass["thread"].join(30)
    decision["thread"].join(30)
    assert "error" not in worker_pass and "error" not in decision, (worker_pass.get("error"), decision.get("error"))


def test_a_finding_corrected_while_the_worker_embeds_it_gets_its_new_words_indexed(indexed, monkeypatch):
    """The worker read the misread words, the correction (and its own re-embedding)
    finished meanwhile: the worker's late vector of the old words does not stay."""
    from core.services.review.corrections import correct_fact
    from storage import facts_repo

    wb, index, fact = indexed
    real_add = index.add_facts

    def add_after_the_correction(facts):
        monkeypatch.setattr(index, "add_facts", real_add)
        correct_fact(wb, fact.id, by="dr.a", value="99.9", reason="misread")
        return real_add(facts)  # the old words, embedded before the correction

    monkeypatch.setattr(index, "add_facts", add_after_the_correction)
    worker = Worker(wb, worker_id="w")
    worker.index_vectors()
    worker.index_vectors()  # the next pass
    with wb.db.cursor() as cur:
        now = facts_repo.facts_by_ids(cur, [fact.id])[fact.id]
    assert "99.9" in now.fact_text and now.vector_indexed_at is not None
    assert index.texts[fact.id] == now.fact_text


def test_a_document_deleted_while_it_is_read_adds_nothing_to_the_chart(wb, demo_patient, monkeypatch):
    from core.services.ingest import processing
    from core.services.review.facts import chart_view
    from core.services.review.retraction import delete_document
    from golden.fixtures import LAB_CASES, render_lab

    attached = attach_and_extract(wb, patient_id=demo_patient["id"], source="lab.pdf", data=render_lab(LAB_CASES[0]),
                                  filename="lab.pdf", doc_type="lab_pdf", by="dr.reviewer")
    real = processing.verify_citations

    def verify_then_deleted(*args, **kwargs):  # the reviewer deletes it while the worker reads it
        delete_document(wb, attached.document["id"], by="dr.a")
        return real(*args, **kwargs)

    monkeypatch.setattr(processing, "verify_citations", verify_then_deleted)
    job = Worker(wb, worker_id="w").run_specific(attached.job["id"])
    assert chart_view(wb, demo_patient["id"])["labs"] == []
    assert job["status"] == "failed" and job["error_code"] == "document_deleted"


def test_the_heartbeat_files_queue_counts_follow_each_job_and_are_counted_afresh_at_most_each_beat(
        wb, demo_patient, monkeypatch):
    """The queue counts the heartbeat file carries (``health`` reads them while the app
    holds the database) are right after every job the worker ends, succeeded or failed,
    without a count of the whole queue per job: counted at the first claim, then moved by
    the worker's own claims and ends; another hand's change shows at the next count (an
    idle beat, or a claim once a beat interval has passed)."""
    from core.services.ingest.processing import PipelineResult
    from storage.heartbeat import read_heartbeat

    counted = []
    real_counts = jobs_repo.queue_counts
    monkeypatch.setattr(jobs_repo, "queue_counts", lambda cur: counted.append(1) or real_counts(cur))

    def enqueue(n: int) -> list[int]:
        with wb.db.cursor() as cur:
            return [jobs_repo.enqueue(cur, patient_id=demo_patient["id"], document_id=2000 + i,
                                      doc_type="lab_pdf").id for i in range(n)]

    def in_file_and_in_database():
        with wb.db.cursor() as cur:
            return read_heartbeat(wb.settings.heartbeat_path)["queue"], real_counts(cur)

    def fails(wb, job):
        raise ExtractionError("unreadable", code="corrupt_file")

    jobs = enqueue(4)
    worker = Worker(wb, worker_id="counting", beat_every=3600)
    for job_id, pipeline in zip(jobs, [lambda wb, job: PipelineResult(), fails, lambda wb, job: PipelineResult()]):
        assert worker.run_specific(job_id, pipeline)["status"] in ("succeeded", "failed")
        in_file, in_database = in_file_and_in_database()
        assert in_file == in_database
    assert in_database["failed"] >= 1 and in_database["pending"] >= 1 and len(counted) == 1
    enqueue(2)  # an upload: not this worker's move
    assert in_file_and_in_database()[0]["pending"] == in_database["pending"]
    worker.beat("idle")
    in_file, in_database = in_file_and_in_database()
    assert in_file == in_database and len(counted) == 2

    every_time = Worker(wb, worker_id="counting-often", beat_every=3600)
    monkeypatch.setattr(every_time._queue, "every", 0.0)  # every count is past the interval
    every_time.run_specific(jobs[3], lambda wb, job: PipelineResult())
    assert len(counted) == 4  # its claim and its end, each past the interval
    enqueue(1)
    assert every_time.run_once() is not None
    in_file, in_database = in_file_and_in_database()
    assert in_file == in_database
