"""Identity gate rules: names, dates of birth, MRNs and the six states."""

from datetime import date

import pytest

from domain.models import IdentifierKind, IdentityCandidate, IdentityStatus
from domain.policy.facts.chart_rules import identity_trusted
from domain.policy.identity.gate import check_identity, names_match, parse_dob

PATIENT = {"first_name": "Marisol", "last_name": "Quintero-Vale", "dob": date(1961, 3, 14), "mrn": "DEMO-1001"}


def cand(kind, value, scope=None):
    return IdentityCandidate(kind=IdentifierKind(kind), value=value, scope=scope)


@pytest.mark.parametrize("printed", [
    "QUINTERO-VALE, MARISOL", "Quintero-Vale, Marisol A.", "Marisol Quintero-Vale", "marisol quintero vale",
    "QUINTERO VALE, MARISOL ANNE", "Ms. Marisol Quintero-Vale", "Quintero-Vale, M",
    # the comma after a surname in capitals, read by OCR as a stop: the fax was quarantined as another's
    "QUINTERO-VALE. Marisol Anne", "QUINTERO-VALE; Marisol", "MS. Marisol Quintero-Vale",
])
def test_names_that_match(printed):
    assert names_match(printed, "Marisol", "Quintero-Vale") is True


@pytest.mark.parametrize("printed", ["QUINTERO, ROSA", "Marisela Quintana", "Vale, Marcus", "QUINTANA. Marisol"])
def test_names_that_do_not_match(printed):
    assert names_match(printed, "Marisol", "Quintero-Vale") is False


def test_a_lone_word_is_too_partial_to_judge():
    assert names_match("Marisol", "Marisol", "Quintero-Vale") is None


@pytest.mark.parametrize("text", ["1961-03-14", "03/14/1961", "3/14/61", "14 March 1961", "March 14, 1961",
                                  "Mar 14 1961", "14-Mar-1961"])
def test_dob_formats(text):
    assert parse_dob(text) == date(1961, 3, 14)


def test_incomplete_dob_is_not_guessed():
    assert parse_dob("03/1961") is None


def test_name_and_dob_verify():
    out = check_identity([cand("name", "QUINTERO-VALE, MARISOL"), cand("dob", "03/14/1961")], PATIENT)
    assert out.status is IdentityStatus.VERIFIED and out.matched == {"name": True, "dob": True}


def test_mrn_and_one_more_verify():
    out = check_identity([cand("mrn", "demo-1001"), cand("dob", "1961-03-14")], PATIENT)
    assert out.status is IdentityStatus.VERIFIED


def test_any_contradiction_quarantines():
    out = check_identity([cand("name", "QUINTERO-VALE, MARISOL"), cand("dob", "1962-03-14")], PATIENT)
    assert out.status is IdentityStatus.MISMATCH and "dob" in out.mismatch_reason
    out = check_identity([cand("name", "Rosa Quintero"), cand("dob", "1961-03-14"), cand("mrn", "DEMO-1001")],
                         PATIENT)
    assert out.status is IdentityStatus.MISMATCH and out.review_required


def test_the_charts_number_after_a_facility_code_is_for_a_person_to_confirm():
    """"RMH 0442917" on a report for a chart whose MRN is 0442917: neither the chart's
    number as the chart holds it nor another patient's."""
    chart = {**PATIENT, "mrn": "0442917"}
    name, dob = cand("name", "QUINTERO-VALE, MARISOL"), cand("dob", "1961-03-14")
    out = check_identity([name, dob, cand("mrn", "RMH0442917")], chart)
    assert out.status is IdentityStatus.AMBIGUOUS and "facility code 'RMH'" in out.mismatch_reason
    assert "0442917" not in out.mismatch_reason  # the reason names no identity value
    for other in ("RMH0442918", "RMH0442917X"):  # another number: a contradiction, as before
        assert check_identity([name, dob, cand("mrn", other)], chart).status is IdentityStatus.MISMATCH
    prefixed_chart = {**PATIENT, "mrn": "RMH0442917"}
    assert check_identity([name, dob, cand("mrn", "RMH 0442917")], prefixed_chart).status is IdentityStatus.VERIFIED


@pytest.mark.parametrize("cands", [[], [("name", "Marisol Quintero-Vale")], [("dob", "1961-03-14")],
                                   [("name", "Marisol"), ("dob", "1961-03-14")]])
def test_missing_or_partial_identifiers_are_ambiguous(cands):
    out = check_identity([cand(*c) for c in cands], PATIENT)
    assert out.status is IdentityStatus.AMBIGUOUS and out.review_required


def test_trusted_states():
    assert {s for s in IdentityStatus if identity_trusted(s)} == {IdentityStatus.VERIFIED, IdentityStatus.APPROVED}


# --------------------------------------------------------------------------- names misread by OCR

OCR_PATIENT = {"first_name": "Perpetua", "last_name": "Ikwuemesi-Dalgaard", "dob": date(1957, 4, 23),
               "mrn": "CR-760144"}


@pytest.mark.parametrize("printed, first, last", [
    ("IKWUEMES!-DALGAARD, PERPETUA", "Perpetua", "Ikwuemesi-Dalgaard"),  # "!" for i
    ("J0HN SM1TH", "John", "Smith"),  # 0 for o, 1 for i
    ("5MITH, JOHN", "John", "Smith"),  # 5 for S
    ("N|COLE BR0WN", "Nicole", "Brown"),  # | for i
    ("K0WALSK1, ANNA", "Anna", "Kowalski"),
    ("Ikwuemes!, Perpetua", "Perpetua", "Ikwuemesi-Dalgaard"),  # part of a compound name
    ("0'BRIEN, SEAN", "Sean", "O'Brien"),
])
def test_a_name_that_matches_only_through_ocr_lookalikes_is_not_judged(printed, first, last):
    # Not a contradiction (it names nobody else), not a confirmation either.
    assert names_match(printed, first, last) is None


@pytest.mark.parametrize("printed, first, last", [
    ("J0NES, MARY", "John", "Smith"),  # look-alikes read any way: still another person
    ("K0WALSK1, ANNA", "Anna", "Nowak"),
    ("N|COLE BR0WN", "Nicole", "Green"),
    ("SMlTH, JOHN", "John", "Smith"),  # letters only: compared strictly, as a text layer prints them
    ("Quintera-Vale, Marisol", "Marisol", "Quintero-Vale"),
])
def test_lookalikes_never_turn_another_name_into_a_match(printed, first, last):
    assert names_match(printed, first, last) is False


def test_a_misread_name_with_exact_mrn_and_dob_verifies_and_with_dob_alone_waits_for_review():
    name = cand("name", "IKWUEMES!-DALGAARD, PERPETUA")
    out = check_identity([name, cand("dob", "1957-04-23"), cand("mrn", "CR:760144")], OCR_PATIENT)
    assert out.status is IdentityStatus.VERIFIED and "name" not in out.matched
    out = check_identity([name, cand("dob", "1957-04-23")], OCR_PATIENT)
    assert out.status is IdentityStatus.AMBIGUOUS and out.review_required
    # another patient's MRN still quarantines, whatever the name
    out = check_identity([name, cand("dob", "1957-04-23"), cand("mrn", "CR-760145")], OCR_PATIENT)
    assert out.status is IdentityStatus.MISMATCH
    # a clean reading of the same name on another page still counts
    out = check_identity([name, cand("name", "IKWUEMESI-DALGAARD, PERPETUA"), cand("dob", "1957-04-23")], OCR_PATIENT)
    assert out.status is IdentityStatus.VERIFIED


# ------------------------------------------------------------------ printed but not read, other identifiers
def unread(kind="dob", value="06/21/1958", label="Born"):
    from domain.models import Citation, UnreadIdentifier

    return UnreadIdentifier(kind=kind, label=label, value=value, reason="a label the reader did not take",
                            citation=Citation(source_type="lab_pdf", source_id="documents:1", page_or_section="page 1",
                                              field_or_chunk_id="unread.identity", quote_or_value=f"{label} {value}"))


def test_a_document_with_an_identity_value_not_read_is_never_verified_by_itself():
    read = [cand("name", "QUINTERO-VALE, Marisol"), cand("dob", "1961-03-14"), cand("mrn", "DEMO-1001")]
    outcome = check_identity(read, PATIENT, [unread()])
    assert outcome.status is IdentityStatus.AMBIGUOUS and outcome.review_required
    assert "printed but not read" in outcome.mismatch_reason and "Born" in outcome.mismatch_reason
    assert "1958" not in outcome.mismatch_reason  # the reason names the label and page, never the value
    assert outcome.unread == [unread()]
    assert check_identity(read, PATIENT).status is IdentityStatus.VERIFIED  # the same without it


def test_a_contradiction_among_what_was_read_still_quarantines_whatever_was_not_read():
    outcome = check_identity([cand("name", "OYELARAN, Winifred")], PATIENT, [unread("record_number", "4471-22", "Hosp")])
    assert outcome.status is IdentityStatus.MISMATCH
    assert "printed but not read" in outcome.mismatch_reason


@pytest.mark.parametrize("number", ["90-33187", "V-88120", "485 777 3456"])
def test_an_account_visit_or_nhs_number_never_contradicts_the_mrn(number):
    read = [cand("name", "Marisol Quintero-Vale"), cand("dob", "03/14/1961"), cand("other_id", number)]
    outcome = check_identity(read, PATIENT)
    assert outcome.status is IdentityStatus.VERIFIED and "mrn" not in outcome.matched


def test_another_identifier_that_is_the_charts_number_agrees_with_it():
    outcome = check_identity([cand("name", "Marisol Quintero-Vale"), cand("other_id", "demo 1001")], PATIENT)
    assert outcome.status is IdentityStatus.VERIFIED and outcome.matched == {"name": True, "mrn": True}


def test_an_open_date_of_birth_whose_other_reading_is_the_charts_goes_to_a_person():
    # "03/12/1961" with nothing on the document to settle it: read month first it is
    # 12 March, day first 3 December. One reading is the chart's: no mismatch, no match.
    chart = {**PATIENT, "dob": date(1961, 12, 3)}
    open_dob = IdentityCandidate(kind=IdentifierKind.DOB, value="1961-03-12", other_reading="1961-12-03")
    out = check_identity([cand("name", "Marisol Quintero-Vale"), cand("mrn", "DEMO-1001"), open_dob], chart)
    assert out.status is IdentityStatus.AMBIGUOUS and "dob" not in out.matched
    assert "1961-03-12 month first or 1961-12-03 day first" in out.mismatch_reason
    # neither reading is the chart's: a contradiction, as before
    out = check_identity([cand("name", "Marisol Quintero-Vale"), open_dob], {**PATIENT, "dob": date(1961, 5, 7)})
    assert out.status is IdentityStatus.MISMATCH
    # the month-first reading is the chart's: a match, as before
    out = check_identity([cand("name", "Marisol Quintero-Vale"), open_dob], {**PATIENT, "dob": date(1961, 3, 12)})
    assert out.status is IdentityStatus.VERIFIED
    # another identifier that contradicts still quarantines
    out = check_identity([cand("name", "Rosa Quintero"), open_dob], chart)
    assert out.status is IdentityStatus.MISMATCH
