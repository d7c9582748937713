"""Jobs that keep failing (core/services/ingest/job_health.py): the rule is data, over the
latest finished jobs only, so an old bad spell that reading has recovered from is green."""

from __future__ import annotations

from core.services.ingest.job_health import KEEP_FAILING, FailingRule, failing_jobs


def _finish(wb, patient_id: int, *statuses: str) -> None:
    from storage import jobs_repo

    with wb.db.cursor() as cur:
        for n, status in enumerate(statuses):
            job = jobs_repo.enqueue(cur, patient_id=patient_id, document_id=1000 + n, doc_type="lab_pdf")
            jobs_repo.finish(cur, job.id, status=status, error_code="corrupt_file" if status == "failed" else None)


def test_a_few_failures_among_the_latest_jobs_turn_it_red_and_a_recovery_turns_it_back(wb, demo_patient):
    assert KEEP_FAILING.failed <= KEEP_FAILING.last
    assert failing_jobs(wb)["failing"] is False  # no job at all: nothing is failing
    _finish(wb, demo_patient["id"], *(["failed"] * (KEEP_FAILING.failed - 1)), "succeeded")
    assert failing_jobs(wb)["failing"] is False
    _finish(wb, demo_patient["id"], "failed")
    now = failing_jobs(wb)
    assert now["failing"] is True and now["failed"] == KEEP_FAILING.failed and now["of"] <= KEEP_FAILING.last
    _finish(wb, demo_patient["id"], *(["succeeded"] * KEEP_FAILING.last))  # reading works again
    assert failing_jobs(wb) | {"job_ids": []} == {"failing": False, "failed": 0, "of": KEEP_FAILING.last,
                                                  "rule": {"last": KEEP_FAILING.last, "failed": KEEP_FAILING.failed},
                                                  "job_ids": []}


def test_the_rule_is_data(wb, demo_patient):
    _finish(wb, demo_patient["id"], "failed", "succeeded")
    assert failing_jobs(wb, FailingRule(last=2, failed=1))["failing"] is True
    assert failing_jobs(wb, FailingRule(last=1, failed=1))["failing"] is False  # only the latest: it succeeded
