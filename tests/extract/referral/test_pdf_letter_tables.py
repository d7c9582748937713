"""A consultation letter printed to PDF whose lists are tables (issue 23, item 5; a
held-out letter): "Medication | Dose | Route | Frequency | Status" with a discontinued
medicine, "Allergen | Reaction | Severity", a numbered problem list under "Active
problem list:", a label with a note in brackets ("Medications (reconciled
11/20/2026):"), and a symptom worded as an intolerance. Before: the medicines were one
paragraph read as sentences, the discontinued one proposed as taken; the allergy
table's header was charted as an allergy and each row's reaction and severity as part
of the substance; three of four problems were lost and the bracketed label became a
problem; "heat intolerance" was an allergy to heat."""

from __future__ import annotations

from extract.formats.pdf import normalize_pdf
from extract.referral.extractor import extract_referral
from extract.referral.labels import label_field
from golden.drawing import placed_text_pdf


def _letter() -> bytes:
    lines: list[tuple] = [(50, 50, "Harborview Family Medicine", 12, "hebo"),
                          (50, 76, "Patient: Tomasz Wieczorek-Hale"), (330, 76, "DOB: 09/23/1971"),
                          (460, 76, "MRN: HF-40218"), (50, 90, "Date: 12/01/2026")]
    y = 116

    def add(x, text, size=10, font="helv"):
        lines.append((x, y, text, size, font))

    add(50, "Active problem list:", font="hebo")
    for item in ("1. Subclinical hyperthyroidism", "2. Essential hypertension", "3. Osteopenia"):
        y += 14
        add(62, item)
    y += 22
    add(50, "Medications (reconciled 11/20/2026):", font="hebo")
    y += 14
    for x, head in zip((62, 200, 270, 320, 450), ("Medication", "Dose", "Route", "Frequency", "Status")):
        add(x, head, 9, "hebo")
    for row in (("Amlodipine", "5 mg", "PO", "once daily", "Active"),
                ("Propranolol", "10 mg", "PO", "three times daily PRN", "Active"),
                ("Hydrochlorothiazide", "25 mg", "PO", "once daily", "Discontinued")):
        y += 13
        for x, cell in zip((62, 200, 270, 320, 450), row):
            add(x, cell)
    y += 22
    add(50, "Allergies/Intolerances:", font="hebo")
    y += 14
    for x, head in zip((62, 200, 330), ("Allergen", "Reaction", "Severity")):
        add(x, head, 9, "hebo")
    for row in (("Sulfa drugs", "Hives", "Moderate"), ("Latex", "Contact dermatitis", "Mild")):
        y += 13
        for x, cell in zip((62, 200, 330), row):
            add(x, cell)
    y += 13  # running text set right under the table, at its first column
    add(62, "She tolerated cephalexin last year without any problem at all.")
    y += 22
    add(50, "Review of systems:", font="hebo")
    y += 14
    add(62, "Reports heat intolerance and tremor. Denies chest pain, syncope or diarrhea.")
    return placed_text_pdf(lines)


def _facts():
    return extract_referral(normalize_pdf(_letter()), "documents:5").facts


def test_a_medicines_table_is_read_by_its_columns_with_each_rows_status():
    meds = {f.structured_value["name"]: f.structured_value for f in _facts() if f.fact_type == "medication"}
    assert set(meds) == {"Amlodipine", "Propranolol", "Hydrochlorothiazide"}
    assert (meds["Propranolol"]["dose"], meds["Propranolol"]["frequency"]) == ("10 mg", "three times daily PRN")
    assert meds["Hydrochlorothiazide"]["status"] != meds["Amlodipine"]["status"]
    assert "Discontinued" in next(f.fact_text for f in _facts() if "Hydrochlorothiazide" in f.fact_text)


def test_an_allergy_tables_header_is_no_allergy_and_its_reactions_are_apart():
    allergies = [f.structured_value for f in _facts() if f.fact_type == "allergy"]
    assert [(a["substance"], a["reaction"]) for a in allergies] == [("Sulfa drugs", "Hives"),
                                                                   ("Latex", "Contact dermatitis")]
    assert [a["severity"] for a in allergies] == ["moderate", "mild"]  # and no allergy to "She tolerated"


def test_a_numbered_problem_list_is_read_whole_and_a_bracketed_label_is_no_problem():
    problems = [f.structured_value["description"] for f in _facts() if f.fact_type == "problem"]
    assert problems == ["Subclinical hyperthyroidism", "Essential hypertension", "Osteopenia"]
    assert label_field("Medications (reconciled 11/20/2026):") == "medications"
    assert label_field("Allergies (drug):") == "allergies"


def test_a_symptom_worded_as_an_intolerance_is_no_allergy():
    assert not any("heat" in f.fact_text.lower() for f in _facts() if f.fact_type == "allergy")


def test_the_letters_own_birth_date_settles_its_date_month_first():
    date = next(f for f in _facts() if f.fact_type == "referral" and f.structured_value["field"] == "letter_date")
    assert date.structured_value["value"] == "2026-12-01" and not date.wants_review


def test_each_table_row_is_cited_by_its_own_words():
    from domain.policy.facts.citations import verify_citations

    content = normalize_pdf(_letter())
    facts = extract_referral(content, "documents:5").facts
    assert all(c.verified for c in verify_citations([f.citation for f in facts], content))
    latex = next(f for f in facts if f.fact_type == "allergy" and "Latex" in f.fact_text)
    assert "Latex" in latex.citation.quote_or_value and "Sulfa" not in latex.citation.quote_or_value


def test_a_problem_table_whose_long_name_nearly_reaches_the_next_column_keeps_its_code_and_status():
    """"Heart failure with reduced ejection fraction" ends just short of the ICD-10 column:
    its code still starts at the column's edge, so the row is the table's. The resolved
    pneumonia is the patient's history, never a current chart problem."""
    from domain.policy.facts.certainty import classify

    lines = [(50, 50, "Re: Mr Anders LINDQVIST-OBI, DOB 02/11/1955, MRN SC-88213"), (50, 80, "Problem list", 10, "hebo"),
             (62, 96, "Diagnosis", 9, "hebo"), (260, 96, "ICD-10", 9, "hebo"), (330, 96, "Status", 9, "hebo"),
             (62, 110, "Heart failure with reduced ejection fraction"), (260, 110, "I50.2"), (330, 110, "Active"),
             (62, 124, "Community-acquired pneumonia"), (260, 124, "J18.9"), (330, 124, "Resolved")]
    facts = [f for f in extract_referral(normalize_pdf(placed_text_pdf(lines)), "documents:5").facts
             if f.fact_type == "problem"]
    got = [(f.structured_value["description"], f.structured_value["code"], f.structured_value.get("status"))
           for f in facts]
    assert got == [("Heart failure with reduced ejection fraction", "I50.2", "Active"),
                   ("Community-acquired pneumonia", "J18.9", "Resolved")]
    certainties = [classify(f, citation_verified=True, paged=True).certainty.value for f in facts]
    assert certainties == ["verified", "document_fact"]
