"""One list parser for allergies, medications, frequencies and "no known ..." (issue 24,
defect 2): every reader (a list in a letter, a form's answer, a sentence, an HL7 AL1)
reads these wordings through ``extract.values.lists``, so they agree, checked here on
one table."""

from __future__ import annotations

import pytest

from domain.policy.facts import medication_schedule as schedule
from extract.values import lists
from extract.values import written_answers
from extract.values.prose_allergies import no_known_allergies_in

DRUG, FOOD, ANY = "no_known_drug_allergies", "no_known_food_allergies", "no_known_allergies"

# (text, status of a "no known" statement or None, the allergy an exception names or None)
NO_KNOWN_TABLE = [
    ("NKDA", DRUG, None), ("nkda.", DRUG, None), ("No known drug allergies", DRUG, None),
    ("No Known Medication Allergies", DRUG, None), ("no drug allergies", DRUG, None),
    ("No known allergies", ANY, None), ("NKA", ANY, None), ("None known", ANY, None),
    ("No known food allergies", FOOD, None), ("NKFA", FOOD, None),
    ("NKDA except penicillin", DRUG, "penicillin"), ("NKDA (except PCN - rash)", DRUG, "PCN"),
    ("No known allergies apart from latex", ANY, "latex"), ("no known drug allergies other than codeine", DRUG, "codeine"),
    ("Penicillin (rash)", None, None), ("Known drug allergies: penicillin", None, None),
    # Written after the parser, on answers found to become an allergy "to None":
    ("None", ANY, None), ("Nil", ANY, None), ("None documented", ANY, None), ("none on file", ANY, None),
    ("Nonesuch dust", None, None), ("nilotinib", None, None),
]


@pytest.mark.parametrize("text, status, exception", NO_KNOWN_TABLE)
def test_the_list_parser(text, status, exception):
    parsed = lists.parse_allergy(text)
    if status is None:
        assert not parsed["no_known_allergies"] and "exception_to" not in parsed
    elif exception is None:
        assert parsed["no_known_allergies"] and parsed["status"] == status and parsed["substance"] is None
    else:  # the allergy, never a "none"
        assert not parsed["no_known_allergies"] and parsed["substance"] == exception
        assert parsed["exception_to"] == status


@pytest.mark.parametrize("text, status, exception", NO_KNOWN_TABLE)
def test_a_forms_answer_agrees(text, status, exception):
    assert written_answers.no_known_status(text) == (status if exception is None else None)
    if exception is not None:
        assert written_answers.parse_allergy(text)["substance"] == exception


@pytest.mark.parametrize("text, status, exception", NO_KNOWN_TABLE)
def test_a_sentence_agrees(text, status, exception):
    found = no_known_allergies_in(f"On review today she says {text}.")
    if status is None:
        assert found is None
    elif found is not None:  # a bare "None known" in a sentence is not about allergies
        assert found.value == status


def test_no_known_drug_allergies_is_never_widened():
    assert lists.parse_allergy("No known drug allergies")["status"] != lists.parse_allergy("NKA")["status"]
    assert lists.NO_KNOWN_TEXT[DRUG] == "no known drug allergies"
    assert written_answers.no_known_status("None") == ANY  # a bare "none" answers the question asked


def test_a_sentence_needs_the_word_allergy_for_a_bare_none():
    assert no_known_allergies_in("Any chest pain? None known.") is None
    assert no_known_allergies_in("He has no known allergies.").value == ANY


# (line, name, dose, frequency, route) as printed; frequencies and routes from the one vocabulary
MEDICATION_TABLE = [
    ("Metformin 1000 mg BID", "Metformin", "1000 mg", "BID", None),
    ("metformin 1000 mg twice a day", "metformin", "1000 mg", "twice a day", None),
    ("Lisinopril 10 mg PO daily", "Lisinopril", "10 mg", "daily", "PO"),
    ("Amlodipine 5mg by mouth once a day", "Amlodipine", "5mg", "once a day", "by mouth"),
    ("Ondansetron 4 mg IV q8h", "Ondansetron", "4 mg", "q8h", "IV"),
    ("Atorvastatin 40 mg nocte", "Atorvastatin", "40 mg", "nocte", None),
    ("Furosemide 40 mg t.i.d.", "Furosemide", "40 mg", "t.i.d.", None),
    # "prn" and "up to" are part of how often: taken as needed is not taken every 4 hours
    ("Salbutamol 2 puffs q4h prn", "Salbutamol", "2 puffs", "q4h prn", None),
    ("paracetamol 1 g up to four times a day when needed", "paracetamol", "1 g",
     "up to four times a day when needed", None),
    ("Salbutamol 2 puffs as required, up to 4 times a day", "Salbutamol", "2 puffs",
     "as required, up to 4 times a day", None),
    ("Insulin glargine 20 units at night", "Insulin glargine", "20 units", "at night", None),
    # when in the day, read whole (it had been cut to "daily"), and "ac" is before meals, not with them
    ("Metformin 500 mg daily before breakfast", "Metformin", "500 mg", "daily before breakfast", None),
    ("Gliclazide 80 mg twice daily with meals", "Gliclazide", "80 mg", "twice daily with meals", None),
    ("Omeprazole 20 mg once daily before food", "Omeprazole", "20 mg", "once daily before food", None),
]


@pytest.mark.parametrize("line, name, dose, frequency, route", MEDICATION_TABLE)
def test_medication_lines(line, name, dose, frequency, route):
    assert lists.parse_medication(line) == {"name": name, "dose": dose, "frequency": frequency, "route": route}


@pytest.mark.parametrize("line, name, dose, frequency, route", MEDICATION_TABLE)
def test_a_forms_medication_answer_agrees(line, name, dose, frequency, route):
    parsed = written_answers.parse_medication(line)  # a form's item loses its closing stop ("t.i.d")
    assert (parsed["name"], parsed["dose"], parsed.get("route")) == (name, dose, route)
    assert schedule.frequency(parsed["frequency"]) == schedule.frequency(frequency)


def test_a_forms_answer_keeps_a_schedule_the_vocabulary_does_not_know():
    assert written_answers.parse_medication("Metformin 500 mg morning and night")["frequency"] == "morning and night"
    assert lists.parse_medication("Metformin 500 mg morning and night")["frequency"] is None


@pytest.mark.parametrize("text, topic", [
    ("Acute Encephalopathy", None),  # the pertussis case report's symptom list: no allergy
    ("Cephalexin - hives", "allergy"), ("cephalosporins", "allergy"), ("cefuroxime", "allergy"),
])
def test_cephal_names_an_allergy_only_as_a_drugs_stem(text, topic):
    from extract.values.written_answers import clinical_topic

    assert clinical_topic(text) == topic


@pytest.mark.parametrize("text, instruction", [
    ("(check all that apply)", True), ("(tick one)", True), ("Circle one", True), ("(please select all that apply)", True),
    ("(mark each box that applies)", True), ("check-up last year", False), ("Diabetes", False),
    ("(checked by Dr Lee)", False), ("circle of willis aneurysm", False),
])
def test_an_instruction_after_a_question_is_no_answer(text, instruction):
    assert written_answers.is_instruction(text) is instruction


def test_a_box_ocr_read_with_a_brace_is_a_box_and_a_row_below_a_whole_option_is_not_its_answer():
    words = "[X] Diabetes [] Asthma Heart disease {X] Thyroid {] Stroke".split()
    rows = [0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    ticks = written_answers.read_ticks(words, rows)
    assert [words[k] for k in sorted(ticks.answer)] == ["Diabetes", "Thyroid"]
    assert "could not be read ('Heart disease')" in ticks.problem
    # an option that asks for writing still takes the rows below it
    words = "[] No [X] Yes - list: codeine (vomiting)".split()
    ticks = written_answers.read_ticks(words, [0, 0, 0, 0, 0, 0, 1, 1])
    assert [words[k] for k in sorted(ticks.answer)] == ["codeine", "(vomiting)"] and ticks.problem is None


@pytest.mark.parametrize("token, marker", [
    ("-", True), ("•", True), ("2.", True), ("12)", True), ("(3)", True), ("a)", True), ("b.", True), ("(c)", True),
    ("iv)", True), ("(ii)", True), ("A)", True),
    ("A.", False), ("E.", False), ("Dr.", False), ("10mg", False), ("coli", False), ("(left)", False),
])
def test_what_numbers_or_bullets_a_list(token, marker):
    assert lists.is_list_marker(token) is marker


def test_lettered_and_roman_items_lose_their_markers_and_an_initial_keeps_its_item():
    # An intake form written after the rule numbered its medicines "a)" to "d)"; they were
    # charted as "a) levothyroxine".
    text = "a) levothyroxine 75 mcg\nb. amlodipine 5 mg\n(iii) aspirin 81 mg\nE. coli urinary infection\nA) metformin"
    assert lists.split_items(text) == ["levothyroxine 75 mcg", "amlodipine 5 mg", "aspirin 81 mg",
                                       "E. coli urinary infection", "metformin"]


@pytest.mark.parametrize("text, items", [
    # an emergency summary's "Diagnosis:" (written after the rule): two problems, one per sentence
    ("Community-acquired pneumonia (right lower lobe). Acute kidney injury stage 1.",
     ["Community-acquired pneumonia (right lower lobe)", "Acute kidney injury stage 1"]),
    ("Asthma. Well controlled.", ["Asthma. Well controlled"]),  # a sentence that only qualifies stays
    ("Type 2 diabetes, diet controlled; CKD stage 3", ["Type 2 diabetes, diet controlled", "CKD stage 3"]),
])
def test_a_problem_list_written_in_sentences(text, items):
    assert lists.problem_items(text) == items
