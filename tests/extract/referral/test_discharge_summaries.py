"""Discharge summaries printed to PDF (issue 23, item 5): headings set alone on a line
without a colon and as close as the lines around them ("Primary diagnosis",
"Discharge medications"), one medicine per row, a status printed after a medicine
("- STOPPED (...)", "(withheld)"), a list of the medicines stopped, and a test's later
values told after a comma. The summary below was written after the rules, in another
layout and other wording than the one that found the gaps."""

from __future__ import annotations

from domain.limits import Limits
from domain.models import Certainty
from domain.policy.facts.medication_status import status_after
from extract.values.lists import parse_medication
from golden.drawing import placed_text_pdf
from tests.support.synthetic import LetterLines, certainty_of, assert_page_citations_verify


def _read():
    letter = LetterLines()
    line = letter.line
    line("NORTHERN BEACHES HOSPITAL - INPATIENT DISCHARGE SUMMARY", size=12, font="hebo", gap=18)
    line("Name: Ms Ingrid HALVORSEN     Date of birth: 30/06/1949     UR number: NB0455821")
    line("Date of admission 21/11/2026     Date of discharge 28/11/2026     Unit: General Medicine")
    line("Primary diagnosis", font="hebo")
    line("Urinary tract infection with delirium, resolved")
    line("Secondary diagnoses", font="hebo")
    line("Heart failure with reduced ejection fraction; Hypertension; Osteoarthritis of both knees")
    line("Adverse drug reactions", font="hebo")
    line("Codeine - confusion; Nitrofurantoin - nausea")
    line("Discharge medications", font="hebo")
    line("Sacubitril/valsartan 49/51 mg twice daily (unchanged)", x=66)
    line("Carvedilol 12.5 mg twice daily (dose reduced from 25 mg during the admission because of a low blood",
         x=66)
    line("pressure)", x=66)
    line("Cefalexin 500 mg four times daily for 4 more days (new)", x=66)
    line("Spironolactone 25 mg daily (withheld until potassium is below 5.0)", x=66)
    line("Ceased medications", font="hebo")
    line("Oxybutynin 5 mg twice daily - ceased, may have added to the delirium", x=66)
    line("Investigations", font="hebo")
    line("Sodium 129 mmol/L on admission, 134 mmol/L on 27/11/2026. Potassium 5.4 mmol/L.")
    line("Plan", font="hebo")
    line("GP to recheck electrolytes in one week and to restart spironolactone if potassium is below 5.0.")
    return letter.read("documents:8")


def _texts(result, kind: str) -> list[str]:
    return [f.fact_text for f in result.facts if f.fact_type == kind]


def test_headings_without_a_colon_start_their_lists():
    result = _read()
    assert _texts(result, "problem") == [
        "Problem: Urinary tract infection with delirium, resolved",
        "Problem: Heart failure with reduced ejection fraction", "Problem: Hypertension",
        "Problem: Osteoarthritis of both knees"]
    allergies = [f.structured_value for f in result.facts if f.fact_type == "allergy"]
    assert [(a["substance"], a["reaction"]) for a in allergies] == [("Codeine", "confusion"),
                                                                    ("Nitrofurantoin", "nausea")]


def test_each_listed_medicine_keeps_its_status_and_a_stopped_or_withheld_one_is_history():
    result = _read()
    medicines = {f.structured_value["name"]: f for f in result.facts if f.fact_type == "medication"}
    listed = ["Sacubitril/valsartan", "Carvedilol", "Cefalexin", "Spironolactone", "Oxybutynin"]
    assert [n for n in medicines if n in listed] == listed  # the wrapped row is part of carvedilol's
    assert medicines["Carvedilol"].structured_value["dose"] == "12.5 mg"
    statuses = {n: medicines[n].structured_value.get("status") for n in listed}
    assert statuses == {"Sacubitril/valsartan": "unchanged", "Carvedilol": "dose reduced", "Cefalexin": "new",
                        "Spironolactone": "withheld", "Oxybutynin": "ceased"}
    assert medicines["Oxybutynin"].fact_text == "Medication: Oxybutynin 5 mg twice daily (ceased)"
    certainty = {n: certainty_of(medicines[n]) for n in listed}
    assert certainty["Spironolactone"] == certainty["Oxybutynin"] == Certainty.DOCUMENT_FACT
    assert certainty["Sacubitril/valsartan"] == certainty["Cefalexin"] == Certainty.VERIFIED
    # the plan's "restart spironolactone if ..." is not a medicine taken now
    assert all(certainty_of(f) != Certainty.VERIFIED for f in result.facts
               if f.fact_type == "medication" and f.structured_value["name"].lower() == "spironolactone")


def test_a_tests_later_value_after_a_comma_is_read_with_its_own_date():
    results = [f.structured_value for f in _read().facts if f.fact_type == "lab_result"]
    assert [(r["test_name"], r["value"], r["unit"]) for r in results] == [
        ("Sodium", "129", "mmol/L"), ("Sodium", "134", "mmol/L"), ("Potassium", "5.4", "mmol/L")]


def test_a_list_under_a_heading_ends_at_the_next_sections_heading():
    result = _read()
    assert not [f for f in result.facts if f.fact_type == "medication"
                and f.structured_value["name"] in ("Investigations", "Sodium", "Plan", "GP")]


def test_status_words_after_a_medicine():
    assert parse_medication("Metformin 500 mg BD (stopped)")["status"] == "stopped"
    assert parse_medication("Aspirin (stopped)") == {"name": "Aspirin", "dose": None, "frequency": None,
                                                       "route": None, "status": "stopped"}
    assert "status" not in parse_medication("ibuprofen as needed")  # a frequency, not a status
    assert "status" not in parse_medication("Paracetamol 1 g four times daily, prior to meals")
    # a stopping word in another phrase is a status the policy does not know: a person reads it
    assert status_after(" (hold if systolic below 100)") == "hold if systolic below 100"
    assert status_after(" - complete the course") is None


def test_identity_printed_in_a_right_hand_column_beside_the_letterhead_is_read():
    # As the real C-CDA discharge summary in ../shared/data prints it, in other words.
    from extract.formats.pdf import normalize_pdf
    from extract.referral.extractor import extract_referral

    pdf = placed_text_pdf([
        (56, 60, "Eastfield Community Hospital", 14, "hebo"), (330, 60, "Hospital No: EF-209311"),
        (330, 74, "Patient: Okoro, Chidi A."), (56, 80, "Transfer Letter", 12, "hebo"),
        (330, 88, "Born: 24/10/1963"),
        (56, 120, "Diagnoses:"), (56, 134, "1. Cellulitis of the left leg."), (56, 148, "2. Gout."),
    ])
    content = normalize_pdf(pdf, render_dir=None, limits=Limits())
    result = extract_referral(content, "documents:9")
    assert_page_citations_verify(content, result)
    ids = {i.kind.value: i.value for i in result.identifiers}
    assert ids == {"name": "Okoro, Chidi A.", "mrn": "EF-209311", "dob": "1963-10-24"}
    assert _texts(result, "problem") == ["Problem: Cellulitis of the left leg", "Problem: Gout"]


def test_a_letters_medicine_table_with_status_and_stop_columns_keeps_what_is_no_longer_taken_off_the_chart():
    # A rheumatology letter's table written after the rule: a status column and a stop column.
    from golden.documents import build_spec
    from extract.formats.office.docx import normalize_docx
    from extract.referral.extractor import extract_referral

    docx = build_spec({"kind": "docx", "paragraphs": [
        "Re: Mr Tavita Fonoti, DOB 02/03/1970, MRN RP-771200", "Dear colleague,", "His medicines:"],
        "table": [["Drug", "Dose", "How often", "Current?", "Date stopped"],
                  ["Leflunomide", "20 mg", "daily", "No", "14/10/2026"],
                  ["Naproxen", "500 mg", "twice daily", "Yes", "31/12/2099"],
                  ["Etanercept", "50 mg", "weekly", "Yes", "-"],
                  ["Sulfasalazine", "1 g", "twice daily", "", "02/09/2026"]],
        "after_table": ["Yours sincerely,", "Dr Amaru Keale"]}, {})[0]
    result = extract_referral(normalize_docx(docx, Limits()), "documents:10")
    medicines = {f.structured_value["name"]: f for f in result.facts if f.fact_type == "medication"}
    status = {n: f.structured_value.get("status") for n, f in medicines.items()}
    assert status == {"Leflunomide": "No", "Naproxen": "Yes", "Etanercept": "Yes",
                      "Sulfasalazine": "stopped 2026-09-02"}
    assert medicines["Leflunomide"].fact_text == "Medication: Leflunomide 20 mg daily (not taken now)"
    certainty = {n: certainty_of(f, paged=False) for n, f in medicines.items()}
    assert certainty["Leflunomide"] == certainty["Sulfasalazine"] == Certainty.DOCUMENT_FACT
    assert certainty["Etanercept"] == Certainty.VERIFIED
    # a stop still to come: a person checks the course
    assert certainty["Naproxen"] == Certainty.NEEDS_REVIEW
    assert "stop date still to come" in medicines["Naproxen"].review_reason


def test_a_later_value_in_the_same_unit_is_the_same_tests_only_when_nothing_else_claims_it():
    from extract.values.prose_labs import lab_values_in

    told = lab_values_in("Creatinine 168 umol/L on admission, 142 umol/L on 01/12/2026, then 131 umol/L.")
    assert [(m.test_name, m.value, m.when.text if m.when else None) for m in told] == [
        ("Creatinine", "168", None), ("Creatinine", "142", "on 01/12/2026"), ("Creatinine", "131", None)]
    assert [m.value for m in lab_values_in("Sodium 139 mmol/L, 4 mmol/L of potassium chloride was added.")] == ["139"]
    assert [m.value for m in lab_values_in("Potassium 5.6 mmol/L, 12 mg/L CRP.")] == ["5.6"]  # another unit


def test_list_headings_are_read_by_meaning_and_an_unknown_one_about_stopping_ends_the_current_list():
    # Written in the review, after the rules: a DOCX transfer summary in other words.
    from golden.documents import build_spec
    from extract.formats.office.docx import normalize_docx
    from extract.referral.extractor import extract_referral

    docx = build_spec({"kind": "docx", "paragraphs": [
        "Name: Hemi Tautahi    DOB 09/09/1958", "Diagnoses this admission",
        "Acute kidney injury on chronic kidney disease", "Medicines on discharge", "Amlodipine 5 mg daily - unchanged",
        "Medicines stopped during this admission", "Cilazapril 2.5 mg daily (because of the AKI)",
        "Current medications:", "Allopurinol 100 mg daily", "Ceased on the ward", "Ibuprofen 400 mg three times daily",
        "Plan", "Recheck creatinine in 5 days."]}, {})[0]
    result = extract_referral(normalize_docx(docx, Limits()), "documents:11")
    assert _texts(result, "problem") == ["Problem: Acute kidney injury on chronic kidney disease"]
    status = {f.structured_value["name"]: f.structured_value.get("status") for f in result.facts
              if f.fact_type == "medication"}
    assert status == {"Amlodipine": "unchanged", "Cilazapril": "stopped", "Allopurinol": None, "Ibuprofen": "Ceased"}
