"""Vital signs as policy (pure): labels as printed, plausible ranges, what keeps a
reading from the chart, how two documents' copies of one reading are one, and which
questions ask for which sign."""

import pytest

from domain.models import VALUE_MODELS, Certainty, Citation, FactProposal, VitalSignValue
from domain.policy.facts.certainty import classify
from domain.policy.facts.chart_rules import CHART_DESTINATIONS, held_for_item_review
from domain.policy.facts.fingerprints import clinical_content_fingerprint, clinical_key
from domain.policy.facts.vital_signs import implausible, sign_of_label, summary, unit_from_magnitude
from domain.policy.questions.intent import parse_question
from domain.policy.questions.topics import topics_of


def vital(kind="blood_pressure", value="152/94", unit="mmHg", measured_at="2025-11-02 08:40", confidence=0.92,
          **extra) -> FactProposal:
    parts = dict(zip(("systolic", "diastolic"), value.split("/"))) if kind == "blood_pressure" else {}
    structured = VitalSignValue(kind=kind, value=value, unit=unit, measured_at=measured_at, **parts).model_dump()
    return FactProposal(fact_type="vital_sign", fact_text=summary(kind, value, unit), structured_value=structured,
                        citation=Citation(source_type="clinical_workbook", source_id="documents:3",
                                          page_or_section="Obs!A2:F2", field_or_chunk_id="vital_signs[0]",
                                          quote_or_value=value), confidence=confidence, **extra)


@pytest.mark.parametrize("label, kind, unit", [
    ("BP", "blood_pressure", ""), ("B/P", "blood_pressure", ""), ("Blood pressure", "blood_pressure", ""),
    ("HR", "heart_rate", ""), ("Pulse (bpm)", "heart_rate", "/min"), ("T", "temperature", ""),
    ("Temp °C", "temperature", "°C"), ("O2 sat", "spo2", ""), ("SpO2 (%)", "spo2", "%"), ("Wt", "weight", ""),
    # a label listed whole with its unit still gives the unit: "Weight (kg)" was a weight of no unit, held
    ("Weight (kg)", "weight", "kg"),
    ("Weight (lbs)", "weight", "lb"), ("Ht", "height", ""), ("BMI", "bmi", ""), ("Systolic", "systolic", ""),
    ("DBP", "diastolic", ""), ("Respirations:", "respiratory_rate", ""),
])
def test_printed_labels_name_their_sign(label, kind, unit):
    assert sign_of_label(label) == (kind, unit)


@pytest.mark.parametrize("label", ["Potassium", "Temp site", "BP cuff size", "Pain score", "Test", "Patient"])
def test_other_labels_name_no_sign(label):
    assert sign_of_label(label) is None


@pytest.mark.parametrize("kind, value, unit, parts, bad", [
    ("heart_rate", "112", "/min", (), False), ("heart_rate", "1120", "/min", (), True),
    ("temperature", "37.9", "°C", (), False), ("temperature", "379", "°C", (), True),
    ("temperature", "99.5", "°F", (), False), ("spo2", "101", "%", (), True),
    ("weight", "82", "kg", (), False), ("weight", "82", "stone", (), True),
    ("blood_pressure", "152/94", "mmHg", ("152", "94"), False),
    ("blood_pressure", "94/152", "mmHg", ("94", "152"), True),
    ("blood_pressure", "15/9", "mmHg", ("15", "9"), True),
])
def test_plausible_ranges(kind, value, unit, parts, bad):
    assert (implausible(kind, value, unit, *parts) is not None) is bad


def test_a_unit_is_read_from_the_size_only_when_one_unit_fits():
    assert unit_from_magnitude("temperature", 37.2) == "°C"
    assert unit_from_magnitude("temperature", 98.4) == "°F"
    assert unit_from_magnitude("weight", 70) is None  # kg or lb


def test_a_complete_plausible_reading_is_verified_and_goes_to_its_own_chart_table():
    assert classify(vital(), citation_verified=True, paged=False).certainty is Certainty.VERIFIED
    assert CHART_DESTINATIONS["vital_sign"][0] == "chart_vital_signs"
    assert VALUE_MODELS["vital_sign"] is VitalSignValue
    assert held_for_item_review(vital().model_dump()) is None


@pytest.mark.parametrize("proposal, reason", [
    (vital(measured_at=None), "missing date"), (vital(unit=""), "missing unit"),
    (vital("heart_rate", "1120", "/min"), "plausible range"), (vital(kind="gait_speed", value="1.1", unit="m/s"),
                                                               "not a known vital sign"),
    (vital(confidence=0.5), "low confidence"),
])
def test_an_incomplete_implausible_or_unsure_reading_goes_to_review(proposal, reason):
    out = classify(proposal, citation_verified=True, paged=False)
    assert out.certainty is Certainty.NEEDS_REVIEW and reason in out.reason


def test_the_same_reading_from_two_documents_is_one_and_another_value_at_that_time_conflicts():
    a, b = vital().structured_value, vital().structured_value | {"label": "B/P"}
    assert clinical_content_fingerprint(7, "vital_sign", a, "") == clinical_content_fingerprint(7, "vital_sign", b, "")
    other = vital(value="150/90").structured_value
    assert clinical_key(7, "vital_sign", a, "") == clinical_key(7, "vital_sign", other, "")
    assert clinical_content_fingerprint(7, "vital_sign", a, "") != clinical_content_fingerprint(7, "vital_sign", other, "")
    later = vital(measured_at="2025-11-02 20:10").structured_value
    assert clinical_key(7, "vital_sign", a, "") != clinical_key(7, "vital_sign", later, "")


@pytest.mark.parametrize("question, topic", [
    ("What is her blood pressure?", "blood_pressure"), ("What was his BP yesterday?", "blood_pressure"),
    ("What was his pulse?", "pulse"), ("heart rate?", "pulse"), ("How fast is her breathing rate?", "respiratory_rate"), ("Any high temperature?", "temperature"),
    ("What are her sats?", "oxygen_saturation"), ("How much does he weigh?", "weight"), ("What is her BMI?", "bmi"),
    ("Show me his vital signs", "vitals"),
])
def test_questions_about_a_sign_name_its_topic(question, topic):
    assert topic in parse_question(question).topics


def test_a_24_hr_urine_is_no_question_about_the_pulse():
    assert "pulse" not in parse_question("What was his 24 hr urine protein?").topics


def test_a_reading_is_about_its_sign_and_the_vitals():
    assert topics_of("vital_sign", {"kind": "heart_rate"}, "Pulse 112 /min") == {"pulse", "vitals"}
    assert "blood_pressure" in topics_of("vital_sign", {"kind": "blood_pressure"}, "BP 152/94 mmHg")


def test_a_readings_one_line_text_names_height_and_weight_in_plain_words():
    # the review queue showed a form's readings as "Ht 164 cm" and "Wt 71.5 kg"
    assert summary("height", "164", "cm") == "Height 164 cm"
    assert summary("weight", "71.5", "kg") == "Weight 71.5 kg"
    assert summary("blood_pressure", "128/82", "mmHg") == "BP 128/82 mmHg"  # the abbreviation every chart uses
