"""A document's outcome (core/services/review/outcome.py): what happened, said the same
way by the upload notice, the Documents page and the overview; and the overview's
counts, which agree with the review queue on a chart holding every kind of item."""

from __future__ import annotations

from golden.demo import DOCUMENTS

from core.services.review.outcome import (
    MATCH_UNCLEAR, NOT_THIS_PATIENT, OTHER_PATIENT, READ, document_outcome,
)

VERIFIED = "identity_verified"
MISMATCH = "identity_mismatch_quarantined"


def _fact(**kw):
    return {"fact_type": "lab_result", "certainty": "verified", "promotion_status": "promoted", "active": True,
            "scope": None, "identity_status": VERIFIED, "retracted_at": None} | kw


def test_a_read_document_counts_what_it_did_to_the_chart():
    facts = [_fact(), _fact(promotion_status="already_exists"), _fact(promotion_status="conflict_needs_review"),
             _fact(certainty="needs_review", promotion_status="needs_review"),
             _fact(certainty="document_fact", promotion_status="not_promotable"),
             _fact(fact_type="unread_content", certainty="needs_review", promotion_status="needs_review"),
             _fact(promotion_status="rejected"), _fact(retracted_at="2026-01-01")]
    out = document_outcome("succeeded", VERIFIED, facts)
    assert (out.state, out.added, out.conflicts, out.need_review, out.unread, out.kept_with_document, out.held) == \
        (READ, 2, 1, 1, 1, 1, 0)


def test_a_document_of_another_patient_is_held_and_never_counts_as_added():
    facts = [_fact(identity_status=MISMATCH) for _ in range(28)]
    out = document_outcome("succeeded", MISMATCH, facts)
    assert out.state == OTHER_PATIENT and out.added == 0 and out.held == 28


def test_a_rejected_document_is_decided_not_held():
    out = document_outcome("succeeded", "identity_review_rejected",
                           [_fact(identity_status="identity_review_rejected")])
    assert out.state == NOT_THIS_PATIENT and out.held == 0


def test_a_packet_with_one_page_of_another_patient_is_read_and_names_that_page():
    facts = [_fact(scope="page 2"), _fact(scope="page 3", identity_status=MISMATCH),
             _fact(scope="page 3", identity_status=MISMATCH)]
    out = document_outcome("succeeded", "identity_ambiguous_needs_review", facts,
                           part_statuses=[VERIFIED, MISMATCH])
    assert out.state == READ and out.added == 1 and out.held == 2 and out.other_patient_parts == ("page 3",)
    # every part unclear or another patient's: the whole document is held
    alone = document_outcome("succeeded", "identity_ambiguous_needs_review", facts[1:], part_statuses=[MISMATCH])
    assert alone.state == MATCH_UNCLEAR


def test_an_unclear_match_with_nothing_found_reads_as_nothing_found_but_another_patient_stays_held():
    assert document_outcome("succeeded", "identity_ambiguous_needs_review", []).state == READ
    assert document_outcome("succeeded", MISMATCH, []).state == OTHER_PATIENT


def test_unread_results_are_said_whoever_the_document_belongs_to_and_are_no_held_finding():
    unread = _fact(fact_type="unread_content", certainty="needs_review", promotion_status="needs_review",
                   identity_status="identity_ambiguous_needs_review", structured_value={"count": 2})
    held = _fact(identity_status="identity_ambiguous_needs_review", promotion_status="awaiting_identity")
    out = document_outcome("succeeded", "identity_ambiguous_needs_review", [unread, unread, held])
    assert (out.state, out.unread, out.held) == (MATCH_UNCLEAR, 4, 1)  # two records of two results each
    acknowledged = document_outcome("succeeded", VERIFIED, [unread | {"promotion_status": "acknowledged",
                                                                      "identity_status": VERIFIED}])
    assert acknowledged.unread == 0


def test_a_job_that_did_not_finish_says_so_before_any_count():
    assert document_outcome("failed", VERIFIED, [_fact()]).state == "failed"
    assert document_outcome("pending", None, []).state == "waiting"
    assert document_outcome(None, None, []).state == "stored_only"
    assert document_outcome("succeeded", VERIFIED, [_fact()], deleted=True).state == "deleted"


def _load_all(wb):
    from core.services.ingest.demo import load_demo

    return {d["filename"]: d["document_id"] for d in load_demo(wb, list(DOCUMENTS))}


def test_the_demo_chart_outcomes_and_the_overview_counts_agree_with_the_queue(wb, demo_patient):
    from core.services.review.decisions import decide_fact, queue_items
    from core.services.review.facts import patient_facts
    from core.services.review.outcome import chart_counts, outcomes, page_matches, patient_outcomes

    docs = _load_all(wb)
    pid = demo_patient["id"]
    found = patient_outcomes(wb, pid)
    assert found == outcomes(wb, list(docs.values()))  # the notice and the lists say the same
    assert found[docs["demo-wrong-patient-lab.pdf"]].state == OTHER_PATIENT
    assert found[docs["demo-wrong-patient-lab.pdf"]].added == 0
    fax = found[docs["demo-fax-packet.pdf"]]
    assert fax.state == READ and fax.other_patient_parts == ("page 3",) and fax.added > 0
    assert found[docs["demo-lab-repeat.pdf"]].conflicts >= 1
    assert found[docs["demo-lab-typed.pdf"]].state == READ and found[docs["demo-lab-typed.pdf"]].added == 10
    assert page_matches(wb, docs["demo-fax-packet.pdf"]) == {2: VERIFIED, 3: MISMATCH}

    # This chart holds every kind of item: patient-match checks, conflicts, uncertain findings.
    items = queue_items(wb, pid)
    assert {i["kind"] for i in items} == {"identity", "fact"} and any(i["conflict"] for i in items)
    counts = chart_counts(wb, pid)
    assert counts["to_review"] == len(items)
    assert counts["patient_match"] + counts["findings"] == len(items)
    unread_records = sum(1 for i in items if i["kind"] == "fact" and i["fact"]["fact_type"] == "unread_content")
    assert counts["findings"] == sum(o.conflicts + o.need_review for o in found.values()) + unread_records
    held = [f for f in patient_facts(wb, pid)["held"]]
    assert counts["held"] == len(held) == sum(o.held for o in found.values())

    # A reviewer rejects one uncertain finding: it leaves the queue, and it is not "held".
    fact = next(i for i in items if i["kind"] == "fact" and not i["conflict"])
    decide_fact(wb, fact["item_id"], approve=False, by="dr.reviewer", reason="misread by the scanner")
    after = chart_counts(wb, pid)
    assert after["to_review"] == len(queue_items(wb, pid)) == len(items) - 1
    assert after["held"] == counts["held"]

    # A reviewer rejects the wrong patient's report: its findings are decided, not held.
    from core.services.review.decisions import decide_identity

    check = next(i for i in queue_items(wb, pid) if i["kind"] == "identity"
                 and i["document_id"] == docs["demo-wrong-patient-lab.pdf"])
    decide_identity(wb, check["item_id"], approve=False, by="dr.reviewer", reason="another patient's report")
    rejected = chart_counts(wb, pid)
    wrong = patient_outcomes(wb, pid)[docs["demo-wrong-patient-lab.pdf"]]
    assert wrong.state == NOT_THIS_PATIENT and wrong.held == 0
    assert rejected["held"] == after["held"] - found[docs["demo-wrong-patient-lab.pdf"]].held
    assert rejected["to_review"] == len(queue_items(wb, pid)) == after["to_review"] - 1
