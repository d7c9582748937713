"""What reaches the chart, and for how long: the chart-row lifetime rule, one kind of id
per review decision, hedged items held for item review, and no approval of a finding
from a rejected or quarantined document."""

from __future__ import annotations

import dataclasses

import pytest

from domain.errors import BadInput
from core.services.review.facts import chart_view, document_report
from core.services.admin.patients import add_patient
from core.services.review.retraction import delete_document
from core.services.review.decisions import decide_fact, decide_identity, review
from golden.fixtures import LAB_CASES, render_intake, render_lab, with_layout
from storage import audit_repo
from tests.support.pipeline import ambiguous, chart_patient, count, hedged_intake, ingest

CASE = LAB_CASES[0]


def active_labs(wb) -> int:
    return count(wb, "SELECT count(*) FROM chart_lab_results WHERE active")


def live_row_sources(wb, patient) -> dict[str, list[int]]:
    return {r["test_name"]: r["document_ids"] for r in chart_view(wb, patient["id"])["labs"]}


# ------------------------------------------------------------------ chart-row lifetime
@pytest.mark.parametrize("order", ["first_then_second", "second_then_first"])
def test_duplicate_upload_then_deleting_both_leaves_no_orphan_rows(wb, order):
    patient = chart_patient(wb, CASE.patient)
    data = render_lab(CASE)
    first = ingest(wb, patient, data, "lab_pdf", "first.pdf")
    second = ingest(wb, patient, data, "lab_pdf", "again.pdf")
    assert {p["outcome"] for p in second["promotions"]} == {"duplicate_skipped"}
    assert active_labs(wb) == len(CASE.results)
    assert all(ids == [first["document_id"], second["document_id"]]
               for ids in live_row_sources(wb, patient).values())

    docs = [first, second] if order == "first_then_second" else [second, first]
    delete_document(wb, docs[0]["document_id"], by="dr.reviewer")
    assert active_labs(wb) == len(CASE.results)  # the other copy still supports every row
    assert all(ids == [docs[1]["document_id"]] for ids in live_row_sources(wb, patient).values())
    delete_document(wb, docs[1]["document_id"], by="dr.reviewer")
    assert active_labs(wb) == 0
    assert chart_view(wb, patient["id"])["labs"] == []

    # A later upload of the same report is promoted afresh, not skipped against orphans.
    third = ingest(wb, patient, render_lab(CASE), "lab_pdf", "third.pdf")
    assert {p["outcome"] for p in third["promotions"]} == {"promoted"}
    assert active_labs(wb) == len(CASE.results)


@pytest.mark.parametrize("order", ["original_first", "other_layout_first"])
def test_already_exists_rows_follow_their_last_live_source(wb, order):
    patient = chart_patient(wb, CASE.patient)
    original = ingest(wb, patient, render_lab(CASE), "lab_pdf", "a.pdf")
    other = ingest(wb, patient, render_lab(with_layout(CASE, "dotted")), "lab_pdf", "b.pdf")
    assert {p["outcome"] for p in other["promotions"]} == {"already_exists"}
    docs = [original, other] if order == "original_first" else [other, original]
    first_result = delete_document(wb, docs[0]["document_id"], by="dr.reviewer")
    assert first_result["retracted"]["chart_rows"] == 0 and active_labs(wb) == len(CASE.results)
    second_result = delete_document(wb, docs[1]["document_id"], by="dr.reviewer")
    assert second_result["retracted"]["chart_rows"] == len(CASE.results) and active_labs(wb) == 0


def test_rejecting_a_trusted_identity_takes_its_rows_out_of_the_chart(wb):
    patient = chart_patient(wb, CASE.patient)
    report = ingest(wb, patient, render_lab(CASE), "lab_pdf")
    assert report["identity"]["status"] == "identity_verified" and active_labs(wb) == len(CASE.results)
    decide_identity(wb, report["identity"]["identity_check_id"], approve=False, by="dr.reviewer",
                    reason="another patient's report after all")
    assert active_labs(wb) == 0
    assert count(wb, "SELECT count(*) FROM promotions WHERE active AND outcome = 'promoted'") == 0


def two_reports(wb):
    """The chart holds the first report's WBC; the second report prints another value."""
    patient = chart_patient(wb, CASE.patient)
    first = ingest(wb, patient, render_lab(CASE), "lab_pdf", "first.pdf")
    panel, rows = CASE.panels[0]
    changed = dataclasses.replace(CASE, panels=((panel, (dataclasses.replace(rows[0], value="12.9"), *rows[1:])),
                                                *CASE.panels[1:]))
    second = ingest(wb, patient, render_lab(changed), "lab_pdf", "second.pdf")
    conflict = next(f for f in second["facts"] if f["promotion_status"] == "conflict_needs_review")
    return patient, first, second, conflict, rows[0]


def test_a_superseded_row_never_returns_and_the_approved_row_follows_its_source(wb):
    patient, first, corrected, conflict, row = two_reports(wb)
    decide_fact(wb, conflict["fact_id"], approve=True, by="dr.reviewer", resolution="replace")
    assert live_row_sources(wb, patient)[row.test_name] == [corrected["document_id"]]

    # Deleting the original changes nothing for the approved value ...
    delete_document(wb, first["document_id"], by="dr.reviewer")
    values = {r["test_name"]: r["value"] for r in chart_view(wb, patient["id"])["labs"]}
    assert values[row.test_name] == "12.9"
    # ... and deleting the corrected report removes it, without reviving the old value.
    delete_document(wb, corrected["document_id"], by="dr.reviewer")
    assert active_labs(wb) == 0


def test_chart_command_view_has_values_critical_and_supporting_documents(wb):
    patient = chart_patient(wb, CASE.patient)
    report = ingest(wb, patient, render_lab(CASE), "lab_pdf")
    view = chart_view(wb, patient["id"])
    assert set(view) == {"labs", "allergies", "medications", "problems", "vital_signs"}
    assert len(view["labs"]) == len(CASE.results)
    for row in view["labs"]:
        assert {"test_name", "value", "unit", "reference_range", "collection_date", "abnormal_flag", "critical",
                "document_ids"} <= set(row)
        assert row["document_ids"] == [report["document_id"]]
        assert row["critical"] == (row["abnormal_flag"] in ("critical_high", "critical_low"))
        assert row["collection_date"] == CASE.collection_date


# ------------------------------------------------------------------ one kind of id
def test_identity_decisions_take_one_kind_of_id(wb):
    patient = chart_patient(wb, CASE.patient)
    report = ingest(wb, patient, render_lab(CASE), "lab_pdf")
    with pytest.raises(BadInput, match="exactly one"):
        review(wb, "approve-identity", by="dr.reviewer")
    with pytest.raises(BadInput, match="exactly one"):
        review(wb, "approve-identity", check_id=1, document_id=1, by="dr.reviewer")
    with pytest.raises(BadInput, match="--fact"):
        review(wb, "approve-fact", document_id=report["document_id"], by="dr.reviewer")
    with pytest.raises(BadInput, match="not --fact"):
        review(wb, "approve-identity", fact_id=report["facts"][0]["fact_id"], by="dr.reviewer")


def test_document_id_never_resolves_to_another_documents_check(wb):
    """A document id equal to another document's check id approves this document's
    own check (the defect approved another patient's page into the chart)."""
    from golden.fax import packet as fax_packet  # pages of two patients: one check per part
    from golden.fixtures import Patient

    patient = chart_patient(wb, CASE.patient)
    other_case = dataclasses.replace(CASE, patient=Patient("Ottoline", "Fairweather", "1950-02-03", "ZZ-991"))
    packet = ingest(wb, patient, fax_packet([CASE, other_case]), "fax_packet", "fax.pdf")
    checks = [packet["identity"]["identity_check_id"], *[s["identity_check_id"] for s in packet["identity"]["scopes"]]]
    assert len(checks) > 1
    with pytest.raises(BadInput, match="Name the one you mean"):
        review(wb, "approve-identity", document_id=packet["document_id"], by="dr.reviewer", reason="x" * 20)

    # Upload lab reports for someone else until a document id equals one of the packet's check ids.
    stranger = add_patient(wb, mrn="ZZ-992", first="Bartholomew", last="Inglethorpe", dob="1944-05-06",
                           by="dr.reviewer")
    target = None
    for n in range(12):
        doc = ingest(wb, stranger, render_lab(dataclasses.replace(CASE, collection_date=f"2024-01-{n + 10:02d}")),
                     "lab_pdf", f"s{n}.pdf")
        if doc["document_id"] in checks:
            target = doc
            break
    assert target is not None, "ids never collided; the test cannot show the defect"
    decision = review(wb, "approve-identity", document_id=target["document_id"], by="dr.reviewer",
                      reason="printed under an old name")
    assert decision["document_id"] == target["document_id"]
    assert decision["identity_check_id"] == target["identity"]["identity_check_id"]
    # The packet's checks are untouched.
    after = document_report(wb, packet["document_id"])
    assert not any(s["status"] == "identity_review_approved" for s in after["identity"].get("scopes", []))


def test_approving_a_mismatch_needs_a_written_reason_kept_in_the_audit(wb):
    someone_else = add_patient(wb, mrn="OTHER-7", first="Bartholomew", last="Inglethorpe", dob="1944-05-06",
                               by="dr.reviewer")
    report = ingest(wb, someone_else, render_lab(CASE), "lab_pdf")
    check_id = report["identity"]["identity_check_id"]
    assert report["identity"]["status"] == "identity_mismatch_quarantined"
    for reason in (None, "", "  ok  "):
        with pytest.raises(BadInput, match="written reason") as err:
            decide_identity(wb, check_id, approve=True, by="dr.reviewer", reason=reason)
        assert err.value.code == "reason_required"
    assert active_labs(wb) == 0
    decide_identity(wb, check_id, approve=True, by="dr.reviewer", reason="patient changed surname after marriage")
    with wb.db.cursor() as cur:
        audit = audit_repo.review_decisions(cur, "identity_check", check_id)
    assert audit[-1]["reason"] == "patient changed surname after marriage"
    assert active_labs(wb) == len(CASE.results)


def test_a_replaced_check_cannot_be_decided(wb):
    someone_else = add_patient(wb, mrn="OTHER-8", first="Bartholomew", last="Inglethorpe", dob="1944-05-06",
                               by="dr.reviewer")
    report = ingest(wb, someone_else, render_lab(CASE), "lab_pdf")
    old = report["identity"]["identity_check_id"]
    with wb.db.transaction() as cur:  # a newer check for the same document and scope
        cur.execute("INSERT INTO identity_checks (patient_id, document_id, doc_type, scope, identity_status, "
                    "review_required, checked_at) SELECT patient_id, document_id, doc_type, scope, "
                    "'identity_ambiguous_needs_review', TRUE, now() FROM identity_checks WHERE id = ?", [old])
    with pytest.raises(BadInput) as err:
        decide_identity(wb, old, approve=False, by="dr.reviewer")
    assert err.value.code == "stale_identity_check"


# ------------------------------------------------------------------ hedged items
@pytest.mark.parametrize("identity", ["verified", "approved_after_mismatch"])
def test_a_hedged_allergy_never_reaches_the_chart_by_a_document_decision(wb, identity):
    case = hedged_intake()
    if identity == "verified":
        patient = chart_patient(wb, case.patient)
    else:
        patient = add_patient(wb, mrn="OTHER-9", first="Bartholomew", last="Inglethorpe", dob="1944-05-06",
                              by="dr.reviewer")
    report = ingest(wb, patient, render_intake(case), "intake_form")
    if identity != "verified":
        decide_identity(wb, report["identity"]["identity_check_id"], approve=True, by="dr.reviewer",
                        reason="registration typo in the chart")
    allergies = {r["substance"].lower() for r in chart_view(wb, patient["id"])["allergies"]}
    assert "penicillin" in allergies
    assert not any("shellfish" in a for a in allergies)
    after = document_report(wb, report["document_id"])
    shellfish = [f for f in after["facts"] if "shellfish" in f["fact_text"].lower()]
    assert shellfish and all(f["promotion_status"] != "promoted" for f in shellfish)

    # Only a decision on that very item promotes it.
    decide_fact(wb, shellfish[0]["fact_id"], approve=True, by="dr.reviewer", reason="confirmed with the patient")
    allergies = {r["substance"].lower() for r in chart_view(wb, patient["id"])["allergies"]}
    assert any("shellfish" in a for a in allergies)


def test_a_medicine_told_as_stopped_is_never_a_current_chart_medicine_even_when_approved(wb):
    from tests.support.synthetic import docx_letter

    patient = add_patient(wb, mrn="ZAB1234", first="Piripi", last="Hokianga", dob="1950-03-11", by="dr.reviewer")
    letter = docx_letter("Re: Mr Piripi HOKIANGA, DOB 1950-03-11, MRN ZAB1234", "Dear Colleague,",
                         "I stopped his amlodipine last month because of ankle swelling. He may have stopped his "
                         "atorvastatin too. He takes ramipril 5 mg daily.", "Yours sincerely,", "Dr A. Brennan")
    report = ingest(wb, patient, letter, "referral_docx", "letter.docx")
    assert report["identity"]["status"] == "identity_verified"
    meds = {f["structured_value"]["name"].lower(): f for f in report["facts"] if f["fact_type"] == "medication"}
    assert meds["amlodipine"]["certainty"] == "document_fact"  # history: not asked about, not charted
    assert meds["amlodipine"]["context"]["temporality"] == "historical"
    for name in ("atorvastatin", "ramipril"):  # held: a hedge, and a sentence read less surely than a list
        assert meds[name]["certainty"] == "needs_review"
        decide_fact(wb, meds[name]["fact_id"], approve=True, by="dr.reviewer")
    charted = {r["name"].lower() for r in chart_view(wb, patient["id"])["medications"]}
    assert charted == {"ramipril"}  # a person confirming "may have stopped" does not make it current
    after = {f["fact_id"]: f for f in document_report(wb, report["document_id"])["facts"]}
    assert after[meds["atorvastatin"]["fact_id"]]["promotion_status"] == "not_promotable"


# ------------------------------------------------------------------ approving findings of untrusted documents
@pytest.mark.parametrize("state", ["quarantined", "rejected"])
def test_approving_a_finding_of_an_untrusted_document_fails_and_changes_nothing(wb, state):
    someone_else = add_patient(wb, mrn="OTHER-10", first="Bartholomew", last="Inglethorpe", dob="1944-05-06",
                               by="dr.reviewer")
    report = ingest(wb, someone_else, render_lab(CASE), "lab_pdf")
    if state == "rejected":
        decide_identity(wb, report["identity"]["identity_check_id"], approve=False, by="dr.reviewer")
    fact = report["facts"][0]
    before = document_report(wb, report["document_id"])
    decisions_before = count(wb, "SELECT count(*) FROM review_decisions")
    with pytest.raises(BadInput) as err:
        decide_fact(wb, fact["fact_id"], approve=True, by="dr.reviewer")
    assert err.value.code == "identity_not_trusted"
    assert document_report(wb, report["document_id"])["facts"] == before["facts"]
    assert count(wb, "SELECT count(*) FROM review_decisions") == decisions_before
    assert active_labs(wb) == 0


# ------------------------------------------------------------------ item decisions survive the identity decision
def test_a_finding_rejected_before_the_identity_decision_stays_out_of_the_chart(wb):
    patient, report = ambiguous(wb)
    rejected = report["facts"][0]
    decide_fact(wb, rejected["fact_id"], approve=False, by="dr.reviewer", reason="misread value")
    decide_identity(wb, report["identity"]["identity_check_id"], approve=True, by="dr.reviewer")
    names = {r["test_name"] for r in chart_view(wb, patient["id"])["labs"]}
    assert rejected["structured_value"]["test_name"] not in names
    assert len(names) == len(CASE.results) - 1
    after = {f["fact_id"]: f for f in document_report(wb, report["document_id"])["facts"]}
    assert after[rejected["fact_id"]]["active"] is False
    assert after[rejected["fact_id"]]["promotion_status"] == "rejected"


def test_a_hedged_item_approved_while_identity_is_open_keeps_that_decision(wb):
    """The item decision is the one that may put a hedged allergy in the chart; the
    later document-level approval must neither hold it back again nor promote the rest
    of the hedged items."""
    case = hedged_intake()
    patient, report = ambiguous(wb, "intake_form", case, render_intake(case))
    shellfish = next(f for f in report["facts"] if "shellfish" in f["fact_text"].lower())
    approved = decide_fact(wb, shellfish["fact_id"], approve=True, by="dr.reviewer", reason="confirmed by phone")
    assert approved["promotion_status"] == "approved_awaiting_identity" and approved["active"] is False
    assert chart_view(wb, patient["id"])["allergies"] == []
    decide_identity(wb, report["identity"]["identity_check_id"], approve=True, by="dr.reviewer")
    allergies = {r["substance"].lower() for r in chart_view(wb, patient["id"])["allergies"]}
    assert any("shellfish" in a for a in allergies) and "penicillin" in allergies


def test_an_item_approved_while_identity_is_open_keeps_that_decision(wb):
    patient, report = ambiguous(wb)
    fact = report["facts"][0]
    approved = decide_fact(wb, fact["fact_id"], approve=True, by="dr.reviewer")
    assert approved["promotion_status"] == "approved_awaiting_identity" and approved["active"] is False
    assert active_labs(wb) == 0
    decide_identity(wb, report["identity"]["identity_check_id"], approve=True, by="dr.reviewer")
    after = {f["fact_id"]: f for f in document_report(wb, report["document_id"])["facts"]}
    assert after[fact["fact_id"]]["promotion_status"] == "promoted"
    assert active_labs(wb) == len(CASE.results)


def test_a_packet_summary_is_not_a_second_decision_while_its_parts_wait(wb):
    from core.services.review.decisions import review_queue
    from golden.fax import packet
    from golden.fixtures import lab_case
    from core.services.admin.patients import add_patient
    from core.services.ingest.ingestion import attach_and_extract
    from core.services.ingest.worker import Worker

    own, other = lab_case("classic_cbc_lipids"), lab_case("dotted_cbc_urine")
    p = own.patient
    patient = add_patient(wb, mrn=p.mrn, first=p.first, last=p.last, dob=p.dob, sex=p.sex, by="dr.reviewer")
    attached = attach_and_extract(wb, patient_id=patient["id"], source="fax.pdf", data=packet([own, other]),
                                  filename="fax.pdf", doc_type="fax_packet", by="dr.reviewer")
    Worker(wb, worker_id="test").run_specific(attached.job["id"])
    pending = review_queue(wb, patient["id"])["identity"]
    assert pending and all(c["scope"] is not None for c in pending), [(c["scope"], c["identity_status"]) for c in pending]
    assert any(c["identity_status"] == "identity_mismatch_quarantined" for c in pending)


@pytest.mark.parametrize("fact, group", [
    ({"identity_status": "identity_mismatch_quarantined", "certainty": "verified"}, "held"),
    ({"identity_status": "identity_ambiguous_needs_review", "certainty": "needs_review"}, "held"),
    ({"identity_status": "identity_verified", "certainty": "verified", "promotion_status": "rejected"}, None),
    ({"identity_status": "identity_verified", "certainty": "verified", "promotion_status": "conflict_needs_review"},
     "needs_review"),
    ({"identity_status": "identity_review_approved", "certainty": "needs_review"}, "needs_review"),
    ({"identity_status": "identity_verified", "certainty": "document_fact", "promotion_status": "not_promotable"},
     "document_fact"),
    ({"identity_status": "identity_verified", "certainty": "verified", "promotion_status": "promoted"}, "verified"),
])
def test_review_group_holds_untrusted_documents_first_and_drops_closed_facts(fact, group):
    from domain.policy.facts.chart_rules import review_group

    assert review_group(fact) == group


def test_only_a_lab_result_flagged_critical_is_a_critical_result():
    from domain.policy.facts.chart_rules import critical_result

    assert critical_result("lab_result", {"abnormal_flag": "critical_high"})
    assert critical_result("lab_result", {"abnormal_flag": "critical_low"})
    assert not critical_result("lab_result", {"abnormal_flag": "high"})
    assert not critical_result("lab_result", None)
    assert not critical_result("allergy", {"abnormal_flag": "critical_high"})


# ---------------------------------------------------------------- a conflict is an explicit choice (issue 26)

def values_of(wb, patient, test_name: str) -> list[str]:
    return sorted(r["value"] for r in chart_view(wb, patient["id"])["labs"] if r["test_name"] == test_name)


def test_approving_a_conflict_without_a_choice_changes_nothing_and_names_the_chart_value(wb):
    patient, first, _second, conflict, row = two_reports(wb)
    before = values_of(wb, patient, row.test_name)
    with pytest.raises(BadInput) as err:
        decide_fact(wb, conflict["fact_id"], approve=True, by="dr.reviewer")
    assert err.value.code == "resolution_required"
    message = err.value.message
    assert f"{row.test_name} {row.value}" in message and "first.pdf" in message
    assert all(word in message for word in ("replace", "keep-both", "keep-chart"))
    assert values_of(wb, patient, row.test_name) == before == [row.value]
    with wb.db.cursor() as cur:  # the item is still open: nothing was decided
        assert not cur.execute("SELECT count(*) FROM review_decisions WHERE item_id = ?",
                               [conflict["fact_id"]]).fetchone()[0]


def test_keep_both_puts_the_two_values_side_by_side(wb):
    patient, first, second, conflict, row = two_reports(wb)
    decide_fact(wb, conflict["fact_id"], approve=True, by="dr.reviewer", resolution="keep-both")
    assert values_of(wb, patient, row.test_name) == sorted([row.value, "12.9"])
    sources = {r["value"]: r["document_ids"] for r in chart_view(wb, patient["id"])["labs"]
               if r["test_name"] == row.test_name}
    assert sources == {row.value: [first["document_id"]], "12.9": [second["document_id"]]}


def test_keep_chart_leaves_the_chart_and_keeps_the_finding_with_its_document(wb):
    patient, first, _second, conflict, row = two_reports(wb)
    result = decide_fact(wb, conflict["fact_id"], approve=True, by="dr.reviewer", resolution="keep-chart")
    assert result["certainty"] == "document_fact" and result["promotion_status"] == "not_promotable"
    assert values_of(wb, patient, row.test_name) == [row.value]
    assert live_row_sources(wb, patient)[row.test_name] == [first["document_id"]]


def test_an_unknown_resolution_is_refused(wb):
    _patient, _first, _second, conflict, _row = two_reports(wb)
    with pytest.raises(BadInput) as err:
        decide_fact(wb, conflict["fact_id"], approve=True, by="dr.reviewer", resolution="overwrite")
    assert err.value.code == "bad_resolution"


def test_bulk_approval_says_what_it_replaces_and_replaces_only_clean_readings(wb):
    from core.services.review.decisions import approval_preview, approve_facts

    patient, first, second, conflict, row = two_reports(wb)
    preview = approval_preview(wb, [conflict["fact_id"]])
    assert [r["fact_id"] for r in preview["replaces"]] == [conflict["fact_id"]]
    assert f"{row.test_name} {row.value}" in preview["replaces"][0]["chart"]
    assert values_of(wb, patient, row.test_name) == [row.value]  # the preview changed nothing
    (result,) = approve_facts(wb, [conflict["fact_id"]], by="dr.reviewer")  # not told to replace
    assert not result["ok"] and result["code"] == "resolution_required"
    (result,) = approve_facts(wb, [conflict["fact_id"]], by="dr.reviewer", replace_chart_values=True)
    assert result["ok"] and values_of(wb, patient, row.test_name) == ["12.9"]


def test_a_reading_in_doubt_never_replaces_a_chart_value_in_bulk():
    from domain.policy.facts.review_rules import may_replace_in_bulk

    assert may_replace_in_bulk(None, "verified")
    for reason in ("unit read by OCR with low confidence (0.45)", "decimal separator unclear", "unknown unit"):
        assert not may_replace_in_bulk(reason, "needs_review")
