"""A document that prints an identity value no reader read: held for identity review,
shown as "printed but not read" with its region (never as absent), and approved only
with a written reason, as a mismatch is (service and CLI)."""

from __future__ import annotations

import pytest

from domain.errors import BadInput
from core.services.review.decisions import decide_identity
from core.services.review.facts import chart_view
from core.services.review.identity_review import identity_comparison
from tests.support.pipeline import CASE, abbreviated_identity_lab, ambiguous, chart_patient, ingest


def _own_report_with_an_unread_birth_date(wb):
    patient = chart_patient(wb, CASE.patient)
    report = ingest(wb, patient, abbreviated_identity_lab(), "lab_pdf")
    return patient, report


def test_an_unread_birth_date_holds_the_document_and_is_shown_where_it_is_printed(wb):
    patient, report = _own_report_with_an_unread_birth_date(wb)
    identity = report["identity"]
    assert identity["status"] == "identity_ambiguous_needs_review"  # name and number match; the DOB was not read
    (u,) = identity["unread_identifiers"]
    assert (u["kind"], u["label"]) == ("dob", "Geb.-Dat.") and u["citation"]["bounding_box"]
    assert "printed but not read" in identity["mismatch_reason"]
    assert not [f for f in report["facts"] if f["active"]]
    assert chart_view(wb, patient["id"])["labs"] == []

    view = identity_comparison(wb, identity["identity_check_id"])
    fields = {f["kind"]: f for f in view["fields"]}
    assert fields["dob"]["verdict"] == "not_read" and fields["dob"]["not_read"] == [u["value"]]
    assert fields["name"]["verdict"] == "match" and fields["mrn"]["verdict"] == "match"
    assert not [f for f in fields.values() if f["verdict"] == "absent"]  # every printed value is accounted for
    assert view["reason_required"] is True
    assert view["unread"][0]["citation"]["page"] == 1
    assert [o["value"] for o in view["other_identifiers"]] == ["90-33187"]  # the "Acct:" line, never the MRN


def test_approving_it_needs_a_written_reason_like_a_mismatch(wb):
    patient, report = _own_report_with_an_unread_birth_date(wb)
    check_id = report["identity"]["identity_check_id"]
    for reason in (None, "", "ok"):
        with pytest.raises(BadInput) as err:
            decide_identity(wb, check_id, approve=True, by="dr.alice", reason=reason)
        assert err.value.code == "reason_required" and "not read" in err.value.message
    assert chart_view(wb, patient["id"])["labs"] == []
    done = decide_identity(wb, check_id, approve=True, by="dr.alice",
                           reason="the birth date on the page matches her chart; checked by eye")
    assert done["status"] == "identity_review_approved" and done["activated_facts"] > 0
    assert chart_view(wb, patient["id"])["labs"]
    assert identity_comparison(wb, check_id)["reason_required"] is False  # decided


def test_a_document_whose_printed_identifiers_were_all_read_is_approved_without_one(wb):
    _, report = ambiguous(wb)  # prints only the name, which was read
    assert report["identity"]["unread_identifiers"] == []
    done = decide_identity(wb, report["identity"]["identity_check_id"], approve=True, by="dr.alice")
    assert done["status"] == "identity_review_approved"
