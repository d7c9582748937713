"""What OCR does to an intake form's punctuation, read back (found on faxed forms of
bench/extraction_accuracy.py; every wording here was written after the rules):

* a label's colon read as ".", ";" or "'" ("Allergies; Latex") still ends the
  label, on OCR words only, and only when the words before it are label vocabulary
  naming a field: a title ("Dr.") or a heading with a bracket open is no label;
* a colon OCR dropped leaves its space: a label-vocabulary run followed by a gap well
  wider than the row's other gaps is a label, an ordinary sentence is not;
* a full stop between two list items that each hold a number splits them;
* a record number whose letter prefix OCR printed apart from its digits ("KB 40912")
  keeps both parts.
"""

from __future__ import annotations

from domain.content import NormalizedContent, PageContent, Word
from domain.models import IdentifierKind
from extract.intake.extractor import extract_intake

CHAR = 5.0  # points per character
SPACE = 3.5  # an ordinary word gap (as on a 200 dpi fax: 0.7 of a character)


def page(rows: list[list[str]], *, ocr: bool = True) -> NormalizedContent:
    """Rows of words set from x=50 with ordinary gaps; a word written "|word" has twice
    the gap before it (where a colon and its space were: not wide enough to start a
    new segment of the row)."""
    words = []
    for r, row in enumerate(rows):
        x = 50.0
        for text in row:
            gap_before = 0.0
            if text.startswith("|"):
                text, gap_before = text[1:], SPACE
            x += gap_before
            y = 100 + 14 * r
            words.append(Word(text, x, y, x + CHAR * len(text), y + 10, conf=0.9 if ocr else None))
            x += CHAR * len(text) + SPACE
    for i, w in enumerate(words):
        w.index = i
    return NormalizedContent(source_kind="ocr" if ocr else "pdf_text", pages=[PageContent(1, 612, 792, words)])


def facts(content: NormalizedContent, fact_type: str) -> list[dict]:
    return [f.structured_value for f in extract_intake(content, "documents:1").facts if f.fact_type == fact_type]


def test_a_colon_read_as_a_semicolon_or_quote_still_ends_the_label():
    content = page([["Allergies;", "Latex", "(itching)"],
                    ["Date", "of", "birth'", "03/04/1971"]])
    assert facts(content, "allergy") == [{"substance": "Latex", "reaction": "itching"}]
    result = extract_intake(content, "documents:1")
    assert [(i.kind, i.value) for i in result.identifiers] == [(IdentifierKind.DOB, "1971-03-04")]


def test_a_misread_colon_inside_a_line_starts_the_next_field():
    content = page([["Surname:", "Okafor-Reyes", "Sex.", "M"]])
    demographics = {f["field"]: f["value"] for f in facts(content, "demographic")}
    assert demographics["last_name"] == "Okafor-Reyes" and demographics["sex"] == "M"


def test_a_text_layer_full_stop_and_a_title_are_not_labels():
    typed = page([["Allergies.", "Latex", "(itching)"]], ocr=False)
    assert not any(a.get("substance") == "Latex" and a.get("reaction") == "itching" for a in facts(typed, "allergy"))
    titled = page([["Doctor:", "Dr.", "Ines", "Okafor"]])
    result = extract_intake(titled, "documents:1")
    assert not any(f.structured_value.get("label") == "Dr." for f in result.facts)
    # OCR lost the title's full stop and left its space (found on a fax written after the rules)
    spaced = page([["Dr", "|Philippa", "Gruenwald", "reviewed", "the", "form."]])
    assert not any(str(f.structured_value.get("label", "")).startswith("Dr")
                   for f in extract_intake(spaced, "documents:1").facts)


def test_a_comma_is_never_taken_for_a_colon():
    """Found on ../shared/data's scanned intake form: "Address: 123 Any Street, Any Town,
    USA" came back as three addresses when "Street," ended a label."""
    content = page([["Address:", "12", "Mill", "Street,", "Harbour", "Town,", "Canada"]])
    assert [f["value"] for f in facts(content, "demographic") if f["field"] == "address"] == [
        "12 Mill Street, Harbour Town, Canada"]


def test_a_bracket_left_open_is_a_heading_not_a_label():
    content = page([["Medicines", "(name,", "dose,", "when)"],
                    ["Atenolol", "50", "mg", "daily"]])
    assert facts(content, "medication") == [{"name": "Atenolol", "dose": "50 mg", "frequency": "daily"}]


def test_a_lost_colon_is_read_from_the_space_it_left():
    concern = ["Reason", "for", "visit:", "Sore", "knee", "after", "a", "fall"]
    gapped = page([concern, ["Current", "medicines", "|Atorvastatin", "20", "mg", "at", "bedtime"]])
    assert facts(gapped, "medication") == [{"name": "Atorvastatin", "dose": "20 mg", "frequency": "at bedtime"}]
    assert facts(gapped, "chief_concern") == [{"text": "Sore knee after a fall"}]
    even = page([concern, ["Current", "medicines", "were", "reviewed", "with", "her", "today"]])
    assert facts(even, "medication") == []


def test_a_full_stop_between_two_dosed_items_splits_them():
    content = page([["Medications:", "Amlodipine", "5", "mg", "daily.", "Metoprolol", "25", "mg", "twice", "daily"]],
                   ocr=False)
    assert [m["name"] for m in facts(content, "medication")] == ["Amlodipine", "Metoprolol"]
    undosed = page([["Medications:", "Aspirin.", "Take", "with", "food"]], ocr=False)
    assert len(facts(undosed, "medication")) == 1


def test_a_record_number_prefix_printed_apart_keeps_its_digits():
    content = page([["Chart", "no:", "KB", "40912"]])
    result = extract_intake(content, "documents:1")
    assert [(i.kind, i.value) for i in result.identifiers] == [(IdentifierKind.MRN, "KB 40912")]
    alone = page([["MRN:", "40912", "Ward", "B"]])
    assert [i.value for i in extract_intake(alone, "documents:1").identifiers] == ["40912"]


def test_a_bilingual_label_whose_colon_was_misread_is_one_label():
    """"Alergias / Allergies." opening a row is one label: its Spanish half is no item of
    the medicines listed above it (found on a faxed bilingual form: "Alergias /" was
    charted as a medicine)."""
    content = page([["Medicamentos", "/", "Medicines:", "Metformina", "850", "mg", "daily"],
                    ["Alergias", "/", "Allergies.", "Sulfa", "(hives)"]])
    assert [m["name"] for m in facts(content, "medication")] == ["Metformina"]
    assert facts(content, "allergy") == [{"substance": "Sulfa", "reaction": "hives"}]


def test_a_ticked_yes_whose_colon_was_read_as_a_full_stop_still_opens_the_answer():
    content = page([["Allergies:", "[", "]", "None", "[X]", "Sí/", "Yes.", "Amoxicilina", "(swelling)"]])
    assert facts(content, "allergy") == [{"substance": "Amoxicilina", "reaction": "swelling"}]


def test_an_accent_on_an_ocr_read_medicine_name_holds_it_for_review():
    """A speck over a faxed "Albuterol" read as "Albutérol": a name nobody wrote goes to
    a person, not to the chart; a typed accent is the writer's own."""
    rows = [["Medications:", "Albutérol", "inhaler", "2", "puffs", "as", "needed"]]
    (ocr,) = [f for f in extract_intake(page(rows), "documents:1").facts if f.fact_type == "medication"]
    assert ocr.wants_review and "'é'" in ocr.review_reason
    (typed,) = [f for f in extract_intake(page(rows, ocr=False), "documents:1").facts if f.fact_type == "medication"]
    assert not typed.wants_review


def test_a_ticked_yes_whose_colon_ocr_lost_still_opens_the_answer():
    """"[X] Oui / Yes Codeine": the allergen is what follows the "Yes" on its row, not
    the line below it, and not "Oui / Yes Codeine"."""
    content = page([["Allergies:", "[", "]", "Aucune", "/", "None", "[X]", "Oui", "/", "Yes", "Codeine", "(nausea)"]])
    assert facts(content, "allergy") == [{"substance": "Codeine", "reaction": "nausea"}]


def test_a_bilingual_label_whose_colon_ocr_lost_is_one_label():
    content = page([["Medicaments", "/", "Medications", "|Ramipril", "5", "mg", "once", "daily"]])
    assert facts(content, "medication") == [{"name": "Ramipril", "dose": "5 mg", "frequency": "once daily"}]


def _cells(rows: list[list[tuple[float, str]]]) -> NormalizedContent:
    """OCR rows of cells, each (x, phrase): cells far apart are separate pieces of the row."""
    words = []
    for r, row in enumerate(rows):
        for x, phrase in row:
            for text in phrase.split():
                y = 100 + 14 * r
                words.append(Word(text, x, y, x + CHAR * len(text), y + 10, conf=0.9))
                x += CHAR * len(text) + SPACE
    for i, w in enumerate(words):
        w.index = i
    return NormalizedContent(source_kind="ocr", pages=[PageContent(1, 612, 792, words)])


def _smoking(row: list[tuple[float, str]]):
    """The smoking answer of a form whose other fields are labelled at the same x."""
    content = _cells([[(50, "Last name:"), (120, "Delacroix")], [(50, "Today's date:"), (120, "12/02/2026")], row])
    (fact,) = [f for f in extract_intake(content, "documents:1").facts if "smoke" in f.fact_text]
    return fact


def test_a_yes_no_question_whose_boxes_ocr_lost_or_garbled_is_no_answer():
    """A questionnaire written after the rules, scanned and faxed: "Do you smoke? [ ] Yes
    [X] No" was read "Yes {Xl No" (the empty box lost, the ticked one garbled) and, faxed,
    "Yes No": both times the answer was "Yes", and the ticked No a margin note. The
    "Yes" before the first box read is an option whose box was lost, not an answer."""
    scanned = _smoking([(50, "Do you smoke?"), (140, "Yes"), (175, "{Xl No"),
                        (260, "Alcohol (drinks per week):"), (420, "3")])
    assert scanned.fact_text == "Do you smoke: No"
    faxed = _smoking([(50, "Do you smoke?"), (140, "Yes"), (175, "No"),
                      (260, "Alcohol (drinks per week):"), (420, "3")])
    assert faxed.wants_review and "no mark beside either was read" in faxed.review_reason
    # both boxes read: the ticked one is the answer
    read = _smoking([(50, "Do you smoke?"), (140, "{l Yes"), (190, "{Xl No")])
    assert read.fact_text == "Do you smoke: No" and not read.wants_review


def test_a_checklist_row_whose_boxes_ocr_garbled_or_lost_goes_to_a_person():
    """The paediatric checklist ("Condition | Yes | No"), faxed: "Asthma [xX] {]" (one
    mark read twice), "Seizures fl in)", "Diabetes [X]" (the empty box lost), "Eczema [X]
    ]". Each row stays the checklist's; what OCR could not read is said, never guessed."""
    content = _cells([[(62, "Condition"), (260, "Yes"), (300, "No")],
                      [(62, "Asthma"), (258, "[xX]"), (300, "{]")],
                      [(62, "Seizures"), (258, "fl"), (300, "in)")],
                      [(62, "Diabetes"), (300, "[X]")],
                      [(62, "Eczema"), (258, "[X]"), (302, "]")]])
    facts = {f.fact_text: f for f in extract_intake(content, "documents:1").facts}
    assert "History: Asthma" in facts and not facts["History: Asthma"].wants_review
    assert "could not be read" in facts["Seizures: not read"].review_reason
    assert facts["Diabetes: No"].review_reason.startswith("the box under 'Yes' could not be read")
    assert facts["Eczema: Yes"].wants_review  # its "No" box was read as "]"
    assert not any("margin" in text for text in facts)
