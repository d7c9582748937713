"""The Review queue page (AppTest, seeded data dir): filters and counts, a decision
that changes the database and opens the next item, a correction that changes the
chart, a mismatch approval that needs a reason and a confirmation, the audit tab."""

from __future__ import annotations

import pytest

from core.services.review.facts import chart_view, document_report
from golden.fixtures import LAB_CASES, render_intake, render_lab
from storage import audit_repo
from tests.support.app_support import open_queue
from tests.support.pipeline import chart_patient, hedged_intake, ingest, repeat_with_changed_value

CASE = LAB_CASES[0]


def button(at, label: str):
    return next(b for b in at.button if b.label == label)


def select(at, label: str):
    return next(s for s in at.selectbox if s.label == label)


def shown_count(at) -> str:
    return next(m.value for m in at.markdown if "items to review" in m.value)


def current_title(at) -> str:
    # The open item's first bold line (a finding's text or the document of a patient match).
    return next(m.value for m in at.markdown if m.value.startswith("**") and "items to review" not in m.value)


@pytest.fixture
def seeded(app_env):
    """A patient with an intake holding uncertain findings (shellfish?, …) and a lab
    report of another patient filed to the chart by mistake."""
    case = hedged_intake()
    patient = chart_patient(app_env, case.patient)
    intake = ingest(app_env, patient, render_intake(case), "intake_form", "intake.pdf")
    wrong = ingest(app_env, patient, render_lab(CASE), "lab_pdf", "someone-elses-lab.pdf")
    assert wrong["identity"]["status"] == "identity_mismatch_quarantined"
    review_items = [f for f in intake["facts"] if f["certainty"] == "needs_review"]
    assert len(review_items) >= 2
    return app_env, patient, intake, wrong


def test_filters_change_what_is_listed_and_counted(seeded):
    wb, patient, intake, wrong = seeded
    at = open_queue(patient["id"])
    total = shown_count(at)
    doc_types = select(at, "Document type")
    labels = set(doc_types.options)
    assert "lab report (1)" in labels and any(l.startswith("intake form (") for l in labels)
    assert not any("lab_pdf" in l for l in labels)  # plain words only
    doc_types.set_value("lab_pdf").run()
    assert shown_count(at).startswith("**1 of ")
    assert "someone-elses-lab.pdf" in current_title(at)
    doc_types.set_value("intake_form").run()
    intake_items = int(shown_count(at).split()[0].strip("*"))
    assert intake_items >= 2 and shown_count(at) != total
    reason = select(at, "Reason")
    assert any("names another patient" in o for o in reason.options)


def test_approving_a_finding_changes_the_database_and_opens_the_next_item(seeded):
    wb, patient, intake, wrong = seeded
    at = open_queue(patient["id"])
    select(at, "Document type").set_value("intake_form").run()
    before = shown_count(at)
    first = current_title(at)
    n = int(before.split()[0].strip("*"))
    button(at, "Approve").click().run()
    assert not at.exception, at.exception
    assert any("approved: it is in the chart" in s.value for s in at.success)
    assert shown_count(at).startswith(f"**{n - 1} of ")
    assert current_title(at) != first  # the next item is open
    facts = {f["fact_text"]: f for f in document_report(wb, intake["document_id"])["facts"]}
    approved = facts[first.strip("*").removeprefix("CRITICAL · ")]
    assert approved["certainty"] == "verified"
    with wb.db.cursor() as cur:
        assert audit_repo.review_decisions(cur, "fact", approved["fact_id"])[-1]["decision"] == "approve"


def test_rejecting_needs_a_reason(seeded):
    wb, patient, intake, _ = seeded
    at = open_queue(patient["id"])
    select(at, "Document type").set_value("intake_form").run()
    first = current_title(at)
    button(at, "Reject").click().run()
    assert any("Say why" in e.value for e in at.error)
    assert current_title(at) == first
    next(t for t in at.text_input if t.label == "Reason (needed to reject)").input("not the patient's words").run()
    button(at, "Reject").click().run()
    assert current_title(at) != first
    rejected = next(f for f in document_report(wb, intake["document_id"])["facts"]
                    if f["fact_text"] == first.strip("*"))
    assert rejected["promotion_status"] == "rejected" and rejected["active"] is False


def test_approving_a_mismatch_needs_a_reason_and_a_confirmation(seeded):
    wb, patient, _, wrong = seeded
    at = open_queue(patient["id"])
    select(at, "Document type").set_value("lab_pdf").run()
    assert any("✗ differs" in str(t.value) for t in at.table)  # field-by-field comparison
    status = lambda: document_report(wb, wrong["document_id"])["identity"]["status"]  # noqa: E731

    button(at, "Approve identity").click().run()
    assert any("confirmation" in e.value or "written reason" in e.value for e in at.error)
    assert status() == "identity_mismatch_quarantined"
    next(t for t in at.text_input if t.label.startswith("Reason for approving")).input("scanned under the mother's chart").run()
    button(at, "Approve identity").click().run()
    assert any("confirmation ticked" in e.value for e in at.error)
    assert status() == "identity_mismatch_quarantined"
    next(c for c in at.checkbox if c.label.startswith("I have checked")).check().run()
    button(at, "Approve identity").click().run()
    assert not at.exception, at.exception
    assert status() == "identity_review_approved"
    assert len(chart_view(wb, patient["id"])["labs"]) == len(CASE.results)


def test_a_too_short_reason_is_refused_by_the_service_and_shown(seeded):
    wb, patient, _, wrong = seeded
    at = open_queue(patient["id"])
    select(at, "Document type").set_value("lab_pdf").run()
    next(t for t in at.text_input if t.label.startswith("Reason for approving")).input("ok").run()
    next(c for c in at.checkbox if c.label.startswith("I have checked")).check().run()
    button(at, "Approve identity").click().run()
    assert any("written reason" in e.value for e in at.error)
    assert document_report(wb, wrong["document_id"])["identity"]["status"] == "identity_mismatch_quarantined"


def test_correcting_a_conflicting_value_changes_the_chart_row(app_env):  # noqa: F811
    wb = app_env
    patient, row, _ = repeat_with_changed_value(wb)
    at = open_queue(patient["id"])
    compared = next(t.value for t in at.table if "The chart" in t.value.columns)  # side by side
    assert "12.9" in compared["This document"].to_string() and row.value in compared["The chart"].to_string()
    button(at, "Correct").click().run()
    value = next(t for t in at.text_input if t.label == "Value")
    assert value.value == "12.9"
    value.input("12.8")
    next(t for t in at.text_input if t.label == "What was misread").input("the 8 was read as a 9")
    next(r for r in at.radio if r.label.startswith("If the corrected value still differs")).set_value("replace")
    button(at, "Save correction").click().run()
    assert not at.exception, at.exception
    assert any("Corrected: value 12.9 → 12.8" in s.value for s in at.success), [s.value for s in at.success]
    live = [r for r in chart_view(wb, patient["id"])["labs"] if r["test_name"] == row.test_name]
    assert [r["value"] for r in live] == ["12.8"]


def test_a_conflict_offers_three_explicit_choices_and_approval_alone_changes_nothing(app_env):  # noqa: F811
    wb = app_env
    patient, row, _ = repeat_with_changed_value(wb)
    at = open_queue(patient["id"])
    labels_shown = [b.label for b in at.button]
    assert {"Replace the chart value", "Keep both", "Keep the chart value"} <= set(labels_shown)
    assert "Approve" not in labels_shown  # no quiet replacement from the item itself
    button(at, "Keep both").click().run()
    assert not at.exception, at.exception
    assert any("both values side by side" in s.value for s in at.success)
    live = sorted(r["value"] for r in chart_view(wb, patient["id"])["labs"] if r["test_name"] == row.test_name)
    assert live == sorted([row.value, "12.9"])


def test_a_box_typed_while_nothing_is_drawn_is_checked_against_the_quote(app_env):  # noqa: F811
    wb = app_env
    patient, _, report = repeat_with_changed_value(wb)
    at = open_queue(patient["id"])
    button(at, "Move or resize the box").click().run()
    assert any(c.value.startswith("Drawn: left") for c in at.caption)  # the saved box, on the canvas
    next(s for s in at.segmented_control if "Draw a new box" in s.options).set_value("Draw a new box").run()
    for name, v in (("Left", 90.0), ("Top", 95.0), ("Width", 5.0), ("Height", 3.0)):
        next(n for n in at.number_input if n.label.startswith(name)).set_value(v)
    button(at, "Save box").click().run()
    assert any("not inside the box" in e.value for e in at.error)
    next(c for c in at.checkbox if c.label.startswith("Save it even if")).check()
    button(at, "Save box").click().run()
    assert any("Box saved" in s.value for s in at.success)
    conflict = next(f for f in document_report(wb, report["document_id"])["facts"]
                    if f["promotion_status"] == "conflict_needs_review")
    assert conflict["citation"]["bounding_box"]["x"] == pytest.approx(0.9)


def test_the_audit_tab_lists_decisions_offers_csv_and_undoes_an_identity_decision(seeded):
    wb, patient, _, wrong = seeded
    from core.services.review.decisions import decide_identity

    decide_identity(wb, wrong["identity"]["identity_check_id"], approve=False, by="dr.alice",
                    reason="another patient's report")
    at = open_queue(patient["id"])
    table = next(d for d in at.dataframe if "What happened" in d.value.columns)
    assert any("dr.alice rejected patient match" in s for s in table.value["What happened"])
    csv_button = at.get("download_button")
    assert csv_button and "Download CSV" in str(csv_button[0].proto.label)

    next(t for t in at.text_input if t.label == "Why undo it").input("rejected by mistake").run()
    button(at, "Undo decision").click().run()
    assert not at.exception, at.exception
    assert any("Decision undone" in s.value for s in at.success)
    assert document_report(wb, wrong["document_id"])["identity"]["status"] == "identity_mismatch_quarantined"
    with wb.db.cursor() as cur:
        trail = audit_repo.review_decisions(cur, "identity_check", wrong["identity"]["identity_check_id"])
    assert [d["decision"] for d in trail] == ["reject", "undo"]


def test_a_click_on_an_item_someone_else_decided_says_who_decided_it(seeded):
    wb, patient, intake, _ = seeded
    from core.services.review.decisions import decide_fact

    at = open_queue(patient["id"])
    select(at, "Document type").set_value("intake_form").run()
    first = current_title(at).strip("*")
    fact = next(f for f in intake["facts"] if f["fact_text"] == first)
    decide_fact(wb, fact["fact_id"], approve=True, by="dr.alice")  # another reviewer, meanwhile
    button(at, "Approve").click().run()
    assert not at.exception, at.exception
    assert any("already approved by dr.alice at" in w.value for w in at.warning)
    assert any("left the queue" in i.value for i in at.info)
    button(at, "Open the next item").click().run()
    assert current_title(at).strip("*") != first
    with wb.db.cursor() as cur:
        assert [d["actor"] for d in audit_repo.review_decisions(cur, "fact", fact["fact_id"])] == ["dr.alice"]


def test_results_not_read_are_acknowledged_as_read_by_a_person_never_approved_into_the_chart(app_env, monkeypatch):
    from domain.models import DocType
    from extract import registry as formats

    original = formats.extractor_for(DocType.LAB_PDF)

    def misses_platelets(content, source_id):  # a weaker reader
        result = original(content, source_id)
        return result.model_copy(update={"facts": [f for f in result.facts
                                                   if f.structured_value.get("test_name") != "Platelets"]})

    monkeypatch.setattr(formats, "EXTRACTORS", {**formats.EXTRACTORS, DocType.LAB_PDF: misses_platelets})
    patient = chart_patient(app_env, CASE.patient)
    report = ingest(app_env, patient, render_lab(CASE), "lab_pdf", "cbc.pdf")
    [item] = [f for f in report["facts"] if f["fact_type"] == "unread_content"]
    at = open_queue(patient["id"])
    labels = [b.label for b in at.button]
    assert "Acknowledge: I read them on the page" in labels
    assert "Approve" not in labels and "Keep out of the chart" not in labels
    assert any("adds nothing to the chart" in i.value for i in at.info)
    places = " ".join(m.value for m in at.markdown)
    assert all(r["locator"] in places for r in item["structured_value"]["regions"])
    before = chart_view(app_env, patient["id"])["labs"]
    button(at, "Acknowledge: I read them on the page").click().run()
    assert not at.exception, at.exception
    assert chart_view(app_env, patient["id"])["labs"] == before
    after = document_report(app_env, report["document_id"])
    assert [f["promotion_status"] for f in after["facts"] if f["fact_type"] == "unread_content"] == ["acknowledged"]


def test_identity_values_printed_but_not_read_are_shown_and_need_a_reason(app_env):
    """The chart patient's own report whose birth date under "Geb.-Dat." no reader took: the comparison
    shows the birth date as printed but not read, with its place, never as absent; the
    approval asks for a reason and the confirmation, as a mismatch does."""
    from tests.support.pipeline import abbreviated_identity_lab

    patient = chart_patient(app_env, CASE.patient)
    report = ingest(app_env, patient, abbreviated_identity_lab(), "lab_pdf", "outside-lab.pdf")
    assert report["identity"]["status"] == "identity_ambiguous_needs_review"
    at = open_queue(patient["id"])
    select(at, "Document type").set_value("lab_pdf").run()
    for _ in range(20):  # the patient match is one item among the findings waiting for it
        if any("Approve identity" == b.label for b in at.button):
            break
        button(at, "Next").click().run()
    assert any("Printed but not read" in m.value for m in at.markdown)
    cells = [str(t.value.to_dict()) for t in at.table]
    assert any("printed but not read" in c for c in cells) and not any("not on the document — " in c for c in cells)
    assert any("Geb.-Dat." in c and "page 1" in c for c in cells)
    button(at, "Approve identity").click().run()
    assert any("written reason" in e.value for e in at.error)
    assert document_report(app_env, report["document_id"])["identity"]["status"] == "identity_ambiguous_needs_review"
    reason = next(t for t in at.text_input if t.label.startswith("Reason for approving a document whose printed"))
    reason.input("birth date checked against the chart by eye").run()
    next(c for c in at.checkbox if c.label.startswith("I have checked")).check().run()
    button(at, "Approve identity").click().run()
    assert not at.exception, at.exception
    assert document_report(app_env, report["document_id"])["identity"]["status"] == "identity_review_approved"


# ------------------------------------------------------------------ layout, keys, groups (issue 26)
def test_next_then_previous_opens_the_first_item_again(seeded):
    wb, patient, intake, _ = seeded
    at = open_queue(patient["id"])
    select(at, "Document type").set_value("intake_form").run()
    first = current_title(at)
    assert button(at, "Previous").disabled
    button(at, "Next").click().run()
    assert current_title(at) != first
    assert not button(at, "Previous").disabled  # drawn for the item Next opened
    button(at, "Previous").click().run()
    assert current_title(at) == first


def test_next_document_opens_the_first_item_of_the_next_document(seeded):
    wb, patient, intake, wrong = seeded
    at = open_queue(patient["id"])
    first_doc = at.session_state["rq_item"]["document_id"]
    button(at, "Next document").click().run()
    assert at.session_state["rq_item"]["document_id"] != first_doc
    assert button(at, "Next document").disabled and not button(at, "Previous document").disabled
    button(at, "Previous document").click().run()
    assert at.session_state["rq_item"]["document_id"] == first_doc


def test_the_notice_sits_by_the_buttons_and_goes_with_the_next_decision(seeded):
    wb, patient, intake, _ = seeded
    at = open_queue(patient["id"])
    select(at, "Document type").set_value("intake_form").run()
    button(at, "Approve").click().run()
    assert [s.value for s in at.success] == ["Finding approved: it is in the chart."]
    button(at, "Reject").click().run()  # refused: no reason given
    assert any("Say why" in e.value for e in at.error)
    assert not at.success  # the earlier outcome is not left beside this one


def test_every_action_has_a_key_listed_in_the_help(seeded):
    from ui.review_keys import KEYS

    wb, patient, intake, _ = seeded
    at = open_queue(patient["id"])
    select(at, "Document type").set_value("intake_form").run()
    listed = next(t.value for t in at.table if "Key" in t.value.columns)
    assert {k for k, _ in KEYS.values()} <= set(listed["Key"]) and {"?", "/"} <= set(listed["Key"])
    shortcuts = {b.label: b.proto.shortcut for b in at.button}
    for label, action in (("Approve", "approve"), ("Reject", "reject"), ("Correct", "correct"),
                          ("Keep out of the chart", "keep"), ("Next", "next"), ("Next document", "next_document")):
        assert shortcuts[label] == KEYS[action][0], label


def ocr_findings(wb, patient, scores: list[tuple[float, float]]) -> list[int]:
    """Needs-review copies of a lab report's findings, each read by OCR with its own
    confidence: (confidence written in the reason, the finding's confidence)."""
    from storage import facts_repo

    report = ingest(wb, patient, render_lab(CASE), "lab_pdf", "scanned.pdf")
    with wb.db.transaction() as cur:
        base = facts_repo.facts_for_document(cur, report["document_id"])
        rows = []
        for n, (written, confidence) in enumerate(scores):
            f = base[n]
            rows.append({k: getattr(f, k) for k in ("patient_id", "document_id", "job_id", "identity_check_id",
                                                   "doc_type", "fact_type", "fact_text", "structured_value",
                                                   "citation", "scope", "context")}
                        | {"certainty": "needs_review", "active": False, "promotion_status": "needs_review",
                           "confidence": confidence, "fact_fingerprint": f"ocr-copy-{n}",
                           "clinical_content_fingerprint": f"ocr-copy-content-{n}",
                           "review_reason": f"value read by OCR with low confidence ({written:.2f})"})
        facts_repo.insert_facts(cur, rows)
    return [i["item_id"] for i in queue_items_of(wb, patient["id"]) if i["kind"] == "fact"
            and "read by OCR" in (i["reason"] or "")]


def queue_items_of(wb, patient_id):
    from core.services.review.decisions import queue_items

    return queue_items(wb, patient_id)


def test_reasons_differing_by_a_confidence_number_are_filtered_and_approved_together(app_env):
    wb = app_env
    patient = chart_patient(wb, CASE.patient)
    ids = ocr_findings(wb, patient, [(0.41, 0.41), (0.38, 0.38), (0.72, 0.72)])
    assert len(ids) == 3
    at = open_queue(patient["id"])
    reason = select(at, "Reason")
    grouped = [o for o in reason.options if "read by OCR" in o]
    assert grouped == ["value read by OCR with low confidence (3)"]  # one group, no raw scores
    band = select(at, "Confidence")
    assert "low (2)" in band.options and "medium (1)" in band.options
    band.set_value("low").run()
    assert shown_count(at).startswith("**2 of ")
    table = next(d for d in at.dataframe if "Confidence" in d.value.columns)
    assert sorted(c[0] for c in table.value["Confidence"]) == ["low 38 %", "low 41 %"]
    reason.set_value("value read by OCR with low confidence").run()

    at.session_state["rq_table"] = {"selection": {"rows": [0, 1], "columns": [], "cells": []}}
    at.run()
    bulk = next(b for b in at.button if b.label.startswith("Approve 2 selected findings"))
    bulk.click().run()
    assert not at.exception, at.exception
    assert any("2 of 2 findings approved" in s.value for s in at.success)
    assert not any("decided elsewhere" in i.value for i in at.info)  # the reviewer's own decision
    assert select(at, "Confidence").value == "low" and "read by OCR" in select(at, "Reason").value
    assert shown_count(at).startswith("**0 of ")
    with wb.db.cursor() as cur:
        decided = {i: [d["decision"] for d in audit_repo.review_decisions(cur, "fact", i)] for i in ids}
    assert sorted(decided.values()) == [[], ["approve"], ["approve"]]
    assert [i["fact"]["confidence"] for i in queue_items_of(wb, patient["id"]) if i["item_id"] in ids] == [0.72]


def test_a_document_s_remaining_findings_are_approved_in_one_step_after_a_preview(seeded):
    wb, patient, intake, _ = seeded
    at = open_queue(patient["id"])
    select(at, "Document type").set_value("intake_form").run()
    waiting = int(shown_count(at).split()[0].strip("*"))
    button(at, "Approve all of intake.pdf's remaining findings…").click().run()
    preview = " ".join(m.value for m in at.markdown)
    assert f"{waiting} finding(s) go to the chart" in preview
    button(at, f"Approve {waiting} finding(s) of this document").click().run()
    assert not at.exception, at.exception
    assert any(f"{waiting} finding(s) of intake.pdf approved" in s.value for s in at.success)
    assert not any("decided elsewhere" in i.value for i in at.info)
    assert all(f["certainty"] != "needs_review" for f in document_report(wb, intake["document_id"])["facts"])


def test_a_document_with_a_conflict_says_so_and_leaves_it_for_its_choice(app_env):
    wb = app_env
    patient, row, _ = repeat_with_changed_value(wb)
    at = open_queue(patient["id"])
    button(at, "Approve all of repeat.pdf's remaining findings…").click().run()
    preview = " ".join(m.value for m in at.markdown)
    assert "1 differ from the chart and stay for your choice, one by one" in preview
    assert not any(b.label.endswith("finding(s) of this document") for b in at.button)


def test_the_queue_list_follows_each_key_and_each_decision(seeded):
    wb, patient, intake, _ = seeded
    at = open_queue(patient["id"])
    select(at, "Document type").set_value("intake_form").run()

    def listed():
        return next(d for d in at.dataframe if "Open" in d.value.columns).value

    before = listed()
    assert list(before["Open"]).index("▶") == 0
    button(at, "Next").click().run()
    moved = listed()
    assert list(moved["Open"]).index("▶") == 1  # the marker follows the key; the rows stay as they were
    assert moved.drop(columns="Open").equals(before.drop(columns="Open"))
    decided = current_title(at).strip("*").removeprefix("CRITICAL · ")
    button(at, "Approve").click().run()
    after = listed()
    assert decided[:90] not in list(after["Item"]) and len(after) == len(before) - 1  # the decided row left
    assert shown_count(at).startswith(f"**{len(after)} of ")  # the count line agrees with the list
    assert list(after["Open"]).index("▶") == min(1, len(after) - 1)  # the next item opened at the same place


def test_a_row_printing_no_value_offers_correct_or_keep_not_approve(app_env):
    from golden.fixtures import Patient
    from golden.drawing import placed_text_pdf

    person = Patient(first="Ines", last="Carvalho", dob="1949-02-17", mrn="PH-330271", sex="F")
    rows = [(50, 50, "Portside Pathology", 12, "hebo"),
            (50, 72, f"Patient: CARVALHO, Ines   Born: 17-Feb-1949   MRN: {person.mrn}"),
            (50, 86, "Specimen collected: 30-Nov-2026")]
    rows += [(x, 110, h, 10, "hebo") for x, h in ((50, "Analyte"), (200, "Result"), (280, "Units"), (360, "Range"))]
    rows += [(x, 126, c) for x, c in zip((50, 200, 280, 360), ("Potassium", "haemolysed", "mmol/L", "3.5-5.3"))]
    rows += [(x, 140, c) for x, c in zip((50, 200, 280, 360), ("Urea", "6.1", "mmol/L", "2.5-7.8"))]
    patient = chart_patient(app_env, person)
    ingest(app_env, patient, placed_text_pdf(rows), "lab_pdf", "renal.pdf")
    at = open_queue(patient["id"])
    assert "Potassium: no result" in current_title(at)
    approve = button(at, "Approve")
    assert approve.disabled
    assert any("prints no single result value" in c.value for c in at.caption)
    assert not button(at, "Correct").disabled and not button(at, "Keep out of the chart").disabled
