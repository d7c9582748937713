"""Clinic progress notes printed to PDF (issue 23, item 5): a medicines line of names the
vocabulary does not know ("Meds: Lasix 40mg qAM, Entresto 24/26mg BID, ..."), and an
assessment and plan numbered by problem ("1. CHF, compensated - ...") that names a
listed diagnosis again. Written after the rules, in other wording than the notes that
found the gaps."""

from __future__ import annotations

from tests.support.synthetic import LetterLines


def _read():
    letter = LetterLines(font="tiro", gap=15)
    line = letter.line
    line("Lakeview Cardiology Clinic - Follow-up Visit", size=12, font="tibo", gap=20)
    line("Pt: Oyelaran, Folasade    DOB 08/19/1950    MRN LCC-771204", gap=22)
    line("Diagnoses: Chronic kidney disease; Gout", gap=22)
    line("Meds: Lasix 40mg qAM, Entresto 24/26mg BID, Coreg 6.25mg BID, allopurinol 100mg daily", gap=22)
    line("Allergies: lisinopril (angioedema)", gap=22)
    line("Assessment and plan:", font="tibo")
    line("1. CHF, compensated - continue Lasix, recheck BMP in 1 week.")
    line("2. CKD - creatinine stable; avoid NSAIDs.")
    line("3. Gout: no flares since starting allopurinol.")
    line("4. Diabetes screening - A1c ordered.")
    return letter.read("documents:9")


def test_every_medicine_on_the_meds_line_is_read_each_held_for_review():
    meds = [f for f in _read().facts if f.fact_type == "medication"]
    dosed = {f.structured_value["name"]: f.structured_value["dose"] for f in meds if f.structured_value["dose"]}
    assert dosed == {"Lasix": "40mg", "Entresto": "24/26mg", "Coreg": "6.25mg", "allopurinol": "100mg"}
    assert all(f.wants_review for f in meds)


def test_the_numbered_assessment_gives_its_problems_and_a_listed_one_is_not_held_twice():
    problems = [f for f in _read().facts if f.fact_type == "problem"]
    names = [(f.structured_value["description"], f.wants_review) for f in problems]
    # The "Diagnoses:" list is read as a list; the plan's "2. CKD" and "3. Gout" tell of
    # listed conditions again ("Chronic kidney disease" is another wording: read, held).
    assert ("Gout", False) in names and ("Chronic kidney disease", False) in names
    assert [n for n, _ in names].count("Gout") == 1
    held = {n for n, review in names if review}
    assert {"CHF", "CKD"} <= held
    assert not any("Diabetes" in n for n, _ in names)  # "4. Diabetes screening" is no problem


def test_medicines_read_apart_on_one_line_say_so():
    meds = [f for f in _read().facts if f.fact_type == "medication"]
    assert len(meds) == 4 and all("written on one line" in f.review_reason for f in meds)


def test_numbered_plan_items_run_together_in_one_paragraph_each_open_their_own_sentence():
    # A progress note written after the rule: the plan's items set close together became
    # one paragraph, and "... 10 mg daily. 2." ended a sentence with the next item's
    # number, so "3. Hypertension, uncontrolled" lost the number that makes it a problem.
    from extract.values.prose_text import sentences

    text = ("1. Type 2 diabetes, uncontrolled - increase metformin to 1000 mg twice daily. 2. CKD stage 3a - start "
            "losartan 25 mg daily; recheck BMP in 2 weeks. 3. Hypertension, uncontrolled - as above. Weight 70.5 kg. "
            "2.5 mg of it was given.")
    assert [s.text for s in sentences(text)] == [
        "1. Type 2 diabetes, uncontrolled - increase metformin to 1000 mg twice daily.",
        "2. CKD stage 3a - start losartan 25 mg daily; recheck BMP in 2 weeks.",
        "3. Hypertension, uncontrolled - as above.", "Weight 70.5 kg. 2.5 mg of it was given."]
    letter = LetterLines(font="tiro", gap=13)
    letter.line("Pt: Okonkwo-Bell, Thomas    DOB 08/30/1957    MRN LV-7730418", gap=20)
    letter.line("ASSESSMENT AND PLAN", font="tibo")
    for item in text.split(" 2. ")[0], "2. " + text.split(" 2. ")[1].split(" 3. ")[0], "3. Hypertension, uncontrolled.":
        letter.line(item)
    names = [f.structured_value["description"] for f in letter.read("documents:9").facts if f.fact_type == "problem"]
    assert "Type 2 diabetes" in names and "Hypertension" in names
    # a stage is part of the condition's name, and "with ..." ends it
    from extract.values.prose_problems import problems_in

    assert [p.description.text for p in problems_in("2. CKD stage 3a with albuminuria - start losartan.")] == [
        "CKD stage 3a"]


def test_a_notes_own_section_labels_end_the_line_above_and_a_later_label_in_a_line_is_its_own():
    # A consultation note written after the rules, set line under line: "PMH: COPD, T2DM,
    # AF on apixaban. Allergy: penicillin - rash." then "O/E: T 38.1 C, HR 104 ..." and
    # "Bloods today: CRP 148, WCC 15.2, ...". The examination and bloods lines ran into
    # the PMH list: "BP 138/82" and "K 4.9" were problems, and the allergy was lost.
    letter = LetterLines(gap=18)
    for line in ["Patient: Margaret Hargreaves   DOB: 14/03/1951",
                 "PMH: COPD (moderate), T2DM, AF on apixaban. Allergy: penicillin - rash.",
                 "O/E: T 38.1 C, HR 104 irreg, BP 138/82, SpO2 91% on air.",
                 "Bloods today: CRP 148, WCC 15.2, K 4.9.",
                 "Imp: Infective exacerbation of COPD."]:
        letter.line(line, size=9.5)
    result = letter.read("documents:21")

    def facts(kind: str, key: str) -> list:
        return [f.structured_value[key] for f in result.facts if f.fact_type == kind]

    assert facts("problem", "description") == ["COPD (moderate)", "T2DM", "AF on apixaban"]
    assert facts("allergy", "substance") == ["penicillin"]
    assert facts("vital_sign", "kind") == ["temperature", "heart_rate", "blood_pressure", "spo2"]
    assert facts("lab_result", "test_name") == ["CRP", "WCC", "K"]
    assert [f.structured_value["analyte"] for f in result.facts if f.fact_type == "lab_result"][1] == "wbc"
