"""Referral letters written as prose: the reason, service, urgency and clinicians are
read from sentences, salutation and signature as cited facts, and the names and
dates of other people in a letter ("Dear Dr ...", a referring physician's details,
next of kin) never identify the patient."""

from __future__ import annotations

import pytest

from domain.models import IdentityStatus
from domain.policy.identity.gate import check_identity
from extract.referral import prose as P
from extract.values.prose_allergies import allergy_in
from golden import referral_letters as GL
from tests.support.synthetic import docx_letter as _letter
from tests.support.extract_support import of_type, read_referral_docx as run

CASES = [c.name for c in GL.CASES]


def referral(result) -> dict[str, str]:
    out = {}
    for f in of_type(result, "referral"):
        v = f.structured_value
        out[v["field"]] = v["level"] if v["field"] == "urgency" else v["value"]
    return out


# Letters that print the patient's number as an NHS number: read as another identifier
# (never compared as a record number), which agrees here because the chart is kept under it.
NHS_NUMBERED = {"grateful_letter", "e_referral"}


@pytest.mark.parametrize("name", CASES)
def test_letter_identity(name):
    case = GL.case(name)
    _, result = run(GL.build(name))
    number = "other_id" if name in NHS_NUMBERED else "mrn"
    assert {i.kind.value: i.value for i in result.identifiers} == {
        "name": case.identity.name, "dob": case.identity.dob, number: case.identity.mrn}
    assert len(result.identifiers) == 3
    first, last = case.identity.name.split()[-2:]
    chart = {"first_name": first, "last_name": last, "dob": case.identity.dob, "mrn": case.identity.mrn}
    assert check_identity(result.identifiers, chart).status is IdentityStatus.VERIFIED


@pytest.mark.parametrize("name", CASES)
def test_other_people_in_a_letter_never_identify_the_patient(name):
    case = GL.case(name)
    _, result = run(GL.build(name))
    for i in result.identifiers:
        for other in case.not_the_patient:
            assert other not in i.value and other not in i.citation.quote_or_value, (other, i)


@pytest.mark.parametrize("name", CASES)
def test_referral_details_from_prose_salutation_and_signature(name):
    case = GL.case(name)
    _, result = run(GL.build(name))
    assert referral(result) == case.referral
    facts = of_type(result, "referral")
    assert all(f.document_fact_only and f.citation.quote_or_value for f in facts)
    reason = next(f for f in facts if f.structured_value["field"] == "reason")
    assert reason.context_text and reason.citation.quote_or_value in reason.context_text
    assert not reason.wants_review


@pytest.mark.parametrize("name", CASES)
def test_letter_medications_and_allergies(name):
    case = GL.case(name)
    _, result = run(GL.build(name))
    meds = of_type(result, "medication")
    assert [(m.structured_value["name"], m.structured_value["dose"], m.structured_value["frequency"])
            for m in meds] == [(m.name, m.dose, m.frequency) for m in case.medications]
    allergies = [a for a in of_type(result, "allergy") if a.structured_value.get("status") != "no_known_allergies"]
    assert [(a.structured_value["substance"], a.structured_value["reaction"]) for a in allergies] == [
        (a.substance, a.reaction) for a in case.allergies]
    assert [a.wants_review for a in allergies] == [a.needs_review for a in case.allergies]
    assert all(a.context_text for a in allergies)
    nkda = [a for a in of_type(result, "allergy") if a.structured_value.get("status") == "no_known_allergies"]
    assert len(nkda) == int(case.nkda)
    assert all(a.document_fact_only and a.structured_value["substance"] == "" for a in nkda)


def test_struck_through_allergy_is_marked_and_held_for_review():
    content, result = run(GL.build("refer_to_service_letter"))
    assert any("~~amoxicillin~~" in s.text for s in content.sections)
    struck = next(a for a in of_type(result, "allergy") if a.structured_value["substance"] == "amoxicillin")
    assert struck.wants_review and "struck-through" in struck.review_reason


@pytest.mark.parametrize("answer, substance, status", [
    ("NKDA except penicillin (rash)", "penicillin", "no_known_drug_allergies"),
    ("No known allergies apart from latex", "latex", "no_known_allergies")])
def test_no_known_allergies_with_an_exception_is_that_allergy_for_review(answer, substance, status):
    _, result = run(_letter("Patient: Tamsin ORVELLE", f"Allergies: {answer}"))
    (fact,) = of_type(result, "allergy")
    assert fact.structured_value["substance"] == substance and not fact.structured_value["no_known_allergies"]
    assert fact.structured_value["exception_to"] == status and not fact.document_fact_only
    assert fact.wants_review and "exception" in fact.review_reason


@pytest.mark.parametrize("line, text, status", [
    ("Allergies: NKDA", "Allergies: no known drug allergies", "no_known_drug_allergies"),
    ("Allergies: No known allergies", "Allergies: no known allergies", "no_known_allergies"),
    ("She has no known drug allergies.", "Allergies: no known drug allergies", "no_known_drug_allergies")])
def test_no_known_drug_allergies_stays_drug_specific_in_a_letter(line, text, status):
    _, result = run(_letter("Patient: Tamsin ORVELLE", line))
    (fact,) = of_type(result, "allergy")
    assert fact.fact_text == text and fact.structured_value["status"] == status and fact.document_fact_only


def test_an_exception_told_in_a_sentence_is_an_allergy():
    _, result = run(_letter("Patient: Tamsin ORVELLE", "He has no known drug allergies apart from codeine."))
    (fact,) = of_type(result, "allergy")
    assert fact.structured_value["substance"] == "codeine" and fact.wants_review


def test_a_salutation_after_an_empty_re_line_is_not_the_patient():
    _, result = run(_letter("Re:", "Dear Dr Imogen Vantreight,", "Patient: Tamsin ORVELLE",
                            "DOB: 2 September 1990"))
    assert {i.kind.value: i.value for i in result.identifiers} == {"name": "Tamsin ORVELLE", "dob": "1990-09-02"}
    assert referral(result)["receiving_provider"] == "Dr Imogen Vantreight"


def test_a_name_line_under_a_referring_physician_heading_is_the_physician():
    _, result = run(_letter("Patient: Tamsin ORVELLE", "Referring physician:", "Name: Dr Alan Brooks",
                            "Date of birth: 1 May 1960"))
    assert {i.kind.value: i.value for i in result.identifiers} == {"name": "Tamsin ORVELLE"}
    assert referral(result)["referring_provider"] == "Dr Alan Brooks"


def test_a_name_that_is_a_clinician_or_a_topic_is_not_the_patient():
    _, result = run(_letter("Patient name: Dr Alan Brooks", "Re: Referral for cardiology assessment"))
    assert result.identifiers == []
    assert [w.code for w in result.warnings].count("docx_name_not_patient") == 2


def test_a_hedged_reason_in_prose_asks_for_review():
    _, result = run(_letter("Dear Dr Ng,", "I would be grateful if you could see Mr Tobias Renwick for ? angina."))
    reason = next(f for f in of_type(result, "referral") if f.structured_value["field"] == "reason")
    assert reason.structured_value["value"] == "? angina"
    assert reason.wants_review and "uncertain wording" in reason.review_reason


def test_urgency_of_a_plan_is_not_the_referrals_urgency():
    _, result = run(_letter("I would be grateful if you could see Ms Ada Quill for recurrent fainting.",
                            "If she deteriorates before then, please see her urgently."))
    assert "urgency" not in referral(result)
    assert referral(result)["reason"] == "recurrent fainting"


def test_a_label_inside_a_paragraph_gives_its_field_but_never_an_identity():
    _, result = run(_letter("Patient: Tamsin ORVELLE", "DOB: 2 September 1990",
                            "Seen with her mother today. Reason for request: recurrent wheeze on exertion. "
                            "Priority: soon. Name: Ada Orvelle. DOB: 14/03/1961."))
    assert referral(result)["reason"] == "recurrent wheeze on exertion"
    assert referral(result)["urgency"] == "soon"
    assert {i.kind.value: i.value for i in result.identifiers} == {"name": "Tamsin ORVELLE", "dob": "1990-09-02"}


def test_a_carers_date_of_birth_in_the_prose_is_not_the_patients():
    _, result = run(GL.build("e_referral"))
    assert [i.value for i in result.identifiers if i.kind.value == "dob"] == ["1949-10-17"]
    assert not any("Clementine" in f.citation.quote_or_value for f in result.facts if f.fact_type != "referral")


def test_an_accented_patient_name_identifies_the_patient():
    _, result = run(_letter("Patient: José NÚÑEZ-ARAGÓN", "DOB: 2 September 1990"))
    assert {i.kind.value: i.value for i in result.identifiers} == {"name": "José NÚÑEZ-ARAGÓN", "dob": "1990-09-02"}


def test_a_labelled_reason_wins_over_the_prose_one():
    _, result = run(_letter("Reason for referral: Poorly controlled asthma",
                            "I would be grateful if you could see Mr Ian Fell for his wheeze."))
    assert referral(result)["reason"] == "Poorly controlled asthma"


# ---------------------------------------------------------------------------- the prose rules


@pytest.mark.parametrize("sentence, reason", [
    ("I would be grateful if you could see Mr X Y for exertional chest tightness of six weeks' duration.",
     "exertional chest tightness of six weeks' duration"),
    ("I am writing to refer Mrs Okafor to your dermatology clinic regarding a changing mole on her back.",
     "a changing mole on her back"),
    ("Thank you for seeing this 71-year-old gentleman, who has developed a tremor in his right hand.",
     "a tremor in his right hand"),
    ("I would value your opinion on Mr Dunmore's worsening breathlessness on exertion.",
     "worsening breathlessness on exertion"),
    ("Could you please see him for a neurology opinion regarding recurrent headaches?", "recurrent headaches"),
    ("Please could you assess Ms Lindqvist because of weight loss of 6 kg since March.",
     "weight loss of 6 kg since March"),
    ("I have referred her to the falls clinic with three falls since Christmas, which worry her daughter.",
     "three falls since Christmas"),
])
def test_reason_from_a_request_sentence(sentence, reason):
    assert P.reason_in(sentence).text == reason


@pytest.mark.parametrize("sentence", [
    "Please see the table below for details of the data elements.",
    "Could you please see him for a cardiology opinion.",
    "Thank you for seeing her.",
    "The reason for the delay is unclear.",
])
def test_no_reason_without_a_request_about_a_person(sentence):
    assert P.reason_in(sentence) is None


@pytest.mark.parametrize("text, service", [
    ("refer Mrs Okafor to your dermatology clinic regarding a mole", "dermatology clinic"),
    ("see him in the rapid access chest pain clinic", "rapid access chest pain clinic"),
    ("I would value a gastroenterology opinion", "gastroenterology opinion"),
    ("exertional chest tightness", None),
])
def test_service_asked_for(text, service):
    found = P.service_in(text)
    assert (found.text if found else None) == service


@pytest.mark.parametrize("text, level", [
    ("I would be grateful if he could be seen urgently.", "urgent"),
    ("This is a routine referral.", "routine"),
    ("This is not urgent.", "routine"),
    ("Referred under the two-week-wait pathway.", "2-week wait"),
    ("Please see her as soon as possible.", "soon"),
    ("I saw her yesterday.", None),
])
def test_urgency_level(text, level):
    found = P.urgency_in(text)
    assert (found.value if found else None) == level


# --------------------------------------------------------------------------- allergy labels and sentences, time frames, lists


def _bulleted(*blocks) -> bytes:
    """A letter of plain paragraphs (str) and bulleted lists (tuple of items)."""
    import io

    import docx

    doc = docx.Document()
    for block in blocks:
        for item in (block if isinstance(block, tuple) else (block,)):
            doc.add_paragraph(item, style="List Bullet" if isinstance(block, tuple) else None)
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


@pytest.mark.parametrize("label", ["Drug sensitivities", "Intolerances", "Allergies/ADRs", "Adverse drug reactions",
                                   "ADRs", "Known drug allergies", "Hypersensitivities", "Food intolerances"])
def test_allergy_label_wordings(label):
    _, result = run(_letter("Patient: Tamsin ORVELLE", f"{label}: codeine - vomiting"))
    (fact,) = of_type(result, "allergy")
    assert (fact.structured_value["substance"], fact.structured_value["reaction"]) == ("codeine", "vomiting")
    assert not fact.wants_review and fact.confidence >= 0.85


def test_an_allergy_label_heading_a_list_of_paragraphs():
    _, result = run(_bulleted("Patient: Tamsin ORVELLE", "Drug intolerances:", ("Morphine - itching", "Latex (hives)")))
    assert [(a.structured_value["substance"], a.structured_value["reaction"], a.wants_review)
            for a in of_type(result, "allergy")] == [("Morphine", "itching", False), ("Latex", "hives", False)]


@pytest.mark.parametrize("heading", ["Plan:", "Impression and plan:", "Recommendations:", "Actions for the GP:"])
def test_a_label_the_reader_does_not_know_ends_the_list_above_it(heading):
    # "Plan:" under a list of medicines was read as a medicine, and each planned change
    # under it ("Start empagliflozin 10 mg once daily") as a current one, charted.
    _, result = run(_bulleted("Patient: Tamsin ORVELLE", "Current medications:",
                              ("Ramipril 5 mg once daily", "Atorvastatin 40 mg at night"), heading,
                              ("Start empagliflozin 10 mg once daily", "Stop atorvastatin")))
    meds = {m.structured_value["name"]: m for m in of_type(result, "medication")}
    assert not meds["Ramipril"].wants_review and not meds["Atorvastatin"].wants_review
    assert set(meds) == {"Ramipril", "Atorvastatin", "empagliflozin"}  # no "Plan", no "Start ..." nor "Stop ..."
    assert meds["empagliflozin"].wants_review  # a planned medicine, told in a sentence: a person decides


@pytest.mark.parametrize("label", ["Allergy testing", "Allergic to penicillin", "Drug levels", "Next of kin allergies"])
def test_wordings_that_are_no_allergy_label(label):
    from extract.referral.labels import label_field

    assert label_field(label) != "allergies"


@pytest.mark.parametrize("paragraph, listed, told", [
    ("Drug sensitivities: tramadol - confusion. She thinks the trimethoprim gave her a rash last spring.",
     ("tramadol", "confusion"), ("trimethoprim", "rash")),
    ("Allergies: Codeine (nausea). He wonders if the elastoplast dressings caused a blistering reaction, "
     "though nobody confirmed it.", ("Codeine", "nausea"), ("elastoplast dressings", "blistering reaction")),
    ("Adverse reactions: Penicillin (anaphylaxis). Possibly allergic to the contrast used at her CT.",
     ("Penicillin", "anaphylaxis"), ("contrast", None)),
    ("Allergies: Doxycycline - photosensitivity. Mum believes she reacted to amoxicillin with hives as a baby.",
     ("Doxycycline", "photosensitivity"), ("amoxicillin", "hives")),
    ("Intolerances: Metformin - diarrhoea. It is unclear whether the ibuprofen brought on his wheeze.",
     ("Metformin", "diarrhoea"), ("ibuprofen", "wheeze")),
])
def test_an_allergy_told_in_a_sentence_is_held_for_review_and_the_listed_one_is_not(paragraph, listed, told):
    _, result = run(_letter("Patient: Tamsin ORVELLE", paragraph))
    first, second = of_type(result, "allergy")
    assert (first.structured_value["substance"], first.structured_value["reaction"]) == listed
    assert not first.wants_review and first.confidence >= 0.85
    assert (second.structured_value["substance"], second.structured_value["reaction"]) == told
    assert second.wants_review and second.confidence < 0.85
    assert told[0] in second.citation.quote_or_value and second.citation.quote_or_value in paragraph


def test_a_sentence_that_names_no_allergen_is_not_charted_as_one():
    _, result = run(_letter("Patient: Tamsin ORVELLE", "Allergies: Penicillin (rash). He is otherwise fit and well."))
    penicillin, other = of_type(result, "allergy")
    assert not penicillin.wants_review
    assert other.wants_review and "does not read as one allergen" in other.review_reason


@pytest.mark.parametrize("text, level, printed", [
    ("We would like him seen within two weeks.", "soon", "within two weeks"),
    ("Could she be reviewed within 48 hours please?", "urgent", "within 48 hours"),
    ("Please arrange an appointment in the next few days.", "urgent", "in the next few days"),
    ("An appointment within the next 3 months would be fine.", "routine", "within the next 3 months"),
    ("I would be grateful if he could be seen within a fortnight.", "soon", "within a fortnight"),
    ("Ideally within 10 working days.", "soon", "within 10 working days"),
    ("Review within 2/52 please.", "soon", "within 2/52"),
    ("Needs seeing within 24h.", "urgent", "within 24h"),
    ("Her potassium is within normal limits.", None, None),
])
def test_urgency_from_a_time_frame(text, level, printed):
    found = P.urgency_in(text)
    assert (found.value if found else None) == level
    assert (found.text if found else None) == printed


def test_a_time_frame_sentence_gives_the_referrals_urgency():
    _, result = run(_letter("Patient: Tamsin ORVELLE", "Please assess her painful left hip. We would like her seen "
                            "within 10 days.", "He was seen within two days by the falls team last year."))
    (urgency,) = [f for f in of_type(result, "referral") if f.structured_value["field"] == "urgency"]
    assert urgency.structured_value["level"] == "soon" and urgency.citation.quote_or_value == "within 10 days"


@pytest.mark.parametrize("sentence, told", [
    ("He wonders whether the chlorhexidine wash gave him a rash after surgery.", ("chlorhexidine wash", "rash")),
    ("She reacted to co-amoxiclav with hives in 2019.", ("co-amoxiclav", "hives")),
    ("The morphine made her vomit.", ("morphine", "vomit")),
    ("There may be a latex allergy.", ("latex", None)),
    ("He had a bad reaction to the flu jab once.", ("flu jab", None)),
    ("He is otherwise well.", None),
    ("This was never confirmed.", None),
])
def test_allergy_in_a_sentence(sentence, told):
    found = allergy_in(sentence)
    got = (found.substance.text, found.reaction.text if found.reaction else None) if found else None
    assert got == told


def test_clean_items_of_a_bulleted_list_are_as_sure_as_labelled_lines():
    _, result = run(_bulleted(
        "Patient: Tamsin ORVELLE", "Regular medications:",
        ("Ramipril 2.5 mg once daily", "Sertraline 50 mg in the morning", "Aspirin",
         "Takes two of the white ones with breakfast when she remembers"),
        "Problems:", ("Asthma", "Gout (M10.9)", "Was admitted last winter with a chest infection and has not been right since.")))
    meds = {m.structured_value["name"]: m for m in of_type(result, "medication")}
    assert meds["Ramipril"].confidence >= 0.85 and not meds["Ramipril"].wants_review
    assert meds["Sertraline"].confidence >= 0.85
    assert meds["Aspirin"].confidence < 0.85  # no dose
    assert [m.confidence < 0.85 for m in meds.values()] == [False, False, True, True]
    problems = of_type(result, "problem")
    assert [p.confidence >= 0.85 for p in problems] == [True, True, False]
