"""Critical limits and units on real ingested documents: the pipeline raises a value past a
limit to critical in every format and the chart row keeps why; promotion compares values
after conversion (the same creatinine in umol/L and mg/dL is no conflict, a different one
is); answers say what made a result critical and trend one analyte in one unit."""

from __future__ import annotations

from datetime import date

import pytest

from core.services.admin.patients import add_patient
from core.services.answer.answering import ask
from core.services.review.facts import chart_view
from tests.support.file_builders import sheets_workbook
from tests.support.pipeline import ingest

MRN, LAST, FIRST, DOB = "KT-55102", "Okafor-Lindqvist", "Ysolde", "1955-12-03"


def chart_patient(wb, mrn=MRN):
    return add_patient(wb, mrn=mrn, first=FIRST, last=LAST, dob=date.fromisoformat(DOB), sex="F", by="dr.reviewer")


@pytest.fixture
def patient(wb):
    return chart_patient(wb)


@pytest.fixture(scope="module")
def answering(tmp_path_factory):
    """A workbench with its guideline corpus indexed (attention answers search it),
    shared by the answer tests, each on a patient of its own."""
    from core.services.answer.corpus import index_guideline_corpus
    from core.services.workbench import open_workbench
    from domain.settings import Settings
    from tests.support.accounts import seed_test_accounts

    wb = open_workbench(Settings(data_dir=tmp_path_factory.mktemp("critical-answers")))
    seed_test_accounts(wb)
    index_guideline_corpus(wb)
    yield wb
    wb.close()


def oru(control: str, when: str, *obx: str, mrn: str = MRN) -> bytes:
    """One ORU^R01 for the patient; ``obx``: "name|code|value|unit|range|flag"."""
    segments = [f"MSH|^~\\&|LAB|HARBOUR LAB|EHR|CLINIC|{when}1015||ORU^R01^ORU_R01|{control}|P|2.5.1",
                f"PID|1||{mrn}^^^CLINIC^MR||{LAST.upper()}^{FIRST.upper()}||{DOB.replace('-', '')}|F",
                f"OBR|1|O{control}|F{control}|80048^Basic metabolic panel^C4|||{when}0830"]
    for n, spec in enumerate(obx, 1):
        name, code, value, unit, ref, flag = spec.split("|")
        segments.append(f"OBX|{n}|NM|{code}^{name}^LN||{value}|{unit}|{ref}|{flag}|||F|||{when}0830")
    return ("\r".join(segments) + "\r").encode()


def labs(report) -> dict[str, dict]:
    return {f["structured_value"]["test_name"]: f for f in report["facts"] if f["fact_type"] == "lab_result"}


def read(wb, patient, data, name):
    return ingest(wb, patient, data, "hl7v2_message", name)


def test_a_value_past_its_limit_is_charted_critical_with_the_limit_as_its_basis(answering):
    wb, patient = answering, chart_patient(answering, "KT-55103")
    report = read(wb, patient, oru("C1", "20260302", "Potassium|2823-3|6.9|mmol/L|3.5-5.1|H",
                                   "Sodium|2951-2|141|mmol/L|136-145|N",
                                   "Glucose|2345-7|182|mg/dL|70-99|HH", mrn="KT-55103"), "k.hl7")
    found = labs(report)
    k = found["Potassium"]
    assert k["certainty"] == "verified" and k["promotion_status"] == "promoted"
    assert k["structured_value"]["abnormal_flag"] == "critical_high"
    assert k["structured_value"]["critical_basis"] == "critical limit >= 6.2 mmol/L (Kost, JAMA 1990)"
    assert "critical by critical limit >= 6.2 mmol/L" in k["fact_text"]
    # A printed critical flag inside the limits is kept, and says it was printed.
    assert found["Glucose"]["structured_value"]["abnormal_flag"] == "critical_high"
    assert found["Glucose"]["structured_value"]["critical_basis"] == "printed flag"
    assert found["Sodium"]["structured_value"]["abnormal_flag"] == "normal"
    rows = {r["test_name"]: r for r in chart_view(wb, patient["id"])["labs"]}
    assert rows["Potassium"]["critical"] and rows["Potassium"]["critical_basis"].startswith("critical limit >= 6.2")
    assert rows["Glucose"]["critical"] and rows["Glucose"]["critical_basis"] == "printed flag"
    assert not rows["Sodium"]["critical"] and rows["Sodium"]["critical_basis"] is None

    out = ask(wb, patient["id"], "Are any of her results critical?").payload
    said = " | ".join(i["text"] for i in out["sections"]["patient_findings"])
    assert "critical by critical limit >= 6.2 mmol/L (Kost, JAMA 1990)" in said
    assert "critical by printed flag" in said


def test_a_workbook_value_past_its_limit_is_critical_too(wb, patient):
    """Another format, written after the rule: a spreadsheet row with only "L"."""
    book = {"Front sheet": [["Name", f"{FIRST} {LAST}"], ["Date of birth", DOB], ["MRN", MRN]],
            "Results": [["Date", "Test", "Result", "Units", "Reference range", "Flag"],
                        ["2026-04-14", "Platelets", 31, "x10^9/L", "150-400", "L"],
                        ["2026-04-14", "Haemoglobin", 121, "g/L", "115-155", ""]]}
    report = ingest(wb, patient, sheets_workbook(book), "clinical_workbook", "results.xlsx")
    found = labs(report)
    plt = found["Platelets"]["structured_value"]
    assert plt["abnormal_flag"] == "critical_low" and plt["printed_flag"] == "low"
    assert plt["critical_basis"] == "critical limit <= 37 x10^9/L (Kost, JAMA 1990)"
    assert found["Haemoglobin"]["structured_value"]["abnormal_flag"] in ("normal", "unknown")


def test_the_same_creatinine_in_two_units_is_no_conflict_and_a_different_one_is(wb, patient):
    read(wb, patient, oru("U1", "20260302", "Creatinine|2160-0|88|umol/L|45-90|N"), "umol.hl7")
    same = labs(read(wb, patient, oru("U2", "20260302", "Creatinine|2160-0|1.0|mg/dL|0.5-1.0|N"), "mg.hl7"))
    assert same["Creatinine"]["promotion_status"] == "already_exists"
    other = labs(read(wb, patient, oru("U3", "20260302", "Creatinine|2160-0|1.4|mg/dL|0.5-1.0|H"), "mg2.hl7"))
    assert other["Creatinine"]["promotion_status"] == "conflict_needs_review"
    assert [r["value"] for r in chart_view(wb, patient["id"])["labs"] if r["test_name"] == "Creatinine"] == ["88"]


def test_a_creatinine_trend_across_units_is_one_series_in_the_latest_unit(answering):
    wb, patient = answering, chart_patient(answering, "KT-55104")
    read(wb, patient, oru("T1", "20260110", "Creatinine|2160-0|88|umol/L|45-90|N", mrn="KT-55104"), "jan.hl7")
    read(wb, patient, oru("T2", "20260302", "Creatinine|2160-0|1.6|mg/dL|0.5-1.0|H", mrn="KT-55104"), "mar.hl7")
    out = ask(wb, patient["id"], "What deserves attention in her labs?").payload
    lines = [i for i in out["sections"]["patient_findings"] if "Creatinine 1.6" in i["text"]]
    assert len(lines) == 1
    assert "previous 0.995 mg/dL (printed 88 umol/L) on 2026-01-10" in lines[0]["text"]
    # Both originals are cited: the latest and the earlier one in its own unit.
    assert {c["quote_or_value"] for c in lines[0]["citations"]} >= {"1.6", "88"}


def test_a_corrected_value_is_judged_again_by_the_limits(wb, patient):
    """A misread 6.9 corrected to 4.9 is no longer critical; a sodium corrected past its
    limit becomes critical."""
    from core.services.review.corrections import correct_fact

    report = read(wb, patient, oru("R1", "20260302", "Potassium|2823-3|6.9|mmol/L|3.5-5.1|H",
                                   "Sodium|2951-2|128|mmol/L|136-145|L"), "r.hl7")
    found = labs(report)
    done = correct_fact(wb, found["Potassium"]["fact_id"], by="dr.reviewer", value="4.9", reason="4 read as 6")
    assert done["structured_value"]["abnormal_flag"] == "high"  # what the report printed
    assert "critical_basis" not in done["structured_value"] and "critical" not in done["fact_text"]
    na = correct_fact(wb, found["Sodium"]["fact_id"], by="dr.reviewer", value="118", reason="2 read as 1")
    assert na["structured_value"]["abnormal_flag"] == "critical_low"
    assert na["structured_value"]["critical_basis"] == "critical limit <= 120 mmol/L (Kost, JAMA 1990)"
    assert "critical by critical limit <= 120 mmol/L" in na["fact_text"]
    rows = {r["test_name"]: r for r in chart_view(wb, patient["id"])["labs"]}
    assert (rows["Potassium"]["value"], rows["Potassium"]["critical"]) == ("4.9", False)
    assert (rows["Sodium"]["value"], rows["Sodium"]["critical"]) == ("118", True)
