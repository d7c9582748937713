"""A medication list whose stop dates stand in a column of their own ("Stopped", "End
date"): a row with a stop date is the patient's history, never a current chart
medication. Written after a held-out heart-failure workbook charted its ramipril,
stopped in January 2022, as a current medicine beside the sacubitril/valsartan that
replaced it."""

from __future__ import annotations

from datetime import datetime

from domain.policy.facts.medication_status import status_reading
from extract.formats.office.xlsx import normalize_xlsx
from extract.workbook.extractor import extract_workbook
from tests.support.file_builders import sheets_workbook

HEAD = [["Patient", "Ferreira-Lund, Matilde"], ["DOB", datetime(1950, 6, 17)], ["MRN", "HL-220931"], []]


def _meds(rows: list[list]) -> dict[str, tuple[str | None, bool]]:
    facts = extract_workbook(normalize_xlsx(sheets_workbook({"Medicines": HEAD + rows})), "documents:1").facts
    return {f.structured_value["name"]: (status_reading(f.structured_value.get("status")), f.wants_review)
            for f in facts if f.fact_type == "medication"}


def test_a_row_with_a_stop_date_is_history_and_the_others_are_current():
    got = _meds([["Medicine", "Dose", "Frequency", "Start date", "End date"],
                 ["Digoxin", "62.5 mcg", "once daily", datetime(2023, 2, 1), None],
                 ["Amiodarone", "200 mg", "once daily", datetime(2020, 5, 4), datetime(2021, 11, 30)],
                 ["Furosemide", "40 mg", "each morning", "03/03/2024", "19/08/2025"]])
    assert got == {"Digoxin": (None, False), "Amiodarone": ("not_current", False),
                   "Furosemide": ("not_current", False)}


def test_a_stop_still_to_come_or_beside_an_active_status_goes_to_a_person():
    got = _meds([["Drug", "Dose", "Status", "Discontinued"],
                 ["Doxycycline", "100 mg", "", datetime(2099, 1, 10)],  # a course that ends later
                 ["Warfarin", "3 mg", "Active", datetime(2024, 7, 1)]])  # the row disagrees with itself
    assert got["Doxycycline"] == (None, True)
    assert got["Warfarin"][0] == "unknown"  # the medication policy sends an unknown status to review


def test_a_stopped_medicine_says_so_in_its_text():
    facts = extract_workbook(normalize_xlsx(sheets_workbook({"Medicines": HEAD + [
        ["Drug", "Dose", "Stopped"], ["Ramipril", "5 mg", datetime(2022, 1, 25)]]})), "documents:1").facts
    (ramipril,) = [f.fact_text for f in facts if f.fact_type == "medication"]
    assert ramipril == "Medication: Ramipril 5 mg (stopped 2022-01-25)"


def test_rows_no_reader_could_place_are_named_on_a_sheet_that_was_read():
    # The same held-out workbook printed its problem list under the patient's details:
    # the sheet counted as read, and the problems went without a word.
    result = extract_workbook(normalize_xlsx(sheets_workbook({"Summary": HEAD + [
        ["Problem", "Onset", "Status"], ["Heart failure", "2021", "Active"], ["Gout", "2018", "Active"]]})),
        "documents:1")
    (unread,) = [w.message for w in result.warnings if w.code == "xlsx_rows_not_read"]
    assert "Sheet 'Summary', rows 5-7: 3 rows" in unread


def test_a_row_printing_another_identifier_of_the_patient_is_no_unread_row():
    # A community nursing workbook (written after the rule): "NHS number | 943 476 5919",
    # which the identity sweep reads and shows, was named with the nurse's row as not read.
    result = extract_workbook(normalize_xlsx(sheets_workbook({
        "Summary": HEAD + [["NHS number", "943 476 5919"], ["Nurse", "J. Whitfield RN"]],
        "Bloods": [["Test", "Result", "Units"], ["Sodium", 139, "mmol/L"]]})), "documents:1")
    assert not [w for w in result.warnings if w.code == "xlsx_rows_not_read"]


def test_a_tables_header_and_units_row_and_rows_a_tables_reader_reported_are_not_named_again():
    # A heart-failure service workbook written fresh: its bloods sheet's header and row of
    # units were named "2 rows were not read", and an observation the dated table's
    # reader had already reported ("Oedema") was named a second time as unread rows.
    result = extract_workbook(normalize_xlsx(sheets_workbook({
        "Summary": HEAD,
        "Bloods": [["Date", "Na", "K", "Creat"], ["", "mmol/L", "mmol/L", "umol/L"],
                   ["03/11/2026", 138, 4.9, 132], ["17/11/2026", 135, 5.6, 148]],
        "Obs": [["", "03/11/2026", "10/11/2026"], ["Weight (kg)", 71.2, 72.8], ["Oedema", "ankles", "mid-shin"],
                ["Ankle swelling", "some", "more"]]})), "documents:1")
    assert not [w for w in result.warnings if w.code == "xlsx_rows_not_read"]
    unread = [w.message for w in result.warnings if w.code == "xlsx_result_not_read"]
    assert len(unread) == 2 and "'Oedema'" in unread[0] and "'Ankle swelling'" in unread[1]
    labs = [f.structured_value for f in result.facts if f.fact_type == "lab_result"]
    assert [(r["test_name"], r["value"], r["unit"]) for r in labs][:2] == [("Na", "138", "mmol/L"),
                                                                          ("K", "4.9", "mmol/L")]


def test_a_stop_column_that_says_not_applicable_or_a_status_that_says_stopped_needs_no_review():
    got = _meds([["Drug", "Dose", "Status", "Date stopped"],
                 ["Allopurinol", "300 mg", "", "N/A"],  # not stopped
                 ["Colchicine", "500 mcg", "Discontinued", datetime(2025, 3, 2)]])
    assert got == {"Allopurinol": (None, False), "Colchicine": ("not_current", False)}


def test_a_when_column_is_how_often_and_a_prn_column_says_when_needed():
    # A care home's medicines record written after the rule: "When" and "PRN?" columns,
    # whose frequencies (and "when needed") had been dropped.
    facts = extract_workbook(normalize_xlsx(sheets_workbook({"MAR": HEAD + [
        ["Medicine", "Strength", "Route", "When", "PRN?"],
        ["Paracetamol", "500 mg", "oral", "up to four times a day", "Yes"],
        ["Donepezil", "10 mg", "oral", "at night", "No"],
        ["Lactulose", "15 mL", "oral", "", "Yes"]]})), "documents:1").facts
    got = {f.structured_value["name"]: f.structured_value["frequency"] for f in facts if f.fact_type == "medication"}
    assert got == {"Paracetamol": "up to four times a day when needed", "Donepezil": "at night",
                   "Lactulose": "when needed"}


def test_a_status_written_in_a_column_no_role_names_keeps_the_medicine_off_the_chart():
    # An emergency department's discharge list (written after the rule) printed
    # "WITHHELD until GP review" under "Duration": ramipril was charted as taken now.
    got = _meds([["Drug", "Dose", "Frequency", "Duration"],
                 ["Amoxicillin", "1 g", "three times daily", "5 days"],
                 ["Ramipril", "5 mg", "once daily", "WITHHELD until GP review"]])
    assert got == {"Amoxicillin": (None, False), "Ramipril": ("not_current", False)}


def test_a_title_cell_printing_the_number_and_birth_date_identifies_the_patient():
    facts_and_ids = extract_workbook(normalize_xlsx(sheets_workbook({"INR log": [
        ["Anticoagulation clinic - Matilde Ferreira-Lund - MRN HL-220931 - DOB 17/06/1950"], [],
        ["Drug", "Dose"], ["Warfarin", "4 mg"]]})), "documents:1")
    assert sorted((c.kind.value, c.value) for c in facts_and_ids.identifiers) == [
        ("dob", "1950-06-17"), ("mrn", "HL-220931")]
