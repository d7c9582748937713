"""A correction reaches every field a lab result carries (issue 26): test name and
reference range beside value, unit, date and flag. A new test name is checked as
promotion checks it (the vocabulary must know it, its unit must fit it, a code printed
for the old test is dropped); otherwise the correction is refused and the finding stays
in review. The audit says what changed in plain words."""

from __future__ import annotations

import pytest

from domain.errors import BadInput
from domain.policy.facts import review_rules
from core.services.review.audit_log import changes_words, decisions
from core.services.review.corrections import correct_fact
from core.services.review.decisions import review_queue
from core.services.review.facts import chart_view
from tests.support.pipeline import repeat_with_changed_value


def conflict_of(report):
    return next(f for f in report["facts"] if f["promotion_status"] == "conflict_needs_review")


def test_a_correction_of_the_reference_range_and_test_name_reaches_the_chart(wb):
    patient, row, report = repeat_with_changed_value(wb, "12.9")
    conflict = conflict_of(report)
    done = correct_fact(wb, conflict["fact_id"], by="dr.alice", test_name="White blood cells",
                        reference_range="3.5-10.5", reason="name and range misread", resolution="keep-both")
    assert done["before"] == {"test_name": row.test_name, "reference_range": row.reference_range}
    assert done["structured_value"]["test_name"] == "White blood cells"
    live = [r for r in chart_view(wb, patient["id"])["labs"] if r["reference_range"] == "3.5-10.5"]
    assert [(r["test_name"], r["value"]) for r in live] == [("White blood cells", "12.9")]
    summary = decisions(wb, patient["id"])[0]["summary"]
    assert f"test {row.test_name} → White blood cells; reference range {row.reference_range} → 3.5-10.5" in summary


def test_an_unknown_test_name_or_a_unit_that_does_not_fit_is_refused_and_stays_in_review(wb):
    patient, row, report = repeat_with_changed_value(wb, "12.9")
    conflict = conflict_of(report)
    with pytest.raises(BadInput, match="'Zorblium count' is not one the lab vocabulary knows") as err:
        correct_fact(wb, conflict["fact_id"], by="dr.alice", test_name="Zorblium count", reason="renamed")
    assert err.value.code == "correction_needs_review"
    with pytest.raises(BadInput, match="unusual for Hemoglobin A1c") as err:
        correct_fact(wb, conflict["fact_id"], by="dr.alice", test_name="Hemoglobin A1c", reason="renamed")
    with pytest.raises(BadInput, match="test name is blank"):
        correct_fact(wb, conflict["fact_id"], by="dr.alice", test_name="  ", reason="blank")
    assert conflict["fact_id"] in {f["fact_id"] for f in review_queue(wb, patient["id"])["facts"]}


def test_the_rule_drops_nothing_but_names_the_problem():
    value = {"test_name": "Sodium", "value": "139", "unit": "mmol/L"}
    assert review_rules.corrected_lab_problem(value, {"value": "139"}) is None  # name and unit untouched
    assert review_rules.corrected_lab_problem(value, {"test_name": "Sodium"}) is None
    assert "not one the lab vocabulary knows" in review_rules.corrected_lab_problem(
        {**value, "test_name": "Sodum-ish"}, {"test_name": "Sodum-ish"})
    assert "unusual" in review_rules.corrected_lab_problem({**value, "test_name": "Hemoglobin A1c"},
                                                          {"test_name": "Hemoglobin A1c"})


def test_changes_are_said_in_plain_words():
    assert changes_words({"unit": "mg/dL.", "reference_range": None, "loinc": "2160-0"},
                         {"unit": "mg/dL", "reference_range": "0.6-1.2", "loinc": None}) == \
        "unit mg/dL. → mg/dL; reference range 0.6-1.2 added; LOINC code 2160-0 removed"
    assert changes_words({"abnormal_flag": "critical_high"}, {"abnormal_flag": "high"}) == "flag critical high → high"
