"""Dates typed in a workbook's rows (a lab table's "Collected" column, a medication's start)
are read the way the workbook's other dates, or the clinic's order, settle day and month.

Written for this test after the rule: a ward's export whose every numeric date reads
either way ("01/12/2026"), and a clinic list whose one unambiguous date ("16/09/2026")
shows it prints day first."""

from __future__ import annotations

from datetime import datetime

from extract.formats.office.xlsx import normalize_xlsx
from extract.values.dates import clinic_date_order
from extract.workbook.extractor import extract_workbook
from tests.support.file_builders import sheets_workbook

WARD = sheets_workbook({
    "Summary": [["Patient", "Ashworth-Mbeki, Constance"], ["DOB", datetime(1947, 3, 30)], ["MRN", "RW-408812"]],
    "Bloods": [["Test", "Result", "Units", "Reference range", "Flag", "Collected"],
               ["Sodium", 131, "mmol/L", "133-146", "L", "02/11/2026"],
               ["Urea", 11.4, "mmol/L", "2.5-7.8", "H", "02/11/2026"]],
    "Obs": [["Observation", "02/11/2026 07:00", "03/11/2026 07:00"],
            ["Heart rate (bpm)", 104, 92]],
})

CLINIC_LIST = sheets_workbook({
    "Labs": [["Patient", "Ashworth-Mbeki, Constance"], ["DOB", datetime(1947, 3, 30)], ["MRN", "RW-408812"],
             ["Clinic date", "16/09/2026"], [],
             ["Test", "Result", "Units", "Reference range", "Collected"],
             ["Potassium", 4.1, "mmol/L", "3.5-5.3", "04/09/2026"]],
})


def _read(data: bytes):
    return extract_workbook(normalize_xlsx(data), "documents:1").facts


def _dates(facts, fact_type: str) -> list[str]:
    key = {"lab_result": "collection_date", "vital_sign": "measured_at"}[fact_type]
    return [f.structured_value[key] if isinstance(f.structured_value, dict)
            else getattr(f.structured_value, key) for f in facts if f.fact_type == fact_type]


def test_with_no_order_set_an_open_date_reads_month_first_as_before():
    facts = _read(WARD)
    assert _dates(facts, "lab_result") == ["2026-02-11", "2026-02-11"]
    assert all(f.wants_review for f in facts if f.fact_type == "vital_sign")  # the column dates stay open


def test_a_day_first_clinic_reads_the_ward_export_day_first_everywhere():
    with clinic_date_order("day_first"):
        facts = _read(WARD)
    assert _dates(facts, "lab_result") == ["2026-11-02", "2026-11-02"]
    assert sorted(set(_dates(facts, "vital_sign"))) == ["2026-11-02 07:00", "2026-11-03 07:00"]
    assert not any("ambiguous" in (f.review_reason or "") or "day first" in (f.review_reason or "") for f in facts)


def test_a_row_date_is_settled_by_the_workbooks_own_day_first_date():
    # "16/09/2026" can only be day first, so the row's "04/09/2026" is 4 September, with no
    # order set; before, the row's date was read month first (9 April) regardless.
    (potassium,) = [f for f in _read(CLINIC_LIST) if f.fact_type == "lab_result"]
    assert _dates([potassium], "lab_result") == ["2026-09-04"]
