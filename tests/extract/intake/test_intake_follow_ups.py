"""A new-patient questionnaire written after the rules (issue 23): a yes/no question
whose follow-up label stands on the boxes' row ("[X] Yes  [ ] No   If yes, list them
and what happened:") with the list on the row below, family members told in sentences
("Mother - breast cancer at 62. Father - ..."), and a row of readings in the office-use
box without labels of the form's own ("BP 146/92   Pulse 88   SpO2 97%"). On the
held-out form the allergies went to review as "the box of an option could not be
read", the follow-up label became an allergy called "If yes, list them...", both
parents were one family-history item, and the readings were read by no one."""

from __future__ import annotations

import pytest

from domain.models import Certainty
from domain.policy.context.mentions import apply_to
from domain.policy.facts.certainty import classify
from extract.formats.pdf import normalize_pdf
from extract.intake.extractor import extract_intake
from extract.values.written_answers import is_follow_up, read_ticks
from golden.drawing import placed_text_pdf

HEAD = [(50, 50, "RIVERBEND MEDICAL CENTRE - PATIENT REGISTRATION", 12, "hebo"),
        (50, 76, "Surname: Okafor"), (300, 76, "Given names: Chinwe Ada"),
        (50, 92, "Date of birth: 21/07/1968"), (300, 92, "Record no: RB-40917")]


def _read(*rows):
    return extract_intake(normalize_pdf(placed_text_pdf([*HEAD, *rows])), "documents:5")


def _of(result, kind: str) -> list[dict]:
    return [f.structured_value for f in result.facts if f.fact_type == kind]


@pytest.mark.parametrize("boxes_row", [
    "[X] Yes   [ ] No        If so, please list with the reaction:",
    # the same questionnaire scanned: OCR joined the boxes and the follow-up into one
    # label, and the allergies under it had become a note called by that label
    "[X] Yes []No _ If yes, list them with the reaction:",
])
def test_a_list_under_a_ticked_yes_whose_follow_up_label_shares_the_boxes_row_is_the_answer(boxes_row):
    result = _read((50, 130, "Any drug or food allergies?", 10, "hebo"), (70, 146, boxes_row),
                   (70, 162, "Codeine - nausea; peanuts - anaphylaxis"))
    assert [(a["substance"], a["reaction"]) for a in _of(result, "allergy")] == [("Codeine", "nausea"),
                                                                                 ("peanuts", "anaphylaxis")]
    assert not [f for f in result.facts if "list" in str(f.structured_value).lower()]


def test_writing_under_a_ticked_no_is_a_contradiction_for_a_person():
    # the list answers the "Yes", which is not ticked; the "No" is
    ticks = read_ticks(["[", "]", "Yes", "[X]", "No", "Latex", "-", "rash"], [0, 0, 0, 0, 0, 1, 1, 1])
    assert ticks.problem == "tick boxes contradict each other"
    ticks = read_ticks(["[X]", "Yes", "[", "]", "No", "Latex", "-", "rash"], [0, 0, 0, 0, 0, 1, 1, 1])
    assert ticks.problem is None and {5, 6, 7} <= ticks.answer


def test_relatives_told_in_sentences_are_one_item_each():
    result = _read((50, 130, "Family history:"), (70, 146, "Brother - type 2 diabetes at 45. Sister - asthma."))
    assert [(f["relative"], f["condition"]) for f in _of(result, "family_history")] == [
        ("Brother", "type 2 diabetes at 45"), ("Sister", "asthma")]


def test_a_row_of_readings_without_labels_of_the_forms_own_gives_each_reading_for_review():
    for label in ("CLINIC USE ONLY", "Clinic use only:"):
        result = _read((50, 130, label, 10, "hebo"), (70, 146, "B/P 132/84     HR 64     Weight 80.5 kg"))
        readings = [f for f in result.facts if f.fact_type == "vital_sign"]
        assert [(f.structured_value["kind"], f.structured_value["value"]) for f in readings] == [
            ("blood_pressure", "132/84"), ("heart_rate", "64"), ("weight", "80.5")], label
        assert readings[0].citation.quote_or_value == "B/P 132/84"  # each reading cites its own words
        # a form gives no time of measurement: held for a person, never charted as read
        assert all(classify(apply_to(f), citation_verified=True, paged=True).certainty == Certainty.NEEDS_REVIEW
                   for f in readings)


def test_a_follow_up_label_as_ocr_reads_it():
    # faxed, the questionnaire's "If" came out as "{f"
    assert is_follow_up("{f yes, list them and what happened:") and is_follow_up("lf so, please specify:")
    assert not is_follow_up("lfenac gel twice daily")


def test_a_date_format_printed_after_the_colon_says_the_order_and_is_no_part_of_the_date():
    rows = [(50, 76, "Surname: Okafor"), (300, 76, "Given names: Chinwe Ada"),
            (50, 92, "Date of birth: (dd/mm/yyyy) 02/03/1950")]
    result = extract_intake(normalize_pdf(placed_text_pdf(rows)), "documents:6")
    assert {i.kind.value: i.value for i in result.identifiers}["dob"] == "1950-03-02"


def test_a_format_hint_whose_colon_ocr_read_as_a_stop_still_labels_the_date_of_birth():
    # The questionnaire faxed: "Date of birth (MM/DD/YYYY):" came out "... (MM/DD/YYYY)." and
    # the identity sweep named the birth date as printed but not read.
    from domain.content import NormalizedContent, PageContent, Word

    words, x = [], 50.0
    for text in ["Date", "of", "birth", "(MM/DD/YYYY).", "03/14/1951"]:
        words.append(Word(text, x, 100, x + 6 * len(text), 110, conf=0.9))
        x += 6 * len(text) + 5
    for i, w in enumerate(words):
        w.index = i
    result = extract_intake(NormalizedContent(source_kind="ocr", pages=[PageContent(1, 612, 792, words)]),
                            "documents:7")
    assert {i.kind.value: i.value for i in result.identifiers}.get("dob") == "1951-03-14"
