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
