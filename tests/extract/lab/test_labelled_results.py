"""Results written out with labelled parts rather than in columns (issue 23): the test's
name, then "Result: 6.2 mmol/L  Reference: 3.5 - 5.3 mmol/L  ** HIGH **" on its own row or
the same one, or spread over rows ("Your result:", then "Normal range:"). Each is read as a
whole line once its labels are left out, cited with every word of its rows; nothing is
read from a label row that does not print a result label."""

from __future__ import annotations

import dataclasses

import pytest

from domain.policy.facts.citations import verify_citations
from extract.coverage import unread_content
from extract.formats.pdf import normalize_pdf
from extract.lab.extractor import extract_lab
from extract.unread_identity import unread_identifiers
from golden.drawing import placed_text_pdf


HEAD = [(50, 50, "Westbrook Hospital Pathology"), (50, 70, "Patient: DUNMORE, Agnes"), (320, 70, "DOB: 23/05/1951"),
        (50, 84, "MRN: WB-204417"), (320, 84, "Collected: 01/12/2026 09:10")]


def _read(lines):
    content = normalize_pdf(placed_text_pdf(HEAD + lines))
    result = extract_lab(content, "documents:5")
    return content, result, [f.structured_value for f in result.facts]


def test_name_over_its_labelled_result_row():
    content, result, got = _read([
        (50, 120, "MAGNESIUM"), (70, 134, "Result: 0.58 mmol/L"), (250, 134, "Reference: 0.70 - 1.00 mmol/L"),
        (430, 134, "** LOW **"),
        (50, 160, "PHOSPHATE"), (70, 174, "Result: 1.12 mmol/L"), (250, 174, "Reference: 0.80 - 1.50 mmol/L"),
    ])
    assert [(g["test_name"], g["value"], g["unit"], g["reference_range"], g["abnormal_flag"]) for g in got] == [
        ("MAGNESIUM", "0.58", "mmol/L", "0.70 - 1.00", "low"), ("PHOSPHATE", "1.12", "mmol/L", "0.80 - 1.50", "normal")]
    assert all(g["collection_date"] == "2026-12-01" for g in got)
    quotes = [f.citation.quote_or_value for f in result.facts]
    assert quotes[0] == "MAGNESIUM Result: 0.58 mmol/L Reference: 0.70 - 1.00 mmol/L ** LOW **"
    assert all(c.verified for c in verify_citations([f.citation for f in result.facts], content))
    assert not any(f.wants_review for f in result.facts)
    assert unread_content(content, result.facts) == []


def test_labelled_parts_on_the_test_row_and_over_following_rows():
    content, result, got = _read([
        (50, 120, "Folate"), (150, 120, "Value: 2.1"), (240, 120, "Units: ug/L"), (330, 120, "Normal range: 3.9-26.8"),
        (480, 120, "Flag: L"),
        (50, 150, "Cortisol (9am)"), (70, 164, "Your result: 612 nmol/L"), (70, 178, "Normal range: 133 - 537 nmol/L"),
        (70, 192, "Flag: H"),
    ])
    assert [(g["test_name"], g["value"], g["unit"], g["reference_range"], g["abnormal_flag"]) for g in got] == [
        ("Folate", "2.1", "ug/L", "3.9-26.8", "low"), ("Cortisol (9am)", "612", "nmol/L", "133 - 537", "high")]
    assert all(c.verified for c in verify_citations([f.citation for f in result.facts], content))
    # A range under "Normal range:" is the result's, not an identifier left unread.
    assert unread_identifiers(content, result, "documents:5") == []
    assert unread_content(content, result.facts) == []


def test_a_labelled_row_without_a_range_is_held_for_review_not_charted():
    """"Result: 6.2 mmol/L" without its range is no whole result line: it is read as a
    result stated in running text, held for a person, never a chart value."""
    _, result, got = _read([(50, 120, "POTASSIUM"), (70, 134, "Result: 6.2 mmol/L")])
    assert [(g["value"], g["reference_range"]) for g in got] == [("6.2", "")]
    assert all(f.wants_review for f in result.facts)


def test_a_label_row_that_prints_no_result_label_is_not_a_result():
    _, _, got = _read([(50, 120, "Sodium"), (70, 134, "Reference: 133 - 146 mmol/L"),
                       (50, 160, "Specimen: serum"), (70, 174, "Comment: 135 - 145 on the old analyser")])
    assert got == []


@pytest.mark.parametrize("text", ["Comment: repeat FBC in 4 weeks, sooner if symptomatic.",
                                  "Comment: recheck HbA1c in 3 months."])
def test_the_guard_does_not_take_a_span_of_time_for_a_result(text):
    content, result, _ = _read([(50, 120, text)])
    assert result.facts == [] and unread_content(content, result.facts) == []


def test_seconds_stay_a_results_unit_for_the_guard():
    content, _, _ = _read([(50, 120, "Comment: PT 13.2 seconds on the repeat sample.")])
    regions = unread_content(content, [])  # with nothing read, the guard must report it
    assert regions and "13.2" in regions[0].text


def test_labels_whose_colons_ocr_dropped_or_set_apart_on_a_labelled_row():
    """OCR drops a label's colon ("Value 402") or reads it apart ("Normal range : 150-400");
    a row that still prints two labels with their colons is a labelled row all the same."""
    _, result, got = _read([
        (50, 120, "Platelets"), (150, 120, "Value 402"), (240, 120, "Units: x10^9/L"),
        (350, 120, "Normal range : 150-400"), (480, 120, "Flag: H"),
        (50, 150, "ALBUMIN"), (70, 164, "Result: 33 g/L"), (250, 164, "Reference: 35 - 50 g/L"), (430, 164, "LOW **"),
    ])
    assert [(g["test_name"], g["value"], g["unit"], g["reference_range"], g["abnormal_flag"]) for g in got] == [
        ("Platelets", "402", "x10^9/L", "150-400", "high"), ("ALBUMIN", "33", "g/L", "35 - 50", "low")]


def test_a_labelled_row_is_never_read_as_a_dotted_line_with_a_junk_leader():
    """The words between a labelled row's test name and its value are labels: a row the
    labelled rule cannot read whole is left to the prose rule and the guard, never read
    as "name, leader, value" with the labels in the test's name."""
    content = normalize_pdf(placed_text_pdf(HEAD + [(50, 120, "White cell count"), (150, 120, "Value: 129"),
                                         (240, 120, "Units x10^9/."), (350, 120, "Normal range: 4.0.1 10"),
                                         (480, 120, "I lag H")]))
    # As a fax's OCR read it: every word with a confidence, the labels and the range low.
    low = {"White", "Value:", "Units", "x10^9/.", "range:", "4.0.1", "10", "I", "lag"}
    for page in content.pages:
        page.words = [dataclasses.replace(w, conf=0.3 if w.text in low else 0.95) for w in page.words]
    result = extract_lab(content, "documents:5")
    got = [f.structured_value for f in result.facts]
    assert not any("Value" in g["test_name"] for g in got)
    assert all(f.wants_review for f in result.facts)


def test_the_guard_reports_a_labelled_row_whose_unit_label_lost_its_colon():
    """"402 Units x10^9/L" is a value and the label of its unit, not a dose of 402 units."""
    content, _, _ = _read([(50, 120, "Platelets Value: 402 Units x10^9/L Normal range: 150-400 Flag: H")])
    regions = unread_content(content, [])
    assert regions and "402" in regions[0].text


def test_a_scans_label_colons_read_as_other_marks_or_lost_after_a_result_label():
    """OCR reads a label's colon as ";" or "." or loses it ("Reference 133 - 146"): on a
    row that prints "Result:", the other labels count without theirs."""
    content = normalize_pdf(placed_text_pdf(HEAD + [(50, 120, "SODIUM"), (70, 134, "Result: 138 mmol/L"),
                                         (250, 134, "Reference 133 - 146 mmol/L"),
                                         (50, 160, "POTASSIUM"), (70, 174, "Result. 6.2 mmol/L"),
                                         (250, 174, "Reference; 3.5 - 5.3 mmol/L"), (430, 174, "** HIGH **")]))
    for page in content.pages:  # as a scan's OCR reads it
        page.words = [dataclasses.replace(w, conf=0.95) for w in page.words]
    got = [f.structured_value for f in extract_lab(content, "documents:5").facts]
    assert [(g["test_name"], g["value"], g["reference_range"], g["abnormal_flag"]) for g in got] == [
        ("SODIUM", "138", "133 - 146", "normal"), ("POTASSIUM", "6.2", "3.5 - 5.3", "high")]


def _as_ocr(lines, low=frozenset()):
    """The page as a scan's OCR gives it: every word with a confidence, ``low`` ones low."""
    content = normalize_pdf(placed_text_pdf(HEAD + lines))
    for page in content.pages:
        page.words = [dataclasses.replace(w, conf=0.3 if w.text in low else 0.95) for w in page.words]
    return content


def test_a_scans_stray_row_of_stars_glued_stars_and_an_unreadable_value():
    """What a 300 dpi scan of the golden layout gave: the stars of "** H **" read as a row
    of their own between the name and its parts ("*e **"), or glued to the flag ("H**"),
    and a value whose digit OCR lost ("{ .71"): read, read, and held for review by name."""
    content = _as_ocr([
        (50, 116, "Creatinine"), (70, 127, "*e **", 4), (70, 138, "Result: 187 umol/L"),
        (250, 138, "Reference: 45 - 84 umol/L"),
        (50, 160, "Potassium"), (70, 174, "Result: 5.9 mmol/L"), (250, 174, "Reference: 3.5 - 5.3 mmol/L"),
        (430, 174, "** H**"),
        (50, 200, "Phosphate"), (70, 214, "Result: { .71 mmol/L"), (250, 214, "Reference: 0.80 - 1.50 mmol/L"),
    ], low={"*e", "**", "H**", "{", ".71"})
    result = extract_lab(content, "documents:5")
    creatinine, potassium, phosphate = result.facts
    assert (creatinine.structured_value["test_name"], creatinine.structured_value["value"]) == ("Creatinine", "187")
    assert (potassium.structured_value["value"], potassium.structured_value["abnormal_flag"]) == ("5.9", "high")
    assert phosphate.structured_value["test_name"] == "Phosphate" and phosphate.wants_review
    assert "could not be read" in phosphate.review_reason
    assert all(c.verified for c in verify_citations([f.citation for f in result.facts], content))


def test_adjusted_calcium_is_a_test_of_its_own():
    _, result, got = _read([(50, 120, "Adjusted calcium"), (70, 134, "Result: 2.31 mmol/L"),
                            (250, 134, "Reference: 2.20 - 2.60 mmol/L")])
    assert [(g["test_name"], g["value"]) for g in got] == [("Adjusted calcium", "2.31")]
    assert not result.facts[0].wants_review


def test_the_guard_reports_a_labelled_value_no_rule_read_with_the_name_above_it():
    """A fax garbled the unit ("mL/min/1 73m2") so no rule reads the row; the value after
    "Result:" is a result all the same, reported with its test's name from the row above."""
    content = _as_ocr([(50, 120, "eGFR"), (70, 134, "Result; 22 mL/min/1 73m2"), (250, 134, "Reference +> 60"),
                       (50, 160, "TSH"), (70, 174, "Your result 7.8 mU/L")], low={"Result;", "+>"})
    regions = [r.text for r in unread_content(content, extract_lab(content, "documents:5").facts)]
    assert any(r.startswith("eGFR Result; 22") for r in regions), regions
    assert any(r.startswith("TSH Your result 7.8") for r in regions), regions


def test_a_label_before_the_tests_own_name_is_not_part_of_it():
    """Written after the rule, as a check of it: "Test: Sodium  Result: ...  Range: ...";
    the name is "Sodium", the quote keeps the label as printed."""
    content, result, got = _read([(50, 120, "Test: Sodium"), (170, 120, "Result: 129 mmol/L"),
                                  (300, 120, "Range: 135-145"), (420, 120, "Flag: Low")])
    assert [(g["test_name"], g["value"], g["reference_range"], g["abnormal_flag"]) for g in got] == [
        ("Sodium", "129", "135-145", "low")]
    assert result.facts[0].citation.quote_or_value.startswith("Test: Sodium")
    assert not result.facts[0].wants_review
