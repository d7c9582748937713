"""Referral letters whose allergies, medications, problems and results are told only
in sentences (issue 23, item 5), as DOCX and as PDF: each item is read with its
parts, cited to its sentence (PDF: by page and the box of the quoted words) and held
for review; what the context policy reads as negated, someone else's or hypothetical
is never the patient's finding."""

from __future__ import annotations

import pytest

from domain.limits import Limits
from domain.models import Certainty
from domain.policy.context.mentions import apply_to
from domain.policy.facts.certainty import classify
from golden import referral_letters as GL
from tests.support.extract_support import of_type, read_and_extract
from tests.support.synthetic import assert_page_citations_verify, docx_letter


def _read(data: bytes, pdf: bool):
    from extract.formats.office.docx import normalize_docx
    from extract.formats.pdf import normalize_pdf
    from extract.referral.extractor import extract_referral

    if not pdf:
        return read_and_extract(data, lambda b: normalize_docx(b, Limits()), extract_referral, "documents:7")
    from core.services.ingest.processing import validate_response

    content = normalize_pdf(data, render_dir=None, limits=Limits())
    result = extract_referral(content, "documents:7")
    assert_page_citations_verify(content, result)  # each quote is on its page, in its box
    validate_response(result, result.doc_type)
    return content, result


def _certainty(fact, paged: bool) -> Certainty | None:
    fact = apply_to(fact)
    return classify(fact, citation_verified=True, paged=paged).certainty


def _by(result, fact_type: str, key: str) -> dict:
    return {f.structured_value[key]: f for f in of_type(result, fact_type)}


def test_the_letter_of_the_issue_yields_its_allergy_medications_problems_and_results():
    _, result = _read(GL.build("prose_anticoag_docx"), pdf=False)
    (allergy,) = of_type(result, "allergy")
    assert (allergy.structured_value["substance"], allergy.structured_value["reaction"]) == ("penicillin", "rash")
    assert allergy.citation.quote_or_value == "She is allergic to penicillin, which gave her a rash."
    meds = [f for f in of_type(result, "medication") if not f.document_fact_only]
    assert [(m.structured_value["name"], m.structured_value["dose"], m.structured_value["frequency"]) for m in meds] \
        == [("warfarin", "5 mg", "once daily"), ("metformin", "500 mg", "twice daily"), ("lisinopril", "10 mg", "daily")]
    assert meds[0].structured_value["route"] == "orally"
    labs = {f.structured_value["test_name"]: f.structured_value for f in of_type(result, "lab_result")}
    assert {k: (v["value"], v["unit"]) for k, v in labs.items()} == {
        "HbA1c": ("8.1", "%"), "potassium": ("5.9", "mmol/L"), "INR": ("3.4", "")}
    for f in [allergy, *meds, *of_type(result, "lab_result")]:
        assert f.wants_review and _certainty(f, paged=False) is Certainty.NEEDS_REVIEW
        assert f.citation.page_or_section.startswith("paragraph ") and f.citation.quote_or_value in f.context_text


def test_negated_family_and_hypothetical_mentions_are_not_the_patients():
    _, result = _read(GL.build("prose_anticoag_docx"), pdf=False)
    stroke = _by(result, "problem", "description")["stroke"]
    mothers = [f for f in of_type(result, "medication") if f.document_fact_only]
    assert [m.structured_value["name"] for m in mothers] == ["warfarin"]
    for f in (stroke, *mothers):
        assert not f.wants_review and _certainty(f, paged=False) is Certainty.DOCUMENT_FACT
    assert not [f for f in of_type(result, "lab_result") if f.structured_value["value"] == "5"]


@pytest.mark.parametrize("name", ["prose_renal_pdf", "prose_nkda_pdf"])
def test_a_letter_printed_to_pdf_is_cited_by_page_and_box(name):
    content, result = _read(GL.build(name), pdf=True)
    assert len(result.identifiers) == 3
    told = [f for f in result.facts if f.fact_type in ("allergy", "medication", "problem", "lab_result")]
    assert len(told) >= 6
    for f in told:
        assert f.citation.page == 1 and f.citation.bounding_box is not None
        assert f.citation.page_or_section == "page 1"


def test_pdf_letter_reads_routes_and_frequencies_and_a_denied_allergy():
    _, result = _read(GL.build("prose_renal_pdf"), pdf=True)
    meds = _by(result, "medication", "name")
    assert (meds["apixaban"].structured_value["route"], meds["apixaban"].structured_value["frequency"]) == ("PO", "bid")
    assert meds["furosemide"].structured_value["dose"] == "40 mg"
    contrast = _by(result, "allergy", "substance")["iodinated contrast"]
    assert _certainty(contrast, paged=True) is Certainty.DOCUMENT_FACT
    problems = _by(result, "problem", "description")
    assert {k for k, f in problems.items() if not f.document_fact_only} == {"AF", "CKD stage 3", "gout"}
    # "His brother has type 1 diabetes": read, and his brother's (the context policy), never the chart's
    assert set(problems) - {"AF", "CKD stage 3", "gout"} == {"type 1 diabetes"}
    assert problems["type 1 diabetes"].document_fact_only


def test_no_known_drug_allergies_in_a_sentence_is_the_none_statement():
    _, result = _read(GL.build("prose_nkda_pdf"), pdf=True)
    (none,) = of_type(result, "allergy")
    assert none.structured_value["no_known_allergies"] and none.document_fact_only
    assert none.citation.quote_or_value == "He has no known drug allergies."


def test_a_fresh_letter_in_american_wording():
    # Written after the rules: a different clinic, drugs, tests and a partner's allergy.
    _, result = _read(docx_letter(
        "Patient: Rosalind QUARTERMAINE   DOB: 05/30/1949   MRN: GH-310557",
        "Dear Dr. Oyelaran,",
        "Thank you for seeing Mrs. Quartermaine for evaluation of dizziness. Her past medical history is "
        "significant for hypothyroidism and osteoarthritis. She is allergic to codeine, which made her "
        "nauseous. Her husband is allergic to peanuts. She takes levothyroxine 88 mcg PO daily and "
        "meloxicam 7.5 mg daily as needed. Her TSH was 0.08 mIU/L on 08/02/2024. If her sodium is low we "
        "will repeat labs.",
        "Sincerely,", "Howard Pimentel-Brandt, MD"), pdf=False)
    allergies = _by(result, "allergy", "substance")
    assert allergies["codeine"].structured_value["reaction"] == "nauseous"
    assert _certainty(allergies["codeine"], paged=False) is Certainty.NEEDS_REVIEW
    assert _certainty(allergies["peanuts"], paged=False) is Certainty.DOCUMENT_FACT
    meds = _by(result, "medication", "name")
    assert (meds["levothyroxine"].structured_value["dose"], meds["levothyroxine"].structured_value["route"]) == \
        ("88 mcg", "PO")
    assert meds["meloxicam"].structured_value["dose"] == "7.5 mg"
    assert set(_by(result, "problem", "description")) == {"hypothyroidism", "osteoarthritis"}
    assert [f.structured_value["test_name"] for f in of_type(result, "lab_result")] == ["TSH"]


def test_a_labelled_medication_paragraph_written_as_a_sentence_gives_one_item_per_drug():
    _, result = _read(docx_letter(
        "Patient: Ingram VOSS-HALLORAN", "Medications: He takes nifedipine 30 mg once daily and doxazosin 4 mg at "
        "night."), pdf=False)
    meds = of_type(result, "medication")
    assert [(m.structured_value["name"], m.structured_value["dose"]) for m in meds] == [
        ("nifedipine", "30 mg"), ("doxazosin", "4 mg")]
    assert all(m.wants_review for m in meds)


def test_a_held_out_respiratory_letter_keeps_results_readings_and_reactions_apart_from_medicines():
    # Written after the rules: "sodium 133 mmol/L" was read as a medicine named sodium,
    # "oxygen saturation 94%" as one named saturation, "angioedema on ramipril" as ramipril
    # taken, the vital signs were only reported, and "up to ... when needed" was dropped.
    _, result = _read(docx_letter(
        "Re: Tomasz WIECZOREK  DOB 14/03/1952  MRN HX-771203",
        "Dear Dr Okafor,",
        "He reports an intolerance to codeine, which causes nausea, and developed angioedema on ramipril in 2019.",
        "His regular medicines are apixaban 5 mg twice daily and furosemide 40 mg each morning. He takes "
        "paracetamol 1 g up to four times a day when needed.",
        "Bloods on 02/11/2026 showed creatinine 142 umol/L, sodium 133 mmol/L and calcium 2.41 mmol/L.",
        "On examination his blood pressure was 148/86 mmHg, pulse 92 and irregular, and oxygen saturation 94% on "
        "room air.",
        "Kind regards,", "Dr Helena Marsh"), pdf=False)
    meds = _by(result, "medication", "name")
    assert set(meds) == {"apixaban", "furosemide", "paracetamol"}
    assert meds["paracetamol"].structured_value["frequency"] == "up to four times a day when needed"
    allergies = _by(result, "allergy", "substance")
    assert {k: v.structured_value["reaction"] for k, v in allergies.items()} == {
        "codeine": "nausea", "ramipril": "angioedema"}
    assert {f.structured_value["test_name"] for f in of_type(result, "lab_result")} == {
        "creatinine", "sodium", "calcium"}
    vitals = {f.structured_value["kind"]: f for f in of_type(result, "vital_sign")}
    assert {k: (f.structured_value["value"], f.structured_value["unit"]) for k, f in vitals.items()} == {
        "blood_pressure": ("148/86", "mmHg"), "heart_rate": ("92", "/min"), "spo2": ("94", "%")}
    assert vitals["blood_pressure"].structured_value["systolic"] == "148"
    for f in vitals.values():
        assert f.wants_review and _certainty(f, paged=False) is Certainty.NEEDS_REVIEW
        assert f.citation.quote_or_value in f.context_text
    assert vitals["spo2"].citation.quote_or_value == "oxygen saturation 94%"


def test_a_letters_changes_to_medicines_keep_their_status_and_new_dose():
    _, result = _read(docx_letter(
        "Re: Ms Tamsin Velazquez-Orr, DOB 22/08/1963, NHS 943 476 5919",
        "I saw Ms Velazquez-Orr in the heart failure clinic today.",
        "Plan: stop diltiazem 90 mg twice daily. Increase bisoprolol from 1.25 mg to 2.5 mg once daily.",
        "She remains on furosemide 40 mg each morning.",
    ), pdf=False)
    meds = {f.structured_value["name"]: f for f in of_type(result, "medication")}
    diltiazem, bisoprolol = meds["diltiazem"], meds["bisoprolol"]
    assert diltiazem.structured_value["status"] == "stopped" and "(stopped)" in diltiazem.fact_text
    assert (bisoprolol.structured_value["dose"], bisoprolol.structured_value["status"]) == ("2.5 mg", "dose increased")
    assert "status" not in meds["furosemide"].structured_value
    assert all(f.wants_review or f.document_fact_only for f in meds.values())


def test_a_result_a_letter_says_was_from_a_haemolysed_sample_says_so_for_review():
    _, result = _read(docx_letter(
        "Re: Mr Anselm Ferreira-Lund, DOB 04/06/1949, NHS 943 476 5919",
        "His potassium was 6.3 mmol/L on Monday, but the laboratory reported the sample as haemolysed.",
        "His HbA1c was 61 mmol/mol in October.",
    ), pdf=False)
    labs = {f.structured_value["test_name"].lower(): f for f in of_type(result, "lab_result")}
    assert "haemolysed" in labs["potassium"].review_reason and "may not be valid" in labs["potassium"].review_reason
    assert "may not be valid" not in labs["hba1c"].review_reason


def test_a_labelled_medicines_line_written_as_a_sentence_keeps_each_changes_status():
    # Written after the sentence rule: the change is told on a labelled line, not in prose.
    _, result = _read(docx_letter(
        "Re: Mr Osric Pemberton-Vale, DOB 09/02/1957, NHS 943 476 5919",
        "Thank you for seeing Mr Pemberton-Vale in clinic.",
        "Medications: stop amlodipine 5 mg daily and start lercanidipine 10 mg daily.",
        "Kind regards,", "Dr Ines Achterberg"), pdf=False)
    meds = {f.structured_value["name"]: f for f in of_type(result, "medication")}
    assert set(meds) == {"amlodipine", "lercanidipine"}
    assert meds["amlodipine"].structured_value["status"] == "stopped" and "(stopped)" in meds["amlodipine"].fact_text
    assert meds["lercanidipine"].structured_value["status"] == "started"
    assert all(f.wants_review for f in meds.values())


def test_a_cultures_susceptibilities_in_a_sentence_are_results_not_allergies_or_medicines():
    # A held-out renal letter's "grew E. coli, resistant to trimethoprim and sensitive to
    # nitrofurantoin" gave an allergy to nitrofurantoin and a medicine trimethoprim; this
    # wording was written after the rule.
    _, result = _read(docx_letter(
        "Re: Mr Caspian Ollerenshaw, DOB 30/07/1944, NHS 943 476 5919",
        "Blood cultures from 28/11/2026 grew MRSA, resistant to flucloxacillin and erythromycin but susceptible "
        "to vancomycin and doxycycline.",
        "He is sensitive to penicillin, which gives him a rash; his sputum culture is awaited.",
    ), pdf=False)
    assert {f.structured_value["substance"] for f in of_type(result, "allergy")} == {"penicillin"}
    assert not of_type(result, "medication")
    fared = {f.structured_value["test_name"]: f for f in of_type(result, "lab_result")}
    assert {k: v.structured_value["flags_as_printed"] for k, v in fared.items()} == {
        "Flucloxacillin [Susceptibility]": ["R"], "Erythromycin [Susceptibility]": ["R"],
        "Vancomycin [Susceptibility]": ["S"], "Doxycycline [Susceptibility]": ["S"]}
    assert fared["Erythromycin [Susceptibility]"].structured_value["abnormal_flag"] == "abnormal"
    assert all(f.wants_review for f in fared.values())
