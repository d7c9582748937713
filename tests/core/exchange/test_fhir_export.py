"""The FHIR R4 export (issue 25): what the bundle holds, checked with the fhir.resources
R4B models, for documents read end to end through the pipeline."""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest
from fhir.resources.R4B import get_fhir_model_class
from fhir.resources.R4B.bundle import Bundle

from core.services.exchange.fhir_export import export_fhir
from core.services.review.corrections import correct_fact
from core.services.review.decisions import decide_fact, decide_identity
from core.services.review.facts import chart_view
from core.services.review.identity_review import undo_identity_decision
from core.services.review.retraction import delete_document
from domain.errors import BadInput
from golden.fixtures import render_intake, render_lab
from tests.support.pipeline import CASE, ambiguous, chart_patient, hedged_intake, ingest

LOINC, UCUM = "http://loinc.org", "http://unitsofmeasure.org"


def resources(bundle, kind=None):
    return [e["resource"] for e in bundle["entry"] if kind is None or e["resource"]["resourceType"] == kind]


def assert_valid_r4(bundle):
    """Every entry through its own R4B model, then the whole bundle."""
    Bundle.model_validate(bundle)
    for entry in bundle["entry"]:
        resource = entry["resource"]
        get_fhir_model_class(resource["resourceType"]).model_validate(resource)
        assert entry["fullUrl"].endswith(f"/{resource['resourceType']}/{resource['id']}")
    assert bundle["type"] == "collection"


def provenance_of(bundle, resource):
    target = f"{resource['resourceType']}/{resource['id']}"
    found = [p for p in resources(bundle, "Provenance") if target in [t["reference"] for t in p["target"]]]
    assert len(found) == 1, (target, found)
    return found[0]


def locator(entity):
    (ext,) = entity["extension"]
    return {p["url"]: p.get("valueString", p.get("valueInteger", p.get("valueBoolean", p.get("extension"))))
            for p in ext["extension"]}


def by_code_text(bundle, kind, text):
    return next(r for r in resources(bundle, kind) if r["code"]["text"] == text)


# An ORU written for these tests: OBX-14 on the first result only, a sender's own code
# (coding system "L") on the second, which the lab corrected (OBX-11 C).
_ORU = "\r".join([
    "MSH|^~\\&|LAB|NORTHGATE LAB|EHR|CLINIC|20250601120000||ORU^R01^ORU_R01|FX-1|P|2.5.1",
    "PID|1||DEMO-1001^^^CLINIC^MR||QUINTERO-VALE^MARISOL||19610314|F",
    "OBR|1|ORD9|FIL9|24323-8^Metabolic panel^LN|||20250601081500",
    "OBX|1|NM|2951-2^Sodium^LN||131|mmol/L|136-145|L|||F|||20250530074500",
    "OBX|2|NM|K-SER^Potassium, serum^L||5.6|mmol/L|3.5-5.1|H|||C",
    "OBX|3|NM|2160-0^Creatinine^LN||1.0|mg/dL|0.6-1.3|N|||F",
]).encode() + b"\r"


def test_hl7_results_follow_the_v2_to_fhir_mapping(wb, demo_patient):
    ingest(wb, demo_patient, _ORU, "hl7v2_message", "panel.hl7")
    bundle = export_fhir(wb, mrn="DEMO-1001").bundle
    assert_valid_r4(bundle)

    sodium = by_code_text(bundle, "Observation", "Sodium")
    assert {"system": LOINC, "code": "2951-2"}.items() <= sodium["code"]["coding"][0].items()  # OBX-3
    assert sodium["valueQuantity"] == {"value": 131, "unit": "mmol/L", "system": UCUM, "code": "mmol/L"}  # OBX-5/6
    assert sodium["referenceRange"][0]["low"]["value"] == 136 and sodium["referenceRange"][0]["high"]["value"] == 145
    assert sodium["referenceRange"][0]["text"] == "136-145"  # OBX-7 as printed
    assert [c["code"] for i in sodium["interpretation"] for c in i["coding"]] == ["L"]  # OBX-8
    assert sodium["effectiveDateTime"] == "2025-05-30"  # OBX-14 before OBR-7
    assert sodium["status"] == "final"  # OBX-11 F

    potassium = by_code_text(bundle, "Observation", "Potassium, serum")
    assert potassium["status"] == "corrected"  # OBX-11 C
    assert potassium["effectiveDateTime"] == "2025-06-01"  # no OBX-14: OBR-7
    codings = {c["code"]: c["system"] for c in potassium["code"]["coding"]}
    assert codings["K-SER"].endswith("sender-local-code")  # the sender's own code, kept as its own coding
    assert codings["2823-3"] == LOINC  # the analyte vocabulary's LOINC code for the name

    # The Provenance cites the OBX field the value was read from, with its quote.
    entity = provenance_of(bundle, sodium)["entity"][0]
    where = locator(entity)
    assert "OBX" in where["pageOrSection"] + where.get("field", "") and where["quote"] == "131"
    assert entity["what"]["reference"].startswith("DocumentReference/")


def test_every_kind_of_trusted_fact_is_exported_with_provenance(wb):
    case = hedged_intake()
    patient = chart_patient(wb, case.patient)
    ingest(wb, patient, render_lab(dataclasses.replace(CASE, patient=case.patient)), "lab_pdf", "lab.pdf")
    ingest(wb, patient, render_intake(case), "intake_form", "intake.pdf")
    export = export_fhir(wb, mrn=case.patient.mrn)
    bundle = export.bundle
    assert_valid_r4(bundle)

    (person,) = resources(bundle, "Patient")
    assert person["identifier"][0]["value"] == case.patient.mrn and person["identifier"][0]["type"]["coding"][0][
        "code"] == "MR"
    assert person["birthDate"] == case.patient.dob and person["name"][0]["family"] == case.patient.last

    chart = chart_view(wb, patient["id"])
    assert len(resources(bundle, "Observation")) == len(chart["labs"]) + len(chart["vital_signs"])
    assert len(resources(bundle, "MedicationStatement")) == len(chart["medications"])
    allergies = resources(bundle, "AllergyIntolerance")
    assert {a["code"]["text"].lower() for a in allergies} == {r["substance"].lower() for r in chart["allergies"]}
    assert all(a["verificationStatus"]["coding"][0]["code"] == "confirmed" for a in allergies)
    # "shellfish?" waits for review: not in the default export.
    assert not any("shellfish" in str(r).lower() for r in resources(bundle))

    documents = resources(bundle, "DocumentReference")
    assert {d["content"][0]["attachment"]["title"] for d in documents} == {"lab.pdf", "intake.pdf"}
    for doc in documents:
        assert doc["content"][0]["attachment"]["contentType"] == "application/pdf"
        assert len(doc["identifier"][0]["value"]) == 64 and doc["content"][0]["attachment"]["hash"]

    clinical = [r for r in resources(bundle) if r["resourceType"] not in
                ("Patient", "Practitioner", "DocumentReference", "Provenance")]
    assert len(resources(bundle, "Provenance")) == len(clinical)
    for resource in clinical:
        prov = provenance_of(bundle, resource)
        assert prov["activity"]["text"] == "extracted" and prov["agent"][0]["who"]["display"]  # the engine
        where = locator(prov["entity"][0])
        assert where["quote"] and where["pageOrSection"] and where["source"].startswith("documents:")
    a1c = by_code_text(bundle, "Observation", "Hemoglobin A1c")
    assert a1c["code"]["coding"][0] == {"system": LOINC, "code": "4548-4", "display": "Hemoglobin A1c"}
    assert a1c["valueQuantity"]["code"] == "%" and a1c["interpretation"][0]["coding"][0]["code"] == "H"
    box = locator(provenance_of(bundle, a1c)["entity"][0])["boundingBox"]
    assert {p["url"] for p in box} == {"x", "y", "width", "height"}  # the page box of a PDF


def test_review_items_only_on_request_marked_unconfirmed_and_approved_ones_name_their_reviewer(wb):
    case = hedged_intake()
    patient = chart_patient(wb, case.patient)
    ingest(wb, patient, render_intake(case), "intake_form", "intake.pdf")
    default = export_fhir(wb, mrn=case.patient.mrn)
    assert default.review_items == 0

    with_review = export_fhir(wb, mrn=case.patient.mrn, include_review=True)
    assert_valid_r4(with_review.bundle)
    assert with_review.review_items > 0
    shellfish = next(a for a in resources(with_review.bundle, "AllergyIntolerance") if "shellfish" in str(a).lower())
    assert shellfish["verificationStatus"]["coding"][0]["code"] == "unconfirmed"
    assert shellfish["meta"]["tag"][0]["code"] == "unconfirmed"
    assert provenance_of(with_review.bundle, shellfish)  # review items are cited too
    fact_id = int(shellfish["id"].split("-")[1])

    decide_fact(wb, fact_id, approve=True, by="dr.alice", reason="asked the patient: shellfish, yes")
    after = export_fhir(wb, mrn=case.patient.mrn).bundle
    assert_valid_r4(after)
    approved = next(a for a in resources(after, "AllergyIntolerance") if "shellfish" in a["code"]["text"].lower())
    assert approved["verificationStatus"]["coding"][0]["code"] == "confirmed" and "meta" not in approved
    prov = provenance_of(after, approved)
    assert prov["activity"]["text"] == "verified"
    verifier = next(a for a in prov["agent"] if a["type"]["coding"][0]["code"] == "verifier")
    (doctor,) = [p for p in resources(after, "Practitioner") if f"Practitioner/{p['id']}" == verifier["who"]["reference"]]
    assert doctor["identifier"][0]["value"] == "dr.alice"


def test_a_corrected_value_is_exported_corrected_and_the_misread_entered_in_error(wb):
    patient = chart_patient(wb, CASE.patient)
    report = ingest(wb, patient, render_lab(CASE), "lab_pdf")
    first = export_fhir(wb, mrn=CASE.patient.mrn, bundle_id="chart-feed-1").bundle
    before = by_code_text(first, "Observation", "Hemoglobin A1c")
    fact = next(f for f in report["facts"] if f["structured_value"]["test_name"] == "Hemoglobin A1c")
    correct_fact(wb, fact["fact_id"], by="dr.alice", value="8.1", reason="value confirmed with the lab")

    export = export_fhir(wb, mrn=CASE.patient.mrn, bundle_id="chart-feed-1")
    assert_valid_r4(export.bundle)
    a1c = [r for r in resources(export.bundle, "Observation") if r["code"]["text"] == "Hemoglobin A1c"]
    corrected = next(r for r in a1c if r["status"] == "corrected")
    assert corrected["valueQuantity"]["value"] == 8.1
    prov = provenance_of(export.bundle, corrected)
    assert prov["activity"]["text"] == "corrected"
    assert any(a["who"].get("display") == "dr.alice" and a["type"]["coding"][0]["code"] == "author"
               for a in prov["agent"])
    assert locator(prov["entity"][0])["quote"] == fact["citation"]["quote_or_value"]  # as printed, still
    # The chart row holding the misread value is gone: sent again as entered-in-error.
    old = next(r for r in a1c if r["id"] == before["id"])
    assert old["status"] == "entered-in-error" and f"Observation/{old['id']}" in export.entered_in_error


def test_retracted_rows_are_absent_and_entered_in_error_for_the_same_bundle_id(wb):
    patient = chart_patient(wb, CASE.patient)
    lab = ingest(wb, patient, render_lab(CASE), "lab_pdf", "lab.pdf")
    first = export_fhir(wb, mrn=CASE.patient.mrn, bundle_id="feed.1")
    labs = resources(first.bundle, "Observation")
    assert labs and all(r["status"] == "final" for r in labs)

    delete_document(wb, lab["document_id"], by="dr.alice", reason="filed on the wrong chart")

    fresh = export_fhir(wb, mrn=CASE.patient.mrn, bundle_id="feed.2")
    assert resources(fresh.bundle, "Observation") == [] and fresh.entered_in_error == []  # absent
    again = export_fhir(wb, mrn=CASE.patient.mrn, bundle_id="feed.1")
    assert_valid_r4(again.bundle)
    withdrawn = resources(again.bundle, "Observation")
    assert {r["id"] for r in withdrawn} == {r["id"] for r in labs}
    assert all(r["status"] == "entered-in-error" for r in withdrawn)
    (doc,) = resources(again.bundle, "DocumentReference")
    assert doc["status"] == "entered-in-error"
    for r in withdrawn:
        prov = provenance_of(again.bundle, r)
        assert prov["activity"]["text"] == "retracted" and prov["entity"]  # the sources as exported before
    # Idempotent: exporting the same id again says the same.
    assert sorted(export_fhir(wb, mrn=CASE.patient.mrn, bundle_id="feed.1").entered_in_error) == sorted(
        again.entered_in_error)


def test_a_bundle_id_is_checked_and_belongs_to_one_patient(wb, demo_patient):
    patient = chart_patient(wb, CASE.patient)
    ingest(wb, patient, render_lab(CASE), "lab_pdf")
    export_fhir(wb, mrn=CASE.patient.mrn, bundle_id="shared-id")
    with pytest.raises(BadInput) as err:
        export_fhir(wb, mrn="DEMO-1001", bundle_id="shared-id")
    assert err.value.code == "bundle_id_in_use"
    for bad in ("has space", "x" * 65, "slash/id", ""):
        with pytest.raises(BadInput):
            export_fhir(wb, mrn="DEMO-1001", bundle_id=bad or " ")


def test_an_identity_approval_undone_withdraws_the_rows_and_the_document(wb):
    patient, report = ambiguous(wb)
    check_id = report["identity"]["identity_check_id"]
    assert export_fhir(wb, mrn=CASE.patient.mrn, bundle_id="undo-feed").counts == {"Patient": 1}  # held: nothing
    decide_identity(wb, check_id, approve=True, by="dr.alice")
    approved = export_fhir(wb, mrn=CASE.patient.mrn, bundle_id="undo-feed").bundle
    assert len(resources(approved, "Observation")) == len(CASE.results)
    prov = provenance_of(approved, resources(approved, "Observation")[0])
    attester = next(a for a in prov["agent"] if a["type"]["coding"][0]["code"] == "attester")
    assert attester["who"]["display"] == "dr.alice" and prov["activity"]["text"] == "extracted"
    assert [p["identifier"][0]["value"] for p in resources(approved, "Practitioner")] == ["dr.alice"]

    undo_identity_decision(wb, check_id, by="dr.carol", reason="approved the wrong document")
    again = export_fhir(wb, mrn=CASE.patient.mrn, bundle_id="undo-feed", include_review=True)
    assert_valid_r4(again.bundle)
    assert again.review_items == 0  # held again: not even a review item
    assert {r["status"] for r in resources(again.bundle, "Observation")} == {"entered-in-error"}
    assert [d["status"] for d in resources(again.bundle, "DocumentReference")] == ["entered-in-error"]


def test_charted_vital_signs_use_the_vital_signs_profile_and_cite_their_cells(wb):
    from core.services.admin.patients import add_patient
    from tests.support.file_builders import sheets_workbook

    add_patient(wb, mrn="VS-20417", first="Odile", last="Brightwater", dob=date(1949, 6, 2), sex="F", by="dr.reviewer")
    book = sheets_workbook({"Patient": [["Patient", "Odile Brightwater"], ["DOB", "1949-06-02"], ["MRN", "VS-20417"]],
                            "Obs": [["Date", "BP", "Pulse", "Temp", "SpO2", "Weight"],
                                    ["2026-01-20 08:40", "138/86", 74, "37.9 C", "95%", "62.5 kg"]]})
    ingest(wb, {"id": _patient_id(wb, "VS-20417")}, book, "clinical_workbook", "obs.xlsx")
    bundle = export_fhir(wb, mrn="VS-20417").bundle
    assert_valid_r4(bundle)
    vitals = {r["code"]["coding"][0]["code"]: r for r in resources(bundle, "Observation")}
    assert set(vitals) == {"85354-9", "8867-4", "8310-5", "59408-5", "29463-7"}
    bp = vitals["85354-9"]
    assert bp["category"][0]["coding"][0]["code"] == "vital-signs" and bp["effectiveDateTime"] == "2026-01-20"
    assert {c["code"]["coding"][0]["code"]: c["valueQuantity"]["value"] for c in bp["component"]} == {
        "8480-6": 138, "8462-4": 86}
    units = {code: (r["valueQuantity"]["value"], r["valueQuantity"]["code"]) for code, r in vitals.items()
             if code != "85354-9"}
    assert units == {"8867-4": (74, "/min"), "8310-5": (37.9, "Cel"), "59408-5": (95, "%"), "29463-7": (62.5, "kg")}
    assert all(r["meta"]["profile"] == ["http://hl7.org/fhir/StructureDefinition/vitalsigns"] for r in vitals.values())
    where = locator(provenance_of(bundle, bp)["entity"][0])
    assert "Obs" in where["pageOrSection"] and "138/86" in where["quote"]  # the sheet's cell


def _patient_id(wb, mrn):
    from core.services.admin.patients import get_patient

    return get_patient(wb, mrn=mrn)["id"]


def test_nkda_beside_a_charted_allergy_is_held_and_sent_again_unconfirmed_under_the_same_id(wb):
    from golden.fixtures import INTAKE_CASES

    none_known = dataclasses.replace(INTAKE_CASES[0], allergies_printed="NKDA")
    patient = chart_patient(wb, none_known.patient)
    ingest(wb, patient, render_intake(none_known), "intake_form", "first-visit.pdf")
    first = export_fhir(wb, mrn=none_known.patient.mrn, bundle_id="nkda-feed").bundle
    (nkda,) = resources(first, "AllergyIntolerance")
    assert nkda["code"]["coding"][0]["code"] == "409137002"
    assert nkda["verificationStatus"]["coding"][0]["code"] == "confirmed"

    allergic = dataclasses.replace(none_known, allergies_printed="Penicillin (hives)")
    ingest(wb, patient, render_intake(allergic), "intake_form", "second-visit.pdf")
    fresh = export_fhir(wb, mrn=none_known.patient.mrn).bundle  # a new id: the contradicted statement stays out
    assert [a["code"]["text"].lower() for a in resources(fresh, "AllergyIntolerance")] == ["penicillin"]
    again = export_fhir(wb, mrn=none_known.patient.mrn, bundle_id="nkda-feed")  # sent before as confirmed
    assert_valid_r4(again.bundle)
    held = next(a for a in resources(again.bundle, "AllergyIntolerance") if a["id"] == nkda["id"])
    assert held["verificationStatus"]["coding"][0]["code"] == "unconfirmed" and "Penicillin" in held["note"][0]["text"]
