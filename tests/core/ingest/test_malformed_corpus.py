"""One bad upload must never stall the clinic (issue 13): 151 generated malformed,
damaged, crafted and oversized inputs (tests/support/malformed_corpus.py) go through upload and
the worker as the app runs them (each reading in a forkserver child under the job's
time and memory ceilings). Every one ends succeeded or failed with a coded, plain
error, the original kept; none reaches a chart; the same worker reads them all; an
intact lab and HL7 message afterwards still reach the chart, so the checks can fail.

bench/malformed_corpus.py runs the same corpus through `python -m core ingest` and
prints the worst time and memory per family."""

from __future__ import annotations

import hashlib
import time
from collections import defaultdict
from datetime import date

import pytest

from domain.errors import BadInput
from domain.policy.facts.certainty import FILE_REPAIRED
from core.services.review.facts import document_report
from core.services.ingest.ingestion import attach_and_extract
from core.services.admin.patients import add_patient
from core.services.ingest.worker import Worker
from golden.fixtures import render_lab
from tests.support import malformed_corpus
from tests.support.file_builders import hl7

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def corpus():
    return malformed_corpus.build()


def test_the_corpus_is_large_and_covers_every_family(corpus):
    assert len(corpus) >= 150
    assert len({s.kind for s in corpus}) >= 12
    assert len({(s.name, s.doc_type) for s in corpus}) == len(corpus)  # each sample is its own upload
    assert len({hashlib.sha256(s.data).hexdigest() for s in corpus}) > 130  # a few files go under several labels


def chart_patients(wb, demo_patient) -> dict[str, dict]:
    lab = malformed_corpus.LAB.patient
    return {"demo": demo_patient,
            "lab": add_patient(wb, mrn=lab.mrn, first=lab.first, last=lab.last, dob=date.fromisoformat(lab.dob),
                               by="dr.reviewer"),
            "hl7": add_patient(wb, mrn="WB-204118", first="Marisol", last="Quentara", dob=date(1978, 3, 14),
                               by="dr.reviewer")}


def count(wb, sql: str) -> int:
    with wb.db.cursor() as cur:
        return cur.execute(sql).fetchone()[0]


def check_outcome(wb, sample, report: dict) -> str:
    """What became of one sample, asserting the rules; returns 'failed:<code>' or 'held'."""
    job = report["job"]
    label = f"{sample.kind}/{sample.name} as {sample.doc_type}"
    assert job["status"] in ("succeeded", "failed"), (label, job["status"])
    if job["status"] == "failed":
        assert job["error_code"] in sample.codes, (label, job["error_code"], job["error_message"])
        assert job["error_message"] and "Traceback" not in job["error_message"], label
        assert not report["facts"], label
        return f"failed:{job['error_code']}"
    assert sample.expect == "held", (label, "succeeded", [w["code"] for w in job["warnings"]])
    assert FILE_REPAIRED in {w["code"] for w in job["warnings"]}, label
    assert all(f["certainty"] == "needs_review" and not f["active"] for f in report["facts"]), label
    return "held"


def test_every_malformed_input_ends_coded_kept_and_off_the_chart(wb, settings, demo_patient, corpus, capsys):
    settings.job_process = "forkserver"  # as the app runs jobs: a child per job under the ceilings
    settings.job_timeout_seconds = 120.0
    settings.job_memory_mb = 1024
    patients = chart_patients(wb, demo_patient)
    worker = Worker(wb, worker_id="corpus")
    outcomes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    worst: dict[str, float] = defaultdict(float)
    for sample in corpus:
        started = time.perf_counter()
        try:
            attached = attach_and_extract(wb, patient_id=patients[sample.patient]["id"], source=sample.name,
                                          data=sample.data, filename=sample.name, doc_type=sample.doc_type,
                                          by="dr.reviewer")
        except BadInput as exc:  # refused by the upload check (empty, or not the labelled format): not stored
            assert exc.code in sample.codes | malformed_corpus.UPLOAD_REFUSALS, (sample.name, exc.code)
            outcomes[sample.kind][f"refused:{exc.code}"] += 1
            continue
        worker.run_specific(attached.job["id"])
        worst[sample.kind] = max(worst[sample.kind], time.perf_counter() - started)
        report = document_report(wb, attached.document["id"])
        outcomes[sample.kind][check_outcome(wb, sample, report)] += 1
        assert wb.blobs.get(attached.document["sha256"]) == sample.data, sample.name  # the original is kept

    jobs = sum(n for o in outcomes.values() for k, n in o.items() if not k.startswith("refused:"))
    assert worker.processed + worker.failed == jobs  # one worker read them all, none lost
    assert count(wb, "SELECT count(*) FROM processing_jobs WHERE status NOT IN ('succeeded', 'failed')") == 0
    assert count(wb, "SELECT count(*) FROM processing_jobs WHERE error_code = 'internal_error'") == 0
    assert count(wb, "SELECT count(*) FROM promotions WHERE outcome = 'promoted'") == 0
    assert count(wb, "SELECT count(*) FROM chart_lab_results") == 0
    # The damaged-but-readable families really were read (and held), not all refused.
    assert outcomes["truncated_pdf"]["held"] and outcomes["truncated_hl7"]["held"]

    # The same worker then puts intact documents of those charts on them.
    for patient, data, doc_type in ((patients["lab"], render_lab(malformed_corpus.LAB), "lab_pdf"),
                                    (patients["hl7"], hl7(messages=1, obx=2), "hl7v2_message")):
        attached = attach_and_extract(wb, patient_id=patient["id"], source="intact", data=data,
                                      filename="intact", doc_type=doc_type, by="dr.reviewer")
        assert worker.run_specific(attached.job["id"])["status"] == "succeeded"
    assert count(wb, "SELECT count(*) FROM promotions WHERE outcome = 'promoted'") > 0
    assert count(wb, "SELECT count(*) FROM chart_lab_results") > 0

    with capsys.disabled():
        print(f"\nmalformed corpus: {len(corpus)} files")
        for kind in sorted(outcomes):
            ends = ", ".join(f"{k} {n}" for k, n in sorted(outcomes[kind].items()))
            print(f"  {kind:15} worst {worst[kind]:5.2f} s  {ends}")
