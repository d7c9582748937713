"""A discharge summary's list of medication changes (issue 23, item 5): the status
printed before the medicine ("STOPPED: Ramipril 5 mg", "Held - metformin"), a dose
changed "from 2.5 mg to 5 mg", an inline label of another section ("Results at
discharge: potassium 5.1 mmol/L, ...") ending the list above it, an allergy whose
reaction is followed by a bracket, and a problem's cause after a comma. Written after a
held-out summary showed "STOPPED: Ramipril" charted as a current medicine named so, and
the results line read as a medicine called "Results at discharge: potassium"."""

from __future__ import annotations

from domain.limits import Limits
from domain.models import Certainty
from extract.values.lists import parse_allergy, parse_medication, split_items
from tests.support.synthetic import LetterLines, certainty_of


# The letter's lines as printed, the list of changes indented under its label.
LETTER = ["Patient: Tomasz WOJCIK     Hosp No: RG-550127     DOB: 03/08/1946",
          "Diagnosis: Community acquired pneumonia, likely due to aspiration",
          "Allergies: Amoxicillin - widespread rash (mild); Chlorhexidine: itch",
          "Changes to medicines:",
          "    STOPPED: Atorvastatin 40 mg at night (muscle aches)",
          "    Held - Gliclazide 80 mg twice daily",
          "    CHANGED: Furosemide increased from 40 mg to 80 mg each morning",
          "    NEW: Doxycycline 100 mg once daily for 5 days",
          "Bloods on discharge: sodium 131 mmol/L, urea 9.8 mmol/L, CRP 64 mg/L.",
          "Follow-up: chest X-ray in 6 weeks."]


def _letter():
    letter = LetterLines()
    letter.line("RIVERSIDE GENERAL - DISCHARGE LETTER", size=12, font="hebo", gap=18)
    for text in LETTER:
        letter.line(text.strip(), x=66 if text.startswith(" ") else 56)
    return letter.read("documents:12")


def test_a_status_printed_before_a_medicine_is_its_status_and_not_part_of_its_name():
    medicines = {f.structured_value["name"]: f for f in _letter().facts if f.fact_type == "medication"}
    assert {n: (f.structured_value["dose"], f.structured_value.get("status")) for n, f in medicines.items()} == {
        "Atorvastatin": ("40 mg", "STOPPED"), "Gliclazide": ("80 mg", "Held"),
        "Furosemide": ("80 mg", "increased"), "Doxycycline": ("100 mg", "NEW")}
    certainty = {n: certainty_of(f) for n, f in medicines.items()}
    # stopped and held medicines are history, never current chart medicines
    assert certainty["Atorvastatin"] == certainty["Gliclazide"] == Certainty.DOCUMENT_FACT
    assert certainty["Furosemide"] == certainty["Doxycycline"] == Certainty.VERIFIED


def test_an_inline_label_of_another_section_ends_the_list_and_its_results_are_read():
    result = _letter()
    assert not [f for f in result.facts if f.fact_type == "medication" and "Bloods" in f.structured_value["name"]]
    labs = [f.structured_value for f in result.facts if f.fact_type == "lab_result"]
    assert [(r["test_name"], r["value"], r["unit"]) for r in labs] == [
        ("sodium", "131", "mmol/L"), ("urea", "9.8", "mmol/L"), ("CRP", "64", "mg/L")]


def test_a_reaction_after_a_dash_keeps_its_bracket_and_a_cause_after_a_comma_stays_with_its_problem():
    result = _letter()
    allergies = [f.structured_value for f in result.facts if f.fact_type == "allergy"]
    assert [(a["substance"], a["reaction"], a["severity"]) for a in allergies] == [
        ("Amoxicillin", "widespread rash (mild)", "mild"), ("Chlorhexidine", "itch", None)]
    problems = [f.structured_value["description"] for f in result.facts if f.fact_type == "problem"]
    assert problems == ["Community acquired pneumonia, likely due to aspiration"]


def test_status_before_the_medicine_and_a_change_of_dose():
    assert parse_medication("Stopped ramipril") == {"name": "ramipril", "dose": None, "frequency": None,
                                                      "route": None, "status": "Stopped"}
    assert parse_medication("Continue aspirin 75 mg daily")["status"] == "Continue"
    changed = parse_medication("Bisoprolol dose reduced to 2.5 mg daily")
    assert (changed["name"], changed["dose"], changed["status"]) == ("Bisoprolol", "2.5 mg", "dose reduced")
    # two statuses that disagree: the policy knows neither together, a person reads it
    assert parse_medication("STOPPED: Ramipril 5 mg (restarted 2026)")["status"] == "STOPPED; restarted"
    # as a fax reads them: the colon after the status and the dash before "withheld" lost
    faxed = parse_medication("NEW Linagliptin 5 mg once daily by mouth.")
    assert (faxed["name"], faxed["status"]) == ("Linagliptin", "NEW")
    assert parse_medication("Furosemide 40 mg each morning withheld until reviewed")["status"] == "withheld"
    # a dose range is no change
    assert parse_medication("Paracetamol 500 mg to 1 g four times daily")["dose"] == "500 mg to 1 g"


def test_a_bracket_inside_the_reaction_and_a_cause_in_a_list():
    assert parse_allergy("Penicillin (rash - mild)")["substance"] == "Penicillin"
    assert parse_allergy("Co-trimoxazole - rash (Stevens-Johnson 2011)")["substance"] == "Co-trimoxazole"
    assert split_items("AKI, secondary to dehydration, hypertension") == ["AKI, secondary to dehydration",
                                                                          "hypertension"]
    # one more site of a condition whose site a comma already joined: "hips" had been a problem
    assert split_items("Osteoarthritis, both knees, hips; gout") == ["Osteoarthritis, both knees, hips", "gout"]
    assert split_items("Left knee, right hip") == ["Left knee", "right hip"]  # a list of sites, as before


def test_a_stopping_heading_still_heads_its_list_but_a_stopped_medicine_is_an_item():
    from golden.documents import build_spec
    from extract.formats.office.docx import normalize_docx
    from extract.referral.extractor import extract_referral

    docx = build_spec({"kind": "docx", "paragraphs": [
        "Name: Aroha Ngata    DOB 11/11/1961", "Medications:", "Stopped: naproxen",
        "Amlodipine 5 mg daily", "Stopped during admission", "Ramipril 2.5 mg daily"]}, {})[0]
    result = extract_referral(normalize_docx(docx, Limits()), "documents:13")
    status = {f.structured_value["name"]: f.structured_value.get("status") for f in result.facts
              if f.fact_type == "medication"}
    assert status == {"naproxen": "Stopped", "Amlodipine": None, "Ramipril": "Stopped"}


def test_a_diagnosis_written_as_two_sentences_is_two_problems():
    # An emergency discharge summary (written after the rule): "Diagnosis: Community-acquired
    # pneumonia (right lower lobe). Acute kidney injury stage 1." was one problem.
    letter = LetterLines()
    letter.line("EMERGENCY DEPARTMENT DISCHARGE SUMMARY", size=12, font="hebo", gap=18)
    letter.line("Patient: Tomasz WOJCIK     Hosp No: RG-550127     DOB: 03/08/1946")
    letter.line("Diagnosis: Community-acquired pneumonia (right lower lobe). Acute kidney injury stage 1.")
    letter.line("Allergies: NKDA")
    problems = [f.structured_value["description"] for f in letter.read("documents:12").facts
                if f.fact_type == "problem"]
    assert problems == ["Community-acquired pneumonia (right lower lobe)", "Acute kidney injury stage 1"]
