"""The correction form (ui/correction_form.py, AppTest): every field a lab result
carries, including its test and reference range; the confirmation says what changed in
plain words; an unknown test name is refused and the finding stays in review."""

from __future__ import annotations

from core.services.review.decisions import review_queue
from core.services.review.facts import chart_view
from tests.support.app_support import run_home
from tests.support.pipeline import repeat_with_changed_value


def open_correction(patient_id: int):
    at = run_home(patient_id=patient_id)
    at.switch_page("app_pages/review_queue.py").run()
    assert not at.exception, at.exception
    next(b for b in at.button if b.label == "Correct").click().run()
    return at


def field(at, label):
    return next(t for t in at.text_input if t.label == label)


def test_the_form_offers_every_field_and_says_what_changed(app_env):
    wb = app_env
    patient, row, _ = repeat_with_changed_value(wb, "12.9")
    at = open_correction(patient["id"])
    assert field(at, "Test").value == row.test_name and field(at, "Reference range").value == row.reference_range
    assert {"Value", "Unit", "Collection date (YYYY-MM-DD)", "What was misread"} <= {t.label for t in at.text_input}
    field(at, "Value").input("12.8")
    field(at, "Reference range").input("3.5-10.5")
    field(at, "What was misread").input("value and range misread")
    next(r for r in at.radio if r.label.startswith("If the corrected value still differs")).set_value("replace")
    next(b for b in at.button if b.label == "Save correction").click().run()
    assert not at.exception, at.exception
    shown = [s.value for s in at.success]
    assert any(f"value 12.9 → 12.8; reference range {row.reference_range} → 3.5-10.5" in s for s in shown), shown
    live = [r for r in chart_view(wb, patient["id"])["labs"] if r["test_name"] == row.test_name]
    assert [(r["value"], r["reference_range"]) for r in live] == [("12.8", "3.5-10.5")]


def test_an_unknown_test_name_is_refused_and_the_finding_stays_in_review(app_env):
    wb = app_env
    patient, row, report = repeat_with_changed_value(wb, "12.9")
    conflict = next(f for f in report["facts"] if f["promotion_status"] == "conflict_needs_review")
    at = open_correction(patient["id"])
    field(at, "Test").input("Zorblium count")
    field(at, "What was misread").input("name misread")
    next(b for b in at.button if b.label == "Save correction").click().run()
    assert not at.exception, at.exception
    assert any("'Zorblium count' is not one the lab vocabulary knows" in e.value for e in at.error), \
        [e.value for e in at.error]
    assert conflict["fact_id"] in {f["fact_id"] for f in review_queue(wb, patient["id"])["facts"]}
