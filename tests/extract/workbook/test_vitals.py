"""Vital signs read from workbooks: a column per sign, a row per sign, a lab table's
vital-sign rows, and every sheet or cell the reader could not make sense of reported.
The layouts here were written after the rules, none of them in the golden set."""

from __future__ import annotations

from datetime import datetime

from extract.formats.office.xlsx import normalize_xlsx
from extract.workbook.extractor import extract_workbook
from tests.support.extract_support import of_type, read_and_extract
from tests.support.file_builders import sheets_workbook

SOURCE = "documents:44"
ID_SHEET = [["Patient name", "Iolanthe Brzezinska"], ["Birth date", "1966-04-30"], ["MRN", "IB-40417"]]


def run(sheets: dict[str, list[list]]):
    return read_and_extract(sheets_workbook(sheets), normalize_xlsx, extract_workbook, SOURCE)[1]


def vitals(result) -> dict[tuple[str, str | None], dict]:
    return {(f.structured_value["kind"], f.structured_value["measured_at"]): f.structured_value | {
        "_review": f.wants_review, "_reason": f.review_reason, "_locator": f.citation.page_or_section,
        "_quote": f.citation.quote_or_value} for f in of_type(result, "vital_sign")}


def warnings(result, code: str) -> list[str]:
    return [w.message for w in result.warnings if w.code == code]


def test_a_column_per_sign_with_real_dates_and_a_time_column():
    result = run({"ID": ID_SHEET, "Observations": [
        ["Taken", "Time", "NIBP", "Pulse rate", "Temp (°C)", "Resp rate", "Sats %", "Wt (kg)", "Ht cm", "BMI"],
        [datetime(2026, 1, 9), "7:45 pm", "161/99", 58, 36.4, 14, 99, 92.5, 171, 31.6],
    ]})
    got = vitals(result)
    when = "2026-01-09 19:45"
    bp = got[("blood_pressure", when)]
    assert (bp["value"], bp["systolic"], bp["diastolic"], bp["unit"]) == ("161/99", "161", "99", "mmHg")
    assert bp["_locator"] == "Observations!A2:J2" and bp["_quote"] == "161/99" and not bp["_review"]
    assert {k: (v["value"], v["unit"]) for (k, _), v in got.items() if k != "blood_pressure"} == {
        "heart_rate": ("58", "/min"), "temperature": ("36.4", "°C"), "respiratory_rate": ("14", "/min"),
        "spo2": ("99", "%"), "weight": ("92.5", "kg"), "height": ("171", "cm"), "bmi": ("31.6", "kg/m2")}
    assert not any(v["_review"] for v in got.values())
    assert not warnings(result, "xlsx_sheet_not_read")
    assert next(f for f in of_type(result, "vital_sign") if f.structured_value["kind"] == "blood_pressure"
                ).fact_text == f"BP 161/99 mmHg on {when}"


def test_a_lab_table_whose_rows_name_vital_signs_gives_both_kinds():
    result = run({"Results": ID_SHEET + [
        [], ["Observation", "Value", "Units", "Date"],
        ["Sodium", 141, "mmol/L", "2026-02-02"],
        ["B.P.", "118/76", "mm Hg", "2026-02-02"],
        ["Heart rate", 64, "beats/min", "2026-02-02"],
        ["Body temperature", 99.1, "F", "2026-02-02"],
    ]})
    assert [f.structured_value["test_name"] for f in of_type(result, "lab_result")] == ["Sodium"]
    got = vitals(result)
    assert got[("blood_pressure", "2026-02-02")]["value"] == "118/76"
    assert got[("heart_rate", "2026-02-02")]["unit"] == "/min"
    assert (got[("temperature", "2026-02-02")]["value"], got[("temperature", "2026-02-02")]["unit"]) == ("99.1", "°F")


def test_implausible_and_unit_less_readings_go_to_review_with_the_reason():
    result = run({"ID": ID_SHEET, "Obs": [
        ["Date", "BP", "HR", "Temp", "Weight"],
        ["2026-03-01", "300/20", 1120, 37.6, 80],
    ]})
    got = vitals(result)
    assert got[("blood_pressure", "2026-03-01")]["_review"]
    assert "systolic" in got[("blood_pressure", "2026-03-01")]["_reason"]
    assert "outside the plausible range" in got[("heart_rate", "2026-03-01")]["_reason"]
    # No unit printed: a temperature of 37.6 can only be °C, but a person confirms it.
    temp = got[("temperature", "2026-03-01")]
    assert temp["unit"] == "°C" and temp["_review"] and "no unit printed" in temp["_reason"]
    weight = got[("weight", "2026-03-01")]
    assert weight["unit"] == "" and weight["_review"]  # 80 kg or 80 lb: not guessed


def test_cells_and_rows_that_hold_no_reading_are_reported_not_dropped():
    result = run({"ID": ID_SHEET, "Obs": [
        ["Date", "Systolic", "Pulse", "Pain"],
        ["2026-03-02", 130, "refused", 4],
    ], "Per sign": [
        ["Sign", "Result", "Unit"],
        ["Capillary refill", "2", "s"],
        ["SpO2", "n/a", ""],
    ]})
    said = " ".join(warnings(result, "xlsx_vital_not_read"))
    assert "Obs!B2" in said and "systolic" in said  # a systolic without its diastolic
    assert "Obs!C2" in said and "'refused'" in said
    assert "'Pain'" in said
    assert "Capillary refill" in said
    assert not of_type(result, "vital_sign")  # "n/a" is an empty cell by the sheet's own words


def test_every_sheet_is_read_and_one_that_makes_no_sense_is_named():
    result = run({"Front": ID_SHEET, "Labs": [["Test", "Result", "Units", "Date"], ["Urea", 6.1, "mmol/L", "2026-01-01"]],
                  "Scribbles": [["ring daughter re transport"], ["bed 4", "side room"]],
                  "Vitals": [["When", "O2 sat", "Resp"], ["2026-01-01 06:00", "93%", 24]]})
    assert len(of_type(result, "lab_result")) == 1 and len(of_type(result, "vital_sign")) == 2
    assert warnings(result, "xlsx_sheet_not_read") == [
        "Sheet 'Scribbles' was not read: none of its 3 filled cell(s) could be made sense of as lab results, "
        "medications, vital signs or patient details. Check it by eye."]


def test_systolic_and_diastolic_rows_are_joined_per_time():
    result = run({"ID": ID_SHEET, "Long": [
        ["Measurement", "Reading", "Unit", "Date/time"],
        ["Systolic BP", 142, "mmHg", "2026-04-04 08:00"],
        ["Diastolic BP", 91, "mmHg", "2026-04-04 08:00"],
        ["Systolic BP", 128, "mmHg", "2026-04-04 16:00"],
        ["Diastolic BP", 80, "mmHg", "2026-04-04 16:00"],
    ]})
    got = vitals(result)
    assert got[("blood_pressure", "2026-04-04 08:00")]["value"] == "142/91"
    assert got[("blood_pressure", "2026-04-04 16:00")]["value"] == "128/80"
    assert got[("blood_pressure", "2026-04-04 08:00")]["_locator"] == "Long!A2:D3"
    assert got[("blood_pressure", "2026-04-04 08:00")]["_quote"] == "142 | mmHg | 2026-04-04 08:00 | Diastolic BP | 91"


def test_a_blood_pressure_joined_from_two_rows_cites_both_and_its_quote_verifies():
    # Written after the rule: the diastolic row first, a unit column left of the value.
    sheets = {"ID": ID_SHEET, "Clinic obs": [
        ["Date", "Obs", "Units", "Value"],
        ["03/02/2026", "Pulse", "bpm", 77],
        ["03/02/2026", "BP diastolic", "mmHg", 85],
        ["03/02/2026", "BP systolic", "mmHg", 134],
    ]}
    content, result = read_and_extract(sheets_workbook(sheets), normalize_xlsx, extract_workbook, SOURCE)
    bp = next(v for (k, _), v in vitals(result).items() if k == "blood_pressure")
    assert bp["value"] == "134/85" and bp["_locator"] == "Clinic obs!A3:D4"
    assert "85" in bp["_quote"] and "134" in bp["_quote"]
    from domain.policy.facts.citations import verify_citations
    assert all(c.verified for c in verify_citations([f.citation for f in result.facts], content))
    from extract.coverage import unread_content
    assert unread_content(content, result.facts) == []


def test_a_chart_of_one_sign_by_date_is_read_and_a_month_alone_goes_to_a_person():
    # A care home's weights sheet written after the rule ("Month | Weight (kg) | MUST
    # score"): one sign was no vitals table, and the sheet was named as not read.
    result = run({"Details": [["Name", "Ada Lovelace-Byron"], ["DOB", datetime(1940, 12, 10)]],
                  "Weights": [["Month", "Weight (kg)", "MUST score"], ["Sep 2026", 64.2, 0], ["Oct 2026", 62.8, 1]],
                  "Clinic": [["Date", "Weight (kg)"], ["17/11/2026", 71.2]]})
    weights = [f for f in of_type(result, "vital_sign")]
    assert [(f.structured_value["value"], f.structured_value.get("measured_at")) for f in weights] == [
        ("64.2", None), ("62.8", None), ("71.2", "2026-11-17")]
    assert weights[0].wants_review and "the date 'Sep 2026' names no day" in weights[0].review_reason
    assert not warnings(result, "xlsx_sheet_not_read")
    assert warnings(result, "xlsx_vital_not_read")  # the MUST score: no sign the reader knows, said so
