"""Result tables in referral letters with one column per test and one row per date,
written after the rule (``extract.referral.result_tables``): each cell a result held for
review, cited to its table cell; near misses (a medicines table, a table of dates and
phone numbers) give none."""

from __future__ import annotations

from extract.coverage import unread_content
from tests.support.file_builders import letter_with_tables as letter
from tests.support.extract_support import of_type, read_referral_docx


def test_each_cell_is_a_result_held_for_review_cited_to_its_cell():
    content, result = read_referral_docx(letter(
        [["Date", "eGFR", "Creatinine (umol/L)", "Potassium"], ["units", "", "", "mmol/L"],
         ["15 January 2026", "38", "142", "5.6 H"], ["2 February 2026", "35", "151", "5.1"]]))
    got = {(f.structured_value["test_name"], f.structured_value["collection_date"]): f for f in of_type(result, "lab_result")}
    assert len(got) == 6
    k = got[("Potassium", "2026-01-15")]
    assert k.citation.page_or_section == "table 1 row 3 col 4" and k.citation.quote_or_value == "5.6 H"
    assert (k.structured_value["value"], k.structured_value["unit"], k.structured_value["abnormal_flag"]) == (
        "5.6", "mmol/L", "high")
    assert got[("Creatinine", "2026-02-02")].structured_value["unit"] == "umol/L"
    assert all(f.wants_review and not f.document_fact_only for f in got.values())
    assert unread_content(content, result.facts) == []


def test_unknown_headers_are_reported_and_near_miss_tables_give_no_result():
    _, result = read_referral_docx(letter(
        [["Taken", "HbA1c", "Glucose", "Foot score"], ["03/2026", "", "", ""], ["2026-03-04", "71", "9.2", "3"]],
        [["Medicine", "Dose", "Since"], ["Metformin", "1 g", "2019"]],
        [["Date", "Phone", "Ext"], ["2026-03-05", "0161 555 0199", "2217"]]))
    labs = {(f.structured_value["test_name"], f.structured_value["value"]) for f in of_type(result, "lab_result")}
    assert labs == {("HbA1c", "71"), ("Glucose", "9.2")}
    said = [w.message for w in result.warnings if w.code == "docx_result_not_read"]
    assert len(said) == 1 and "'Foot score'" in said[0]
    assert [f.structured_value["name"] for f in of_type(result, "medication")] == ["Metformin"]


def test_a_table_with_a_column_per_date_gives_a_result_per_cell_dated_by_its_column():
    # The letter's DOB (17/10/1972) prints dates day first: 05/03/2026 is 5 March.
    content, result = read_referral_docx(letter(
        [["Investigation", "Units", "05/03/2026", "09/04/2026"], ["Haemoglobin", "g/L", "97 L", "104"],
         ["Ferritin", "ug/L", "8", "41"], ["Pulse", "bpm", "92", "84"]]))
    got = {(f.structured_value["test_name"], f.structured_value["collection_date"]): f for f in of_type(result, "lab_result")}
    assert sorted(got) == [("Ferritin", "2026-03-05"), ("Ferritin", "2026-04-09"), ("Haemoglobin", "2026-03-05"),
                           ("Haemoglobin", "2026-04-09")]
    hb = got[("Haemoglobin", "2026-03-05")]
    assert (hb.citation.page_or_section, hb.citation.quote_or_value) == ("table 1 row 2 col 3", "97 L")
    assert (hb.structured_value["value"], hb.structured_value["unit"], hb.structured_value["abnormal_flag"]) == (
        "97", "g/L", "low")
    assert all(f.wants_review for f in got.values())
    # the pulse's row: a reading per cell, dated by its column (it had been reported unread)
    pulse = of_type(result, "vital_sign")
    assert [(f.structured_value["value"], f.structured_value["unit"], f.structured_value["measured_at"])
            for f in pulse] == [("92", "/min", "2026-03-05"), ("84", "/min", "2026-04-09")]
    assert pulse[0].citation.page_or_section == "table 1 row 4 col 3" and all(f.wants_review for f in pulse)
    assert not [w for w in result.warnings if w.code == "docx_result_not_read"]
    assert unread_content(content, result.facts) == []


def test_a_table_with_a_column_per_sign_gives_a_reading_per_cell_dated_by_its_row():
    # A heart-failure clinic's letter written after the rule: "Date | BP (mmHg) | Pulse |
    # Weight (kg)" was named as nine unread results, its header "BP (mmHg)" as no date.
    content, result = read_referral_docx(letter(
        [["Date", "BP (mmHg)", "Pulse", "Weight (kg)"], ["03/11/2026", "128/76", "72", "71.2"],
         ["17/11/2026", "141/88", "96", ""]]))
    got = [(f.structured_value["kind"], f.structured_value["value"], f.structured_value["measured_at"])
           for f in of_type(result, "vital_sign")]
    assert got == [("blood_pressure", "128/76", "2026-11-03"), ("heart_rate", "72", "2026-11-03"),
                   ("weight", "71.2", "2026-11-03"), ("blood_pressure", "141/88", "2026-11-17"),
                   ("heart_rate", "96", "2026-11-17")]
    bp = of_type(result, "vital_sign")[3]
    assert (bp.structured_value["systolic"], bp.structured_value["diastolic"]) == ("141", "88")
    assert bp.citation.page_or_section == "table 1 row 3 col 2" and bp.citation.quote_or_value == "141/88"
    assert not result.warnings and unread_content(content, result.facts) == []
    # one sign beside a date is no such table: the column-per-test reader's, as before
    _, result = read_referral_docx(letter([["Date", "Weight (kg)"], ["03/11/2026", "71.2"]]))
    assert not of_type(result, "vital_sign")


def test_a_row_of_dates_over_a_list_of_appointments_is_no_result_table():
    _, result = read_referral_docx(letter(
        [["Clinic", "12/01/2026", "19/01/2026"], ["Podiatry", "booked", "attended"]]))
    assert not of_type(result, "lab_result")


def test_a_problems_table_with_a_date_column_and_a_medicine_stopped_in_its_comments():
    # A memory-clinic referral written after the rules: "Date | Problem" was taken for a
    # table of dates and its problems lost, and sertraline "Stopped 01/11/2026 -
    # hyponatraemia" in the Comments column was charted as a medicine taken now.
    from domain.models import Certainty
    from tests.support.synthetic import certainty_of

    _, result = read_referral_docx(letter(
        [["Date", "Problem"], ["2012", "Hypertension"], ["2024", "Depression"]],
        [["Drug", "Dose", "Frequency", "Comments"], ["Sertraline", "50 mg", "once daily", "Stopped 01/11/2026 - low Na"],
         ["Mirtazapine", "15 mg", "at night", "Started 01/11/2026"], ["Apixaban", "5 mg", "twice daily", "for AF"]]))
    assert [f.structured_value["description"] for f in of_type(result, "problem")] == ["Hypertension", "Depression"]
    medicines = {f.structured_value["name"]: f for f in of_type(result, "medication")}
    assert {n: f.structured_value.get("status") for n, f in medicines.items()} == {
        "Sertraline": "Stopped", "Mirtazapine": "Started", "Apixaban": None}
    assert certainty_of(medicines["Sertraline"], paged=False) == Certainty.DOCUMENT_FACT  # history, not the chart
    assert not [w for w in result.warnings if w.code == "docx_unparsed_date"]


def test_a_status_under_a_column_no_role_names_keeps_the_medicine_off_the_chart():
    # An emergency department's discharge summary (written after the rule) printed
    # "WITHHELD until GP review" under "Duration": ramipril was charted as taken now.
    from domain.models import Certainty
    from tests.support.synthetic import certainty_of

    _, result = read_referral_docx(letter(
        [["Drug", "Dose", "Route", "Frequency", "Duration"],
         ["Amoxicillin", "1 g", "oral", "three times daily", "5 days"],
         ["Ramipril", "5 mg", "oral", "once daily", "WITHHELD until GP review"]]))
    medicines = {f.structured_value["name"]: f for f in of_type(result, "medication")}
    assert {n: f.structured_value.get("status") for n, f in medicines.items()} == {
        "Amoxicillin": None, "Ramipril": "WITHHELD"}
    assert certainty_of(medicines["Ramipril"], paged=False) == Certainty.DOCUMENT_FACT


def test_a_lone_test_column_beside_dates_and_a_target_range_column():
    _, result = read_referral_docx(letter(
        [["Date", "INR", "Target range"], ["06/10/2026", "2.4", "2.0-3.0"], ["27/10/2026", "3.6", "2.0-3.0"]]))
    got = {(f.structured_value["collection_date"], f.structured_value["value"]): f.structured_value["reference_range"]
           for f in of_type(result, "lab_result")}
    assert got == {("2026-10-06", "2.4"): "2.0-3.0", ("2026-10-27", "3.6"): "2.0-3.0"}
