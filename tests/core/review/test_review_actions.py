"""Review actions beyond approve/reject: correcting a misread value, drawing a box,
"already decided by …", undoing an identity decision, the identity comparison, bulk
decisions, keeping a finding as a document fact, and the audit log."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from datetime import datetime

import pytest

from domain.errors import BadInput, Forbidden
from domain.policy.facts import review_rules
from core.services.review.audit_log import decisions, decisions_csv
from core.services.review.corrections import correct_fact, set_fact_box
from core.services.review.facts import chart_view, document_report
from core.services.review.identity_review import identity_comparison, undo_identity_decision
from core.services.admin.patients import add_patient
from core.services.review.retraction import delete_document
from core.services.review.decisions import (approve_facts, conflict_detail, decide_fact, decide_identity, keep_as_document_fact,
                                  queue_items, review_queue)
from golden.fixtures import LAB_CASES, ExpectedLab, render_intake, render_lab
from storage import audit_repo
from tests.support.pipeline import ambiguous, chart_patient, count, hedged_intake, ingest, repeat_with_changed_value

CASE = LAB_CASES[0]  # CBC, lipids and HbA1c, typed


def misread_case():
    """The report as OCR read it: "Hemoglobin Aic 79 %" where the page meant 7.9."""
    panels = tuple((name, tuple(ExpectedLab("Hemoglobin Aic", "79", "%", "<5.7", "high", "H")
                                if r.test_name == "Hemoglobin A1c" else r for r in rows))
                   for name, rows in CASE.panels)
    return dataclasses.replace(CASE, panels=panels)


def lab_rows(wb, patient, name):
    return [r for r in chart_view(wb, patient["id"])["labs"] if r["test_name"] == name]


def decisions_of(wb, item_type, item_id):
    with wb.db.cursor() as cur:
        return audit_repo.review_decisions(cur, item_type, item_id)


def someone_elses_report(wb, mrn="OTHER-R1"):
    other = add_patient(wb, mrn=mrn, first="Bartholomew", last="Inglethorpe", dob="1944-05-06", by="dr.reviewer")
    return other, ingest(wb, other, render_lab(CASE), "lab_pdf")


# ------------------------------------------------------------------ correction
def test_correcting_an_ocr_misread_value_charts_the_corrected_value_and_keeps_the_quote(wb):
    case = misread_case()
    patient = chart_patient(wb, case.patient)
    report = ingest(wb, patient, render_lab(case), "lab_pdf")
    misread = next(f for f in report["facts"] if f["structured_value"]["test_name"] == "Hemoglobin Aic")
    assert misread["structured_value"]["value"] == "79"
    assert [r["value"] for r in lab_rows(wb, patient, "Hemoglobin Aic")] in ([], ["79"])

    done = correct_fact(wb, misread["fact_id"], by="dr.alice", value="7.9", reason="OCR dropped the decimal point")

    assert done["structured_value"]["value"] == "7.9" and done["structured_value"]["unit"] == "%"
    assert done["before"] == {"value": "79"}
    assert done["citation"] == misread["citation"]  # same source, quote as printed
    assert "79" in done["citation"]["quote_or_value"]
    assert done["certainty"] == "verified" and done["active"] is True and done["promotion_status"] == "promoted"
    assert [r["value"] for r in lab_rows(wb, patient, "Hemoglobin Aic")] == ["7.9"]
    assert lab_rows(wb, patient, "Hemoglobin Aic")[0]["document_ids"] == [report["document_id"]]
    fact = next(f for f in document_report(wb, report["document_id"])["facts"] if f["fact_id"] == misread["fact_id"])
    assert fact["corrected_by"] == "dr.alice" and fact["corrected_at"]
    assert fact["structured_value"]["value"] == "7.9" and "7.9" in fact["fact_text"]
    audit = decisions_of(wb, "fact", misread["fact_id"])
    assert audit[-1]["decision"] == "correct" and audit[-1]["actor"] == "dr.alice"
    assert audit[-1]["before_state"]["structured_value"] == {"value": "79"}
    assert audit[-1]["after_state"]["structured_value"] == {"value": "7.9"}
    assert audit[-1]["reason"] == "OCR dropped the decimal point"
    # It left the queue.
    assert misread["fact_id"] not in {f["fact_id"] for f in review_queue(wb, patient["id"])["facts"]}


def test_correcting_a_promoted_value_takes_the_misread_row_out_of_the_chart(wb):
    patient = chart_patient(wb, CASE.patient)
    report = ingest(wb, patient, render_lab(CASE), "lab_pdf")
    fact = next(f for f in report["facts"] if f["structured_value"]["test_name"] == "Hemoglobin A1c")
    assert fact["promotion_status"] == "promoted"
    correct_fact(wb, fact["fact_id"], by="dr.alice", value="8.1", abnormal_flag="high", collection_date="2026-04-11",
                 reason="value confirmed with the lab")
    rows = lab_rows(wb, patient, "Hemoglobin A1c")
    assert [(r["value"], r["collection_date"]) for r in rows] == [("8.1", "2026-04-11")]
    assert count(wb, "SELECT count(*) FROM chart_lab_results WHERE NOT active AND value = '7.9'") == 1


def test_correction_failure_paths_change_nothing(wb):
    patient = chart_patient(wb, CASE.patient)
    report = ingest(wb, patient, render_lab(CASE), "lab_pdf")
    fact = report["facts"][0]
    before = document_report(wb, report["document_id"])["facts"]
    for kwargs, code in [(dict(abnormal_flag="very high"), "bad_correction"),
                         (dict(collection_date="10/04/2026"), "bad_correction"),
                         (dict(value="  "), "bad_correction"),
                         (dict(value=fact["structured_value"]["value"]), "nothing_to_correct"),
                         (dict(), "nothing_to_correct")]:
        with pytest.raises(BadInput) as err:
            correct_fact(wb, fact["fact_id"], by="dr.alice", reason="checking", **kwargs)
        assert err.value.code == code, kwargs
    with pytest.raises(BadInput) as err:
        correct_fact(wb, fact["fact_id"], by="dr.alice", value="1", reason=" ")
    assert err.value.code == "reason_required"
    assert document_report(wb, report["document_id"])["facts"] == before
    assert decisions_of(wb, "fact", fact["fact_id"]) == []

    correct_fact(wb, fact["fact_id"], by="dr.alice", value="99", reason="misread")
    with pytest.raises(BadInput, match="already corrected by dr.alice at") as err:
        correct_fact(wb, fact["fact_id"], by="dr.bob", value="98", reason="misread again")
    assert err.value.code == "already_decided"

    delete_document(wb, report["document_id"], by="dr.reviewer")
    with pytest.raises(BadInput) as err:
        correct_fact(wb, report["facts"][1]["fact_id"], by="dr.alice", value="1", reason="late")
    assert err.value.code == "fact_retracted"


def test_a_quarantined_documents_finding_cannot_be_corrected_into_the_chart(wb):
    _, report = someone_elses_report(wb)
    with pytest.raises(BadInput) as err:
        correct_fact(wb, report["facts"][0]["fact_id"], by="dr.alice", value="1", reason="misread")
    assert err.value.code == "identity_not_trusted"


def test_a_correction_on_an_open_identity_waits_like_an_approval(wb):
    patient, report = ambiguous(wb)
    fact = report["facts"][0]
    done = correct_fact(wb, fact["fact_id"], by="dr.alice", value="13.9", reason="misread")
    assert done["promotion_status"] == "approved_awaiting_identity" and done["active"] is False
    decide_identity(wb, report["identity"]["identity_check_id"], approve=True, by="dr.alice")
    name = fact["structured_value"]["test_name"]
    assert [r["value"] for r in lab_rows(wb, patient, name)] == ["13.9"]


# ------------------------------------------------------------------ drawn boxes
def test_a_drawn_box_is_saved_when_it_holds_the_quote_and_refused_otherwise(wb):
    patient = chart_patient(wb, CASE.patient)
    report = ingest(wb, patient, render_lab(CASE), "lab_pdf")
    fact = next(f for f in report["facts"] if f["structured_value"]["test_name"] == "Hemoglobin A1c")
    box = fact["citation"]["bounding_box"]
    assert box is not None
    padded = {"x": box["x"] - 0.01, "y": box["y"] - 0.005, "width": box["width"] + 0.02,
              "height": box["height"] + 0.01}
    saved = set_fact_box(wb, fact["fact_id"], box=padded, by="dr.alice")
    assert saved["free_box"] is False
    stored = next(f for f in document_report(wb, report["document_id"])["facts"] if f["fact_id"] == fact["fact_id"])
    assert stored["citation"]["bounding_box"] == pytest.approx(padded, abs=1e-5)
    assert stored["citation"]["quote_or_value"] == fact["citation"]["quote_or_value"]

    corner = {"x": 0.9, "y": 0.95, "width": 0.05, "height": 0.03}
    with pytest.raises(BadInput) as err:
        set_fact_box(wb, fact["fact_id"], box=corner, by="dr.alice")
    assert err.value.code == "quote_outside_box"
    free = set_fact_box(wb, fact["fact_id"], box=corner, by="dr.alice", confirm_free_box=True)
    assert free["free_box"] is True
    audit = decisions_of(wb, "fact", fact["fact_id"])
    assert [a["decision"] for a in audit] == ["box", "box"]
    assert audit[-1]["after_state"]["free_box"] is True and "free box" in audit[-1]["reason"]
    assert audit[-1]["before_state"]["bounding_box"] == pytest.approx(padded, abs=1e-5)

    with pytest.raises(BadInput) as err:
        set_fact_box(wb, fact["fact_id"], box={"x": 0.5, "y": 0.5, "width": 0, "height": 0.1}, by="dr.alice")
    assert err.value.code == "bad_box"


def test_box_rules_are_pure_and_forgiving_about_case_and_punctuation():
    words = [{"text": "Hemoglobin", "x": 0.1, "y": 0.5, "width": 0.1, "height": 0.02},
             {"text": "A1c", "x": 0.21, "y": 0.5, "width": 0.04, "height": 0.02},
             {"text": "7.9", "x": 0.4, "y": 0.5, "width": 0.03, "height": 0.02},
             {"text": "%", "x": 0.435, "y": 0.5, "width": 0.01, "height": 0.02}]
    around = {"x": 0.05, "y": 0.48, "width": 0.45, "height": 0.06}
    assert review_rules.quote_missing_from_box("hemoglobin a1c 7.9%", words, around) == []
    assert review_rules.quote_missing_from_box("Hemoglobin A1c 7.9 %", words, {**around, "width": 0.15}) == ["A1c", "7.9"]
    assert review_rules.normalise_box({"x": 0.9, "y": -0.1, "width": 0.3, "height": 0.2}) == {
        "x": 0.9, "y": 0.0, "width": pytest.approx(0.1), "height": pytest.approx(0.1)}
    assert review_rules.normalise_box({"x": 0.5, "y": 0.5, "width": -0.2, "height": -0.1}) == {
        "x": 0.3, "y": 0.4, "width": 0.2, "height": 0.1}
    assert review_rules.normalise_box({"x": 2, "y": 2, "width": 1, "height": 1}) is None


def line(texts, y=0.5):
    """Page words laid left to right on one line."""
    words, x = [], 0.05
    for text in texts:
        words.append({"text": text, "x": x, "y": y, "width": 0.015 * len(text), "height": 0.02})
        x += 0.015 * len(text) + 0.01
    return words


def test_a_box_holds_the_quote_only_when_it_prints_the_quotes_own_words():
    page = {"x": 0.0, "y": 0.0, "width": 1.0, "height": 1.0}
    missing = review_rules.quote_missing_from_box
    # A value is not found inside a longer number: a box around 17.9 does not hold "7.9".
    assert missing("Hemoglobin A1c 7.9 %", line(["Hemoglobin", "A1c", "17.9", "%"]), page) == ["7.9"]
    assert missing("Glucose 7 mg/dL", line(["Glucose", "97", "mg/dL"]), page) == ["7"]
    assert missing("Potassium 5.1", line(["Potassium", "5.12"]), page) == ["5.1"]
    # What a page really does to a quote still counts as inside: a word hyphenated across
    # a line break, a value split from its unit, a label glued to its value by OCR, an
    # OCR look-alike printed the same way in quote and page, a quote over two lines.
    assert missing("Hemoglobin A1c 7.9%", line(["Hemo-"], 0.3) + line(["globin", "A1c", "7.9", "%"], 0.33), page) == []
    assert missing("Hemo- globin", line(["Hemoglobin"]), page) == []
    assert missing("HbA1c: 7.9", line(["HbA1c:7.9"]), page) == []
    assert missing("Hemoglobin Alc 7,9 %", line(["Hemoglobin", "Alc", "7,9%"]), page) == []
    assert missing("chest pain radiating to the left arm",
                   line(["chest", "pain", "radiating"], 0.3) + line(["to", "the", "left", "arm"], 0.35), page) == []


# ------------------------------------------------------------------ already decided
def test_a_second_decision_on_a_decided_item_says_who_decided_and_when(wb):
    patient, report = ambiguous(wb)
    fact = report["facts"][0]
    decide_fact(wb, fact["fact_id"], approve=True, by="dr.alice")
    for approve in (True, False):
        with pytest.raises(BadInput, match=r"already approved by dr\.alice at \d\d:\d\d") as err:
            decide_fact(wb, fact["fact_id"], approve=approve, by="dr.bob")
        assert err.value.code == "already_decided"
    check_id = report["identity"]["identity_check_id"]
    decide_identity(wb, check_id, approve=False, by="dr.alice", reason="not our patient")
    with pytest.raises(BadInput, match=r"already rejected by dr\.alice") as err:
        decide_identity(wb, check_id, approve=True, by="dr.bob")
    assert err.value.code == "already_decided"
    assert [d["decision"] for d in decisions_of(wb, "identity_check", check_id)] == ["reject"]


def test_already_decided_message_names_the_day_when_it_was_not_today():
    row = {"decision": "approve", "actor": "dr.alice", "created_at": datetime(2026, 3, 2, 10, 42)}
    assert review_rules.already_decided_message(row, today=datetime(2026, 3, 2).date()) == \
        "already approved by dr.alice at 10:42"
    assert review_rules.already_decided_message(row, today=datetime(2026, 3, 3).date()) == \
        "already approved by dr.alice on 2026-03-02 at 10:42"
    rows = [{"decision": "approve"}, {"decision": "undo"}]
    assert review_rules.closing_decision(rows) is None
    assert review_rules.closing_decision(rows + [{"decision": "box"}, {"decision": "reject"}]) == {"decision": "reject"}


# ------------------------------------------------------------------ undo
def test_undoing_an_identity_approval_takes_the_document_out_of_the_chart_again(wb):
    patient, report = ambiguous(wb)
    check_id = report["identity"]["identity_check_id"]
    approved_item = report["facts"][0]
    decide_fact(wb, approved_item["fact_id"], approve=True, by="dr.alice")
    decide_identity(wb, check_id, approve=True, by="dr.alice")
    assert len(chart_view(wb, patient["id"])["labs"]) == len(CASE.results)

    undone = undo_identity_decision(wb, check_id, by="dr.carol", reason="approved the wrong document")
    assert undone["status"] == "identity_ambiguous_needs_review" and undone["identity_check_id"] != check_id
    assert chart_view(wb, patient["id"])["labs"] == []
    after = {f["fact_id"]: f for f in document_report(wb, report["document_id"])["facts"]}
    assert not any(f["active"] for f in after.values())
    assert after[approved_item["fact_id"]]["promotion_status"] == "approved_awaiting_identity"
    assert [c["id"] for c in review_queue(wb, patient["id"])["identity"]] == [undone["identity_check_id"]]
    audit = decisions_of(wb, "identity_check", check_id)
    assert [d["decision"] for d in audit] == ["approve", "undo"] and audit[-1]["actor"] == "dr.carol"
    with wb.db.cursor() as cur:
        old = cur.execute("SELECT review_decision, reviewed_by FROM identity_checks WHERE id = ?",
                          [check_id]).fetchone()
    assert old == ("approved", "dr.alice")  # the decided row is kept as it was

    # The old check is no longer the one in force; the new one can be decided again.
    with pytest.raises(BadInput) as err:
        decide_identity(wb, check_id, approve=True, by="dr.alice")
    assert err.value.code == "stale_identity_check"
    decide_identity(wb, undone["identity_check_id"], approve=True, by="dr.alice")
    assert len(chart_view(wb, patient["id"])["labs"]) == len(CASE.results)


def test_undoing_a_rejection_of_a_matching_document_brings_its_rows_back(wb):
    patient = chart_patient(wb, CASE.patient)
    report = ingest(wb, patient, render_lab(CASE), "lab_pdf")
    check_id = report["identity"]["identity_check_id"]
    rejected_item = report["facts"][0]
    decide_fact(wb, rejected_item["fact_id"], approve=False, by="dr.alice", reason="misread")
    decide_identity(wb, check_id, approve=False, by="dr.alice", reason="thought it was another patient")
    assert chart_view(wb, patient["id"])["labs"] == []
    undone = undo_identity_decision(wb, check_id, by="dr.alice", reason="it is hers after all")
    assert undone["status"] == "identity_verified"
    names = {r["test_name"] for r in chart_view(wb, patient["id"])["labs"]}
    assert len(names) == len(CASE.results) - 1  # the finding rejected on its own stays out
    assert rejected_item["structured_value"]["test_name"] not in names


def test_undo_refuses_without_a_decision_or_a_reason(wb):
    patient, report = ambiguous(wb)
    check_id = report["identity"]["identity_check_id"]
    with pytest.raises(BadInput) as err:
        undo_identity_decision(wb, check_id, by="dr.alice", reason="oops, wrong one")
    assert err.value.code == "not_decided"
    decide_identity(wb, check_id, approve=True, by="dr.alice")
    with pytest.raises(BadInput) as err:
        undo_identity_decision(wb, check_id, by="dr.alice", reason="")
    assert err.value.code == "reason_required"
    with pytest.raises(Forbidden):  # undoing is a review decision: a viewer may not
        undo_identity_decision(wb, check_id, by="dr.viewer", reason="oops, wrong one")


# ------------------------------------------------------------------ identity comparison
def test_identity_comparison_sets_the_documents_fields_beside_the_charts(wb):
    other, report = someone_elses_report(wb)
    view = identity_comparison(wb, report["identity"]["identity_check_id"])
    assert view["status"] == "identity_mismatch_quarantined"
    fields = {f["kind"]: f for f in view["fields"]}
    assert set(fields) == {"name", "dob", "mrn"}
    assert fields["name"]["chart"] == "Bartholomew Inglethorpe" and fields["name"]["verdict"] == "mismatch"
    assert fields["dob"]["chart"] == "1944-05-06" and fields["dob"]["verdict"] == "mismatch"
    printed = [f for f in fields.values() if f["document"]]
    assert printed and all(f["citations"] and f["citations"][0]["bounding_box"] for f in printed)
    assert CASE.patient.last.upper() in " ".join(fields["name"]["document"]).upper()

    own = chart_patient(wb, CASE.patient)
    mine = ingest(wb, own, render_lab(CASE), "lab_pdf", "mine.pdf")
    verdicts = {f["kind"]: f["verdict"] for f in identity_comparison(wb, mine["identity"]["identity_check_id"])["fields"]}
    assert verdicts["name"] == "match" and verdicts["dob"] == "match"


def test_an_open_date_of_birth_whose_other_reading_is_the_charts_is_shown_both_ways_not_quarantined(wb):
    # A held-out letter printed "DOB 11/03/1950" and no other date; the chart holds 11 March.
    # Read month first only, the right patient's letter was quarantined as another's.
    from tests.support.synthetic import docx_letter

    patient = add_patient(wb, mrn="ZAB1234", first="Piripi", last="Hokianga", dob="1950-03-11", by="dr.alice")
    letter = docx_letter("Re: Mr Piripi HOKIANGA, DOB 11/03/1950, MRN ZAB1234", "Dear Colleague,",
                         "He takes ramipril 5 mg daily.", "Yours sincerely,", "Dr A. Brennan")
    report = ingest(wb, patient, letter, "referral_docx", "letter.docx")
    assert report["identity"]["status"] == "identity_ambiguous_needs_review"
    assert "1950-11-03 month first or 1950-03-11 day first" in report["identity"]["mismatch_reason"]
    fields = {f["kind"]: f for f in identity_comparison(wb, report["identity"]["identity_check_id"])["fields"]}
    assert fields["dob"]["document"] == ["1950-11-03 or 1950-03-11"] and fields["dob"]["verdict"] == "unclear"
    assert fields["mrn"]["verdict"] == "match"


# ------------------------------------------------------------------ bulk, keep
def test_bulk_approval_decides_each_item_on_its_own(wb):
    patient, report = ambiguous(wb)
    ids = [f["fact_id"] for f in report["facts"][:3]]
    decide_fact(wb, ids[1], approve=False, by="dr.alice", reason="misread")
    results = approve_facts(wb, ids + [987654], by="dr.bob")
    assert [r["ok"] for r in results] == [True, False, True, False]
    assert results[1]["code"] == "already_decided" and "already rejected by dr.alice" in results[1]["error"]
    assert results[3]["code"] == "unknown_fact"
    assert [d["decision"] for d in decisions_of(wb, "fact", ids[0])] == ["approve"]
    assert [d["decision"] for d in decisions_of(wb, "fact", ids[2])] == ["approve"]


def test_bulk_approval_refuses_findings_that_wait_for_different_reasons(wb):
    case = hedged_intake()  # "shellfish?" (uncertain wording) and a pregnancy note (notes box, pregnancy)
    patient = chart_patient(wb, case.patient)
    report = ingest(wb, patient, render_intake(case), "intake_form")
    items = [i for i in queue_items(wb, patient["id"]) if i["kind"] == "fact"]
    assert len({i["reason"] for i in items}) > 1
    before = document_report(wb, report["document_id"])["facts"]
    with pytest.raises(BadInput) as err:
        approve_facts(wb, [i["item_id"] for i in items], by="dr.alice")
    assert err.value.code == "mixed_reasons"
    assert document_report(wb, report["document_id"])["facts"] == before  # nothing written
    assert all(decisions_of(wb, "fact", i["item_id"]) == [] for i in items)
    # One reason at a time is approved.
    one = items[0]
    assert [r["ok"] for r in approve_facts(wb, [one["item_id"]], by="dr.alice")] == [True]
    # A finding someone already decided does not count as a second reason: it is reported.
    results = approve_facts(wb, [i["item_id"] for i in items if i["reason"] == one["reason"]] + [one["item_id"]],
                            by="dr.bob")
    assert results[0]["code"] == "already_decided"


def test_a_conflict_shows_the_documents_value_beside_the_charts(wb):
    patient, row, report = repeat_with_changed_value(wb)
    conflict = next(f for f in report["facts"] if f["promotion_status"] == "conflict_needs_review")
    item = next(i for i in queue_items(wb, patient["id"]) if i["item_id"] == conflict["fact_id"])
    assert item["reason"] == "conflict_needs_review" and item["conflict"] is True
    detail = conflict_detail(wb, conflict["fact_id"])
    fields = {f["field"]: (f["document"], f["chart"]) for f in detail["fields"]}
    assert fields["value"] == ("12.9", row.value) and fields["test_name"] == (row.test_name, row.test_name)
    assert [s["filename"] for s in detail["sources"]] == ["first.pdf"] and detail["manual"] is False
    assert conflict_detail(wb, report["facts"][-1]["fact_id"]) is None


def test_keeping_a_finding_as_a_document_fact_leaves_the_queue_unpromoted(wb):
    case = hedged_intake()  # "shellfish?" is a review item
    patient = chart_patient(wb, case.patient)
    report = ingest(wb, patient, render_intake(case), "intake_form")
    item = next(f for f in review_queue(wb, patient["id"])["facts"] if "shellfish" in f["fact_text"].lower())
    kept = keep_as_document_fact(wb, item["fact_id"], by="dr.alice", reason="shown for context only")
    assert kept["certainty"] == "document_fact" and kept["promotion_status"] == "not_promotable"
    assert item["fact_id"] not in {f["fact_id"] for f in review_queue(wb, patient["id"])["facts"]}
    assert [d["decision"] for d in decisions_of(wb, "fact", item["fact_id"])] == ["keep"]
    assert count(wb, f"SELECT count(*) FROM promotions WHERE fact_id = {item['fact_id']} AND active "
                     "AND outcome = 'promoted'") == 0
    assert report["document_id"]


# ------------------------------------------------------------------ audit log
def test_the_audit_log_lists_decisions_in_plain_words_and_as_csv(wb):
    case = misread_case()
    patient = chart_patient(wb, case.patient)
    report = ingest(wb, patient, render_lab(case), "lab_pdf")
    misread = next(f for f in report["facts"] if f["structured_value"]["test_name"] == "Hemoglobin Aic")
    correct_fact(wb, misread["fact_id"], by="dr.alice", value="7.9", reason="decimal point")
    other = next(f for f in report["facts"] if f["fact_id"] != misread["fact_id"])
    decide_fact(wb, other["fact_id"], approve=False, by="dr.bob", reason="duplicate line")

    rows = decisions(wb, patient["id"])
    assert [r["decision"] for r in rows] == ["reject", "correct"]  # newest first
    assert rows[1]["summary"] == "dr.alice corrected finding “Hemoglobin Aic”: value 79 → 7.9"
    assert rows[1]["filename"] == "doc.pdf" and rows[1]["reason"] == "decimal point"
    assert [r["who"] for r in decisions(wb, patient["id"], actor="dr.bob")] == ["dr.bob"]
    assert [r["decision"] for r in decisions(wb, patient["id"], decision="correct")] == ["correct"]
    assert decisions(wb, patient["id"] + 999) == []
    text = decisions_csv(rows)
    lines = text.strip().splitlines()
    assert lines[0].startswith("decision_id,when,who,item") and len(lines) == 3
    assert "value 79 → 7.9" in text and "dr.bob" in lines[1]


# ------------------------------------------------------------------ CLI
def test_review_correct_fact_through_the_cli(wb):
    case = misread_case()
    patient = chart_patient(wb, case.patient)
    report = ingest(wb, patient, render_lab(case), "lab_pdf")
    misread = next(f for f in report["facts"] if f["structured_value"]["test_name"] == "Hemoglobin Aic")
    wb.close()  # the CLI opens the database itself

    def cli(*args):
        from tests.support.browser_support import make_run_env

        env = make_run_env(wb.settings.data_dir)  # the CLI as a user runs it, not with wb's JOB_PROCESS=off
        return subprocess.run([sys.executable, "-m", "core", "review", *args, "--json"], env=env, text=True,
                              capture_output=True, timeout=300)

    bad = cli("correct-fact", "--fact", str(misread["fact_id"]), "--by", "dr.carol", "--flag", "huge", "--reason", "x")
    assert bad.returncode == 2 and bad.stdout == "" and "bad_correction" in bad.stderr
    proc = cli("correct-fact", "--fact", str(misread["fact_id"]), "--by", "dr.carol", "--value", "7.9",
               "--reason", "OCR misread")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["fact_id"] == misread["fact_id"] and out["structured_value"]["value"] == "7.9"
    assert out["corrected_by"] == "dr.carol" and out["citation"] == misread["citation"]
    again = cli("correct-fact", "--fact", str(misread["fact_id"]), "--by", "dr.bob", "--value", "7.8",
                "--reason", "again")
    assert again.returncode == 2 and "already corrected by dr.carol" in again.stderr
    wrong_id = cli("correct-fact", "--document", str(report["document_id"]), "--by", "dr.carol", "--value", "1")
    assert wrong_id.returncode == 2 and "--fact" in wrong_id.stderr
