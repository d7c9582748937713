"""The demo patients' charts exported as FHIR R4 (issue 25's "done when"): the demo
documents read through the normal upload path, then every demo patient's bundle
validated with the R4B models and compared with the chart it came from."""

from __future__ import annotations

from fhir.resources.R4B import get_fhir_model_class
from fhir.resources.R4B.bundle import Bundle

from core.services.admin.patients import list_patients
from core.services.exchange.fhir_export import export_fhir
from core.services.ingest.demo import build_demo_documents, load_demo, read_demo_dir
from core.services.review.facts import chart_view

def resources_of(bundle):
    return [e["resource"] for e in bundle["entry"]]


_CLINICAL = ("Observation", "AllergyIntolerance", "MedicationStatement", "Condition", "FamilyMemberHistory")


def test_every_demo_patient_exports_a_valid_bundle_of_their_chart(wb, tmp_path):
    loaded = load_demo(wb, read_demo_dir(build_demo_documents(tmp_path / "demo")))
    quarantined = {d["document_id"] for d in loaded if "wrong-patient" in d["filename"]}
    patients = [p for p in list_patients(wb) if p["mrn"].startswith("DEMO-")]
    assert patients
    for patient in patients:
        chart = chart_view(wb, patient["id"])
        for include_review in (False, True):
            export = export_fhir(wb, mrn=patient["mrn"], include_review=include_review)
            bundle = export.bundle
            Bundle.model_validate(bundle)
            kinds: dict[str, list[dict]] = {}
            for entry in bundle["entry"]:
                resource = entry["resource"]
                get_fhir_model_class(resource["resourceType"]).model_validate(resource)
                kinds.setdefault(resource["resourceType"], []).append(resource)
            assert len(kinds["Patient"]) == 1 and kinds["Patient"][0]["identifier"][0]["value"] == patient["mrn"]
            charted = [r for r in kinds.get("Observation", []) if r["id"].startswith(("lab-", "vital-"))]
            assert len(charted) == len(chart["labs"]) + len(chart["vital_signs"])
            assert len([r for r in kinds.get("MedicationStatement", []) if r["id"].startswith("medication-")]) == len(
                chart["medications"])
            assert len([r for r in kinds.get("AllergyIntolerance", []) if r["id"].startswith("allergy-")]) == len(
                chart["allergies"])
            assert len([r for r in kinds.get("Condition", []) if r["id"].startswith("problem-")]) == len(
                chart["problems"])
            clinical = [r for k in _CLINICAL for r in kinds.get(k, [])]
            assert len(kinds.get("Provenance", [])) == len(clinical)
            targets = {t["reference"] for p in kinds.get("Provenance", []) for t in p["target"]}
            assert targets == {f"{r['resourceType']}/{r['id']}" for r in clinical}
            for prov in kinds.get("Provenance", []):
                for entity in prov["entity"]:
                    parts = {p["url"]: p for p in entity["extension"][0]["extension"]}
                    assert parts["quote"]["valueString"] and parts["pageOrSection"]["valueString"]
            cited = {d["id"] for d in kinds.get("DocumentReference", [])}
            assert not {f"document-{q}" for q in quarantined} & cited  # the wrong patient's lab never leaves
            preliminary = [r for r in clinical if (r.get("meta") or {}).get("tag")]
            assert len(preliminary) == export.review_items and (include_review or not preliminary)

        if patient["mrn"] == "DEMO-1001":
            observations = kinds["Observation"]
            critical = [r for r in observations if r.get("interpretation")
                        and r["interpretation"][0]["coding"][0]["code"] in ("HH", "LL")]
            assert any(r["code"]["text"] == "Potassium" for r in critical)
            # The intake says NKDA, the referral "penicillin - hives": the statement is not sent as
            # confirmed beside the charted allergy; with review items, it is sent unconfirmed, saying why.
            (nkda,) = [r for r in kinds["AllergyIntolerance"]
                       if any(c["code"] == "409137002" for c in r["code"].get("coding", []))]
            assert nkda["verificationStatus"]["coding"][0]["code"] == "unconfirmed"
            assert "contradicts" in nkda["note"][0]["text"]
            assert not any(r["id"] == nkda["id"] for r in resources_of(export_fhir(wb, mrn="DEMO-1001").bundle))
            assert export.review_items > 0
