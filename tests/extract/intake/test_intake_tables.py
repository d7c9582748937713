"""A form's medicines and allergies printed as tables, tick boxes it draws, and the
vital signs its staff section records. Written after a new-patient questionnaire (made
in a layout tool) gave a medicine named "Strength", lost two of three medicines and an
allergy without a word, read its unticked "No" as "no known allergies", "Do you smoke?"
as "Yes", and its height, weight and blood pressure as notes."""

from __future__ import annotations

import pymupdf

from extract.formats.pdf import normalize_pdf
from extract.intake.extractor import extract_intake
from extract.unread_identity import unread_identifiers
from tests.support.synthetic import assert_page_citations_verify


def _form(draw) -> tuple:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    draw(page)
    content = normalize_pdf(doc.tobytes())
    result = extract_intake(content, "documents:3")
    assert_page_citations_verify(content, result)
    return content, result


def _text(page, x: float, y: float, s: str, bold: bool = False) -> None:
    page.insert_text((x, y), s, fontsize=10, fontname="hebo" if bold else "helv")


def _box(page, x: float, y: float, ticked: bool) -> None:
    page.draw_rect(pymupdf.Rect(x, y - 8, x + 8, y), width=0.6)
    if ticked:
        page.insert_text((x + 1, y - 1), "X", fontsize=8)


def _lines(*lines: tuple[float, float, str]):
    """A form drawn as its lines of text, each (x, y, text)."""
    def draw(page):
        for x, y, text in lines:
            _text(page, x, y, text)
    return draw


def _boxes(page, x: float, y: float, options: tuple[str, ...], ticked: str) -> None:
    """Drawn tick boxes on one row, each with its option after it, ``ticked`` marked."""
    for k, option in enumerate(options):
        _box(page, x + 40 * k, y, option == ticked)
        _text(page, x + 40 * k + 12, y, option)


def _answered_yes(page, y: float, question: str, below: str, boxes_x: float = 470) -> None:
    """A question with "No" and "Yes" boxes on its row, "Yes" ticked, and a line under it."""
    _text(page, 50, y, question)
    _boxes(page, boxes_x, y, ("No", "Yes"), "Yes")
    _text(page, 68, y + 16, below)


def _rows(page, y: float, rows: list[tuple[str, ...]], step: float = 130) -> float:
    for row in rows:
        for k, cell in enumerate(row):
            _text(page, 50 + k * step, y, cell)
        y += 15
    return y


def _of(result, fact_type: str) -> list:
    return [f for f in result.facts if f.fact_type == fact_type]


def test_tables_of_medicines_and_allergies_under_their_headers():
    def draw(page):
        _text(page, 50, 60, "Full name: Oduya, Priscilla Amara")
        _text(page, 50, 90, "Current medicines (include over-the-counter)", bold=True)
        y = _rows(page, 106, [("Medicine", "Strength", "How often", "What for")])
        y = _rows(page, y, [("Levothyroxine", "100 mcg", "every morning", "thyroid"),
                            ("Sertraline", "50 mg", "once a day", "mood"),
                            ("Ibuprofen", "400 mg", "when needed", "back pain")])
        _text(page, 50, y + 20, "Allergies or bad reactions to medicines?", bold=True)
        _box(page, 330, y + 20, False)
        _text(page, 342, y + 20, "No")
        _box(page, 380, y + 20, True)
        _text(page, 392, y + 20, "Yes - please list")
        y = _rows(page, y + 36, [("Allergic to", "What happened")], step=150)
        _rows(page, y, [("Trimethoprim", "hives all over"), ("Elastoplast", "blisters")], step=150)
    _, result = _form(draw)
    meds = {f.structured_value["name"]: f.structured_value for f in _of(result, "medication")}
    assert {k: (v["dose"], v["frequency"]) for k, v in meds.items()} == {
        "Levothyroxine": ("100 mcg", "every morning"), "Sertraline": ("50 mg", "once a day"),
        "Ibuprofen": ("400 mg", "when needed")}
    allergies = {f.structured_value["substance"]: f.structured_value["reaction"] for f in _of(result, "allergy")}
    assert allergies == {"Trimethoprim": "hives all over", "Elastoplast": "blisters"}  # never "no known allergies"


def test_a_medicines_reason_that_reads_like_a_forms_label_is_a_cell_of_its_row():
    # A questionnaire written after the rule: "blood pressure" in the "Reason" column read
    # as the form's vital-sign label, so the row lost its strength, frequency and reason to
    # margin notes while "Takes Lisinopril" was charted with no dose.
    def draw(page):
        _text(page, 50, 60, "MEDICATIONS YOU TAKE NOW", bold=True)
        y = _rows(page, 76, [("Medicine", "Strength", "How often", "Reason")])
        y = _rows(page, y, [("Lisinopril", "20 mg", "once a day", "blood pressure"),
                            ("Sertraline", "50 mg", "every morning", "mood")])
        _rows(page, y + 10, [("Blood pressure", "148/92")])  # the form's own label, after the table
    _, result = _form(draw)
    meds = {f.structured_value["name"]: (f.structured_value["dose"], f.structured_value["frequency"])
            for f in _of(result, "medication")}
    assert meds == {"Lisinopril": ("20 mg", "once a day"), "Sertraline": ("50 mg", "every morning")}
    assert not [f for f in result.facts if "margin" in f.fact_text]
    assert [f.structured_value["systolic"] for f in _of(result, "vital_sign")] == ["148"]


def test_a_table_under_a_list_label_without_a_header():
    def draw(page):
        _text(page, 50, 60, "Current medications:")
        _rows(page, 76, [("Metformin", "500 mg", "twice daily"), ("Atorvastatin", "20 mg", "at night")])
    _, result = _form(draw)
    meds = [(f.structured_value["name"], f.structured_value["dose"], f.structured_value["frequency"])
            for f in _of(result, "medication")]
    assert meds == [("Metformin", "500 mg", "twice daily"), ("Atorvastatin", "20 mg", "at night")]


def test_questions_in_line_with_their_boxes_are_no_table():
    # A screening form's questions each with Yes/No boxes line up like a table's rows;
    # the allergy question above them must not take them in.
    def draw(page):
        y = 60
        for q in ("Do you have sensitivity to latex?", "Do you have a seizure disorder?", "Are you pregnant?"):
            _text(page, 50, y, q)
            _box(page, 400, y, False)
            _box(page, 450, y, False)
            y += 16
    _, result = _form(draw)
    assert not _of(result, "allergy") and not _of(result, "medication")
    assert all("seizure" not in f.fact_text or "latex" not in f.fact_text for f in result.facts)


def test_tick_boxes_set_apart_on_the_answer_row_are_one_answer():
    def draw(page):
        _text(page, 50, 40, "Full name: Oduya, Priscilla Amara")
        _text(page, 50, 60, "Do you smoke?")
        _box(page, 150, 60, False)
        _text(page, 162, 60, "Yes")
        _box(page, 200, 60, True)
        _text(page, 212, 60, "No, never")
        _text(page, 50, 80, "Any allergies?")
        _box(page, 150, 80, False)
        _text(page, 162, 80, "No")
        _box(page, 200, 80, True)
        _text(page, 212, 80, "Yes: penicillin")
    _, result = _form(draw)
    (smoke,) = [f for f in result.facts if "smoke" in f.fact_text.lower()]
    assert smoke.fact_text == "Do you smoke: No, never"
    (allergy,) = [f for f in result.facts if f.fact_type == "allergy"]
    assert allergy.structured_value["substance"] == "penicillin"  # not "no known allergies"


def test_vital_signs_recorded_on_a_form_are_held_readings_and_other_answers_stay_as_written():
    def draw(page):
        _text(page, 50, 60, "Height: 164 cm")
        _text(page, 170, 60, "Weight: 71.5 kg")
        _text(page, 290, 60, "BP: 128/82")
        _text(page, 390, 60, "Pulse: 76")
        _text(page, 50, 90, "Recent weight loss: No")
    content, result = _form(draw)
    vitals = {f.structured_value["kind"]: f for f in _of(result, "vital_sign")}
    # read as a reading, "128/82" is no identifier left unread (the served app asked for identity review)
    assert unread_identifiers(content, result, "documents:3") == []
    assert {k: (f.structured_value["value"], f.structured_value["unit"]) for k, f in vitals.items()} == {
        "height": ("164", "cm"), "weight": ("71.5", "kg"), "blood_pressure": ("128/82", "mmHg"),
        "heart_rate": ("76", "/min")}
    assert all(f.wants_review and "no time of measurement" in f.review_reason for f in vitals.values())
    assert vitals["blood_pressure"].citation.quote_or_value == "BP: 128/82"
    (loss,) = [f for f in result.facts if "weight loss" in f.fact_text.lower()]
    assert loss.fact_type == "other" and loss.fact_text == "Recent weight loss: No"


def test_a_header_whose_space_a_scan_read_as_a_hyphen_still_heads_the_table():
    from domain.content import PageContent, Word
    from extract.intake.tables import table_header
    from extract.layout import page_rows

    words = [Word("Allergic-to", 54, 100, 104, 110, conf=0.9), Word("What", 205, 100, 228, 110, conf=0.9),
             Word("happened", 231, 100, 272, 110, conf=0.9)]
    (row,) = page_rows(PageContent(1, 612, 792, words))
    assert table_header(row) == "allergies"


def _allergies(result) -> dict:
    return {f.structured_value["substance"]: f.structured_value.get("reaction") for f in _of(result, "allergy")
            if f.structured_value.get("substance")}


def test_a_follow_up_line_under_a_ticked_yes_is_that_questions_list():
    # Written after a questionnaire whose "If yes, list each and what happened:" line was
    # held as a margin note, and its allergy question as "answered yes but listed nothing".
    _, result = _form(_lines(
        (50, 60, "Full name: Oduya, Priscilla Amara"),
        (50, 90, "6) Have you ever reacted badly to a medicine?   [ ] No   [X] Yes"),
        (68, 106, "If so, what was it and what happened: amoxicillin - swollen lips; morphine - itch"),
        (50, 122, "7) Family illnesses:   [ ] None   [X] Yes"),
        (68, 138, "Please list:"),
        (80, 154, "Father - bowel cancer at 60")))
    assert _allergies(result) == {"amoxicillin": "swollen lips", "morphine": "itch"}
    assert [f.structured_value["relative"] for f in _of(result, "family_history")] == ["Father"]
    assert not [f for f in result.facts if "listed nothing" in (f.review_reason or "")
                or "outside the form's fields" in (f.review_reason or "")]


def test_a_follow_up_under_a_ticked_no_that_lists_something_goes_to_review():
    _, result = _form(_lines((50, 60, "Full name: Oduya, Priscilla Amara"),
                             (50, 90, "Allergies to any medication?   [X] No   [ ] Yes"),
                             (68, 106, "If yes, list them: latex gloves")))
    assert not _allergies(result)
    assert not [f for f in _of(result, "allergy") if not f.wants_review]


def test_a_no_under_a_narrow_allergy_question_rules_out_only_what_it_asked():
    _, result = _form(_lines((50, 60, "Full name: Oduya, Priscilla Amara"), (50, 90, "Food allergies: none"),
                             (50, 106, "Are you allergic to latex or sticking plasters?   [X] No   [ ] Yes"),
                             (50, 122, "Allergies to prescribed drugs: None")))
    statuses = [f.structured_value.get("status") for f in _of(result, "allergy")]
    assert statuses == ["no_known_food_allergies", "no_known_drug_allergies"]  # latex "No" is no such statement
    (latex,) = [f for f in result.facts if "latex" in f.fact_text]
    assert latex.fact_type == "other" and latex.fact_text.endswith(": No")


def test_no_known_allergies_beside_a_listed_allergy_goes_to_review():
    _, result = _form(_lines((50, 60, "Full name: Oduya, Priscilla Amara"), (50, 90, "Allergies: None known"),
                             (50, 122, "Bad reactions to anything?   [ ] No   [X] Yes: penicillin - rash")))
    (none_known,) = [f for f in _of(result, "allergy") if f.structured_value.get("status")]
    assert none_known.wants_review and "penicillin" in none_known.review_reason
    assert _allergies(result) == {"penicillin": "rash"}


def test_a_numbered_question_answered_by_boxes_on_its_row_is_a_question():
    # "B1." before the question word, and a long question with no question word: the
    # boxes printed after it make it a form's question, not a doubt the patient wrote.
    def draw(page):
        _text(page, 50, 60, "Full name: Oduya, Priscilla Amara")
        _answered_yes(page, 90, "D4. Any sensitivity to medicines, dressings or other things used in hospital?",
                      "If the answer is yes, give details of each:")
        _text(page, 80, 122, "Chlorhexidine - red weals")
        _answered_yes(page, 144, "D5. Do you use any inhalers?", "Which ones: salbutamol 100 mcg two puffs when needed")
    _, result = _form(draw)
    assert _allergies(result) == {"Chlorhexidine": "red weals"}
    assert [f.structured_value["name"] for f in _of(result, "medication")] == ["salbutamol"]
    assert not [f for f in result.facts if f.wants_review]


def test_a_ticked_yes_answered_on_the_row_below_is_quoted_as_printed():
    # The quote once skipped the "Yes" between the ticked box and the answer below it,
    # so it was found nowhere on the page and the fact could not be verified.
    def draw(page):
        _text(page, 50, 60, "Full name: Oduya, Priscilla Amara")
        _answered_yes(page, 90, "Do you drink alcohol?", "How much in a week: about 10 units", boxes_x=300)
    _, result = _form(draw)  # every citation verifies on the page
    (alcohol,) = [f for f in result.facts if "alcohol" in f.fact_text]
    assert alcohol.fact_text.endswith("about 10 units") and "Yes" in alcohol.citation.quote_or_value


def test_a_follow_up_about_another_person_is_no_part_of_the_list_above():
    # Tried after the follow-up rule: "If you have a carer, their name:" under a medicines
    # question charted "Takes Joseph Oduya".
    _, result = _form(_lines((50, 60, "Full name: Oduya, Priscilla Amara"),
                             (50, 90, "Do you take any medicines?   [ ] No   [X] Yes"),
                             (68, 106, "If you have a carer, their name: Joseph Oduya")))
    assert not _of(result, "medication")
    (carer,) = [f for f in result.facts if "Joseph" in f.fact_text]
    assert carer.structured_value["person"] == "guardian"


# --------------------------------------------------------------------------- a checklist whose answers head columns


def _history_grid(page, drawn: bool) -> None:
    """A paediatric form's medical-history checklist: "Condition | Yes | No" over one row
    per condition with a box under each answer (typed "[X]" or drawn boxes)."""
    _text(page, 50, 50, "Child's name: Theodore Nakashima-Reyes")
    _text(page, 330, 50, "Child's date of birth: 03/14/2019")
    _text(page, 50, 64, "Birth history: born at 34 weeks, NICU for 6 days")
    _text(page, 62, 96, "Condition", True)
    _text(page, 260, 96, "Yes", True)
    _text(page, 300, 96, "No", True)
    for k, (condition, yes) in enumerate((("Asthma", True), ("Seizures", False), ("Eczema", True),
                                          ("Heart murmur", False))):
        y = 110 + 14 * k
        _text(page, 62, y, condition)
        if drawn:
            _box(page, 262, y, yes)
            _box(page, 302, y, not yes)
        else:
            _text(page, 260, y, "[X]" if yes else "[ ]")
            _text(page, 300, y, "[ ]" if yes else "[X]")
    _text(page, 50, 180, "Reason for visit: cough at night for 3 weeks")


def test_a_checklist_whose_answers_head_its_columns_reads_each_rows_box():
    """Before: the header was a question nobody answered, each row a margin note, and
    "Seizures" (its box under "No") a reported symptom with red-flag language."""
    for drawn in (False, True):
        _, result = _form(lambda page: _history_grid(page, drawn))
        history = sorted(f.structured_value["description"] for f in _of(result, "problem"))
        assert history == ["Asthma", "Eczema"], drawn
        answers = {f.fact_text for f in _of(result, "other")}
        assert {"Seizures: No", "Heart murmur: No"} <= answers, drawn
        assert not any("Condition" in f.fact_text or "Seizures" in f.fact_text and f.wants_review
                       for f in result.facts), drawn


def test_a_quote_ocr_set_after_a_label_word_does_not_change_the_label():
    from extract.values.labels import read_label

    assert read_label("Birth history'").kind == read_label("Birth history").kind == "misc"
    assert read_label("\u2018Date of birth").kind == "dob"


def test_a_birth_history_is_no_date_of_birth():
    """"Birth history: born at 34 weeks" was a second date-of-birth value: the form's
    identity lost its birth date ("2 different dob values")."""
    _, result = _form(lambda page: _history_grid(page, drawn=False))
    assert [i.value for i in result.identifiers if i.kind.value == "dob"] == ["2019-03-14"]
    assert not any(w.code == "intake_conflicting_identifiers" for w in result.warnings)


def test_a_question_whose_printed_yes_and_no_lost_their_boxes_is_no_checklist_header():
    """A scan read "Are you having shortness of breath? Yes N" (both boxes lost), then a
    question with its boxes: taken for a checklist's header, the first question's
    answer vanished without a word. It stays a question, held for a person."""
    _, result = _form(_lines((50, 50, "Name: Ann Lee"), (300, 50, "DOB: 04/12/1961"),
                             (50, 80, "Are you having shortness of breath?"), (300, 80, "Yes"), (340, 80, "N"),
                             (50, 94, "Do you have a cough?"), (300, 94, "[ ]"), (340, 94, "[X]")))
    breath = [f for f in result.facts if "shortness of breath" in f.fact_text]
    assert breath and all(f.wants_review for f in breath)


def test_a_checklist_with_a_third_answer_and_letter_headings_is_read_too():
    """Written after the checklist rule: "Illness | Y | N | Unsure". Before, "Unsure"
    was no answer heading, the header became a question nobody answered and the rows
    margin notes again ("Stroke", its box under N, a reported symptom)."""
    def draw(page):
        _text(page, 50, 50, "Patient name: Mira Kowalczyk")
        _text(page, 330, 50, "Date of birth: 05/09/1980")
        for x, heading in ((50, "Illness"), (300, "Y"), (340, "N"), (380, "Unsure")):
            _text(page, x, 80, heading)
        for k, (condition, ticked) in enumerate((("High blood pressure", 0), ("Stroke", 1), ("Kidney disease", 2))):
            _text(page, 62, 96 + 15 * k, condition)
            for n, x in enumerate((298, 338, 386)):
                _text(page, x, 96 + 15 * k, "[X]" if n == ticked else "[ ]")

    _, result = _form(draw)
    assert [f.fact_text for f in _of(result, "problem")] == ["History: High blood pressure"]
    assert {f.fact_text for f in _of(result, "other")} >= {"Stroke: N", "Kidney disease: Unsure"}
    assert not any(f.wants_review for f in result.facts if f.fact_type in ("problem", "other"))
