"""Per-stage latency under the standard stage names the eval gate reports on.

Jobs: ``processing_jobs.timings`` and the ``job_finished`` telemetry line carry
normalize, ocr, extract, verify, identity, promote and total (ms); ``ocr`` is time
inside the OCR engine, so it is above zero for a scan and zero for a typed PDF.
Embedding a batch of facts logs ``facts_embedded`` with an ``embed`` latency.
Answers: the ``answer`` line carries retrieve, rerank, compose, verify, draft, total.
No thresholds: these tests check names and shapes, the bench measures speed.
"""

from __future__ import annotations

import json
from datetime import date
from types import SimpleNamespace

import pytest

from core.services.answer.answering import ask
from core.services.ingest.ingestion import attach_and_extract
from core.services.admin.patients import add_patient
from core.services.ingest.worker import Worker
from golden.fixtures import LAB_CASES, render_lab
from storage import jobs_repo
from storage.rows import JobRow

JOB_STAGES = ("normalize", "ocr", "extract", "verify", "identity", "promote", "total")
ANSWER_STAGES = ("retrieve", "rerank", "compose", "verify", "draft", "total")


def _events(wb, event: str) -> list[dict]:
    lines = []
    for path in sorted(wb.settings.logs_dir.glob("telemetry-*.jsonl")):
        lines += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in lines if r["event"] == event]


def _ingest(wb, patient, data: bytes, name: str) -> JobRow:
    attached = attach_and_extract(wb, patient_id=patient["id"], source=name, data=data, filename=name,
                                  doc_type="lab_pdf", by="dr.reviewer")
    job = Worker(wb).run_specific(attached.job["id"])
    assert job["status"] == "succeeded", (job["error_code"], job["error_message"])
    with wb.db.cursor() as cur:
        return jobs_repo.by_id(cur, job["id"])


def _assert_stages(timings: dict, names) -> None:
    for name in names:
        assert name in timings, (name, timings)
        assert isinstance(timings[name], int | float) and not isinstance(timings[name], bool)
        assert timings[name] >= 0, (name, timings)


def _patient(wb):
    p = LAB_CASES[0].patient
    return add_patient(wb, mrn=p.mrn, first=p.first, last=p.last, dob=date.fromisoformat(p.dob), sex=p.sex,
                       by="dr.reviewer")


def test_typed_lab_job_has_stage_timings_without_ocr(wb):
    patient = _patient(wb)
    job = _ingest(wb, patient, render_lab(LAB_CASES[0]), "lab.pdf")
    timings = job.timings
    _assert_stages(timings, JOB_STAGES)
    assert timings["ocr"] == 0
    assert not {"load", "validate_persist"} & set(timings)  # the old coarse names are gone
    logged = [r for r in _events(wb, "job_finished") if r["job_id"] == job.id]
    assert len(logged) == 1
    _assert_stages(logged[0]["latency_ms"], JOB_STAGES)
    assert logged[0]["latency_ms"]["ocr"] == 0


def test_scanned_lab_job_reports_ocr_time(wb):
    from extract.formats.ocr.engines import tesseract_available
    from golden.scan import scan_pdf

    if not tesseract_available():
        pytest.skip("the tesseract binary is not installed")
    patient = _patient(wb)
    scan = scan_pdf(render_lab(LAB_CASES[0]), dpi=300, rotate_deg=1.0, noise=0.01, seed=3)
    job = _ingest(wb, patient, scan, "lab-scan.pdf")
    _assert_stages(job.timings, JOB_STAGES)
    assert job.timings["ocr"] > 0
    logged = [r for r in _events(wb, "job_finished") if r["job_id"] == job.id]
    assert logged and logged[0]["latency_ms"]["ocr"] > 0


def test_embedding_and_answer_stages_are_logged(wb):
    from core.services.answer.corpus import index_guideline_corpus
    from core.services.review.fact_vectors import index_pending

    index_guideline_corpus(wb)
    patient = _patient(wb)
    _ingest(wb, patient, render_lab(LAB_CASES[0]), "lab.pdf")
    added = index_pending(wb)
    assert added > 0
    embedded = _events(wb, "facts_embedded")
    assert embedded and embedded[-1]["counts"]["facts"] == added
    _assert_stages(embedded[-1]["latency_ms"], ("embed",))
    assert "patient_ref" not in embedded[-1] and "document_id" not in embedded[-1]

    # An attention question searches the guidelines (and so reranks); a look-up does not.
    for question in ("What deserves attention in her labs?", "What is her latest A1c?"):
        out = ask(wb, patient["id"], question).payload
        line = [r for r in _events(wb, "answer") if r["request_id"] == out["request_id"]]
        assert len(line) == 1
        latency = line[0]["latency_ms"]
        _assert_stages(latency, ANSWER_STAGES)
        assert latency["draft"] == 0  # no drafter
        assert latency["total"] == out["latency_ms"]
        assert "tokens" not in line[0]


class _Completions:
    def __init__(self, reply: str):
        self.reply = reply

    def create(self, **kwargs):
        message = SimpleNamespace(content=self.reply)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)],
                               usage=SimpleNamespace(prompt_tokens=42, completion_tokens=7, total_tokens=49))


def test_drafter_token_usage_goes_to_the_answer_line(wb):
    from core.services.answer.drafting import OpenAICompatibleDrafter

    patient = _patient(wb)
    _ingest(wb, patient, render_lab(LAB_CASES[0]), "lab.pdf")
    client = SimpleNamespace(chat=SimpleNamespace(completions=_Completions("Her A1c is on record [E1].")))
    drafter = OpenAICompatibleDrafter(client, "stand-in-model")
    out = ask(wb, patient["id"], "What is her latest A1c?", drafter=drafter).payload
    line = [r for r in _events(wb, "answer") if r["request_id"] == out["request_id"]][0]
    _assert_stages(line["latency_ms"], ANSWER_STAGES)
    assert line["tokens"] == {"prompt": 42, "completion": 7}
    assert line["model"] == "stand-in-model"
