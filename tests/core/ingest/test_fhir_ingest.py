"""A FHIR bundle through the whole pipeline: the identity gate verifies the right
patient and quarantines the wrong one, trusted findings reach the chart with their
JSON-path citations, an invalid resource is a job warning naming its path and a review
item (never dropped), withdrawn resources stay out; and ``python -m core ingest
--doc-type fhir_bundle`` with the production settings (the job read in its child)."""

from __future__ import annotations

from datetime import date

from core.services.admin.patients import add_patient
from core.services.ingest.ingestion import suggest_doc_type
from domain.models import DocType
from tests.support import fhir_bundles as F
from tests.support.cli_support import as_json, cli
from tests.support.pipeline import ingest

MRN = "WB-FH-3301"


def chart_patient(wb, first="Odalys", last="Brennerman", dob="1961-07-19", mrn=MRN):
    return add_patient(wb, mrn=mrn, first=first, last=last, dob=date.fromisoformat(dob), sex="F", by="dr.reviewer")


def rows(wb, sql, *params):
    with wb.db.cursor() as cur:
        return cur.execute(sql, list(params)).fetchall()


def test_the_right_patient_is_verified_and_trusted_findings_reach_the_chart(wb):
    patient = chart_patient(wb)
    report = ingest(wb, patient, F.as_bytes(F.patient_bundle()), "fhir_bundle", name="export.json")
    assert report["identity"]["status"] == "identity_verified"
    labs = rows(wb, "SELECT test_name, value, unit, abnormal_flag FROM chart_lab_results WHERE patient_id = ? "
                    "AND active ORDER BY test_name", patient["id"])
    assert ("Potassium", "6.1", "mmol/L", "high") in labs and len(labs) == 3
    assert rows(wb, "SELECT substance FROM chart_allergies WHERE patient_id = ? AND active", patient["id"]) == \
        [("Penicillin",)]
    assert rows(wb, "SELECT count(*) FROM chart_medications WHERE patient_id = ? AND active", patient["id"])[0][0] == 1
    assert rows(wb, "SELECT count(*) FROM chart_problems WHERE patient_id = ? AND active", patient["id"])[0][0] == 1
    assert rows(wb, "SELECT count(*) FROM chart_vital_signs WHERE patient_id = ? AND active", patient["id"])[0][0] == 1
    cited = {f["citation"]["page_or_section"] for f in report["facts"] if f["fact_type"] == "lab_result"}
    assert "Bundle.entry[1].resource.valueQuantity" in cited
    assert all(f["citation"]["verified"] for f in report["facts"])


def test_the_wrong_patient_is_quarantined_and_nothing_reaches_the_chart(wb):
    patient = chart_patient(wb)
    other = F.patient_bundle(first="Teodor", last="Vashenko", dob="1950-01-02", mrn="WB-FH-9999")
    report = ingest(wb, patient, F.as_bytes(other), "fhir_bundle", name="other.json")
    assert report["identity"]["status"] == "identity_mismatch_quarantined"
    assert rows(wb, "SELECT count(*) FROM chart_lab_results WHERE patient_id = ?", patient["id"])[0][0] == 0
    assert not any(f["active"] for f in report["facts"])


def test_an_invalid_resource_is_a_warning_with_its_path_and_a_review_item(wb):
    patient = chart_patient(wb)
    bad = F.lab("2823-3", "Potassium", 5.0, "mmol/L")
    bad["valueQuantity"]["value"] = "5,0"
    doc = F.bundle(F.patient("Odalys", "Brennerman", "1961-07-19", MRN), bad,
                   F.lab("2951-2", "Sodium", 139, "mmol/L", low=135, high=145),
                   F.lab("2160-0", "Creatinine", 9.9, "mg/dL", status="entered-in-error"))
    report = ingest(wb, patient, F.as_bytes(doc), "fhir_bundle", name="bundle.json")
    warnings = {w["code"]: w["message"] for w in report["job"]["warnings"]}
    assert "Bundle.entry[1].resource (Observation)" in warnings["fhir_invalid_resource"]
    assert "Bundle.entry[3].resource" in warnings["fhir_entered_in_error"]
    assert "unread_content" in warnings  # the invalid one waits in the review queue
    unread = [f for f in report["facts"] if f["fact_type"] == "unread_content"]
    assert [r["locator"] for r in unread[0]["structured_value"]["regions"]] == ["Bundle.entry[1].resource"]
    assert rows(wb, "SELECT test_name FROM chart_lab_results WHERE patient_id = ? AND active",
                patient["id"]) == [("Sodium",)]


def test_the_upload_form_suggests_the_fhir_type_from_the_bytes():
    assert suggest_doc_type("anything.txt", F.as_bytes(F.patient_bundle())) is DocType.FHIR_BUNDLE
    assert suggest_doc_type("notes.txt", b"plain words") is None


def test_cli_ingest_with_production_settings(tmp_path):
    data_dir = tmp_path / "data"
    cli(data_dir, "patient", "add", "--mrn", MRN, "--first", "Odalys", "--last", "Brennerman",
        "--dob", "1961-07-19", "--sex", "F", "--json")
    bundle = tmp_path / "export.json"
    bundle.write_bytes(F.as_bytes(F.patient_bundle()))
    out = as_json(cli(data_dir, "ingest", str(bundle), "--patient", MRN, "--doc-type", "fhir_bundle", "--json"))
    assert out["job"]["status"] == "succeeded" and out["identity"]["status"] == "identity_verified"
    k = next(f for f in out["facts"] if f["structured_value"].get("test_name") == "Potassium")
    assert (k["citation"]["page_or_section"], k["citation"]["quote_or_value"]) == \
        ("Bundle.entry[1].resource.valueQuantity", "6.1")
    chart = as_json(cli(data_dir, "chart", "--patient", MRN, "--json"))
    assert {lab["test_name"] for lab in chart["labs"]} == {"Potassium", "Hemoglobin A1c", "Glucose"}
    broken = tmp_path / "broken.json"
    broken.write_bytes(b'{"resourceType": "Bundle", "entry": [')
    out = as_json(cli(data_dir, "ingest", str(broken), "--patient", MRN, "--doc-type", "fhir_bundle", "--json",
                      check=False))
    assert (out["job"]["status"], out["job"]["error_code"]) == ("failed", "corrupt_file")
