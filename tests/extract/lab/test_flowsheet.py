"""A lab page printed as a flowsheet: one column per test, one row per sample date, a
row of units and a row of reference ranges under the header (a renal unit's trend).
Before extract/lab/flowsheet.py the reader found no result on such a page at all. The
layouts below were written after the rule, in other tests, units and spacing than
the one that showed the gap."""

from __future__ import annotations

from extract.coverage import unread_content
from extract.formats.pdf import normalize_pdf
from extract.lab.extractor import extract_lab
from golden.drawing import placed_text_pdf
from tests.support.synthetic import assert_page_citations_verify

COLS = [40, 150, 215, 280, 350, 430]


def _sheet(header: list[str], rows: list[list[str]], above: list[str] = (), below: list[str] = ()) -> bytes:
    lines = [(40, 40, "ANTICOAGULATION AND RENAL CLINIC - RESULTS TREND", 12, "hebo"),
             (40, 60, "Name: QUIGLEY, Desmond   DOB: 1961-04-17   MRN: 5520913")]
    y = 90
    for text_row in [header, *above, *rows]:
        lines += [(x, y, cell) for x, cell in zip(COLS, text_row) if cell]
        y += 14
    for sentence in below:
        y += 6
        lines.append((40, y, sentence))
    return placed_text_pdf(lines, width=612)


def _read(pdf: bytes):
    content = normalize_pdf(pdf)
    result = extract_lab(content, "documents:1")
    return content, result


def _by_test(result) -> dict[tuple[str, str], dict]:
    return {(f.structured_value["test_name"], f.structured_value["collection_date"]): f
            for f in result.facts if f.fact_type == "lab_result"}


def test_each_cell_is_a_result_of_its_rows_date_with_the_columns_unit_and_range():
    content, result = _read(_sheet(
        ["Date", "INR", "Potassium", "Creatinine", "Albumin", "Hb (g/L)"],
        [["2026-11-20", "2.4", "4.9", "97", "38", "131"],
         ["2026-11-27", "4.6 H", "5.9 H", "118 H", "35", "126 L"],
         ["2026-12-04", "2.9", "6.7 HH", "131 H", "", "122 L"]],
        above=[["Units", "", "mmol/L", "umol/L", "g/L", ""], ["Normal range", "2.0-3.0", "3.5-5.0", "60-110",
                                                              "35-50", "130-170"]]))
    found = _by_test(result)
    assert len(found) == 14  # three dates, five tests, the empty albumin cell no result
    k = found[("Potassium", "2026-12-04")].structured_value
    assert (k["value"], k["unit"], k["reference_range"], k["abnormal_flag"]) == ("6.7", "mmol/L", "3.5-5.0",
                                                                                 "critical_high")
    inr = found[("INR", "2026-11-27")].structured_value
    assert (inr["value"], inr["abnormal_flag"]) == ("4.6", "high")
    assert found[("Hb", "2026-11-20")].structured_value["unit"] == "g/L"  # from the header's bracket
    assert ("Albumin", "2026-12-04") not in found
    assert not [w for w in result.warnings if w.code in ("no_results_found", "no_collection_date")]
    checked = assert_page_citations_verify(content, result)
    assert found[("Creatinine", "2026-11-27")].citation.quote_or_value == "118 H"  # its own cell, boxed
    assert all(c.bounding_box is not None for c in checked)
    # Every value the page prints is cited: the guard reports nothing, the ranges row included.
    assert unread_content(content, result.facts) == []


def test_a_column_naming_no_known_test_and_a_word_under_a_test_go_to_a_person():
    _, result = _read(_sheet(
        ["Sample date", "Na", "K", "Lipaemia idx", ""],
        [["21/11/2026", "139", "haemolysed", "12", ""],
         ["28/11/2026", "137", "4.4", "9", ""]],
        below=["Results checked by the duty biochemist on 28/11/2026."]))
    texts = [(f.structured_value["test_name"], f.structured_value["value"], f.wants_review) for f in result.facts]
    assert ("Na", "139", False) in texts and ("K", "4.4", False) in texts
    held = {f.structured_value["value"]: f.review_reason for f in result.facts if f.wants_review}
    assert "'haemolysed' under the column 'K'" in held["haemolysed"]
    assert "names no test the reader knows" in held["12"]
    # The sentence under the table is no row of it.
    assert not [f for f in result.facts if "biochemist" in f.citation.quote_or_value]


def test_a_results_table_with_a_date_column_is_still_read_row_by_test():
    # "Test | Result | Units | Date": one test per row, not a flowsheet.
    _, result = _read(_sheet(
        ["Test", "Result", "Units", "Range", "Date"],
        [["Sodium", "139", "mmol/L", "135-145", "2026-12-01"], ["Potassium", "4.1", "mmol/L", "3.5-5.1",
                                                                 "2026-12-01"]]))
    assert [f.structured_value["test_name"] for f in result.facts] == ["Sodium", "Potassium"]


def test_an_anticoagulation_record_with_dose_and_next_test_columns_is_read():
    # Written on review, after the rule: one test and two other columns ("Date | INR |
    # Warfarin dose | Next test") had been no flowsheet at all, and no result was read.
    _, result = _read(_sheet(
        ["Date", "INR", "Warfarin dose", "Next test"],
        [["2026-11-10", "2.4", "5 mg daily", "2026-11-24"],
         ["2026-11-24", "3.8 H", "4 mg daily", "2026-12-01"]]))
    got = [(f.structured_value["test_name"], f.structured_value["value"], f.structured_value["collection_date"],
            f.structured_value["abnormal_flag"]) for f in result.facts]
    assert got == [("INR", "2.4", "2026-11-10", "unknown"), ("INR", "3.8", "2026-11-24", "high")]
