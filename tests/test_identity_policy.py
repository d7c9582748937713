"""Identity gate rules: names, dates of birth, MRNs and the six states."""

from datetime import date

import pytest

from core.models import IdentifierKind, IdentityCandidate, IdentityStatus
from core.policy.chart_rules import identity_trusted
from core.policy.identity import check_identity, names_match, parse_dob

PATIENT = {"first_name": "Marisol", "last_name": "Quintero-Vale", "dob": date(1961, 3, 14), "mrn": "DEMO-1001"}


def cand(kind, value, scope=None):
    return IdentityCandidate(kind=IdentifierKind(kind), value=value, scope=scope)


@pytest.mark.parametrize("printed", [
    "QUINTERO-VALE, MARISOL", "Quintero-Vale, Marisol A.", "Marisol Quintero-Vale", "marisol quintero vale",
    "QUINTERO VALE, MARISOL ANNE", "Ms. Marisol Quintero-Vale", "Quintero-Vale, M",
])
def test_names_that_match(printed):
    assert names_match(printed, "Marisol", "Quintero-Vale") is True


@pytest.mark.parametrize("printed", ["QUINTERO, ROSA", "Marisela Quintana", "Vale, Marcus"])
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


@pytest.mark.parametrize("cands", [[], [("name", "Marisol Quintero-Vale")], [("dob", "1961-03-14")],
                                   [("name", "Marisol"), ("dob", "1961-03-14")]])
def test_missing_or_partial_identifiers_are_ambiguous(cands):
    out = check_identity([cand(*c) for c in cands], PATIENT)
    assert out.status is IdentityStatus.AMBIGUOUS and out.review_required


def test_trusted_states():
    assert {s for s in IdentityStatus if identity_trusted(s)} == {IdentityStatus.VERIFIED, IdentityStatus.APPROVED}
