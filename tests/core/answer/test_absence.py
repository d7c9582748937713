"""An answer's "not found" is checked before it is said (issue 24): every absence line
is backed by a recorded search over the whole record, and what the search finds (a
finding held for review, a mention in a letter, an entry held outside the answer) is
said with where it is, instead of "none found"."""

from __future__ import annotations

from datetime import date

import pytest

from core.services.admin.patients import add_patient
from core.services.answer.answering import ask
from tests.support.pipeline import ingest
from tests.support.synthetic import docx_letter

PATIENT = dict(mrn="4471203", first="Tamsin", last="Orvelle", dob="1961-03-12", sex="F")


def _letter(*lines: str) -> bytes:
    return docx_letter("Re: Tamsin Orvelle", "Date of birth: 12 March 1961", "MRN: 4471203",
                       "Dear Dr Vantreight,", *lines, "Yours sincerely,", "Dr Imogen Quarrie")


@pytest.fixture
def patient(wb):
    return add_patient(wb, mrn=PATIENT["mrn"], first=PATIENT["first"], last=PATIENT["last"],
                       dob=date.fromisoformat(PATIENT["dob"]), sex=PATIENT["sex"], by="dr.reviewer")


def _missing(payload) -> list[str]:
    return [i["text"] for i in payload["sections"]["missing"]]


def test_every_absence_line_carries_its_search(wb, patient):
    ingest(wb, patient, _letter("Current medications: metformin 500 mg twice daily."), "referral_docx", "a.docx")
    payload = ask(wb, patient["id"], "Is she on apixaban?").payload
    claims = [c["claim"] for c in payload["absence_checks"]]
    assert claims and all(any(c in text for text in _missing(payload)) for c in claims)
    check = payload["absence_checks"][0]
    assert check["terms"] == ["apixaban"] and check["verdict"] == "none_found"
    assert set(check["searched"]) == {"chart_rows", "document_facts", "review_items",
                                      "negated_or_not_the_patients", "held_or_rejected"}
    assert sum(check["searched"].values()) > 0


def test_an_allergy_only_held_for_review_is_never_reported_as_not_found(wb, patient):
    ingest(wb, patient, _letter("She wonders whether penicillin gave her a rash as a child; this was never confirmed."),
           "referral_docx", "a.docx")
    payload = ask(wb, patient["id"], "Does she have a penicillin allergy?").payload
    texts = " ".join(i["text"] for i in payload["sections"]["needs_review"])
    assert "penicillin" in texts.lower()
    check = next(c for c in payload["absence_checks"] if "penicillin" in c["terms"])
    assert check["verdict"] == "related_found" and check["related"][0]["status"] == "held for review"


def test_a_mention_in_a_letter_outside_the_asked_kind_is_named_and_cited(wb, patient):
    ingest(wb, patient, _letter("Reason for referral: review of warfarin monitoring after a fall."),
           "referral_docx", "a.docx")
    payload = ask(wb, patient["id"], "Is she on warfarin?").payload
    check = next(c for c in payload["absence_checks"] if "warfarin" in c["terms"])
    assert check["verdict"] == "related_found"
    related = [i for i in payload["sections"]["missing"] if i["text"].startswith("Related entry")
               or "warfarin" in i["text"].lower() and i["citations"]]
    assert related and all(i["citations"] for i in related)



# ---------------------------------------------------------------- one line per finding (issue 24, defect 5)
def test_the_same_medication_from_two_documents_is_one_line_citing_both(wb, patient):
    first = ingest(wb, patient, _letter("Medications: Metformin 1000 mg BID"), "referral_docx", "a.docx")
    second = ingest(wb, patient, _letter("Medications: Metformin 1000 mg twice a day"), "referral_docx", "b.docx")
    outcomes = [f["promotion_status"] for r in (first, second) for f in r["facts"] if f["fact_type"] == "medication"]
    assert outcomes == ["promoted", "already_exists"]  # BID = twice a day: no conflict (defect 3)
    payload = ask(wb, patient["id"], "Is she on metformin?").payload
    lines = [i for i in payload["sections"]["patient_findings"] if "metformin" in i["text"].lower()]
    assert len(lines) == 1
    assert {c["source_id"] for c in lines[0]["citations"]} == {f"documents:{first['document_id']}",
                                                             f"documents:{second['document_id']}"}


def test_a_conflict_line_names_the_charts_value_and_its_source(wb, patient):
    first = ingest(wb, patient, _letter("Medications: Metformin 1000 mg BID"), "referral_docx", "a.docx")
    ingest(wb, patient, _letter("Medications: Metformin 500 mg twice a day"), "referral_docx", "b.docx")
    payload = ask(wb, patient["id"], "Is she on metformin?").payload
    (line,) = [i["text"] for i in payload["sections"]["needs_review"] if "500 mg" in i["text"]]
    assert "conflicts with the chart, which holds Medication: Metformin 1000 mg" in line
    # in words, from the document by its name: no "name=..." pairs, no internal id
    assert "(from a.docx, " in line and "=" not in line and f"documents:{first['document_id']}" not in line
