"""Lab sheets with one column per test and one row per sample date. Every layout here
was written after the rule (``extract.values.wide_results``), none is the guard's layout:
units in the header or a row of their own, ranges on a row, flags beside values, a
column no reader knows, and near misses that must give no result."""

from __future__ import annotations

from datetime import datetime

from extract.coverage import unread_content
from extract.formats.office.xlsx import normalize_xlsx
from extract.workbook.extractor import extract_workbook
from tests.support.extract_support import of_type, read_and_extract
from tests.support.file_builders import sheets_workbook

SOURCE = "documents:45"
ID_ROWS = [["Patient", "Tobiah Okonkwo-Lund"], ["D.O.B.", "1949-12-02"], ["Hospital no", "TL-90312"]]


def run(sheets):
    return read_and_extract(sheets_workbook(sheets), normalize_xlsx, extract_workbook, SOURCE)


def labs(result) -> dict[tuple[str, str | None], dict]:
    return {(f.structured_value["test_name"], f.structured_value["collection_date"]): f.structured_value | {
        "_loc": f.citation.page_or_section, "_quote": f.citation.quote_or_value, "_review": f.wants_review}
        for f in of_type(result, "lab_result")}


def test_units_in_the_header_and_real_dates_give_one_result_per_cell_cited_to_it():
    content, result = run({"Bloods": ID_ROWS + [
        [], ["Date taken", "Hb (g/L)", "WCC (x10^9/L)", "Plt (x10^9/L)", "CRP (mg/L)", "Fibroscan (kPa)"],
        [datetime(2025, 11, 2), 131, 7.2, 254, 3, 6.1],
        [datetime(2025, 11, 20), 118, 14.6, 402, 88, 7.9],
    ]})
    got = labs(result)
    assert len(got) == 8  # "WCC", the British white cell count, is read (it was not, before the vocabulary had it)
    # "Fibroscan" is no name the analyte vocabulary knows: reported, not guessed
    assert any("Bloods!F6, F7" in w.message and "'Fibroscan (kPa)'" in w.message
               for w in result.warnings if w.code == "xlsx_result_not_read")
    crp = got[("CRP", "2025-11-20")]
    assert (crp["value"], crp["unit"], crp["_loc"], crp["_quote"]) == ("88", "mg/L", "Bloods!E7", "88")
    assert got[("Hb", "2025-11-02")]["unit"] == "g/L" and got[("Plt", "2025-11-20")]["value"] == "402"
    assert not any(v["_review"] for v in got.values())
    assert unread_content(content, result.facts) == []


def test_a_units_row_a_range_row_and_printed_flags():
    content, result = run({"Renal": ID_ROWS + [
        ["Collected", "Sodium", "Potassium", "eGFR"],
        ["units", "mmol/L", "mmol/L", "mL/min/1.73m2"],
        ["Normal range", "133-146", "3.5-5.3", ">60"],
        ["14/09/2025", "131 L", "6.2H", "41"],
        ["30/09/2025", "136", "4.8", "47"],
    ]})
    got = labs(result)
    k = got[("Potassium", "2025-09-14")]
    assert (k["value"], k["unit"], k["reference_range"], k["abnormal_flag"], k["_quote"]) == (
        "6.2", "mmol/L", "3.5-5.3", "high", "6.2H")
    assert got[("Sodium", "2025-09-14")]["abnormal_flag"] == "low"
    assert got[("Potassium", "2025-09-30")]["abnormal_flag"] == "normal"
    assert got[("eGFR", "2025-09-30")]["unit"] == "mL/min/1.73m2"
    assert len(got) == 6
    # The guard (not this reader) takes the range row's one-sided ">60" for a value.
    assert [r.locator for r in unread_content(content, result.facts)] in ([], ["Renal!A6:D6"])


def test_a_header_naming_no_known_test_is_reported_not_guessed():
    content, result = run({"Trend": ID_ROWS + [
        ["Sample date", "Na", "K", "Zorbitol index", "Comment"],
        ["2026-01-05", 140, 4.1, 17, "routine"],
        ["2026-01-12", 138, 4.4, 19, None],
    ]})
    got = labs(result)
    assert sorted(got) == [("K", "2026-01-05"), ("K", "2026-01-12"), ("Na", "2026-01-05"), ("Na", "2026-01-12")]
    said = [w.message for w in result.warnings if w.code == "xlsx_result_not_read"]
    assert len(said) == 1 and "Trend!D5, D6" in said[0] and "'Zorbitol index'" in said[0]


def test_a_word_under_a_test_and_a_row_without_a_date_are_not_charted_quietly():
    _, result = run({"Sheet1": ID_ROWS + [
        ["Date", "Na", "K"],
        ["2026-02-01", 137, "haemolysed"],
        ["", 139, 4.0],
    ]})
    got = labs(result)
    assert ("Na", "2026-02-01") in got and ("K", "2026-02-01") not in got
    assert all(v["_review"] for (name, date), v in got.items() if date is None)
    assert any("'K'" in w.message for w in result.warnings if w.code == "xlsx_result_not_read")


def test_the_table_ends_where_its_dates_end_and_near_misses_give_no_result():
    _, result = run({"Clinic": ID_ROWS + [
        ["Date", "Creatinine", "Urea"],
        ["2026-03-01", 88, 6.1],
        ["Stock item", "Sodium chloride 0.9%", "Potassium tablets"],
        ["Gloves", 400, 120],
    ], "Stock": [["Item", "Count", "Checked"], ["Potassium chloride tablets", 60, "2026-03-01"],
                 ["Sodium bicarbonate 8.4%", 12, "2026-03-01"]],
        "Contacts": [["Date", "Phone", "Extension"], ["2026-03-02", "(0131) 496 0552", 2217],
                     ["2026-03-09", "0161 555 0199", 3012]]})
    assert sorted(labs(result)) == [("Creatinine", "2026-03-01"), ("Urea", "2026-03-01")]


def test_a_date_column_settles_its_ambiguous_dates_one_way():
    # 05/10/2025 alone could be 5 October or 10 May; 21/10/2025 beside it says day-first.
    _, result = run({"Lipids": ID_ROWS + [
        ["Date", "Cholesterol", "LDL", "HDL"],
        ["05/10/2025", 6.1, 4.0, 1.1],
        ["21/10/2025", 5.2, 3.1, 1.2],
    ]})
    got = labs(result)
    assert {d for _, d in got} == {"2025-10-05", "2025-10-21"}
    assert not any("date" in (f.review_reason or "") for f in of_type(result, "lab_result"))
    # Month-first evidence (10/21/2025) reads 11/05/2025 as 5 November.
    _, result = run({"Lipids": ID_ROWS + [
        ["Date", "Cholesterol", "LDL", "HDL"], ["11/05/2025", 6.1, 4.0, 1.1], ["10/21/2025", 5.2, 3.1, 1.2]]})
    assert {d for _, d in labs(result)} == {"2025-11-05", "2025-10-21"}


def test_tests_beside_vital_signs_in_one_column_per_item_table():
    content, result = run({"Diabetes review": ID_ROWS + [
        ["Seen", "Weight (kg)", "BP", "HbA1c (mmol/mol)", "Chol", "Foot pulses"],
        ["2026-01-10", 88.2, "142/88", 71, 5.9, 2],
        ["2026-04-11", 86.0, "136/82", 64, 5.1, 2],
    ]})
    got = labs(result)
    assert sorted(got) == [("Chol", "2026-01-10"), ("Chol", "2026-04-11"), ("HbA1c", "2026-01-10"),
                           ("HbA1c", "2026-04-11")]
    assert got[("HbA1c", "2026-04-11")]["unit"] == "mmol/mol" and got[("HbA1c", "2026-04-11")]["_loc"] == \
        "Diabetes review!D6"
    assert len(of_type(result, "vital_sign")) == 4
    said = " ".join(w.message for w in result.warnings)
    assert "'Foot pulses'" in said and "HbA1c" not in said and "Chol" not in said
    assert unread_content(content, result.facts) == []


def test_without_any_unit_a_column_named_like_a_test_is_held_for_review():
    # A dispensing tally whose headers happen to name tests: read, never charted unseen.
    _, result = run({"Dispensed": ID_ROWS + [
        ["Date", "Iron", "Magnesium", "INR"], ["2026-05-04", 30, 60, 2.4]]})
    got = labs(result)
    assert got[("Iron", "2026-05-04")]["_review"] and got[("Magnesium", "2026-05-04")]["_review"]
    assert not got[("INR", "2026-05-04")]["_review"]  # INR has no unit to miss


def test_one_test_column_beside_a_date_with_each_rows_own_target_range():
    # An anticoagulation clinic's log (written after the rule): "Date | INR | Target range |
    # Warfarin dose | Next test | Comment". One test column is a table; the target printed
    # on each row is that row's reference range; the dose column is reported, not guessed.
    _, result = run({"INR log": ID_ROWS + [
        ["Date", "INR", "Target range", "Warfarin dose (mg/day)", "Next test", "Comment"],
        [datetime(2026, 10, 6), 2.4, "2.0-3.0", 4, datetime(2026, 10, 27), ""],
        [datetime(2026, 10, 27), 3.6, "2.5-3.5", 3.5, datetime(2026, 11, 3), "omit one dose"],
        [datetime(2026, 11, 24), 1.7, "2.0-3.0", 4, datetime(2026, 12, 1), "missed doses"]]})
    got = labs(result)
    assert {k: (v["value"], v["reference_range"], v["abnormal_flag"]) for k, v in got.items()} == {
        ("INR", "2026-10-06"): ("2.4", "2.0-3.0", "normal"),
        ("INR", "2026-10-27"): ("3.6", "2.5-3.5", "high"),
        ("INR", "2026-11-24"): ("1.7", "2.0-3.0", "low")}
    assert any("'Warfarin dose (mg/day)'" in w.message for w in result.warnings if w.code == "xlsx_result_not_read")


def test_one_test_name_among_many_other_headers_is_no_table():
    _, result = run({"Rota": ID_ROWS + [
        ["Date", "Ward", "Bed", "Nurse", "Porter", "Glucose meter", "Shift"],
        [datetime(2026, 10, 6), "7B", 12, "AK", "JD", "GM-4", "Late"]]})
    assert labs(result) == {}


def test_a_urinalysis_heading_row_or_sheet_makes_its_results_the_urines():
    # Written after the rule (a held-out report charted a dipstick's "Glucose Negative" as
    # a blood glucose): a heading row inside a results table, and a sheet named for the specimen.
    from domain.policy.facts.analytes import canonical_analyte

    _, result = run({"Bloods": ID_ROWS + [
        ["Collected", "2026-10-01"], ["Test", "Result", "Units", "Range"], ["Glucose", 9.4, "mmol/L", "3.9-7.8"],
        ["Urinalysis"], ["Glucose", "Negative", "", "Negative"], ["Protein", "++", "", "Negative"],
        ["Chemistry"], ["Potassium", 4.1, "mmol/L", "3.5-5.3"]],
        "Urine dipstick": [["Test", "Result", "Range"], ["Blood", "+", "Negative"]]})
    assert [(f.structured_value["test_name"], canonical_analyte(f.structured_value["test_name"]))
            for f in of_type(result, "lab_result")] == [
        ("Glucose", "glucose"), ("Glucose (urine)", "urine_glucose"), ("Protein (urine)", "urine_protein"),
        ("Potassium", "potassium"), ("Blood (urine)", "urine_blood")]
