"""Every kind of change a person or the pipeline makes to a patient's record moves
the record version (``storage.record_version``) of that patient, and only that
patient's: an upload, an identity decision, a finding approved or rejected, a
correction, an alert acknowledged, a document deleted."""

from __future__ import annotations

import dataclasses

from core.services.admin.patients import add_patient
from core.services.checks.alerts import acknowledge_alert
from core.services.review.corrections import correct_fact
from core.services.review.decisions import decide_fact, decide_identity
from core.services.review.retraction import delete_document
from golden.fixtures import render_lab
from storage import alerts_repo, record_version
from tests.support.pipeline import CASE, ambiguous, ingest


def version(wb, patient_id):
    with wb.db.cursor() as cur:
        return record_version.current(cur, patient_id)


def test_each_kind_of_write_moves_the_patients_version_and_no_one_elses(wb):
    patient, report = ambiguous(wb)  # an upload whose identity waits for a person
    other = add_patient(wb, mrn="OTHER-V1", first="Bartholomew", last="Inglethorpe", dob="1944-05-06",
                        by="dr.reviewer")
    other_report = ingest(wb, other, render_lab(CASE), "lab_pdf")
    others = version(wb, other["id"])
    seen = [version(wb, patient["id"])]
    assert seen[0] > 0

    def moved(what):
        now = version(wb, patient["id"])
        assert now > seen[-1], f"{what} did not move the record version"
        seen.append(now)

    decide_identity(wb, report["identity"]["identity_check_id"], approve=True, by="dr.reviewer",
                    reason="name, DOB and MRN match the chart")
    moved("an identity decision")
    a1c = next(f for f in report["facts"] if f["structured_value"].get("test_name") == "Hemoglobin A1c")
    correct_fact(wb, a1c["fact_id"], by="dr.reviewer", value="8.2", reason="misread")
    moved("a correction")
    panel, rows = CASE.panels[0]
    changed = dataclasses.replace(CASE, panels=((panel, (dataclasses.replace(rows[0], value="12.9"), *rows[1:])),
                                                *CASE.panels[1:]))
    fresh = ingest(wb, patient, render_lab(changed), "lab_pdf", "repeat.pdf")
    moved("an upload")
    conflict = next(f for f in fresh["facts"] if f["promotion_status"] == "conflict_needs_review")
    decide_fact(wb, conflict["fact_id"], approve=False, by="dr.reviewer", reason="the chart's value stands")
    moved("a finding rejected")
    with wb.db.transaction() as cur:
        alerts_repo.save(cur, patient["id"], [{
            "alert_key": "test", "rule_id": "test", "rule_version": 1, "rules_version": "1", "kind": "test",
            "priority": "low", "message": "a test alert", "fact_ids": [conflict["fact_id"]], "references": []}])
    moved("an alert raised")
    with wb.db.cursor() as cur:
        alert_id = alerts_repo.for_patient(cur, patient["id"])[0]["id"]
    acknowledge_alert(wb, alert_id, by="dr.reviewer", note="seen")
    moved("an alert acknowledged")
    delete_document(wb, fresh["document_id"], by="dr.reviewer")
    moved("a document deleted")
    assert version(wb, other["id"]) == others, "another patient's writes moved this patient's version"
    assert other_report["document_id"] != fresh["document_id"]


def test_a_review_click_reads_the_patients_facts_once_per_version_and_sees_each_decision(wb, monkeypatch):
    from core.services.review import document_view as dv
    from core.services.review.decisions import queue_items
    from storage import facts_repo
    from tests.support.pipeline import repeat_with_changed_value

    patient, _, repeat = repeat_with_changed_value(wb)
    reads = []
    for name in ("facts_for_patient", "facts_for_document"):
        original = getattr(facts_repo, name)
        monkeypatch.setattr(facts_repo, name, lambda *a, _o=original, _n=name, **k: reads.append(_n) or _o(*a, **k))
    items = queue_items(wb, patient["id"])
    conflict = next(i for i in items if i["conflict"])
    for _ in range(3):  # clicks that change nothing
        assert queue_items(wb, patient["id"]) == items
        dv.document_view(wb, repeat["document_id"], include_deleted=True)
    assert reads.count("facts_for_patient") == 1 and reads.count("facts_for_document") == 1
    decide_fact(wb, conflict["item_id"], approve=False, by="dr.reviewer", reason="the chart's value stands")
    assert conflict["key"] not in {i["key"] for i in queue_items(wb, patient["id"])}
    view = dv.document_view(wb, repeat["document_id"], include_deleted=True)
    assert next(f for f in view.facts if f["fact_id"] == conflict["item_id"])["promotion_status"] == "rejected"


def test_the_review_queue_is_built_once_per_version_and_each_caller_gets_its_own_items(wb, monkeypatch):
    from core.services.review.decisions import queue_items
    from storage import documents_repo, facts_repo
    from tests.support.pipeline import repeat_with_changed_value

    patient, _, _ = repeat_with_changed_value(wb)
    reads = []
    for repo, name in ((facts_repo, "pending_identity_reviews"), (documents_repo, "for_patient")):
        original = getattr(repo, name)
        monkeypatch.setattr(repo, name, lambda *a, _o=original, _n=name, **k: reads.append(_n) or _o(*a, **k))
    items = queue_items(wb, patient["id"])
    finding = next(i for i in items if i["kind"] == "fact")
    finding["fact"]["fact_text"] = "changed by one caller"  # a caller's own copy, nested dicts too
    finding["filename"] = "changed too"
    again = queue_items(wb, patient["id"])
    assert reads == ["pending_identity_reviews", "for_patient"]  # key presses read nothing again
    same = next(i for i in again if i["key"] == finding["key"])
    assert same["fact"]["fact_text"] != "changed by one caller" and same["filename"] != "changed too"
    decide_fact(wb, finding["item_id"], approve=False, by="dr.reviewer", reason="a smudge, not a result")
    after = queue_items(wb, patient["id"])  # a decision moved the version: built again, without it
    assert finding["key"] not in {i["key"] for i in after} and len(after) == len(again) - 1
    assert reads.count("pending_identity_reviews") == 2
