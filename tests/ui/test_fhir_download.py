"""The overview's FHIR download (ui/fhir_download.py): nothing is exported until asked;
then the bundle is built for the chosen patient, validated, and offered as a file."""

from __future__ import annotations

import json

from fhir.resources.R4B.bundle import Bundle

from tests.support.app_support import home
from tests.support.pipeline import count, ingest

_ORU = "\r".join([
    "MSH|^~\\&|LAB|RIVERSIDE LAB|EHR|CLINIC|20250802100000||ORU^R01^ORU_R01|UI-FHIR-1|P|2.5.1",
    "PID|1||DEMO-1001^^^CLINIC^MR||QUINTERO-VALE^MARISOL||19610314|F",
    "OBR|1|ORD3|FIL3|2160-0^Creatinine^LN|||20250802064500",
    "OBX|1|NM|2160-0^Creatinine^LN||1.9|mg/dL|0.6-1.3|H|||F",
]).encode() + b"\r"


def fhir_downloads(at) -> list:
    return [b for b in at.get("download_button") if "FHIR" in b.label or "fhir" in str(b.key)]


def test_the_overview_builds_the_bundle_only_when_asked(app_env, demo_patient):
    ingest(app_env, demo_patient, _ORU, "hl7v2_message", "creatinine.hl7")
    at = home(patient=demo_patient["id"])
    assert not at.exception, at.exception
    assert count(app_env, "SELECT count(*) FROM fhir_export_entries") == 0  # opening the page exports nothing
    assert not fhir_downloads(at)

    at.text_input(key="fhir_bundle_id").set_value("overview-1")
    at.button(key="fhir_build").click().run()
    assert not at.exception, at.exception
    assert len(fhir_downloads(at)) == 1
    _, bundle_id, text, counts = at.session_state["fhir_export_ready"]
    bundle = json.loads(text)
    Bundle.model_validate(bundle)
    assert bundle_id == bundle["id"] == "overview-1" and counts["Observation"] == 1
    assert count(app_env, "SELECT count(DISTINCT bundle_id) FROM fhir_export_entries") == 1

    at.text_input(key="fhir_bundle_id").set_value("not a valid id").run()
    at.button(key="fhir_build").click().run()
    assert any("No bundle" in e.value for e in at.error)
