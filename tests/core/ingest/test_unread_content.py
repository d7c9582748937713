"""The coverage guard in the pipeline: a reader that misses printed results leaves a
succeeded job that says so (warning, count), one review item for the document with every
place boxed, stored once however often the document is read, and closed by a person's
acknowledgement without ever reaching the chart or an answer's findings."""

from __future__ import annotations

import pytest

from core.services.answer.evidence_items import load_candidates
from core.services.ingest.worker import Worker
from core.services.review.decisions import decide_fact, keep_as_document_fact, review_queue
from core.services.review.facts import chart, document_report
from domain.errors import BadInput
from domain.models import DocType
from extract import registry as formats
from golden.coverage_layouts import LAYOUTS
from storage import jobs_repo
from tests.support.pipeline import CASE, chart_patient, count, ingest

from golden.fixtures import render_lab


def _dropping(test_names: set[str]):
    """The lab reader, made to miss the results named (as a weaker reader would)."""
    original = formats.extractor_for(DocType.LAB_PDF)

    def reader(content, source_id):
        result = original(content, source_id)
        return result.model_copy(update={"facts": [f for f in result.facts
                                                   if f.structured_value.get("test_name") not in test_names]})
    return {**formats.EXTRACTORS, DocType.LAB_PDF: reader}


def _unread(report):
    return [f for f in report["facts"] if f["fact_type"] == "unread_content"]


def test_a_missed_result_makes_one_review_item_with_its_box_and_a_succeeded_job_that_says_so(wb, monkeypatch):
    patient = chart_patient(wb, CASE.patient)
    monkeypatch.setattr(formats, "EXTRACTORS", _dropping({"Platelets", "Triglycerides"}))
    report = ingest(wb, patient, render_lab(CASE), "lab_pdf")
    job = report["job"]
    assert job["status"] == "succeeded"
    assert job["counts"]["unread_content"] == 2 and job["unread_content"] == 2
    warning = next(w for w in job["warnings"] if w["code"] == "unread_content")
    assert warning == {"code": "unread_content", "page": 1, "message": "2 results on page 1 were not read; "
                                                                        "see the review queue"}
    [item] = _unread(report)
    assert item["certainty"] == "needs_review" and item["active"] is False
    assert item["fact_text"] == "2 results on page 1 were not read."
    regions = item["structured_value"]["regions"]
    assert [r["text"].split()[0] for r in regions] == ["Platelets", "Triglycerides"]
    assert all(r["page"] == 1 and r["box"]["width"] > 0 for r in regions)
    assert item["citation"]["page"] == 1 and item["citation"]["bounding_box"] == regions[0]["box"]
    # The results that were read reach the chart; nothing of the review item does.
    assert len(chart(wb, patient["id"])["chart_lab_results"]) == 8
    assert any(f["fact_type"] == "unread_content" for f in review_queue(wb, patient["id"])["facts"])


def test_reading_again_stores_it_once_and_a_reader_that_now_reads_everything_closes_it(wb, monkeypatch):
    patient = chart_patient(wb, CASE.patient)
    monkeypatch.setattr(formats, "EXTRACTORS", _dropping({"Platelets"}))
    report = ingest(wb, patient, render_lab(CASE), "lab_pdf")
    facts = count(wb, "SELECT count(*) FROM document_facts")
    with wb.db.cursor() as cur:
        jobs_repo.requeue(cur, report["job"]["job_id"])
    assert Worker(wb).run_once()["status"] == "succeeded"
    assert count(wb, "SELECT count(*) FROM document_facts") == facts
    again = document_report(wb, report["document_id"])
    assert [f["fact_id"] for f in _unread(again)] == [f["fact_id"] for f in _unread(report)]

    monkeypatch.undo()  # the reader improves: every result is read
    with wb.db.cursor() as cur:
        jobs_repo.requeue(cur, report["job"]["job_id"])
    assert Worker(wb).run_once()["status"] == "succeeded"
    latest = document_report(wb, report["document_id"])
    assert "unread_content" not in latest["job"]["counts"]
    assert [f["promotion_status"] for f in _unread(latest)] == ["superseded"]
    assert not any(f["fact_type"] == "unread_content" for f in review_queue(wb, patient["id"])["facts"])


def test_acknowledging_closes_it_without_chart_or_evidence_and_keeping_it_is_refused(wb, monkeypatch):
    patient = chart_patient(wb, CASE.patient)
    monkeypatch.setattr(formats, "EXTRACTORS", _dropping({"Hemoglobin A1c"}))
    report = ingest(wb, patient, render_lab(CASE), "lab_pdf")
    [item] = _unread(report)
    findings, reviews, _ = load_candidates(wb, patient["id"])
    assert not any(c.item.fact_type == "unread_content" for c in findings)  # never a finding
    [shown] = [c.item.text for c in reviews if c.item.fact_type == "unread_content"]
    assert shown.startswith(item["fact_text"])  # visible for review, with why it waits
    with pytest.raises(BadInput) as refused:
        keep_as_document_fact(wb, item["fact_id"], by="dr.reviewer")
    assert refused.value.code == "not_a_finding"
    rows_before = chart(wb, patient["id"])["chart_lab_results"]
    done = decide_fact(wb, item["fact_id"], approve=True, by="dr.reviewer")
    assert done["promotion_status"] == "acknowledged" and done["active"] is False
    assert done["certainty"] == "needs_review"  # a person read the page; nothing became verified
    assert chart(wb, patient["id"])["chart_lab_results"] == rows_before
    findings, reviews, _ = load_candidates(wb, patient["id"])
    assert not any(c.item.fact_type == "unread_content" for c in findings + reviews)
    with pytest.raises(BadInput) as twice:
        decide_fact(wb, item["fact_id"], approve=True, by="dr.reviewer")
    assert twice.value.code == "already_decided" and "acknowledged as read by a person" in twice.value.message
    # Read again, the same places are found: the person's acknowledgement stands.
    with wb.db.cursor() as cur:
        jobs_repo.requeue(cur, report["job"]["job_id"])
    assert Worker(wb).run_once()["status"] == "succeeded"
    again = _unread(document_report(wb, report["document_id"]))
    assert [(f["fact_id"], f["promotion_status"]) for f in again] == [(item["fact_id"], "acknowledged")]
    assert not any(f["fact_type"] == "unread_content" for f in review_queue(wb, patient["id"])["facts"])


def test_a_layout_no_reader_knows_is_reported_not_passed_off_as_a_clean_read(wb):
    layout = LAYOUTS["results in sentences"]  # the readers take only some of them
    patient = chart_patient(wb, CASE.patient)
    report = ingest(wb, patient, layout.build(), layout.doc_type)
    read = {f["structured_value"].get("value") for f in report["facts"] if f["fact_type"] == "lab_result"}
    [item] = _unread(report)
    printed = {r.value for r in layout.truth}
    unread_text = " ".join(r["text"] for r in item["structured_value"]["regions"])
    # Every printed value is either read into a finding or shown among the unread places.
    shown = {w.strip(".,;") for w in unread_text.split()}
    assert all(v in read or v.rstrip("%") in read or v in shown for v in printed)
    assert report["job"]["counts"]["unread_content"] == len(item["structured_value"]["regions"]) > 0
