"""Referral letters written as prose: the reason, service, urgency and clinicians are
read from sentences, salutation and signature as cited facts, and the names and
dates of other people in a letter ("Dear Dr ...", a referring physician's details,
next of kin) never identify the patient."""

from __future__ import annotations

import pytest

from core.models import IdentityStatus
from core.policy.identity import check_identity
from extract import referral_prose as P
from golden import referral_letters as GL
from tests.synthetic import docx_letter as _letter
from tests.test_docx import of_type, run

CASES = [c.name for c in GL.CASES]


def referral(result) -> dict[str, str]:
    out = {}
    for f in of_type(result, "referral"):
        v = f.structured_value
        out[v["field"]] = v["level"] if v["field"] == "urgency" else v["value"]
    return out


@pytest.mark.parametrize("name", CASES)
def test_letter_identity(name):
    case = GL.case(name)
    _, result = run(GL.build(name))
    assert {i.kind.value: i.value for i in result.identifiers} == {
        "name": case.identity.name, "dob": case.identity.dob, "mrn": case.identity.mrn}
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


@pytest.mark.parametrize("answer", ["NKDA except penicillin (rash)", "No known allergies apart from latex"])
def test_no_known_allergies_with_an_exception_goes_to_review(answer):
    _, result = run(_letter("Patient: Tamsin ORVELLE", f"Allergies: {answer}"))
    (fact,) = of_type(result, "allergy")
    assert fact.wants_review and answer in fact.review_reason


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
