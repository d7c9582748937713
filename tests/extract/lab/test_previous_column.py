"""A report printing each test's previous result beside today's ("Previous 12/10/2026"):
the previous value is a result of its own date, not words the guard must report. A
held-out renal report's six previous values were "not read"; this layout (the label
"Last result", the date after it, other tests and spacing) was written after the rule."""

from __future__ import annotations

from extract.coverage import unread_content
from extract.formats.pdf import normalize_pdf
from extract.lab.extractor import extract_lab
from golden.drawing import placed_text_pdf
from tests.support.synthetic import assert_page_citations_verify


def test_a_dated_previous_column_gives_each_test_a_result_of_that_date():
    cols = [45, 185, 245, 375, 450]
    rows = [["ALT", "88", "41", "U/L", "7-56"], ["Bilirubin", "19", "", "umol/L", "<21"], ["Albumin", "31", "36", "g/L", "35-50"]]
    lines = [(45, 40, "HARBOURSIDE LABORATORIES", 12, "hebo"),
             (45, 58, "Patient: NAKASHIMA-REID, Oren   DOB: 1966-02-03   MRN: HL-22071   Collected: 2026-11-30 09:15"),
             *[(x, 80, h) for x, h in zip(cols, ["Analyte", "Result", "Last result 28/09/2026", "Units", "Range"])]]
    for i, row in enumerate(rows):
        lines += [(x, 96 + 14 * i, cell) for x, cell in zip(cols, row) if cell]
    content = normalize_pdf(placed_text_pdf(lines, width=612))
    result = extract_lab(content, "documents:5")
    assert_page_citations_verify(content, result)
    got = {(f.structured_value["test_name"], f.structured_value["collection_date"]): f for f in result.facts}
    assert sorted(got) == [("ALT", "2026-09-28"), ("ALT", "2026-11-30"), ("Albumin", "2026-09-28"),
                           ("Albumin", "2026-11-30"), ("Bilirubin", "2026-11-30")]
    assert got[("ALT", "2026-09-28")].structured_value["value"] == "41"
    assert got[("Albumin", "2026-11-30")].structured_value["abnormal_flag"] == "low"
    assert not any(f.wants_review for f in got.values())
    assert unread_content(content, result.facts) == []
