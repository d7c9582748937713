"""The FHIR mapping of single values and items (no database): UCUM units, printed ranges,
vital signs with the vital-signs profile codes, "no known allergies", family history, and
entered-in-error; each resource checked with its R4B model."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest
from fhir.resources.R4B import get_fhir_model_class

from core.services.exchange.chart_source import ExportItem, Support
from core.services.exchange.fhir_provenance import provenance
from core.services.exchange.fhir_resources import clinical_resource, entered_in_error
from core.services.exchange.fhir_values import quantity, reference_range, ucum_code
from storage.rows import FactRow

SUBJECT = {"reference": "Patient/patient-1"}
_CITATION = {"source_type": "clinical_workbook", "source_id": "documents:4", "page_or_section": "Vitals!B3:E3",
             "field_or_chunk_id": "vitals[0]", "quote_or_value": "152/94"}


def item(kind, values, *, fact_text="", review=False, structured=None, citation=_CITATION):
    fact = FactRow(id=7, document_id=4, job_id=None, doc_type="clinical_workbook", fact_type=kind,
                   structured_value=structured or values, citation=citation, fact_text=fact_text,
                   created_at=datetime(2026, 3, 4, 9, 30))
    return ExportItem(kind=kind, key=f"x-{kind.replace('_', '-')}", values=values,
                      supports=[Support(fact, {}, "openpyxl", None)], review=review)


def valid(resource):
    get_fhir_model_class(resource["resourceType"]).model_validate(resource)
    return resource


@pytest.mark.parametrize("printed, code", [("x10E3/uL", "10*3/uL"), ("K/uL", "10*3/uL"), ("mEq/L", "meq/L"),
                                           ("mg/dL", "mg/dL"), ("mmHg", "mm[Hg]"), ("°F", "[degF]"),
                                           ("mL/min/1.73m2", "mL/min/{1.73_m2}"), ("µmol/L", "umol/L"),
                                           ("lb", "[lb_av]"), ("furlongs", None), ("", None)])
def test_printed_units_become_ucum_codes_or_stay_as_printed(printed, code):
    assert ucum_code(printed) == code


def test_values_and_ranges():
    assert quantity("<0.01", "ng/mL") == {"value": Decimal("0.01"), "comparator": "<", "unit": "ng/mL",
                                          "system": "http://unitsofmeasure.org", "code": "ng/mL"}
    assert quantity("1,250", "furlongs") == {"value": 1250, "unit": "furlongs"}  # unknown unit: no code guessed
    assert quantity("Positive", "") is None and quantity("", "mg") is None
    (r,) = reference_range("70 - 99", "mg/dL")
    assert (r["low"]["value"], r["high"]["value"], r["text"]) == (70, 99, "70 - 99")
    (r,) = reference_range(">=40", "mg/dL")
    assert "high" not in r and r["low"]["value"] == 40
    (r,) = reference_range("Negative", "")
    assert r == {"text": "Negative"}
    assert reference_range("", "mg/dL") == []


def test_a_blood_pressure_is_the_vital_signs_panel_with_two_components():
    bp = item("vital_sign", {"kind": "blood_pressure", "value": "152/94", "unit": "mmHg", "systolic": "152",
                             "diastolic": "94", "measured_at": "2026-03-04 14:30"})
    resource = valid(clinical_resource(bp, SUBJECT))
    assert resource["code"]["coding"][0]["code"] == "85354-9"
    assert resource["category"][0]["coding"][0]["code"] == "vital-signs"
    assert resource["meta"]["profile"] == ["http://hl7.org/fhir/StructureDefinition/vitalsigns"]
    parts = {c["code"]["coding"][0]["code"]: c["valueQuantity"] for c in resource["component"]}
    assert parts["8480-6"]["value"] == 152 and parts["8462-4"]["value"] == 94
    assert parts["8480-6"]["code"] == "mm[Hg]"
    # The printed time has no zone: the date only, the whole text in the chart-row extension.
    assert resource["effectiveDateTime"] == "2026-03-04"
    row = {p["url"]: p["valueString"] for p in resource["extension"][0]["extension"]}
    assert row["measured_at"] == "2026-03-04 14:30" and row["value"] == "152/94"
    prov = valid(provenance(bp, resource))
    assert prov["entity"][0]["extension"][0]["extension"][3] == {"url": "pageOrSection", "valueString": "Vitals!B3:E3"}


@pytest.mark.parametrize("kind, value, unit, loinc, ucum", [
    ("heart_rate", "88", "/min", "8867-4", "/min"), ("temperature", "38.2", "°C", "8310-5", "Cel"),
    ("spo2", "97", "%", "59408-5", "%"), ("weight", "81.4", "kg", "29463-7", "kg"),
    ("height", "168", "cm", "8302-2", "cm"), ("bmi", "28.8", "kg/m2", "39156-5", "kg/m2"),
    ("respiratory_rate", "18", "/min", "9279-1", "/min")])
def test_each_vital_sign_has_its_profile_code_and_ucum_unit(kind, value, unit, loinc, ucum):
    resource = valid(clinical_resource(item("vital_sign", {"kind": kind, "value": value, "unit": unit,
                                                           "measured_at": "2026-03-04"}), SUBJECT))
    assert resource["code"]["coding"][0] == {"system": "http://loinc.org", "code": loinc,
                                             "display": resource["code"]["coding"][0]["display"]}
    assert resource["valueQuantity"]["code"] == ucum and resource["status"] == "final"
    if kind == "spo2":
        assert [c["code"] for c in resource["code"]["coding"]] == ["59408-5", "2708-6"]


def test_no_known_allergies_are_snomed_coded_drug_or_not():
    quote = dict(_CITATION, quote_or_value="NKDA")
    nkda = valid(clinical_resource(item("allergy", {"substance": "", "status": "no_known_allergies"},
                                        fact_text="No known allergies reported", citation=quote), SUBJECT))
    assert nkda["code"]["coding"][0]["code"] == "409137002" and nkda["code"]["text"] == "No known drug allergy"
    assert nkda["verificationStatus"]["coding"][0]["code"] == "confirmed"
    none = valid(clinical_resource(item("allergy", {"substance": "", "no_known_allergies": True},
                                        fact_text="No known allergies", citation=dict(_CITATION, quote_or_value="None known")),
                                   SUBJECT))
    assert none["code"]["coding"][0]["code"] == "716186003"
    for status, code in (("no_known_drug_allergies", "409137002"), ("no_known_food_allergies", "429625007"),
                         ("no_known_allergies", "716186003")):
        said = valid(clinical_resource(item("allergy", {"substance": "", "status": status}, fact_text="Allergies",
                                            citation=dict(_CITATION, quote_or_value="as printed")), SUBJECT))
        assert said["code"]["coding"][0]["code"] == code, status


def test_allergy_severity_family_history_and_a_review_item():
    allergy = valid(clinical_resource(item("allergy", {"substance": "Sulfa", "reaction": "rash", "severity": "Severe"},
                                           review=True), SUBJECT))
    assert allergy["reaction"][0] == {"manifestation": [{"text": "rash"}], "severity": "severe"}
    assert allergy["verificationStatus"]["coding"][0]["code"] == "unconfirmed"
    history = valid(clinical_resource(item("family_history", {"relative": "Maternal grandmother",
                                                               "condition": "colon cancer"}), SUBJECT))
    assert history["relationship"]["coding"][0]["code"] == "MGRMTH"
    assert history["condition"][0]["code"]["text"] == "colon cancer" and history["status"] == "completed"
    unknown = valid(clinical_resource(item("family_history", {"relative": None, "condition": "diabetes"}), SUBJECT))
    assert unknown["relationship"]["coding"][0]["code"] == "FAMMEMB"
    problem = valid(clinical_resource(item("problem", {"description": "Type 2 diabetes", "code": "E11.9"},
                                           structured={"description": "Type 2 diabetes", "code": "E11.9",
                                                       "coding_system": "ICD-10-CM"}), SUBJECT))
    assert problem["code"]["coding"] == [{"system": "http://hl7.org/fhir/sid/icd-10-cm", "code": "E11.9"}]


@pytest.mark.parametrize("kind, values", [
    ("lab_result", {"test_name": "Sodium", "value": "131", "unit": "mmol/L", "abnormal_flag": "low"}),
    ("allergy", {"substance": "Latex", "reaction": "hives"}),
    ("medication", {"name": "Metformin", "dose": "500 mg", "frequency": "twice daily"}),
    ("problem", {"description": "Hypertension"}),
    ("family_history", {"relative": "Father", "condition": "stroke"})])
def test_every_kind_can_be_withdrawn_as_entered_in_error(kind, values):
    withdrawn = valid(entered_in_error(clinical_resource(item(kind, values), SUBJECT)))
    status = withdrawn.get("status") or withdrawn["verificationStatus"]["coding"][0]["code"]
    assert status == "entered-in-error"
