"""A unit printed with the test's name ("Sodium (mmol/L)" under "Analyte (units)"), and
what happens when a name spills into the unit column (issue 23, a held-out report).

Before: "(units)" in the header made a unit column inside the names, so "Total
cholesterol (mmol/L)" was charted as a test "Total" with the unit "cholesterol (mmol/L)"."""

from __future__ import annotations

import pytest

from extract.formats.pdf import normalize_pdf
from extract.lab.extractor import extract_lab
from extract.lab.rows import name_and_unit
from golden.drawing import placed_text_pdf


HEAD = [(40, 50, "Name: QUILLFEATHER, Rosamund", 9.5), (330, 50, "Born: 19/10/1950", 9.5),
        (40, 64, "UR No: 5580213", 9.5), (330, 64, "Collected: 27/11/2026", 9.5)]


def _pdf(header: list[tuple[float, str]], rows: list[list[tuple[float, str]]]) -> bytes:
    return placed_text_pdf([*HEAD, *((x, 100, text, 9.5, "hebo") for x, text in header),
                            *((x, 118 + 15 * n, text, 9.5) for n, cells in enumerate(rows) for x, text in cells)],
                           width=595)


def _facts(header, rows):
    return extract_lab(normalize_pdf(_pdf(header, rows)), "documents:3").facts


def test_the_unit_in_brackets_after_each_name_is_the_results_unit():
    facts = _facts([(40, "Test (Units)"), (230, "Result"), (300, "Flag"), (350, "Reference")], [
        [(40, "Magnesium (mmol/L)"), (230, "0.61"), (300, "L"), (350, "0.70-1.00")],
        [(40, "Total bilirubin (umol/L)"), (230, "27"), (300, "H"), (350, "<21")],
        [(40, "HbA1c (IFCC) (mmol/mol)"), (230, "61"), (300, "H"), (350, "20-41")],
        [(40, "Free T4 (pmol/L)"), (230, "14.2"), (350, "9.0-19.0")],
    ])
    got = [(f.structured_value["test_name"], f.structured_value["value"], f.structured_value["unit"],
            f.structured_value["abnormal_flag"]) for f in facts]
    assert got == [("Magnesium", "0.61", "mmol/L", "low"), ("Total bilirubin", "27", "umol/L", "high"),
                   ("HbA1c (IFCC)", "61", "mmol/mol", "high"), ("Free T4", "14.2", "pmol/L", "normal")]
    assert not any(f.wants_review for f in facts)


@pytest.mark.parametrize("name, split", [
    ("Sodium (mmol/L)", ("Sodium", "mmol/L")), ("HbA1c (IFCC)", ("HbA1c (IFCC)", "")),
    ("Cortisol (9am)", ("Cortisol (9am)", "")), ("eGFR (CKD-EPI)", ("eGFR (CKD-EPI)", "")),
    ("Haemoglobin", ("Haemoglobin", "")),
    # A cumulative table's row label: a known test, then its unit after a space.
    ("Potassium mmol/L", ("Potassium", "mmol/L")), ("eGFR mL/min/1.73m2", ("eGFR", "mL/min/1.73m2")),
    ("Neutrophils %", ("Neutrophils %", "")),  # the percentage is a test of its own
    ("Vitamin D", ("Vitamin D", "")), ("Hemoglobin A1c", ("Hemoglobin A1c", "")),
    ("Widgetase mmol/L", ("Widgetase mmol/L", "")),  # no test the vocabulary knows: left whole
])
def test_only_a_unit_in_the_brackets_is_taken_from_the_name(name, split):
    assert name_and_unit(name) == split


def test_a_cumulative_table_of_dates_alone_takes_each_rows_unit_from_its_label():
    """An Australian report's "PREVIOUS RESULTS": dates as the only headers, each row
    "Potassium mmol/L": before, charted under a test named "Potassium mmol/L", no unit."""
    facts = _facts([(40, ""), (200, "03/12/26"), (280, "18/09/26"), (360, "02/06/26")], [
        [(40, "Potassium mmol/L"), (200, "5.8"), (280, "5.1"), (360, "4.7")],
        [(40, "Creatinine umol/L"), (200, "162"), (280, "141"), (360, "118")],
    ])
    got = [(f.structured_value["test_name"], f.structured_value["value"], f.structured_value["unit"],
            f.structured_value["collection_date"]) for f in facts]
    assert got == [("Potassium", "5.8", "mmol/L", "2026-12-03"), ("Potassium", "5.1", "mmol/L", "2026-09-18"),
                   ("Potassium", "4.7", "mmol/L", "2026-06-02"), ("Creatinine", "162", "umol/L", "2026-12-03"),
                   ("Creatinine", "141", "umol/L", "2026-09-18"), ("Creatinine", "118", "umol/L", "2026-06-02")]


def test_a_comment_column_is_not_read_into_the_range():
    facts = _facts([(40, "Test"), (200, "Result"), (260, "Units"), (330, "Ref. Range"), (430, "Comment")], [
        [(40, "HbA1c"), (200, "58"), (260, "mmol/mol"), (330, "(<48)"), (430, "See note")],
    ])
    sv = facts[0].structured_value
    assert (sv["reference_range"], sv["abnormal_flag"]) == ("<48", "high")


def test_a_name_spilling_into_the_unit_column_sends_the_result_to_review():
    """A unit column whose cell reads as no unit ("cholesterol mmol/L") means the columns
    were not read as printed: the result waits for a person, it is never charted so."""
    facts = _facts([(40, "Test"), (120, "Units"), (230, "Result"), (350, "Reference")], [
        [(40, "Sodium"), (140, "mmol/L"), (230, "139"), (350, "135-145")],
        [(40, "Total serum cholesterol"), (160, "mmol/L"), (230, "5.1"), (350, "<5.5")],
    ])
    sodium, cholesterol = facts
    assert not sodium.wants_review
    assert cholesterol.wants_review and "which is no unit" in cholesterol.review_reason
