"""Vital signs in the chart, as lab results are: promoted with provenance, one chart row
for the same reading from two documents, a conflict for another value at the same time,
retracted with the last document that supports them."""

from __future__ import annotations

from datetime import date

import pytest

from core.services.admin.patients import add_patient
from core.services.review.decisions import decide_fact
from core.services.review.facts import chart_view, latest_vital_signs
from core.services.review.retraction import delete_document, deletion_impact
from tests.support.file_builders import sheets_workbook
from tests.support.pipeline import count, ingest

ID_ROWS = [["Patient", "Rosalind Tembo-Aukett"], ["DOB", "1955-09-14"], ["MRN", "RT-66120"]]


def obs_book(bp: str = "152/94", pulse: int = 112, header=("Date", "BP", "Pulse"), title: str = "Vitals") -> bytes:
    return sheets_workbook({"Patient": ID_ROWS, title: [list(header), ["2026-02-11 10:05", bp, pulse]]})


@pytest.fixture
def patient(wb):
    return add_patient(wb, mrn="RT-66120", first="Rosalind", last="Tembo-Aukett", dob=date(1955, 9, 14), sex="F",
                       by="dr.reviewer")


def active_vitals(wb) -> int:
    return count(wb, "SELECT count(*) FROM chart_vital_signs WHERE active")


def test_readings_are_promoted_with_provenance_and_shown_newest_first(wb, patient):
    report = ingest(wb, patient, obs_book(), "clinical_workbook", "obs.xlsx")
    assert {p["outcome"] for p in report["promotions"]} == {"promoted"}
    rows = chart_view(wb, patient["id"])["vital_signs"]
    bp = next(r for r in rows if r["kind"] == "blood_pressure")
    assert (bp["value"], bp["systolic"], bp["diastolic"], bp["unit"], bp["measured_at"]) == (
        "152/94", "152", "94", "mmHg", "2026-02-11 10:05")
    assert bp["document_ids"] == [report["document_id"]] and bp["source"] == "promoted"
    assert [v["summary"] for v in latest_vital_signs(chart_view(wb, patient["id"]))] == ["BP 152/94 mmHg",
                                                                                         "Pulse 112 /min"]


def test_the_same_reading_from_another_document_is_one_row_until_both_are_deleted(wb, patient):
    first = ingest(wb, patient, obs_book(), "clinical_workbook", "first.xlsx")
    # Another workbook (other labels, other sheet name, other bytes) printing the same readings.
    second = ingest(wb, patient, obs_book(header=("Recorded", "B/P", "HR"), title="Ward obs"), "clinical_workbook",
                    "second.xlsx")
    assert {p["outcome"] for p in second["promotions"]} == {"already_exists"}
    assert active_vitals(wb) == 2
    impact = deletion_impact(wb, first["document_id"])
    assert impact["chart_rows"] == 0 and {r["label"] for r in impact["chart_rows_kept"]} == {"BP 152/94 mmHg",
                                                                                            "Pulse 112 /min"}
    delete_document(wb, first["document_id"], by="dr.reviewer")
    assert active_vitals(wb) == 2
    assert all(r["document_ids"] == [second["document_id"]] for r in chart_view(wb, patient["id"])["vital_signs"])
    result = delete_document(wb, second["document_id"], by="dr.reviewer")
    assert result["retracted"]["chart_rows"] == 2 and active_vitals(wb) == 0


def test_another_value_at_the_same_time_is_a_conflict_for_review(wb, patient):
    ingest(wb, patient, obs_book(), "clinical_workbook", "first.xlsx")
    other = ingest(wb, patient, obs_book(bp="148/92"), "clinical_workbook", "other.xlsx")
    outcomes = {p["outcome"] for p in other["promotions"]}
    assert outcomes == {"conflict_needs_review", "already_exists"}
    conflict = next(f for f in other["facts"] if f["promotion_status"] == "conflict_needs_review")
    assert conflict["structured_value"]["value"] == "148/92"
    assert [r["value"] for r in chart_view(wb, patient["id"])["vital_signs"] if r["kind"] == "blood_pressure"] == [
        "152/94"]
    decide_fact(wb, conflict["fact_id"], approve=True, by="dr.reviewer", resolution="replace")
    assert [r["value"] for r in chart_view(wb, patient["id"])["vital_signs"] if r["kind"] == "blood_pressure"] == [
        "148/92"]


def test_an_implausible_reading_never_reaches_the_chart(wb, patient):
    report = ingest(wb, patient, obs_book(pulse=1120), "clinical_workbook", "obs.xlsx")
    pulse = next(f for f in report["facts"] if f["structured_value"].get("kind") == "heart_rate")
    assert pulse["certainty"] == "needs_review" and "plausible range" in pulse["review_reason"]
    assert [r["kind"] for r in chart_view(wb, patient["id"])["vital_signs"]] == ["blood_pressure"]


def test_a_misread_reading_is_corrected_by_a_person_and_then_charted(wb, patient):
    from core.services.review.corrections import correct_fact
    from domain.errors import BadInput

    report = ingest(wb, patient, obs_book(bp="300/20", pulse=1120), "clinical_workbook", "obs.xlsx")
    facts = {f["structured_value"]["kind"]: f for f in report["facts"]}
    with pytest.raises(BadInput, match="systolic/diastolic"):
        correct_fact(wb, facts["blood_pressure"]["fact_id"], by="dr.reviewer", value="130", reason="misprint")
    done = correct_fact(wb, facts["blood_pressure"]["fact_id"], by="dr.reviewer", value="130/80",
                        reason="cell misprinted, checked against the paper chart")
    assert done["fact_text"] == "BP 130/80 mmHg on 2026-02-11 10:05"
    assert (done["structured_value"]["systolic"], done["structured_value"]["diastolic"]) == ("130", "80")
    correct_fact(wb, facts["heart_rate"]["fact_id"], by="dr.reviewer", value="112", reason="extra digit")
    assert {(r["kind"], r["value"]) for r in chart_view(wb, patient["id"])["vital_signs"]} == {
        ("blood_pressure", "130/80"), ("heart_rate", "112")}
