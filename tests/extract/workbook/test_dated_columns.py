"""Workbook tables with one column per date and one row per test or sign (cumulative
results, home-monitoring flowsheets). Written after the rule
(``extract.workbook.dated_columns``): each layout differs from the documents it was
found on (corner words, date kinds, where units and ranges sit), plus near misses."""

from __future__ import annotations

from datetime import datetime

from domain.policy.facts.citations import rows_text, verify_citations
from extract.coverage import unread_content
from extract.formats.office.xlsx import normalize_xlsx
from extract.workbook.extractor import extract_workbook
from tests.support.extract_support import of_type, read_and_extract
from tests.support.file_builders import sheets_workbook

SOURCE = "documents:77"
ID_ROWS = [["Name", "Ilse Marchetti"], ["Born", "1961-08-30"], ["Hospital no", "MQ-55120"], []]


def run(sheets):
    return read_and_extract(sheets_workbook(sheets), normalize_xlsx, extract_workbook, SOURCE)


def by_date(result, fact_type: str, name_key: str, date_key: str) -> dict[tuple[str, str | None], object]:
    return {(f.structured_value[name_key], f.structured_value[date_key]): f for f in of_type(result, fact_type)}


def test_a_cumulative_sheet_gives_one_result_per_test_per_date_cited_to_its_cell():
    content, result = run({"Cumulative": ID_ROWS + [
        ["Test", datetime(2026, 6, 1), datetime(2026, 7, 13), datetime(2026, 8, 24), "Units", "Reference"],
        ["Haemoglobin", 128, 119, "104 L", "g/L", "115-160"],
        ["Ferritin", 22, None, 9, "ug/L", "30-300"],
        ["CRP", "<5", 12, 31, "mg/L", "<5"],
    ]})
    got = by_date(result, "lab_result", "test_name", "collection_date")
    assert len(got) == 8  # the empty ferritin cell gives nothing
    hb = got[("Haemoglobin", "2026-08-24")]
    assert hb.structured_value["value"] == "104" and hb.structured_value["abnormal_flag"] == "low"
    assert (hb.citation.page_or_section, hb.citation.quote_or_value) == ("Cumulative!D6", "104 L")
    assert got[("Ferritin", "2026-06-01")].structured_value["reference_range"] == "30-300"
    assert got[("CRP", "2026-07-13")].structured_value["unit"] == "mg/L"
    assert ("Ferritin", "2026-07-13") not in got
    assert all(c.verified for c in verify_citations([f.citation for f in result.facts], content))
    assert unread_content(content, result.facts) == []


def test_a_flowsheet_with_text_dates_reads_its_signs_and_joins_blood_pressure_down_each_column():
    content, result = run({"Home readings": ID_ROWS + [
        ["Date", "4/5/2026", "11/5/2026", "18/5/2026"],  # 18/5 settles the order: day first
        ["Weight (kg)", 70.2, 71.0, 72.6],
        ["Systolic", 131, 142, 158],
        ["Diastolic", 79, 85, 97],
        ["Pulse", 64, 70, 88],
    ]})
    signs = by_date(result, "vital_sign", "kind", "measured_at")
    bp = signs[("blood_pressure", "2026-05-11")]
    assert (bp.structured_value["systolic"], bp.structured_value["diastolic"]) == ("142", "85")
    assert (bp.citation.page_or_section, bp.citation.quote_or_value) == ("Home readings!C7:C8", "142 | 85")
    assert signs[("weight", "2026-05-04")].structured_value["value"] == "70.2"
    assert signs[("heart_rate", "2026-05-18")].citation.page_or_section == "Home readings!D9"
    assert len(signs) == 9 and not any(f.wants_review for f in signs.values())
    assert all(c.verified for c in verify_citations([f.citation for f in result.facts], content))
    assert rows_text(content.sections, "Home readings!C7:C8") == "142 | 85"
    assert unread_content(content, result.facts) == []


def test_a_row_naming_nothing_known_under_a_bare_corner_is_reported():
    _, result = run({"Obs": ID_ROWS + [
        ["Date", "2026-02-02", "2026-02-09"],
        ["Heart rate", 81, 77],
        ["Breathlessness score", 3, 2],
    ]})
    assert len(of_type(result, "vital_sign")) == 2 and not of_type(result, "lab_result")
    said = [w.message for w in result.warnings if w.code == "xlsx_result_not_read"]
    assert len(said) == 1 and "Obs!B7, C7" in said[0] and "'Breathlessness score'" in said[0]


def test_column_dates_nothing_settles_send_every_result_under_them_to_a_person():
    _, result = run({"Trend": ID_ROWS + [
        ["Analyte", "Units", "03/04/2026", "05/06/2026"],
        ["Potassium", "mmol/L", 4.1, 4.6],
    ]})
    results = of_type(result, "lab_result")
    assert len(results) == 2 and all(f.wants_review for f in results)
    assert "reads 2026-03-04 month first or 2026-04-03 day first" in results[0].review_reason


def test_a_medication_row_with_two_dates_is_no_header_of_dates():
    _, result = run({"Meds": ID_ROWS + [
        ["Medication", "Dose", "Frequency", "Started", "Reviewed"],
        ["Apixaban", "5 mg", "twice daily", datetime(2024, 3, 1), datetime(2026, 1, 9)],
        ["Metoprolol", "25 mg", "twice daily", datetime(2023, 11, 20), datetime(2026, 1, 9)],
    ]})
    assert [f.structured_value["name"] for f in of_type(result, "medication")] == ["Apixaban", "Metoprolol"]
    assert not of_type(result, "lab_result")


def test_an_obs_chart_with_two_times_a_day_keeps_each_reading_at_its_time():
    _, result = run({"Obs": ID_ROWS + [
        ["Date", datetime(2026, 11, 3, 8, 0), datetime(2026, 11, 3, 20, 0), datetime(2026, 11, 4, 8, 0)],
        ["BP", "138/82", "151/90", "129/77"],
        ["Resp rate", 16, 22, 18],
    ]})
    signs = by_date(result, "vital_sign", "kind", "measured_at")
    assert signs[("blood_pressure", "2026-11-03 20:00")].structured_value["systolic"] == "151"
    assert signs[("respiratory_rate", "2026-11-04 08:00")].citation.page_or_section == "Obs!D7"
    assert len(signs) == 6


def test_results_under_dates_with_no_unit_anywhere_go_to_a_person():
    # "Results" spans the dates on the row above them; no units column, none in the cells.
    _, result = run({"Cum": ID_ROWS + [
        ["Analyte", "Results"],
        [None, "02/09/2026", "07/10/2026", "17/11/2026"],
        ["Sodium", 138, 134, 131],
    ]})
    sodium = of_type(result, "lab_result")
    assert [f.structured_value["collection_date"] for f in sodium] == ["2026-09-02", "2026-10-07", "2026-11-17"]
    assert all(f.wants_review and "no unit printed for 'Sodium'" in f.review_reason for f in sodium)
