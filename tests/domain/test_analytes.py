"""The analyte vocabulary (domain.policy.facts.analytes) and what it is for: results are compared
by canonical analyte and collection date, so "HbA1c" and "Hemoglobin A1c" on the same day
are one test, in the chart and in the promotion of every format."""

from __future__ import annotations

import io

import pytest

from domain.policy.facts import analytes as A
from domain.policy.facts.fingerprints import clinical_content_fingerprint, clinical_key
from domain.policy.facts.lab_vocabulary import known_analyte, known_unit
from core.services.review.facts import chart
from golden.fixtures import LAB_CASES, ExpectedLab, LabCase, render_lab
from tests.support.pipeline import chart_patient, ingest

# --------------------------------------------------------------------------- the vocabulary


def test_vocabulary_covers_the_common_panels_with_valid_loinc_codes():
    entries = A.all_analytes()
    assert len(entries) >= 40
    ids = {a.id for a in entries}
    for must in ("glucose", "sodium", "potassium", "creatinine", "bun", "egfr", "wbc", "hemoglobin", "platelets",
                 "cholesterol_total", "ldl", "hdl", "triglycerides", "tsh", "free_t4", "hba1c", "uacr",
                 "urine_protein", "alt", "ast"):
        assert must in ids
    for a in entries:
        assert a.display and a.synonyms, a.id
        for code in a.loinc:
            assert A.loinc_code_ok(code), (a.id, code)  # a mistyped code fails its check digit


def test_loinc_check_digit():
    assert A.loinc_code_ok("4548-4") and A.loinc_code_ok("2345-7") and A.loinc_code_ok("718-7")
    assert not A.loinc_code_ok("4548-5") and not A.loinc_code_ok("LN") and not A.loinc_code_ok("")


@pytest.mark.parametrize("name,loinc,unit,canonical", [
    ("HbA1c", None, "%", "hba1c"), ("Hemoglobin A1c", None, "%", "hba1c"), ("Haemoglobin A1c", None, None, "hba1c"),
    ("HEMOGLOBIN A1C (HBA1C)", None, None, "hba1c"), ("Glycated haemoglobin", None, None, "hba1c"),
    ("HbA1c", None, "mmol/mol", "hba1c_ifcc"),  # the IFCC measure, another number for the same blood
    ("GHB", "4548-4", "%", "hba1c"),  # a local name with a LOINC code
    ("Glucose, Serum", None, None, "glucose"), ("Glucose, fasting", None, None, "glucose_fasting"),
    ("Glucose [Mass/volume] in Urine", None, None, "urine_glucose"),
    ("Leukocytes [#/volume] in Blood", None, "{cells}/uL", "wbc"), ("White Blood Cell Count", None, None, "wbc"),
    ("Neutrophils", None, "%", "neutrophils_pct"), ("Neutrophils", None, "x10E3/uL", "neutrophils_abs"),
    ("Neutrophils", None, None, None),  # percent or count: not guessed
    ("Troponin", None, "ng/mL", None),  # I or T: not guessed
    ("Hemoglobin", None, "g/dL", "hemoglobin"),  # never mistaken for Hemoglobin A1c
    ("ALT (SGPT)", None, None, "alt"), ("Cholesterol, Total", None, None, "cholesterol_total"),
    ("Albumin/Creat Ratio", None, None, "uacr"), ("Lead BldC-mCnc", None, None, None),
])
def test_canonical_analyte(name, loinc, unit, canonical):
    assert A.canonical_analyte(name, loinc, unit) == canonical


def test_every_name_the_ocr_check_knew_is_still_known():
    # The names of the old KNOWN_ANALYTES list, folded into the vocabulary.
    old = ("wbc", "white blood cell count", "rbc", "hgb", "hct", "mcv", "rdw", "plt", "mpv", "neutrophils",
           "absolute neutrophils", "glucose, fasting", "bun", "urea nitrogen", "egfr", "bun/creatinine ratio",
           "carbon dioxide, total", "protein, total", "a/g ratio", "bilirubin, total", "alk phos", "ast (sgot)",
           "ldl chol calc", "hdl-c", "non-hdl cholesterol", "vldl cholesterol", "glycohemoglobin", "t4, free",
           "vitamin d, 25-hydroxy", "25-oh vitamin d", "tibc", "inr", "ptt", "microalbumin", "uacr",
           "specific gravity", "ph", "leukocyte esterase", "nitrite", "sed rate", "troponin", "nt-probnp", "ldh")
    assert all(known_analyte(n) for n in old)
    assert not known_analyte("Hemoglobin Aic")  # an OCR misread stays unknown


def test_a_unit_the_vocabulary_lists_for_an_analyte_is_a_known_unit():
    # One unit vocabulary: what analytes.json lists per analyte, plus the general list.
    for unit in ("x10^9/L", "{cells}/uL", "mL/min/{1.73_m2}", "mm/h", "mg/dL", "\u00b5mol/L"):
        assert known_unit(unit), unit
    for unit in ("", "furlongs", "mg/dl/dl"):
        assert not known_unit(unit), unit


def test_the_vocabulary_file_is_consistent():
    data = A._vocabulary()
    for a in A.all_analytes():
        for unit, target in a.unit_variants.items():
            assert target in data.by_id, (a.id, unit)


@pytest.mark.parametrize("name, loinc, unitless", [
    ("INR", None, True), ("PT INR", None, True), ("International Normalized Ratio", None, True),
    ("Specific gravity", None, True), ("Urine specific gravity", None, True),
    ("pH", None, True),  # urine or blood: both dimensionless
    ("A/G ratio", None, True), ("Chol/HDL ratio", None, True), ("BUN/Creatinine Ratio", None, True),
    ("Local coag code", "6301-6", True),  # the LOINC code decides
    ("Potassium", None, False), ("Urine protein", None, False),  # "" in its units is for "negative"/"trace"
    ("Albumin/Creat Ratio", None, False),  # mg/g: a ratio with a unit
    ("Prothrombin time", None, False), ("Neutrophils", None, False), ("Lead BldC-mCnc", None, False), ("", None, False),
])
def test_dimensionless_analytes_need_no_unit(name, loinc, unitless):
    assert A.unitless_analyte(name, loinc) is unitless


def test_unitless_analytes_list_no_unit_but_a_dimensionless_one():
    for a in A.all_analytes():
        if a.unitless:
            assert set(a.units) <= {"", "ratio"}, a.id


# --------------------------------------------------------------------------- the clinical key


def test_synonyms_share_a_clinical_key_and_different_values_conflict():
    a = {"test_name": "HbA1c", "value": "8.4", "unit": "%", "collection_date": "2026-04-10"}
    b = {"test_name": "Hemoglobin A1c", "value": "7.9", "unit": "%", "collection_date": "2026-04-10"}
    assert clinical_key(1, "lab_result", a, "") == clinical_key(1, "lab_result", b, "")
    assert clinical_content_fingerprint(1, "lab_result", a, "") != clinical_content_fingerprint(1, "lab_result", b, "")
    same = {**b, "value": "8.4"}
    assert clinical_content_fingerprint(1, "lab_result", a, "") == clinical_content_fingerprint(1, "lab_result", same, "")
    other_day = {**b, "collection_date": "2026-04-11"}
    assert clinical_key(1, "lab_result", a, "") != clinical_key(1, "lab_result", other_day, "")
    # Percent and absolute differentials are two tests, not a conflict.
    pct = {"test_name": "Neutrophils", "value": "55", "unit": "%", "collection_date": "2026-04-10"}
    count = {**pct, "value": "3.1", "unit": "x10E3/uL"}
    assert clinical_key(1, "lab_result", pct, "") != clinical_key(1, "lab_result", count, "")
    # Unknown names keep the old key: their own normalised name.
    lead = {"test_name": "Lead BldC-mCnc", "value": "5", "unit": "ug/dL", "collection_date": "2026-04-10"}
    assert clinical_key(1, "lab_result", lead, "") == clinical_key(1, "lab_result", {**lead, "test_name": "lead bldc-mcnc"}, "")


def test_a_loinc_code_names_the_analyte_whatever_the_printed_name():
    # Promotion recomputes keys from chart rows, which keep the LOINC code.
    fact = {"test_name": "GHB", "value": "8.4", "unit": "%", "collection_date": "2026-04-10", "loinc": "4548-4"}
    row = dict(fact)
    assert clinical_key(1, "lab_result", fact, "") == clinical_key(1, "lab_result", row, "")
    assert clinical_content_fingerprint(1, "lab_result", fact, "") == clinical_content_fingerprint(1, "lab_result", row, "")
    # An uncoded synonym on the same day is the same test: a different value conflicts.
    named = {"test_name": "Hemoglobin A1c", "value": "7.9", "unit": "%", "collection_date": "2026-04-10"}
    assert clinical_key(1, "lab_result", fact, "") == clinical_key(1, "lab_result", named, "")


# --------------------------------------------------------------------------- through the pipeline

PATIENT = LAB_CASES[0].patient
COLLECTED = "2026-04-10"


def a1c_pdf(name: str, value: str) -> bytes:
    row = ExpectedLab(name, value, "%", "<5.7", "high", "H")
    return render_lab(LabCase(f"a1c_{name}_{value}", "classic", PATIENT, COLLECTED, (("Diabetes", (row,)),)))


def a1c_hl7(name: str, value: str) -> bytes:
    return "\r".join((
        "MSH|^~\\&|LAB|NORTHWIND LAB|EHR|CLINIC|20260410093000||ORU^R01^ORU_R01|A1C0001|P|2.5.1",
        f"PID|1||{PATIENT.mrn}^^^CLINIC^MR||{PATIENT.last.upper()}^{PATIENT.first.upper()}||"
        f"{PATIENT.dob.replace('-', '')}|F",
        "OBR|1|ORD1|FIL1|4548-4^Hemoglobin A1c^LN|||20260410081500",
        f"OBX|1|NM|4548-4^{name}^LN||{value}|%^^UCUM|<5.7|H|||F|||20260410081500",
    )).encode()


def a1c_xlsx(name: str, value: str) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (["Patient:", f"{PATIENT.last.upper()}, {PATIENT.first}"], ["MRN:", PATIENT.mrn], ["DOB:", PATIENT.dob],
                [], ["Test", "Result", "Units", "Reference range", "Flag", "Collected"],
                [name, float(value), "%", "<5.7", "H", COLLECTED]):
        ws.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def a1c_outcome(report: dict) -> str:
    (fact,) = [f for f in report["facts"] if f["fact_type"] == "lab_result"]
    assert fact["certainty"] == "verified", fact
    return fact["promotion_status"]


def chart_a1c(wb, patient) -> list[str]:
    return sorted(r["value"] for r in chart(wb, patient["id"])["chart_lab_results"])


def test_synonyms_on_the_same_day_conflict_and_an_equal_value_is_already_there(wb):
    patient = chart_patient(wb, PATIENT)
    assert a1c_outcome(ingest(wb, patient, a1c_pdf("HbA1c", "8.4"), "lab_pdf", "a.pdf")) == "promoted"
    second = ingest(wb, patient, a1c_pdf("Hemoglobin A1c", "7.9"), "lab_pdf", "b.pdf")
    assert a1c_outcome(second) == "conflict_needs_review"
    (promotion,) = second["promotions"]
    assert "8.4" in promotion["conflict_reason"]
    third = ingest(wb, patient, a1c_pdf("Hemoglobin A1c", "8.4"), "lab_pdf", "c.pdf")
    assert a1c_outcome(third) == "already_exists"
    assert chart_a1c(wb, patient) == ["8.4"]  # one chart row, never a second HbA1c for the day


def test_the_same_analyte_is_compared_across_formats(wb):
    patient = chart_patient(wb, PATIENT)
    assert a1c_outcome(ingest(wb, patient, a1c_pdf("HbA1c", "8.4"), "lab_pdf", "a.pdf")) == "promoted"
    hl7 = ingest(wb, patient, a1c_hl7("Hemoglobin A1c", "7.9"), "hl7v2_message", "b.hl7")
    assert a1c_outcome(hl7) == "conflict_needs_review"
    xlsx = ingest(wb, patient, a1c_xlsx("Glycated haemoglobin", "8.4"), "clinical_workbook", "c.xlsx")
    assert a1c_outcome(xlsx) == "already_exists"
    assert chart_a1c(wb, patient) == ["8.4"]


@pytest.mark.parametrize("printed", ["Hemoglobin Alc", "HbAlc", "Aic", "Hemoglobin Aic", "Hemoglobin Atc",
                                     "HgbAlc", "Hemoglobin AIc", "Hb Alc"])
def test_ocr_readings_of_a1c_are_hemoglobin_a1c(printed):
    assert A.canonical_analyte(printed) == "hba1c"
    assert not A.known_name(printed)  # still not a name the vocabulary prints: an OCR read of it stays in review


@pytest.mark.parametrize("printed, expected", [
    ("Vitamin Bl2", "vitamin_b12"),  # l for 1
    ("HEM0GLOBIN", "hemoglobin"),  # 0 for o
    ("Alc", "lymphocytes_abs"),  # a printed abbreviation of its own wins over a look-alike reading
    ("Tnl", None),  # troponin I or T? two analytes fold the same: not guessed
    ("Sodiurn", None),  # rn for m is not a digit look-alike
    # two letters never stand for each other: other tests, not misreads
    ("IDL", None), ("IDL cholesterol", None),  # intermediate-density lipoprotein, not LDL
    ("Pi", None),  # inorganic phosphate, not the prothrombin time
    ("Ig", None), ("Tron", None),
    ("Hemog|obin", "hemoglobin"),  # a mark for a letter is
    ("Glucose", "glucose"),
])
def test_ocr_lookalike_names_resolve_only_to_one_analyte(printed, expected):
    assert A.canonical_analyte(printed) == expected
