"""A report printing each test's previous result beside today's ("Previous 12/10/2026"):
the previous value is a result of its own date, not words the guard must report. A
held-out renal report's six previous values were "not read"; this layout (the label
"Last result", the date after it, other tests and spacing) was written after the rule."""

from __future__ import annotations

from extract.coverage import unread_content
from tests.support.synthetic import read_lab_table


def test_a_dated_previous_column_gives_each_test_a_result_of_that_date():
    content, result = read_lab_table(
        "HARBOURSIDE LABORATORIES",
        "Patient: NAKASHIMA-REID, Oren   DOB: 1966-02-03   MRN: HL-22071   Collected: 2026-11-30 09:15",
        [45, 185, 245, 375, 450], ["Analyte", "Result", "Last result 28/09/2026", "Units", "Range"],
        [["ALT", "88", "41", "U/L", "7-56"], ["Bilirubin", "19", "", "umol/L", "<21"], ["Albumin", "31", "36", "g/L", "35-50"]])
    got = {(f.structured_value["test_name"], f.structured_value["collection_date"]): f for f in result.facts}
    assert sorted(got) == [("ALT", "2026-09-28"), ("ALT", "2026-11-30"), ("Albumin", "2026-09-28"),
                           ("Albumin", "2026-11-30"), ("Bilirubin", "2026-11-30")]
    assert got[("ALT", "2026-09-28")].structured_value["value"] == "41"
    assert got[("Albumin", "2026-11-30")].structured_value["abnormal_flag"] == "low"
    assert not any(f.wants_review for f in got.values())
    assert unread_content(content, result.facts) == []


def test_a_share_and_a_comment_column_beside_a_previous_column():
    # Written in the review of the change: the share was read only on tables without a
    # dated column, and a Comments cell was quoted with the row's numbers and unit.
    content, result = read_lab_table(
        "COASTAL PATHOLOGY", "Patient: ODUYA, Femi   DOB: 1980-05-05   MRN: CP-1122   Collected: 2026-11-20 07:00",
        [45, 170, 230, 300, 400, 480], ["Test", "Result", "Percent", "Prior (01/10/2026)", "Units", "Comments"],
        [["Neutrophils", "6.1", "70", "5.2", "x10^9/L", ""], ["Triglycerides", "9.8", "", "2.1", "mmol/L", "Lipaemic sample"]])
    got = {(f.structured_value["test_name"], f.structured_value["collection_date"]): f for f in result.facts}
    share = got[("Neutrophils %", "2026-11-20")].structured_value
    assert (share["value"], share["unit"]) == ("70", "%")
    reason = got[("Triglycerides", "2026-11-20")].review_reason
    assert reason.endswith("may not be valid: 'Lipaemic sample'")
    assert not got[("Neutrophils", "2026-11-20")].wants_review
    assert unread_content(content, result.facts) == []
