"""run_backfill on the local engine (in-process readings, as unit tests read): every
row's outcome, originals stored first and once, the same persistence as the worker's,
and a rerun or a resumed run that reads only what is not finished."""

import json
import socket

import pytest

from core.services.backfill.local_engine import LocalEngine
from core.services.backfill.manifest import read_manifest
from core.services.backfill.reading import Ceilings, ReadFailed
from core.services.backfill.run import run_backfill
from core.services.ingest.ingestion import reread_document, run_jobs_now
from storage import jobs_repo
from tests.support.backfill_set import OPERATOR, add_patients, write_set

STORE_CODES = {"type_mismatch", "file_not_found", "unknown_patient", "unknown_category", "bad_row"}


def _count(wb, sql):
    with wb.db.cursor() as cur:
        cur.execute(sql)
        return cur.fetchone()[0]


def _backfill(wb, manifest, engine=None, progress=None):
    engine = engine or LocalEngine(Ceilings.from_settings(wb.settings))
    return run_backfill(wb, read_manifest(manifest), engine, by=OPERATOR, progress=progress)


@pytest.fixture
def mixed(wb, tmp_path):
    found = write_set(tmp_path / "set", labs=3)
    add_patients(wb, found.patients)
    return found


def test_every_row_gets_its_outcome_and_a_rerun_skips_them_all(wb, mixed, capsys):
    import sys

    report = _backfill(wb, mixed.manifest, progress=sys.stderr)
    failures = {f["row"]: f for f in report["failures"]}
    for line in mixed.lines("succeeded"):
        assert line not in failures and line not in [h["row"] for h in report["held"]]
    assert [h["row"] for h in report["held"]] == mixed.lines("held_for_identity")
    [broken] = mixed.lines("job_failed")
    # Stored first, then read: the broken file is a document whose job failed with a code.
    assert failures[broken]["document_id"] is not None and failures[broken]["code"] not in STORE_CODES
    for code in STORE_CODES:  # refused before anything was written, with the row's line
        for line in mixed.lines(code):
            assert failures[line]["code"] == code and failures[line]["document_id"] is None
    assert [s["row"] for s in report["skipped_rows"]] == mixed.lines("duplicate_row")
    assert report["rows"] == len(mixed.expected) == sum(report[k] for k in (
        "succeeded", "held_for_identity", "failed", "skipped", "stored_only"))
    assert report["succeeded"] == 3 and report["held_for_identity"] == 1
    assert sum(report["failed_by_code"].values()) == report["failed"] == len(failures) == 6
    # One document per original: three labs, the wrong patient's lab, the broken file.
    assert report["stored"] == 5 == _count(wb, "SELECT count(*) FROM documents")
    # No names or MRNs in the report (paths are the user's own input).
    text = json.dumps(report)
    for p in mixed.patients:
        assert p.first not in text and p.last not in text and p.mrn not in text
    progress = capsys.readouterr().err
    assert "5/5 documents read" in progress and "documents/s" in progress
    assert not any(p.last in progress or p.mrn in progress for p in mixed.patients)

    facts = _count(wb, "SELECT count(*) FROM document_facts")
    assert facts > 0
    again = _backfill(wb, mixed.manifest)
    assert again["stored"] == 0 and again["documents_read"] == 0
    # The broken file's failed job is finished too: skipped with the rest; the bad rows fail again.
    assert again["skipped"] == 5 + 1 and again["failed"] == 5
    assert _count(wb, "SELECT count(*) FROM documents") == 5
    assert _count(wb, "SELECT count(*) FROM document_facts") == facts


def test_the_writer_stores_what_the_worker_would(wb, mixed):
    """The worker reading a backfilled lab again finds every fact already stored, and
    adds no fact and no chart row: the backfill's writer ran the upload's rules."""
    _backfill(wb, mixed.manifest)
    facts = _count(wb, "SELECT count(*) FROM document_facts")
    promoted = _count(wb, "SELECT count(*) FROM promotions WHERE outcome = 'promoted'")
    labs = _count(wb, "SELECT count(*) FROM chart_lab_results WHERE active")
    with wb.db.cursor() as cur:
        cur.execute("SELECT id, patient_id FROM documents ORDER BY id LIMIT 1")
        document_id, patient_id = cur.fetchone()
        stored = cur.execute("SELECT count(*) FROM document_facts WHERE document_id = ?", [document_id]).fetchone()[0]
    attached = reread_document(wb, patient_id=patient_id, document_id=document_id, doc_type="lab_pdf", by=OPERATOR)
    run_jobs_now(wb, attached.jobs)
    with wb.db.cursor() as cur:
        job = jobs_repo.by_id(cur, attached.job["id"])
    assert job.status == "succeeded" and job.counts["unchanged"] == stored > 0
    assert promoted > 0 and labs > 0
    assert _count(wb, "SELECT count(*) FROM document_facts") == facts
    assert _count(wb, "SELECT count(*) FROM promotions WHERE outcome = 'promoted'") == promoted
    assert _count(wb, "SELECT count(*) FROM chart_lab_results WHERE active") == labs


class _Interrupted(Exception):
    pass


class _StopsAfter(LocalEngine):
    """A local engine that stops the run after ``n`` readings, as a kill would."""

    def __init__(self, wb, n):
        super().__init__(Ceilings.from_settings(wb.settings))
        self.n = n

    def map(self, requests):
        for i, pair in enumerate(super().map(requests)):
            if i == self.n:
                raise _Interrupted
            yield pair


def test_a_stopped_run_resumes_where_it_stopped(wb, tmp_path):
    found = write_set(tmp_path / "set", labs=4, odd_rows=False)
    add_patients(wb, found.patients)
    with pytest.raises(_Interrupted):
        _backfill(wb, found.manifest, engine=_StopsAfter(wb, 2))
    # A job left running by a process that is gone (killed while it persisted).
    with wb.db.transaction() as cur:
        cur.execute("SELECT min(id) FROM processing_jobs WHERE status = 'pending'")
        left = cur.fetchone()[0]
        jobs_repo.claim_next(cur, "backfill:gone", left, process=f"{socket.gethostname()}:999999999:1")
    resumed = _backfill(wb, found.manifest)
    assert resumed["stored"] == 0 and resumed["skipped"] == 2 and resumed["succeeded"] == 2
    assert resumed["reclaimed_jobs"] == 1 and resumed["documents_read"] == 2
    assert _count(wb, "SELECT count(*) FROM documents") == 4
    assert _count(wb, "SELECT count(*) FROM processing_jobs WHERE status <> 'succeeded'") == 0
    # Facts are not duplicated: one per fingerprint.
    assert _count(wb, "SELECT count(*) - count(DISTINCT fact_fingerprint) FROM document_facts") == 0


def test_a_reading_that_failed_fails_its_job_with_the_readers_code(wb, tmp_path):
    found = write_set(tmp_path / "set", labs=1, odd_rows=False)
    add_patients(wb, found.patients)

    class Refusing(LocalEngine):
        def map(self, requests):
            for request in requests:
                yield request, ReadFailed("resource_limit", "Reading this document took too long.")

    report = _backfill(wb, found.manifest, engine=Refusing(Ceilings.from_settings(wb.settings)))
    assert report["failed_by_code"] == {"resource_limit": 1} and report["failures"][0]["row"] == 2
    with wb.db.cursor() as cur:
        cur.execute("SELECT status, error_code FROM processing_jobs")
        assert cur.fetchall() == [("failed", "resource_limit")]


def test_a_scanned_page_is_read_by_ocr(wb, tmp_path):
    found = write_set(tmp_path / "set", labs=1, scanned=True, odd_rows=False)
    add_patients(wb, found.patients)
    report = _backfill(wb, found.manifest)
    assert report["failed"] == 0 and report["documents_read"] == 2
    with wb.db.cursor() as cur:
        cur.execute("SELECT j.engine, count(f.id) FROM processing_jobs j JOIN documents d ON d.id = j.document_id "
                    "LEFT JOIN document_facts f ON f.document_id = d.id WHERE d.filename = 'scan-0.pdf' "
                    "GROUP BY j.engine")
        engine, facts = cur.fetchone()
    assert facts > 0 and any(name in engine.lower() for name in ("tesseract", "rapidocr"))


@pytest.mark.shared_data
def test_real_samples_a_batch_read_in_parts_is_one_row(wb, demo_patient, shared_data, tmp_path, monkeypatch):
    """A real HL7 batch of 20 results, split 5 messages a job, is one row with four jobs:
    its outcome waits for all four; its messages name other people, so it is held. A
    rerun reads nothing and stores no part twice."""
    monkeypatch.setattr(wb.settings, "hl7_messages_per_job", 5)
    manifest = tmp_path / "manifest.csv"
    batch = shared_data / "hl7" / "rs_BATCH_FHS_BHS_20x_ORU_R01_v2.5.1_CR.hl7"
    summary = shared_data / "scans" / "hl7_ccda_discharge_summary_typed_with_lipids.pdf"
    manifest.write_text(f"{batch},{demo_patient['mrn']},HL7 v2 Message\n{summary},{demo_patient['mrn']},lab_pdf\n")
    report = _backfill(wb, manifest)
    assert report["documents_read"] == 4 + 1 and report["stored"] == 2 and report["failed"] == 0
    assert report["held"][0]["row"] == 1
    documents = _count(wb, "SELECT count(*) FROM documents")
    assert documents == 2 + 4  # the batch, its four parts, the summary
    again = _backfill(wb, manifest)
    assert again["skipped"] == 2 and again["documents_read"] == 0
    assert _count(wb, "SELECT count(*) FROM documents") == documents
