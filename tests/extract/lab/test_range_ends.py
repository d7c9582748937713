"""A reference range printed as its two ends in columns of their own ("Ref Low | Ref
High", as EHR exports print it), joined into one range (issue 23, a held-out report);
critical limits printed the same way are never taken for the range."""

from __future__ import annotations

from extract.formats.pdf import normalize_pdf
from extract.lab.extractor import extract_lab
from golden.drawing import placed_text_pdf


HEAD = [(40, 50, "Patient Name: Whitcombe, Harriet L", 9), (330, 50, "Date of Birth: 04/19/1963", 9),
        (40, 64, "Patient ID: MHN-00482217", 9), (330, 64, "Specimen Collected: 11/30/2026 06:45", 9)]


def _facts(header: list[tuple[float, str]], rows: list[list[tuple[float, str]]]):
    content = normalize_pdf(placed_text_pdf(
        [*HEAD, *((x, 100, text, 9, "hebo") for x, text in header),
         *((x, 118 + 14 * n, text, 9) for n, cells in enumerate(rows) for x, text in cells)], height=792))
    return [(f.structured_value["test_name"], f.structured_value["value"], f.structured_value["reference_range"],
             f.structured_value["abnormal_flag"], f.wants_review) for f in extract_lab(content, "documents:4").facts]


def test_the_two_ends_are_one_range_and_one_end_alone_a_bound():
    got = _facts([(40, "Component"), (200, "Value"), (260, "Units"), (330, "Ref Low"), (390, "Ref High"),
                  (455, "Flag")], [
        [(40, "Hemoglobin"), (200, "10.9"), (260, "g/dL"), (330, "12.0"), (390, "15.5"), (455, "L")],
        [(40, "TIBC"), (200, "462"), (260, "ug/dL"), (330, "250"), (390, "450"), (455, "H")],
        [(40, "Ferritin"), (200, "9"), (260, "ng/mL"), (330, "15"), (455, "L")],
        [(40, "ALT"), (200, "22"), (260, "U/L"), (390, "40")],
    ])
    assert got == [("Hemoglobin", "10.9", "12.0-15.5", "low", False), ("TIBC", "462", "250-450", "high", False),
                   ("Ferritin", "9", ">=15", "low", False), ("ALT", "22", "<=40", "normal", False)]


def test_critical_limits_printed_as_two_ends_are_never_the_reference_range():
    got = _facts([(40, "Test"), (170, "Result"), (230, "Units"), (290, "Range"), (370, "Critical Low"),
                  (450, "Critical High")], [
        [(40, "Potassium"), (170, "5.8"), (230, "mmol/L"), (290, "3.5-5.1"), (370, "2.5"), (450, "6.5")],
    ])
    assert [(name, value, rng, flag) for name, value, rng, flag, _ in got] == [
        ("Potassium", "5.8", "3.5-5.1", "high")]


def test_in_range_and_out_of_range_columns_with_units_inside_the_range():
    # A held-out US report: the value stands in "In Range" or "Out Of Range" (with its
    # flag), and the unit is printed inside the reference range, which spells ">=" as
    # "> OR =" and says what a percentage is a share of.
    content = normalize_pdf(placed_text_pdf(
        [*HEAD, *((x, 100, text, 9, "hebo") for x, text in [(40, "Test Name"), (220, "In Range"),
                                                             (290, "Out Of Range"), (380, "Reference Range"),
                                                             (530, "Lab")]),
         *((x, 118 + 14 * n, text, 9) for n, cells in enumerate([
             [(40, "EGFR"), (290, "43 L"), (380, "> OR = 60 mL/min/1.73m2"), (530, "NG")],
             [(40, "HEMOGLOBIN A1c"), (290, "7.4 H"), (380, "<5.7 % of total Hgb"), (530, "NG")],
             [(40, "GLUCOSE"), (220, "88"), (380, "65-99 mg/dL"), (530, "NG")],
             [(40, "LDL-CHOLESTEROL"), (220, "91"), (380, "< OR = 99 mg/dL"), (530, "NG")],
         ]) for x, text in cells)], height=792))
    got = [(f.structured_value["test_name"], f.structured_value["value"], f.structured_value["unit"],
            f.structured_value["reference_range"], f.structured_value["abnormal_flag"])
           for f in extract_lab(content, "documents:4").facts]
    assert got == [("EGFR", "43", "mL/min/1.73m2", ">=60", "low"), ("HEMOGLOBIN A1c", "7.4", "%", "<5.7", "high"),
                   ("GLUCOSE", "88", "mg/dL", "65-99", "normal"), ("LDL-CHOLESTEROL", "91", "mg/dL", "<=99", "normal")]
