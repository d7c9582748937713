"""`python -m core export-fhir` as a user runs it (DESIGN §9): one JSON object on stdout,
the bundle in the file named by --out, a one-line error and a non-zero exit otherwise."""

import json

from fhir.resources.R4B.bundle import Bundle

from tests.support.cli_support import as_json, cli

# A glucose result for the first demo patient, written for this test.
_ORU = "\r".join([
    "MSH|^~\\&|LAB|EASTLAKE LAB|EHR|CLINIC|20250704110000||ORU^R01^ORU_R01|CLI-FHIR-1|P|2.5.1",
    "PID|1||DEMO-1001^^^CLINIC^MR||QUINTERO-VALE^MARISOL||19610314|F",
    "OBR|1|ORD7|FIL7|2345-7^Glucose^LN|||20250704071500",
    "OBX|1|NM|2345-7^Glucose^LN||182|mg/dL|70-99|H|||F",
]) + "\r"


def test_export_fhir_writes_the_bundle_and_answers_in_one_json_object(tmp_path, cli_init):
    data = cli_init(tmp_path / "data")
    message = tmp_path / "glucose.hl7"
    message.write_text(_ORU)
    as_json(cli(data, "ingest", str(message), "--patient", "DEMO-1001", "--doc-type", "hl7v2_message", "--json"))

    out_file = tmp_path / "bundle.json"
    answer = as_json(cli(data, "export-fhir", "--patient", "DEMO-1001", "--out", str(out_file), "--bundle-id",
                         "cli-feed", "--json"))
    assert answer["patient_mrn"] == "DEMO-1001" and answer["out"] == str(out_file)
    assert answer["resources"] == {"Patient": 1, "DocumentReference": 1, "Observation": 1, "Provenance": 1}
    bundle = json.loads(out_file.read_text())
    Bundle.model_validate(bundle)
    assert bundle["id"] == "cli-feed" and bundle["type"] == "collection"
    glucose = next(e["resource"] for e in bundle["entry"] if e["resource"]["resourceType"] == "Observation")
    assert glucose["code"]["coding"][0]["code"] == "2345-7" and glucose["valueQuantity"]["value"] == 182

    missing = cli(data, "export-fhir", "--patient", "NOBODY-9", "--json", check=False)
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.strip().count("\n") == 0 and "NOBODY-9" not in missing.stderr  # no identifier in logs
