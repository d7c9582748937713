"""FHIR R4 in: identity, lab results, vital signs, allergies (NKDA), medications and
problems from bundles written by hand in the shapes EHR and Synthea exports and the
workbench's own exporter write; every citation is the JSON path of the element read and
quotes the value as the file writes it (checked against the content for each test)."""

from __future__ import annotations

import json

import pytest

from domain.errors import ExtractionError
from domain.models import DocType
from extract.coverage import unread_content
from extract.fhir.facts import extract_fhir
from extract.formats.fhir.normalize import normalize_fhir
from extract.registry import extractor_for
from tests.support import fhir_bundles as F
from tests.support.extract_support import identity, of_type, read_and_extract

SOURCE = "documents:41"


def run(doc: dict | bytes):
    data = doc if isinstance(doc, bytes) else F.as_bytes(doc)
    return read_and_extract(data, normalize_fhir, extract_fhir, SOURCE)


def one(result, fact_type: str, **where):
    found = [f for f in of_type(result, fact_type)
             if all(f.structured_value.get(k) == v for k, v in where.items())]
    assert len(found) == 1, [f.fact_text for f in of_type(result, fact_type)]
    return found[0]


def test_registered_for_the_seventh_doc_type():
    assert extractor_for(DocType.FHIR_BUNDLE) is extract_fhir


def test_exporter_shape_gives_identity_and_every_finding_with_json_path_citations():
    content, result = run(F.patient_bundle())
    assert result.doc_type is DocType.FHIR_BUNDLE
    assert identity(result) == {"name": "Brennerman, Odalys", "dob": "1961-07-19", "mrn": "WB-FH-3301"}
    k = one(result, "lab_result", test_name="Potassium")
    assert k.structured_value.items() >= {"value": "6.1", "unit": "mmol/L", "reference_range": "3.5-5.1",
                                       "abnormal_flag": "high", "collection_date": "2025-11-02", "loinc": "2823-3"}.items()
    assert k.citation.page_or_section == "Bundle.entry[1].resource.valueQuantity"
    assert k.citation.quote_or_value == "6.1"
    assert not k.wants_review and not k.document_fact_only
    a1c = one(result, "lab_result", test_name="Hemoglobin A1c")
    assert (a1c.structured_value["reference_range"], a1c.structured_value["unit"]) == ("<5.7", "%")
    assert one(result, "lab_result", test_name="Glucose").structured_value["abnormal_flag"] == "normal"
    bp = one(result, "vital_sign", kind="blood_pressure")
    assert bp.structured_value.items() >= {"value": "152/94", "systolic": "152", "diastolic": "94", "unit": "mmHg",
                                        "measured_at": "2025-11-02 08:40"}.items()
    assert bp.citation.page_or_section == "Bundle.entry[4].resource.component[0].valueQuantity"
    pen = one(result, "allergy", substance="Penicillin")
    assert (pen.structured_value["reaction"], pen.structured_value["verification_status"]) == ("Hives", "confirmed")
    assert pen.citation.page_or_section == "Bundle.entry[5].resource.code"
    med = one(result, "medication", name="Metformin 500 mg oral tablet")
    assert med.structured_value.items() >= {"dose": "500 mg", "route": "Oral route", "start_date": "2024-01-15",
                                         "code": "861007"}.items()
    problem = one(result, "problem", description="Type 2 diabetes mellitus")
    assert (problem.structured_value["code"], problem.structured_value["coding_system"]) == ("44054006", "SNOMED CT")
    # Provenance is how the record came to be, not a finding; nothing is left unread.
    assert not [f for f in result.facts if "Provenance" in f.citation.page_or_section]
    assert unread_content(content, result.facts) == []


def test_values_are_quoted_as_the_file_writes_them():
    raw = F.as_bytes(F.bundle(F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"),
                              F.lab("2160-0", "Creatinine", 1.0, "mg/dL", low=0.6, high=1.2)))
    raw = raw.replace(b'"value": 1.0,', b'"value": 1.00,')  # as a lab system writes it
    _, result = run(raw)
    creat = one(result, "lab_result", test_name="Creatinine")
    assert creat.structured_value["value"] == creat.citation.quote_or_value == "1.00"


def test_synthea_shape_patient_and_records():
    doc = F.bundle(
        F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301", system="http://hospital.smarthealthit.org",
                  others=True),
        F.lab("2093-3", "Total Cholesterol", 195.4, "mg/dL", when="2024-02-10T09:12:44-05:00"),
        F.condition("Essential hypertension (disorder)", "59621000"),
        F.medication_request("lisinopril 10 MG Oral Tablet", "314076"),
        F.allergy("Peanut (substance)", "762952008", reaction="Urticaria", category="food"),
        F.vital("29463-7", "Body Weight", 81.6, "kg", "kg"),
        F.vital("8310-5", "Body temperature", 37.2, "Cel", "Cel"),
        F.vital("8867-4", "Heart rate", 88, "/min", "/min"),
        {"resourceType": "Encounter", "status": "finished", "class": {"code": "AMB"}},
        kind="transaction",
    )
    content, result = run(doc)
    ids = {(i.kind.value, i.value) for i in result.identifiers}
    assert ("mrn", "WB-FH-3301") in ids
    # The Synthea id and the social security number are other identifiers: never an MRN.
    assert ("other_id", "999-41-7755") in ids and len([i for i in ids if i[0] == "mrn"]) == 1
    chol = one(result, "lab_result", test_name="Total Cholesterol")
    assert (chol.structured_value["value"], chol.structured_value["abnormal_flag"]) == ("195.4", "unknown")
    assert one(result, "medication", name="lisinopril 10 MG Oral Tablet").structured_value["start_date"] == "2023-06-20"
    assert one(result, "allergy", substance="Peanut (substance)").structured_value["allergen_type"] == "food"
    temp = one(result, "vital_sign", kind="temperature")
    assert (temp.structured_value["value"], temp.structured_value["unit"]) == ("37.2", "°C")
    assert one(result, "vital_sign", kind="weight").structured_value["unit"] == "kg"
    assert one(result, "vital_sign", kind="heart_rate").structured_value["unit"] == "/min"
    assert unread_content(content, result.facts) == []


def test_a_single_resource_is_read_with_paths_rooted_at_its_type():
    obs = F.lab("2951-2", "Sodium", 139, "mmol/L", low=135, high=145) | {"id": "na-1"}
    content, result = run(obs)
    sodium = one(result, "lab_result", test_name="Sodium")
    assert sodium.citation.page_or_section == "Observation.valueQuantity"
    assert result.identifiers == []  # no Patient: the identity gate will ask a person
    assert "fhir_no_patient" in {w.code for w in result.warnings}


def test_no_known_drug_allergy_is_a_cited_statement_never_an_allergy():
    _, result = run(F.bundle(F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"),
                             F.no_known_drug_allergy()))
    nkda = one(result, "allergy", status="no_known_drug_allergies")  # NKDA stays about drugs
    assert nkda.document_fact_only and nkda.structured_value["no_known_allergies"] is True
    assert nkda.structured_value["substance"] == "" and nkda.structured_value["code"] == "409137002"


@pytest.mark.parametrize("status, review, doc_only", [
    ("final", False, False), ("corrected", False, False), ("preliminary", True, False), ("unknown", True, False),
])
def test_observation_status_decides_how_far_a_result_may_go(status, review, doc_only):
    _, result = run(F.bundle(F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"),
                             F.lab("2823-3", "Potassium", 4.2, "mmol/L", low=3.5, high=5.1, status=status)))
    k = one(result, "lab_result", test_name="Potassium")
    assert (k.wants_review, k.document_fact_only) == (review, doc_only)


def test_registered_observation_is_a_pending_review_item_without_a_value():
    obs = F.lab("2823-3", "Potassium", 4.2, "mmol/L", status="registered")
    del obs["valueQuantity"]
    content, result = run(F.bundle(F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"), obs))
    k = one(result, "lab_result", test_name="Potassium")
    assert k.wants_review and k.structured_value["value"] == "" and k.structured_value["pending"] is True
    assert unread_content(content, result.facts) == []


def test_unconfirmed_allergy_and_provisional_diagnosis_go_to_review_refuted_is_a_document_fact():
    _, result = run(F.bundle(
        F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"),
        F.allergy("Sulfamethoxazole", "363528006", verification="unconfirmed"),
        F.allergy("Latex", "111088007", verification="refuted"),
        F.condition("Asthma", "195967001", verification="provisional"),
        F.condition("Appendicitis", "74400008", clinical="resolved"),
        F.medication_statement("Atorvastatin 20 MG", "617312", status="stopped"),
    ))
    assert one(result, "allergy", substance="Sulfamethoxazole").wants_review
    latex = one(result, "allergy", substance="Latex")
    assert latex.document_fact_only and not latex.wants_review
    assert one(result, "problem", description="Asthma").wants_review
    assert one(result, "problem", description="Appendicitis").document_fact_only
    assert one(result, "medication", name="Atorvastatin 20 MG").document_fact_only


def test_entered_in_error_resources_are_not_charted_and_named_in_a_warning():
    content, result = run(F.bundle(
        F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"),
        F.lab("2823-3", "Potassium", 7.9, "mmol/L", status="entered-in-error"),
        F.allergy("Codeine", "387494007", verification="entered-in-error"),
        F.lab("2951-2", "Sodium", 139, "mmol/L"),
    ))
    assert {f.structured_value.get("test_name") for f in of_type(result, "lab_result")} == {"Sodium"}
    assert of_type(result, "allergy") == []
    withdrawn = [w.message for w in result.warnings if w.code == "fhir_entered_in_error"]
    assert len(withdrawn) == 2 and any("Bundle.entry[1].resource" in m for m in withdrawn)
    assert unread_content(content, result.facts) == []  # withdrawn on purpose, not missed


def test_invalid_resource_is_reported_with_its_path_and_the_rest_is_read():
    bad = F.lab("2823-3", "Potassium", 5.0, "mmol/L")
    bad["valueQuantity"]["value"] = "five"  # a decimal must be a JSON number
    bad2 = F.condition("Gout", "90560007")
    bad2["onsetDateTime"] = "2019-14-40"
    content, result = run(F.bundle(F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"), bad,
                                   F.lab("2951-2", "Sodium", 139, "mmol/L"), bad2))
    invalid = [w.message for w in result.warnings if w.code == "fhir_invalid_resource"]
    assert len(invalid) == 2
    assert "Bundle.entry[1].resource (Observation)" in invalid[0] and "valueQuantity.value" in invalid[0]
    assert "Bundle.entry[3].resource (Condition)" in invalid[1] and "onsetDateTime" in invalid[1]
    assert "five" not in " ".join(invalid)  # field names and rules only, never the values
    assert [f.structured_value["test_name"] for f in of_type(result, "lab_result")] == ["Sodium"]
    # The invalid observation is a result by structure: the coverage guard reports it.
    regions = unread_content(content, result.facts)
    assert [r.locator for r in regions] == ["Bundle.entry[1].resource"] and "validation" in regions[0].reason
    # The invalid condition waits for a person, named, never charted by itself.
    gout = one(result, "problem", description="Gout")
    assert gout.wants_review and "Bundle.entry[3].resource failed FHIR R4 validation" in gout.review_reason
    assert gout.citation.page_or_section == "Bundle.entry[3].resource.code"


def test_invalid_patient_gives_no_identity_but_its_values_as_printed_not_read():
    pat = F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301")
    pat["birthDate"] = "19-07-1961"
    _, result = run(F.bundle(pat, F.lab("2951-2", "Sodium", 139, "mmol/L")))
    assert result.identifiers == []
    assert {u.kind for u in result.unread_identifiers} == {"name", "dob", "record_number"}
    assert "fhir_invalid_resource" in {w.code for w in result.warnings}


def test_several_patients_send_everything_to_review():
    _, result = run(F.bundle(
        F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"),
        F.patient("Teodor", "Vashenko", "1950-01-02", "WB-FH-9999", pid="pat-2"),
        F.lab("2951-2", "Sodium", 139, "mmol/L"),
    ))
    assert {i.value for i in result.identifiers if i.kind.value == "mrn"} == {"WB-FH-3301", "WB-FH-9999"}
    assert all(f.wants_review for f in result.facts if f.fact_type == "lab_result")
    assert "fhir_several_patients" in {w.code for w in result.warnings}


def test_a_finding_about_another_subject_goes_to_review():
    _, result = run(F.bundle(F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"),
                             F.lab("2951-2", "Sodium", 139, "mmol/L", subject="Patient/someone-else")))
    sodium = one(result, "lab_result", test_name="Sodium")
    assert sodium.wants_review and "not the file's Patient" in sodium.review_reason


def test_interpretation_codes_critical_and_disagreeing():
    _, result = run(F.bundle(
        F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"),
        F.lab("2823-3", "Potassium", 6.9, "mmol/L", low=3.5, high=5.1, flag="HH"),
        F.lab("2951-2", "Sodium", 128, "mmol/L", low=135, high=145, flag="N"),
        F.lab("1975-2", "Bilirubin total", 0.4, "mg/dL", comparator="<", range_text="0.1-1.2"),
    ))
    assert one(result, "lab_result", test_name="Potassium").structured_value["abnormal_flag"] == "critical_high"
    sodium = one(result, "lab_result", test_name="Sodium")
    assert sodium.wants_review and "disagrees" in sodium.review_reason  # N printed, value below range
    assert one(result, "lab_result", test_name="Bilirubin total").structured_value["value"] == "<0.4"


def test_other_clinical_resources_not_read_are_counted_in_a_warning():
    _, result = run(F.bundle(F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"),
                             {"resourceType": "Immunization", "status": "completed",
                              "vaccineCode": {"text": "Influenza"}, "patient": {"reference": "urn:uuid:pat-1"},
                              "occurrenceDateTime": "2025-10-01"},
                             F.provenance("urn:uuid:pat-1", "x")))
    warning = next(w.message for w in result.warnings if w.code == "fhir_resources_not_read")
    assert "Immunization ×1" in warning and "Provenance" not in warning


def test_a_file_without_any_patient_data_fails_with_a_code():
    with pytest.raises(ExtractionError) as err:
        run(F.bundle({"resourceType": "Organization", "name": "Clinic"}))
    assert err.value.code == "no_clinical_content"


def test_citations_survive_compact_json_and_escaped_text():
    doc = F.patient_bundle(first="Zoë", last="Ångström")
    content, result = run(json.dumps(doc, separators=(",", ":"), ensure_ascii=True).encode())
    assert identity(result)["name"] == "Ångström, Zoë"
    assert one(result, "lab_result", test_name="Potassium").citation.quote_or_value == "6.1"


def test_family_member_history_is_a_document_fact_per_condition():
    _, result = run(F.bundle(F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"),
                             F.family_history("mother", "Breast cancer", "254837009"),
                             F.family_history("father", "Stroke", "230690007", status="entered-in-error")))
    fh = one(result, "family_history", relative="mother")
    assert fh.document_fact_only and fh.structured_value["condition"] == "Breast cancer"
    assert fh.citation.page_or_section == "Bundle.entry[1].resource.condition[0].code"
    assert len(of_type(result, "family_history")) == 1  # the withdrawn one is not read
    assert "fhir_resources_not_read" not in {w.code for w in result.warnings}


def test_a_vital_sign_the_table_does_not_know_is_a_document_fact_not_a_lab_result():
    pain = F.vital("72514-3", "Pain severity - 0-10 verbal numeric rating", 3, "{score}", "{score}")
    _, result = run(F.bundle(F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"), pain))
    assert of_type(result, "lab_result") == [] and of_type(result, "vital_sign") == []
    other = one(result, "other", value="3")
    assert other.document_fact_only and other.citation.page_or_section == "Bundle.entry[1].resource.valueQuantity"


def test_a_proposed_prescription_waits_for_review():
    proposed = F.medication_request("Empagliflozin 10 MG Oral Tablet", "1545658") | {"intent": "proposal"}
    _, result = run(F.bundle(F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"), proposed,
                             F.medication_request("lisinopril 10 MG Oral Tablet", "314076")))
    assert one(result, "medication", name="Empagliflozin 10 MG Oral Tablet").wants_review
    assert not one(result, "medication", name="lisinopril 10 MG Oral Tablet").wants_review


def test_a_medication_named_by_reference_takes_the_referenced_medications_name():
    inline = F.medication_request("x", "0")
    del inline["medicationCodeableConcept"]
    inline |= {"contained": [{"resourceType": "Medication", "id": "med1",
                              "code": {"coding": [F.coding(F.RXNORM, "197361", "Amlodipine 5 MG Oral Tablet")]}}],
               "medicationReference": {"reference": "#med1"}}
    shared = F.medication_statement("y", "0")
    del shared["medicationCodeableConcept"]
    shared["medicationReference"] = {"reference": "urn:uuid:med-2", "display": "Atorvastatin 20 MG Oral Tablet"}
    medication = {"resourceType": "Medication", "id": "med-2",
                  "code": {"coding": [F.coding(F.RXNORM, "617312", "Atorvastatin 20 MG Oral Tablet")]}}
    _, result = run(F.bundle(F.patient("Odalys", "Brennerman", "1961-07-19", "WB-FH-3301"), inline, shared,
                             medication))
    amlodipine = one(result, "medication", name="Amlodipine 5 MG Oral Tablet")
    assert amlodipine.structured_value["code"] == "197361" and amlodipine.wants_review is False
    assert amlodipine.citation.page_or_section == "Bundle.entry[1].resource.medicationReference"
    atorvastatin = one(result, "medication", name="Atorvastatin 20 MG Oral Tablet")
    assert atorvastatin.structured_value["code"] == "617312"


def test_an_observation_of_a_urine_specimen_is_the_urines_never_the_blood_test():
    # A held-out bundle (written after the rule): a dipstick's "Glucose: Negative" on a
    # urine Specimen was charted as a blood glucose, in conflict with the serum glucose.
    from domain.policy.facts.analytes import canonical_analyte

    urine = {"resourceType": "Specimen", "id": "spec-1", "type": {"text": "Urine, midstream"}}
    dipstick = F.lab("", "Glucose", 0, "") | {"code": {"text": "Glucose"}, "valueString": "Negative",
                                            "specimen": {"reference": "urn:uuid:spec-1"}}
    dipstick.pop("valueQuantity")
    shown = F.lab("", "Protein", 0, "") | {"code": {"text": "Protein"}, "valueString": "1+",
                                         "specimen": {"display": "Urine"}}
    shown.pop("valueQuantity")
    serum = F.lab("2345-7", "Glucose", 8.8, "mmol/L", low=3.9, high=7.8)
    _, result = run(F.bundle(F.patient("Ada", "Quill", "1960-02-03", "AQ-1"), urine, dipstick, shown, serum))
    assert [(f.structured_value["test_name"], canonical_analyte(f.structured_value["test_name"]))
            for f in of_type(result, "lab_result")] == [
        ("Glucose (urine)", "urine_glucose"), ("Protein (urine)", "urine_protein"), ("Glucose", "glucose")]
