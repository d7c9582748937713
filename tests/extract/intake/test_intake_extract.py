"""Intake form extraction on both generated layouts, plus the wording rules."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

import pytest

from domain.content import NormalizedContent
from domain.models import Certainty, DocType, IdentifierKind
from extract.values import written_answers as it
from extract.registry import extractor_for
from extract.intake.extractor import extract_intake
from extract.formats.pdf import normalize_pdf
from golden.fixtures import INTAKE_CASES, INTAKE_LAYOUTS, IntakeCase, intake_case, render_intake
from tests.support.synthetic import assert_page_citations_verify, words_page


def _extract_case(case: IntakeCase):
    content = normalize_pdf(render_intake(case))
    return content, extract_intake(content, "documents:3")


@lru_cache(maxsize=None)
def _run(name: str):
    case = intake_case(name)
    return (case, *_extract_case(case))


CASES = [c.name for c in INTAKE_CASES]


def _of(result, fact_type):
    return [f for f in result.facts if f.fact_type == fact_type]


def test_every_intake_layout_has_a_case():
    assert {c.layout for c in INTAKE_CASES} == set(INTAKE_LAYOUTS) and len(INTAKE_LAYOUTS) >= 2


@pytest.mark.parametrize("name", CASES)
def test_demographics_are_document_facts_and_identity_candidates(name):
    case, _, result = _run(name)
    demo = {f.structured_value["field"]: f for f in _of(result, "demographic")}
    assert demo["dob"].structured_value["value"] == case.patient.dob
    assert demo["mrn"].structured_value["value"] == case.patient.mrn
    assert demo["phone"].structured_value["value"] == case.phone
    assert demo["sex"].structured_value["value"] == {"F": "Female", "M": "Male"}[case.patient.sex]
    assert all(f.document_fact_only and not f.wants_review for f in demo.values())
    ids = {i.kind: i.value for i in result.identifiers}
    assert ids[IdentifierKind.DOB] == case.patient.dob
    assert ids[IdentifierKind.MRN] == case.patient.mrn
    assert case.patient.first in ids[IdentifierKind.NAME] and case.patient.last in ids[IdentifierKind.NAME]


@pytest.mark.parametrize("name", CASES)
def test_medications_split_into_name_dose_frequency(name):
    case, _, result = _run(name)
    meds = _of(result, "medication")
    assert [m.structured_value for m in meds] == [
        {"name": m.name, "dose": m.dose, "frequency": m.frequency} for m in case.medications]
    assert [m.citation.quote_or_value for m in meds] == [m.printed for m in case.medications]
    assert [m.citation.field_or_chunk_id for m in meds] == [f"current_medications[{i}]" for i in range(len(meds))]
    assert all(not m.wants_review and m.confidence >= 0.85 for m in meds)


@pytest.mark.parametrize("name", CASES)
def test_allergies_with_reactions_or_nkda(name):
    case, _, result = _run(name)
    trusted = [f for f in _of(result, "allergy") if not f.wants_review and "status" not in f.structured_value]
    assert [f.structured_value for f in trusted] == [
        {"substance": a.substance, "reaction": a.reaction} for a in case.allergies]
    nkda = [f for f in result.facts if str(f.structured_value.get("status") or "").startswith("no_known_")]
    assert len(nkda) == (0 if case.allergies else 1)
    assert all(f.document_fact_only and f.fact_type == "allergy" and not f.wants_review for f in nkda)
    # what the form printed ("NKDA" rules out drug allergies only, never widened)
    for f in nkda:
        drug = re.search(r"nkda|drug|medication", f.citation.quote_or_value, re.I) is not None
        assert f.structured_value == {"substance": "", "status": "no_known_drug_allergies" if drug
                                      else "no_known_allergies"}


@pytest.mark.parametrize("name", CASES)
def test_chief_concern_family_history_and_preferences_are_document_facts(name):
    case, _, result = _run(name)
    (cc,) = _of(result, "chief_concern")
    assert cc.structured_value["text"] == case.chief_concern and cc.document_fact_only
    fh = _of(result, "family_history")
    expected_items = [part.strip() for line in case.family_history for part in line.split(";")]
    assert [f.citation.quote_or_value.rstrip(";") for f in fh] == expected_items
    assert all(f.document_fact_only and f.structured_value["relative"] for f in fh)
    prefs = _of(result, "preference")
    assert [p.structured_value["value"] for p in prefs] == [a for _, a in case.preferences]
    assert all(p.document_fact_only and not p.wants_review for p in prefs)


@pytest.mark.parametrize("name", CASES)
def test_review_terms_are_flagged_for_review_and_never_trusted(name):
    case, _, result = _run(name)
    for term in case.review_terms:
        hits = [f for f in result.facts if term.lower() in f.citation.quote_or_value.lower()]
        assert hits, term
        assert all(f.wants_review and f.review_reason for f in hits), term
    reviewed = [f for f in result.facts if f.wants_review]
    assert len(reviewed) == len(case.review_terms)


@pytest.mark.parametrize("name", CASES)
def test_every_citation_verifies(name):
    _, content, result = _run(name)
    citations = [f.citation for f in result.facts] + [i.citation for i in result.identifiers]
    for original, checked in zip(citations, assert_page_citations_verify(content, result)):
        assert checked.bounding_box == original.bounding_box
        assert original.source_type == "intake_form" and original.page_or_section == "page 1"


def test_margin_note_beside_nkda_is_a_cited_review_finding():
    _, _, result = _run("questions_margin_sulfa")
    (note,) = [f for f in result.facts if "sulfa" in f.citation.quote_or_value]
    assert note.citation.quote_or_value == "? sulfa"
    assert note.fact_type == "allergy" and note.structured_value["substance"] == "sulfa"
    assert "outside the form" in note.review_reason and "uncertain" in note.review_reason
    assert note.citation.field_or_chunk_id == "needs_review_findings[0]"
    assert note.citation.bounding_box.x > 0.6  # it really is in the right margin
    assert note.confidence < 0.5


def test_red_flag_chief_concern_needs_review():
    _, _, result = _run("questions_margin_sulfa")
    (cc,) = _of(result, "chief_concern")
    assert cc.wants_review and "chest pain" in cc.review_reason


def test_notes_box_with_uncertain_pregnancy_needs_review():
    _, _, result = _run("two_column_pregnancy_note")
    (note,) = [f for f in result.facts if "pregnant" in f.citation.quote_or_value]
    assert note.wants_review and "pregnancy" in note.review_reason and "uncertain wording" in note.review_reason


def test_uncertain_allergy_wording_needs_review():
    case = replace(intake_case("two_column_pregnancy_note"), allergies_printed="Penicillin (hives); maybe latex?")
    _, result = _extract_case(case)
    allergies = _of(result, "allergy")
    assert [a.structured_value["substance"] for a in allergies] == ["Penicillin", "maybe latex"]
    assert [a.wants_review for a in allergies] == [False, True]
    assert "uncertain" in allergies[1].review_reason
    assert allergies[1].confidence < allergies[0].confidence


def test_markup_or_a_link_on_an_intake_form_is_held_for_review_verbatim():
    from domain.models import Certainty
    from domain.policy.facts.certainty import classify
    from domain.policy.context.mentions import apply_to
    from golden.fixtures import ExpectedMedication

    script, url = "<script>alert(1)</script>", "http://127.0.0.1:9/x"
    case = replace(INTAKE_CASES[0], allergies_printed=f"Penicillin (hives); {script}; {url}",
                   medications=(ExpectedMedication("www.example.com/drug", "10 mg", "daily",
                                                   printed="www.example.com/drug 10 mg daily"),
                                ExpectedMedication("Lisinopril", "10 mg", "once daily",
                                                   printed="Lisinopril 10 mg once daily")))
    content, result = _extract_case(case)
    checked = dict(zip([id(f) for f in result.facts], assert_page_citations_verify(content, result)))
    decided = {}
    for f in _of(result, "allergy") + _of(result, "medication"):
        decided[f.structured_value.get("substance") or f.structured_value.get("name")] = classify(
            apply_to(f.model_copy(update={"citation": checked[id(f)]})), citation_verified=True, paged=True)
    # "http://…" is split at its colon like "Penicillin: hives": its reaction "//127.0.0.1:9/x" gives it away.
    for payload in (script, "http", "www.example.com/drug"):  # stored as written, never verified
        assert decided[payload].certainty is Certainty.NEEDS_REVIEW and "markup" in decided[payload].reason
    assert decided["Penicillin"].certainty is decided["Lisinopril"].certainty is Certainty.VERIFIED


def test_no_medications_answer_gives_no_medication_facts():
    case = replace(intake_case("questions_margin_sulfa"), medications=())
    _, result = _extract_case(case)
    assert _of(result, "medication") == []
    assert any(f.structured_value.get("no_current_medications") for f in result.facts)


def test_answers_spanning_rows_stay_in_their_field():
    _, _, result = _run("two_column_pregnancy_note")
    (address,) = [f for f in _of(result, "demographic") if f.structured_value["field"] == "address"]
    assert address.structured_value["value"] == "77 Larkspur Lane Bend, OR 97702"
    problems = [f.structured_value["description"] for f in _of(result, "problem")]
    assert problems == ["Type 2 diabetes", "hypertension"]


def test_headings_titles_and_signature_lines_are_not_facts():
    _, _, result = _run("two_column_pregnancy_note")
    quotes = " ".join(f.citation.quote_or_value for f in result.facts)
    for noise in ("PATIENT INFORMATION", "MEDICAL INFORMATION", "Riverbend", "signature", "____"):
        assert noise not in quotes


def test_registered_for_intake_form():
    assert extractor_for(DocType.INTAKE_FORM) is extract_intake


# --------------------------------------------------------------------------- synthetic pages


def _content(rows: list[list[tuple[str, float]]], pitch: float = 14) -> NormalizedContent:
    return words_page(rows, pitch)


def test_margin_note_on_its_own_row_far_right_of_the_answers():
    result = extract_intake(_content([
        [("Medicines", 50), ("you", 100), ("take", 120), ("now:", 145)],
        [("Lisinopril", 60), ("10", 115), ("mg", 130), ("daily", 145)],
        [("maybe", 420), ("warfarin?", 452)],
    ]), "documents:1")
    med, note = result.facts
    assert med.structured_value == {"name": "Lisinopril", "dose": "10 mg", "frequency": "daily"}
    assert not med.wants_review
    assert note.fact_type == "medication" and note.wants_review
    assert note.citation.quote_or_value == "maybe warfarin?"


ALLERGY_ROW = [("Drug", 50), ("allergies:", 80), ("latex", 140), ("(hives)", 170)]


@pytest.mark.parametrize("row, note", [
    # at the label column, it was taken for a title and dropped
    ([("Alcohol", 50), ("[X]", 100), ("None", 120), ("[", 160), ("]", 166), ("Weekly", 175)], "Note: Alcohol: None"),
    # under the answer, it was more of the allergy: "Allergy: Smoking", not even held
    ([("Smoking", 140), ("[]Never", 180), ("[X]", 225), ("Former", 242), ("[]", 280), ("Current", 292)],
     "Note: Smoking: Former"),
])
def test_a_row_of_tick_boxes_asking_about_a_habit_is_no_part_of_the_answer_above(row, note):
    result = extract_intake(_content([ALLERGY_ROW, row]), "documents:1")
    allergy, said = result.facts
    assert allergy.fact_type == "allergy" and allergy.structured_value["substance"] == "latex"
    assert said.fact_text == note and said.document_fact_only and not said.wants_review


def test_a_row_of_tick_boxes_asking_something_else_beside_the_allergies_goes_to_a_person():
    result = extract_intake(_content([ALLERGY_ROW, [("Trimethoprim", 140), ("[X]", 215), ("Yes", 232), ("[]", 260),
                                                    ("No", 272)]]), "documents:1")
    allergy, said = result.facts
    assert allergy.structured_value["substance"] == "latex"
    assert said.fact_type == "allergy" and said.wants_review and "Trimethoprim" in said.fact_text


def test_a_second_row_of_options_stays_with_its_question_when_a_box_was_lost():
    # "Heart disease" lost its box to OCR: still one of the grid's options, and the grid
    # goes to a person, never a note of its own.
    result = extract_intake(_content([
        [("Conditions", 50), ("(check", 110), ("all", 145), ("that", 160), ("apply):", 180)],
        [("[X]", 60), ("Asthma", 75), ("[", 140), ("]", 146), ("Gout", 155)],
        [("Heart", 60), ("disease", 90), ("[X]", 140), ("Thyroid", 155), ("disease", 195)],
    ]), "documents:1")
    assert not [f for f in result.facts if f.fact_text.startswith(("Note:", "Reported"))]
    assert any(f.wants_review and "could not be read ('Heart disease')" in (f.review_reason or "") for f in result.facts)


def test_unknown_label_inside_an_answer_does_not_split_the_field():
    result = extract_intake(_content([
        [("Family", 50), ("history:", 85)],
        [("Mother:", 60), ("diabetes", 100)],
        [("Father:", 60), ("stroke", 100)],
    ]), "documents:1")
    assert [f.structured_value for f in result.facts] == [
        {"relative": "Mother", "condition": "diabetes"}, {"relative": "Father", "condition": "stroke"}]


def test_non_clinical_margin_note_is_a_plain_document_fact():
    result = extract_intake(_content([
        [("Preferred", 50), ("contact", 100), ("method:", 140), ("Email", 200), ("call", 420), ("after", 445),
         ("lunch", 475)],
    ]), "documents:1")
    pref, note = result.facts
    assert pref.fact_type == "preference" and pref.structured_value["value"] == "Email"
    assert note.fact_type == "other" and note.document_fact_only and not note.wants_review


# --------------------------------------------------------------------------- wording rules


@pytest.mark.parametrize("label, kind", [
    ("Chief concern:", "chief_concern"), ("Reason for visit:", "chief_concern"),
    ("What brings you in today?", "chief_concern"),
    ("Current medications:", "medications"), ("Medicines you take now (name, dose, how often):", "medications"),
    ("Allergies:", "allergies"), ("Drug allergies and reactions:", "allergies"),
    ("Family history:", "family_history"),
    ("Does anyone in your family have heart disease, diabetes or cancer?", "family_history"),
    ("Date of Birth:", "dob"), ("DOB:", "dob"), ("Full name:", "name"), ("What is your full name?", "name"),
    ("Medical record number (if known):", "mrn"), ("Sex:", "sex"), ("Gender:", "sex"),
    ("Phone number where we can reach you:", "phone"), ("Address:", "address"),
    ("When is the best time to reach you?", "preference"), ("Preferred contact method:", "preference"),
    ("Are you pregnant?", "pregnancy"), ("Past medical history:", "problems"),
    ("Notes:", "notes"), ("Comments:", "notes"), ("Patient signature:", "ignore"),
    ("Emergency contact name:", "other"), ("Favourite colour:", None),
])
def test_classify_label(label, kind):
    assert it.classify_label(label) == kind


@pytest.mark.parametrize("text, expected", [
    ("Metformin 500 mg twice daily", ("Metformin", "500 mg", "twice daily")),
    ("Lisinopril 10mg", ("Lisinopril", "10mg", None)),
    ("Vitamin D 1000 IU daily", ("Vitamin D", "1000 IU", "daily")),
    ("Albuterol inhaler 2 puffs as needed", ("Albuterol inhaler", "2 puffs", "as needed")),
    ("Tylenol as needed", ("Tylenol", None, "as needed")),
    ("Fish oil", ("Fish oil", None, None)),
    # a form's words after the dose are its frequency, less the preparation they open with
    ("Hydrocortisone 1% cream", ("Hydrocortisone", "1%", None)),
    ("Fentanyl 25 mcg patch every 72 hours", ("Fentanyl", "25 mcg", "every 72 hours")),
    ("Metformin 500 mg morning and night", ("Metformin", "500 mg", "morning and night")),
    ("Prednisone 10 mg and 5 mg", ("Prednisone", "10 mg and 5 mg", None)),
])
def test_parse_medication(text, expected):
    m = it.parse_medication(text)
    assert (m["name"], m["dose"], m["frequency"]) == expected


@pytest.mark.parametrize("text, expected", [
    ("Penicillin (hives);", ("Penicillin", "hives")),
    ("Codeine - nausea", ("Codeine", "nausea")),
    ("Sulfa: rash", ("Sulfa", "rash")),
    ("Latex causes itching", ("Latex", "itching")),
    ("Peanuts", ("Peanuts", None)),
    # a reaction after the substance with no mark between (as printed, or OCR lost the dash)
    ("Clindamycin diarrhea", ("Clindamycin", "diarrhea")),
    ("Walnuts lip swelling", ("Walnuts", "lip swelling")),
    ("Morphine severe itching", ("Morphine", "severe itching")),
    ("hives rash", ("hives rash", None)),  # reactions alone name no substance
    ("mild wheezing", ("mild wheezing", None)),
    # a bracket that says what kind of reaction it was, not which (written after the rule)
    ("Codeine - vomiting (intolerance)", ("Codeine", "vomiting (intolerance)")),
    ("Morphine: itch (side effect)", ("Morphine", "itch (side effect)")),
    ("Morphine (intolerance)", ("Morphine", "intolerance")),
    ("Aspirin - wheeze (sensitivity, 2019)", ("Aspirin", "wheeze (sensitivity, 2019)")),  # tried on review
])
def test_parse_allergy(text, expected):
    a = it.parse_allergy(text)
    assert (a["substance"], a["reaction"]) == expected


@pytest.mark.parametrize("text", ["NKDA", "nkda.", "None", "No known allergies", "No known drug allergies", "NKA"])
def test_no_known_allergies(text):
    assert it.is_no_known_allergies(text)


@pytest.mark.parametrize("text", ["Penicillin", "No reaction to latex", "NKDA but sulfa?"])
def test_real_allergy_answers_are_not_nkda(text):
    assert not it.is_no_known_allergies(text)


@pytest.mark.parametrize("text, expected", [
    ("Mother - type 2 diabetes", ("Mother", "type 2 diabetes")),
    ("heart disease (father)", ("father", "heart disease")),
    ("Maternal grandmother: breast cancer", ("Maternal grandmother", "breast cancer")),
    ("diabetes", (None, "diabetes")),
])
def test_parse_family_history(text, expected):
    f = it.parse_family_history(text)
    assert (f["relative"], f["condition"]) == expected


def test_one_line_lists_split_on_commas_and_semicolons():
    result = extract_intake(_content([
        [("Medications:", 50), ("Metformin", 120), ("500", 170), ("mg", 190), ("BID,", 205), ("Lisinopril", 230),
         ("10", 285), ("mg", 300), ("daily;", 315), ("ibuprofen", 350), ("as", 400), ("needed", 415)],
        [("Allergies:", 50), ("Sulfa", 120), ("-", 150), ("rash,", 160), ("Latex", 190), ("-", 220),
         ("itching,", 230), ("swelling", 275)],
        [("Family", 50), ("history:", 85), ("heart", 130), ("disease", 160), ("(father),", 200), ("diabetes", 250)],
    ]), "documents:1")
    assert [f.structured_value for f in _of(result, "medication")] == [
        {"name": "Metformin", "dose": "500 mg", "frequency": "BID"},
        {"name": "Lisinopril", "dose": "10 mg", "frequency": "daily"},
        {"name": "ibuprofen", "dose": None, "frequency": "as needed"},
    ]
    assert [f.structured_value for f in _of(result, "allergy")] == [
        {"substance": "Sulfa", "reaction": "rash"}, {"substance": "Latex", "reaction": "itching, swelling"}]
    assert [f.structured_value for f in _of(result, "family_history")] == [
        {"relative": "father", "condition": "heart disease"}, {"relative": None, "condition": "diabetes"}]


def test_a_qualifier_after_a_comma_stays_with_its_problem_or_allergy():
    # "mild" was a problem of its own, "severe" an allergy to a substance called "severe"
    result = extract_intake(_content([
        _words("Medical history: Asthma, mild, hypertension, since 2010, gout"),
        _words("Allergies: Latex, severe, penicillin - rash"),
    ]), "documents:1")
    assert [f.structured_value["description"] for f in _of(result, "problem")] == [
        "Asthma, mild", "hypertension, since 2010", "gout"]
    assert [f.structured_value for f in _of(result, "allergy")] == [
        {"substance": "Latex", "reaction": None, "severity": "severe"},
        {"substance": "penicillin", "reaction": "rash"}]
    assert all(f.citation.quote_or_value in "Asthma, mild, hypertension, since 2010, gout Latex, severe, penicillin - rash"
               for f in result.facts if f.fact_type in ("problem", "allergy"))


def test_a_record_label_printed_again_before_the_number_is_no_part_of_it():
    # read as "MRN 6620915", the number contradicted the chart's 6620915
    result = extract_intake(_content([
        _words("Patient name: Helene Dubois"), _words("Medical record no.: MRN 6620915")]), "documents:1")
    [mrn] = [i for i in result.identifiers if i.kind.value == "mrn"]
    assert mrn.value == "6620915"
    assert mrn.citation.quote_or_value == "Medical record no.: MRN 6620915"


def _ocr(content: NormalizedContent) -> NormalizedContent:
    """The same words as OCR read them (boxes hugging 10 points of ink, with a confidence)."""
    for w in content.pages[0].words:
        w.conf = 0.95
    return content


@pytest.mark.parametrize("pitch, wrapped", [(22, True), (32, False)])
def test_an_ocr_answer_wrapped_onto_the_next_row_goes_on_with_its_field(pitch, wrapped):
    # A faxed form: OCR boxes hug the ink, so a wrapped answer's second row sat 1.2 ink
    # heights below the first, and Allopurinol and the cream were lost to a margin note
    result = extract_intake(_ocr(_content([
        _words("Current medicines: Furosemide 40 mg each morning, Ramipril 10 mg daily,"),
        _words("Allopurinol 100 mg daily, Hydrocortisone 1% cream as needed", x=140),
    ], pitch=pitch)), "documents:1")
    names = [f.structured_value["name"] for f in _of(result, "medication")]
    assert names[:2] == ["Furosemide", "Ramipril"]
    assert (names[2:] == ["Allopurinol", "Hydrocortisone"]) is wrapped


def test_short_answers_are_cited_with_their_question():
    result = extract_intake(_content([[("Are", 50), ("you", 70), ("pregnant?", 90), ("No", 150)]]), "documents:1")
    (fact,) = result.facts
    assert fact.citation.quote_or_value == "Are you pregnant? No"
    assert not fact.wants_review


@pytest.mark.parametrize("answer", ["Yes", "Not sure", "Now 12 weeks", "No idea", "Unknown"])
def test_pregnancy_answered_other_than_no_needs_review(answer):
    words, x = [("Are", 50), ("you", 70), ("pregnant?", 90)], 150
    for w in answer.split():
        words.append((w, x))
        x += 5 * len(w) + 5
    (fact,) = extract_intake(_content([words]), "documents:1").facts
    assert fact.wants_review, answer


# --------------------------------------------------------------------------- a "?" that is a doubt, not a question


def _words(text: str, x: float = 50) -> list[tuple[str, float]]:
    out = []
    for w in text.split():
        out.append((w, x))
        x += 5 * len(w) + 5
    return out


def _held(result) -> list:
    return [f for f in result.facts if f.wants_review]


@pytest.mark.parametrize("note", [
    "Throat itched after the sushi platter - seafood?",
    "Allergic to peanuts?",
    "walnuts?",
    "Arm swelled up after a wasp sting in June - allergic?",
    "Posible alergia a los mariscos?",
])
def test_a_note_line_ending_in_a_question_mark_is_a_cited_review_finding(note):
    content = _content([_words("Notes:", 50), _words(note, 56)])
    result = extract_intake(content, "documents:1")
    (fact,) = result.facts
    assert fact.fact_type == "allergy" and fact.wants_review and not fact.document_fact_only
    assert fact.citation.quote_or_value == note
    assert "Notes" in fact.review_reason and "uncertain wording" in fact.review_reason
    assert_page_citations_verify(content, result)


def test_the_line_under_a_doubted_note_is_no_answer_to_it():
    result = extract_intake(_content([_words("Comments:"), _words("Allergic to sesame?", 56),
                                       _words("Mum says I reacted as a toddler", 56)]), "documents:1")
    notes = [f.citation.quote_or_value for f in result.facts]
    assert notes == ["Allergic to sesame?", "Mum says I reacted as a toddler"]
    assert result.facts[0].fact_type == "allergy" and result.facts[0].wants_review


def test_a_question_written_in_a_notes_box_is_the_patients_note():
    (fact,) = extract_intake(_content([_words("Notes:"), _words("Is parking free on Sundays?", 56)]),
                             "documents:1").facts
    assert fact.fact_type == "other" and fact.citation.quote_or_value == "Is parking free on Sundays?"


def test_a_doubted_line_outside_every_field_is_kept_as_a_finding():
    # left-aligned with the labels, after a gap: no field continues into it
    result = extract_intake(_content([_words("Allergies:") + _words("Penicillin (hives)", 150), [], [], [],
                                      _words("Shrimp made my lips tingle - shellfish?")]), "documents:1")
    penicillin, note = result.facts
    assert penicillin.structured_value["substance"] == "Penicillin" and not penicillin.wants_review
    assert note.fact_type == "allergy" and note.wants_review
    assert note.citation.quote_or_value == "Shrimp made my lips tingle - shellfish?"


@pytest.mark.parametrize("rows, kind", [
    # form questions still ask: a question word, label words only, or a short label answered on its row
    ([_words("Are you pregnant?"), _words("Not sure", 60)], "pregnancy"),
    ([_words("Any allergies?") + _words("Latex (rash)", 150)], "allergies"),
    ([_words("Pregnant?") + _words("No", 150)], "pregnancy"),
    ([_words("Anything you're allergic to?"), _words("Codeine - vomiting", 60)], "allergies"),
])
def test_form_questions_still_take_their_answers(rows, kind):
    result = extract_intake(_content(rows), "documents:1")
    assert result.facts, rows
    fact = result.facts[0]
    assert fact.citation.field_or_chunk_id.startswith({"pregnancy": "needs_review_findings",
                                                       "allergies": "allergies"}[kind]) \
        or fact.structured_value.get("field") == kind


def test_a_short_label_with_its_answer_on_the_row_is_still_a_question():
    (fact,) = extract_intake(_content([_words("Latex allergy? Yes - hives")]), "documents:1").facts
    assert fact.fact_type == "allergy" and "Yes - hives" in fact.citation.quote_or_value


def test_lettered_medicines_are_charted_without_their_letters():
    # A new-patient questionnaire written after the rule lists its medicines "a)" to "d)"
    # under a numbered question; "a) levothyroxine" had reached the chart as the name.
    from golden.drawing import placed_text_pdf

    page = placed_text_pdf([
        (50, 80, "Family name:  Vasquez-Thornbury"), (320, 80, "First name(s):  Marguerite"),
        (50, 98, "Date of birth:  March 3, 1949"), (320, 98, "Chart #:  HMC-220871"),
        (50, 130, "2. Medicines you take now (include over-the-counter and vitamins):"),
        (70, 146, "a) levothyroxine 75 mcg every morning"), (70, 160, "b) amlodipine 5 mg daily"),
        (70, 174, "(iii) ibuprofen 400 mg as needed for knee pain"),
    ])
    meds = _of(extract_intake(normalize_pdf(page), "documents:3"), "medication")
    assert [m.structured_value["name"] for m in meds] == ["levothyroxine", "amlodipine", "ibuprofen"]


def test_a_medicines_table_with_a_status_column_keeps_a_stopped_medicine_off_the_chart():
    # Written after the status rule: the form's table prints each medicine's status last.
    from domain.policy.context.mentions import apply_to
    from domain.policy.facts.certainty import classify
    from extract.formats.pdf import normalize_pdf
    from golden.drawing import placed_text_pdf

    pdf = placed_text_pdf([
        (50, 50, "NEW PATIENT FORM", 12, "hebo"), (50, 70, "Name: Maria Quispe"), (300, 70, "Date of birth: 12/05/1980"),
        (50, 100, "Current medications:"),
        (50, 116, "Medication"), (200, 116, "Dose"), (300, 116, "How often"), (420, 116, "Status"),
        (50, 130, "Sertraline"), (200, 130, "50 mg"), (300, 130, "daily"), (420, 130, "Active"),
        (50, 144, "Ibuprofen"), (200, 144, "400 mg"), (300, 144, "as needed"), (420, 144, "Stopped")])
    medicines = {f.structured_value["name"]: f for f in extract_intake(normalize_pdf(pdf), "documents:1").facts
                 if f.fact_type == "medication"}
    assert {n: f.structured_value.get("status") for n, f in medicines.items()} == {"Sertraline": "Active",
                                                                                 "Ibuprofen": "Stopped"}
    certainty = {n: classify(apply_to(f), citation_verified=True, paged=True).certainty for n, f in medicines.items()}
    assert certainty == {"Sertraline": Certainty.VERIFIED, "Ibuprofen": Certainty.DOCUMENT_FACT}


def test_a_medical_history_checklist_two_to_a_row_gives_each_condition_ticked_yes():
    # Written after the checklist rule: bracket boxes, two items a row, a row that is no condition.
    from extract.formats.pdf import normalize_pdf
    from golden.drawing import placed_text_pdf

    rows = [(50, 50, "PAST HISTORY", 11, "hebo"), (50, 66, "Name: Aiko Tanabe-Rowe"), (320, 66, "DOB: 02/11/1958")]
    grid = [("Stroke", False), ("Migraine", True), ("Gout", True), ("Liver disease", False),
            ("Interpreter needed", True), ("Bowel cancer", True)]
    for k, (name, yes) in enumerate(grid):
        x, y = 50 + (k % 2) * 260, 90 + (k // 2) * 16
        rows += [(x, y, name), (x + 130, y, ("[X]" if yes else "[ ]") + " Yes   " + ("[ ]" if yes else "[X]") + " No")]
    result = extract_intake(normalize_pdf(placed_text_pdf(rows)), "documents:3")
    problems = [f for f in result.facts if f.fact_type == "problem"]
    assert [f.fact_text for f in problems] == ["History: Migraine", "History: Gout", "History: Bowel cancer"]
    assert all(f.document_fact_only for f in problems)  # self-reported: a reviewer may chart it
    assert "Migraine" in problems[0].citation.quote_or_value and "Stroke" not in problems[0].citation.quote_or_value
    notes = [f.fact_text for f in result.facts if f.fact_type == "other"]
    assert "Note: Interpreter needed: Yes" in notes  # no condition: a note, as before


def test_a_list_answers_second_item_set_apart_on_its_row_is_read_as_the_next_item():
    # Written after the rule: medicines two to a row, and a note far to the right stays a note.
    from extract.formats.pdf import normalize_pdf
    from golden.drawing import placed_text_pdf

    pdf = placed_text_pdf([
        (50, 50, "Name: Tomas Lindgren"), (320, 50, "DOB: 14/02/1949"),
        (50, 80, "Please list the medicines you take:"),
        (50, 96, "Ramipril 5 mg daily;"), (200, 96, "Atorvastatin 40 mg at night"),
        (50, 112, "Aspirin 100 mg daily"), (470, 112, "ran out last week?"),
    ])
    result = extract_intake(normalize_pdf(pdf), "documents:4")
    medicines = [f.structured_value["name"] for f in result.facts if f.fact_type == "medication"
                 and not f.fact_text.startswith("Possible")]
    assert medicines == ["Ramipril", "Atorvastatin", "Aspirin"]
    assert any("ran out last week" in f.fact_text for f in result.facts if f.fact_type != "medication"
               or f.fact_text.startswith("Possible"))
