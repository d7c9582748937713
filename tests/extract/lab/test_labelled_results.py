"""Results written out with labelled parts rather than in columns (issue 23): the test's
name, then "Result: 6.2 mmol/L  Reference: 3.5 - 5.3 mmol/L  ** HIGH **" on its own row or
the same one, or spread over rows ("Your result:", then "Normal range:"). Each is read as a
whole line once its labels are left out, cited with every word of its rows; nothing is
read from a label row that does not print a result label."""

from __future__ import annotations

import pymupdf
import pytest

from domain.policy.facts.citations import verify_citations
from extract.coverage import unread_content
from extract.formats.pdf import normalize_pdf
from extract.lab.extractor import extract_lab
from extract.unread_identity import unread_identifiers


def _pdf(lines: list[tuple[float, float, str]]) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    for x, y, text in lines:
        page.insert_text((x, y), text, fontsize=10, fontname="helv")
    data = doc.tobytes()
    doc.close()
    return data


HEAD = [(50, 50, "Westbrook Hospital Pathology"), (50, 70, "Patient: DUNMORE, Agnes"), (320, 70, "DOB: 23/05/1951"),
        (50, 84, "MRN: WB-204417"), (320, 84, "Collected: 01/12/2026 09:10")]


def _read(lines):
    content = normalize_pdf(_pdf(HEAD + lines))
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
