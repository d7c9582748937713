"""A scanned or faxed letter read through OCR: what the paragraph reader must not take on
trust. Written after the rules (``extract.referral.extractor``, ``extract.referral.pages``)."""

from __future__ import annotations

from domain.content import NormalizedContent, PageContent, Word
from extract.referral.extractor import extract_referral


def _ocr_letter(lines: list[str], low: dict[str, float] | None = None, *, conf: float | None = 0.93) -> NormalizedContent:
    """One page, a paragraph per line (a blank line between them), each word read at
    ``conf`` unless ``low`` gives it another; ``conf=None``: a text layer."""
    low = low or {}
    words, y = [], 100.0
    for line in lines:
        x = 72.0
        for text in line.split():
            width = 5.5 * len(text)
            words.append(Word(text, x, y, x + width, y + 10, conf=low.get(text, conf)))
            x += width + 4
        y += 28
    for i, w in enumerate(words):
        w.index = i
    return NormalizedContent(source_kind="ocr" if conf is not None else "pdf_text",
                             pages=[PageContent(1, 612, 792, words)])


LETTER = ["Dear Dr Okoro,", "Re Halina WOJCIK, born 14/02/1949, NHS number 485 777 3456",
          "Medications: metformin 500 mg twice daily, bisoprolol 2.5 mg daily",
          "Allergies: co-trimoxazole (rash)", "Yours sincerely,", "Dr Arjun Mehta"]


def test_a_subject_line_whose_colon_ocr_lost_still_names_the_patient():
    result = extract_referral(_ocr_letter(LETTER), "documents:3")
    ids = {i.kind.value: i.value for i in result.identifiers}
    assert ids.get("name") == "Halina WOJCIK" and ids.get("dob") == "1949-02-14"
    typed = extract_referral(_ocr_letter(LETTER, conf=None), "documents:3")
    assert not [i for i in typed.identifiers if i.kind.value == "name"]  # typed "Re Halina" is no label


def test_an_item_whose_words_ocr_doubted_goes_to_a_person():
    trusted = extract_referral(_ocr_letter(LETTER), "documents:3")
    allergy, = [f for f in trusted.facts if f.fact_type == "allergy"]
    assert not allergy.wants_review  # a labelled list, every word read with trust
    doubted = extract_referral(_ocr_letter(LETTER, {"co-trimoxazole": 0.31, "2.5": 0.4}), "documents:3")
    allergy, = [f for f in doubted.facts if f.fact_type == "allergy"]
    assert allergy.wants_review and allergy.review_reason == \
        "read by OCR with low confidence (0.31): check it against the page"
    bisoprolol, = [f for f in doubted.facts if f.fact_type == "medication" and "bisoprolol" in f.fact_text]
    assert "read by OCR with low confidence (0.40)" in bisoprolol.review_reason  # added to its other doubt


def test_a_date_of_birth_label_glued_to_its_date_by_a_point_still_names_the_patient():
    # A fax read "DOB 14/03/1952" as "DOB.14/03/1952": neither the name nor the date was read,
    # and the letter went to identity review as "missing: dob, name".
    lines = ["Re: Tomasz WIECZOREK DOB.14/03/1952 MRN HX-771203", "Dear Dr Okafor,", "Yours sincerely,",
             "Dr Helena Marsh"]
    ids = {i.kind.value: i.value for i in extract_referral(_ocr_letter(lines), "documents:3").identifiers}
    assert ids == {"name": "Tomasz WIECZOREK", "dob": "1952-03-14", "mrn": "HX-771203"}


def test_a_known_label_whose_colon_ocr_read_as_a_stop_still_heads_its_answer():
    # A discharge summary written after the rule, faxed: "Diagnosis: Acute kidney injury ..."
    # came out "Diagnosis. Acute ...", and the diagnosis was lost; "Name: Margaret
    # HARGREAVES" came out with a rule's debris after it ("... HARGREAVES _").
    lines = ["Name: Margaret HARGREAVES _", "Hospital No: K1183307",
             "Diagnosis. Acute kidney injury on chronic kidney disease stage 4",
             "Allergies: latex (contact dermatitis)", "Current medications, apixaban 2.5 mg twice daily",
             "Plan. Review in clinic in 2 weeks."]
    result = extract_referral(_ocr_letter(lines), "documents:4")
    assert [f.structured_value["description"] for f in result.facts if f.fact_type == "problem"] == [
        "Acute kidney injury on chronic kidney disease stage 4"]
    assert [f.structured_value["substance"] for f in result.facts if f.fact_type == "allergy"] == ["latex"]
    assert [f.structured_value["name"] for f in result.facts if f.fact_type == "medication"] == ["apixaban"]
    assert {i.kind.value: i.value for i in result.identifiers}["name"] == "Margaret HARGREAVES"
    # typed, "Diagnosis. Acute ..." is a sentence as printed: no label
    typed = extract_referral(_ocr_letter(lines, conf=None), "documents:4")
    assert not [f for f in typed.facts if f.fact_type == "problem" and f.structured_value["description"].startswith(
        "Acute kidney injury")]
