"""Typed labs and intake forms end to end: attach_and_extract -> worker -> facts,
identity gate, promotion, duplicates, review decisions and retraction."""

from __future__ import annotations

import dataclasses

import pytest

from core.services.review.facts import chart, document_report, patient_facts
from core.services.ingest.ingestion import attach_and_extract
from core.services.admin.patients import add_patient
from core.services.review.retraction import delete_document
from core.services.review.decisions import decide_fact, decide_identity
from core.services.ingest.worker import Worker
from golden.fixtures import INTAKE_CASES, LAB_CASES, LAB_LAYOUTS, render_intake, render_lab, with_layout
from storage import audit_repo, jobs_repo
from tests.support.pipeline import chart_patient, count, ingest


def labs(report, certainty=None):
    return {f["structured_value"]["test_name"]: f for f in report["facts"]
            if f["fact_type"] == "lab_result" and (certainty is None or f["certainty"] == certainty)}


@pytest.mark.parametrize("layout", sorted(LAB_LAYOUTS))
def test_every_lab_layout_is_extracted_verified_and_promoted(wb, layout):
    case = with_layout(LAB_CASES[0], layout)
    patient = chart_patient(wb, case.patient)
    report = ingest(wb, patient, render_lab(case), "lab_pdf")
    assert report["identity"]["status"] == "identity_verified"
    found = labs(report, "verified")
    assert set(found) == {r.test_name for r in case.results}
    for expected in case.results:
        value = found[expected.test_name]["structured_value"]
        assert (value["value"], value["unit"], value["reference_range"], value["abnormal_flag"]) == (
            expected.value, expected.unit, expected.reference_range, expected.abnormal_flag)
        assert value["collection_date"] == case.collection_date
        cit = found[expected.test_name]["citation"]
        assert cit["verified"] and cit["bounding_box"] and cit["source_id"] == f"documents:{report['document_id']}"
        assert expected.value.split()[0] in cit["quote_or_value"]
    outcomes = {p["outcome"] for p in report["promotions"]}
    assert outcomes == {"promoted"}
    assert len(chart(wb, patient["id"])["chart_lab_results"]) == len(case.results)


@pytest.mark.parametrize("case", INTAKE_CASES, ids=lambda c: c.name)
def test_intake_layouts_promote_only_explicit_allergies_and_medications(wb, case):
    patient = chart_patient(wb, case.patient)
    report = ingest(wb, patient, render_intake(case), "intake_form")
    assert report["identity"]["status"] == "identity_verified"
    rows = chart(wb, patient["id"])
    assert {r["substance"] for r in rows["chart_allergies"]} == {a.substance for a in case.allergies}
    assert {r["name"] for r in rows["chart_medications"]} == {m.name for m in case.medications}
    demographics = [f for f in report["facts"] if f["fact_type"] == "demographic"]
    assert demographics and all(f["certainty"] == "document_fact" for f in demographics)
    assert all(f["promotion_status"] == "not_promotable" for f in demographics)
    review_text = " ".join(f["fact_text"] + " " + f["citation"]["quote_or_value"]
                           for f in report["facts"] if f["certainty"] == "needs_review").lower()
    for term in case.review_terms:
        assert term.lower() in review_text
    # the patient record itself is never rewritten from a form
    with wb.db.cursor() as cur:
        assert cur.execute("SELECT first_name FROM patients WHERE id = ?", [patient["id"]]).fetchone()[0] == \
            case.patient.first


def test_reprocessing_the_same_job_duplicates_nothing(wb):
    case = LAB_CASES[0]
    patient = chart_patient(wb, case.patient)
    report = ingest(wb, patient, render_lab(case), "lab_pdf")
    before = [count(wb, f"SELECT count(*) FROM {t}") for t in ("document_facts", "promotions", "chart_lab_results",
                                                                 "identity_checks")]
    with wb.db.cursor() as cur:
        jobs_repo.requeue(cur, report["job"]["job_id"])
    assert Worker(wb).run_once()["status"] == "succeeded"
    after = [count(wb, f"SELECT count(*) FROM {t}") for t in ("document_facts", "promotions", "chart_lab_results",
                                                                "identity_checks")]
    assert after == before


def test_stale_job_reclaimed_and_rerun_without_duplicates(wb):
    case = LAB_CASES[0]
    patient = chart_patient(wb, case.patient)
    attached = attach_and_extract(wb, patient_id=patient["id"], source="lab.pdf", data=render_lab(case),
                                  filename="lab.pdf", doc_type="lab_pdf", by="dr.reviewer")
    worker = Worker(wb)
    # First attempt completes its work but "dies" before marking the job done.
    with wb.db.cursor() as cur:
        job = jobs_repo.claim_next(cur, "doomed")
    from core.services.ingest.processing import run_pipeline

    run_pipeline(wb, job)
    facts_before = count(wb, "SELECT count(*) FROM document_facts")
    with wb.db.cursor() as cur:
        cur.execute("UPDATE processing_jobs SET heartbeat_at = heartbeat_at - INTERVAL 1 HOUR WHERE id = ?", [job.id])
    finished = worker.run_once()  # reclaims, then runs it again
    assert finished["id"] == attached.job["id"] and finished["status"] == "succeeded" and finished["attempts"] == 2
    assert count(wb, "SELECT count(*) FROM document_facts") == facts_before
    assert count(wb, "SELECT count(*) FROM chart_lab_results") == len(case.results)
    assert count(wb, "SELECT count(*) FROM promotions") == len(case.results)


def test_reupload_and_other_document_resolve_to_duplicate_outcomes(wb):
    case = LAB_CASES[0]
    patient = chart_patient(wb, case.patient)
    pdf = render_lab(case)
    ingest(wb, patient, pdf, "lab_pdf", "first.pdf")
    same_bytes = ingest(wb, patient, pdf, "lab_pdf", "copy.pdf")
    assert {p["outcome"] for p in same_bytes["promotions"]} == {"duplicate_skipped"}
    other_layout = ingest(wb, patient, render_lab(with_layout(case, "dotted")), "lab_pdf", "other.pdf")
    assert {p["outcome"] for p in other_layout["promotions"]} == {"already_exists"}
    assert count(wb, "SELECT count(*) FROM chart_lab_results") == len(case.results)


def test_same_test_and_date_with_another_value_is_a_conflict(wb):
    case = LAB_CASES[0]
    patient = chart_patient(wb, case.patient)
    ingest(wb, patient, render_lab(case), "lab_pdf", "first.pdf")
    first_panel, rows = case.panels[0]
    changed_row = dataclasses.replace(rows[0], value="12.9")
    changed = dataclasses.replace(case, panels=((first_panel, (changed_row, *rows[1:])), *case.panels[1:]))
    report = ingest(wb, patient, render_lab(changed), "lab_pdf", "corrected.pdf")
    by_test = {f["structured_value"]["test_name"]: f for f in report["facts"]}
    assert by_test[changed_row.test_name]["promotion_status"] == "conflict_needs_review"
    conflict = [p for p in report["promotions"] if p["outcome"] == "conflict_needs_review"]
    assert len(conflict) == 1 and rows[0].value in conflict[0]["conflict_reason"]
    assert count(wb, "SELECT count(*) FROM chart_lab_results") == len(case.results)  # nothing new in the chart
    groups = patient_facts(wb, patient["id"])
    assert any(f["fact_id"] == by_test[changed_row.test_name]["fact_id"] for f in groups["needs_review"])


def test_wrong_patient_is_quarantined_then_approval_promotes(wb):
    case = LAB_CASES[0]
    someone_else = add_patient(wb, mrn="OTHER-1", first="Bartholomew", last="Inglethorpe", dob="1944-05-06",
                               by="dr.reviewer")
    report = ingest(wb, someone_else, render_lab(case), "lab_pdf")
    assert report["identity"]["status"] == "identity_mismatch_quarantined"
    assert report["identity"]["mismatch_reason"]
    assert report["facts"] and not any(f["active"] for f in report["facts"])
    assert report["promotions"] == [] and count(wb, "SELECT count(*) FROM chart_lab_results") == 0
    assert patient_facts(wb, someone_else["id"])["verified"] == []

    decision = decide_identity(wb, report["identity"]["identity_check_id"], approve=True, by="dr.reviewer",
                               reason="scanned to wrong chart")
    assert decision["status"] == "identity_review_approved" and decision["activated_facts"] == len(case.results)
    assert count(wb, "SELECT count(*) FROM chart_lab_results") == len(case.results)
    with wb.db.cursor() as cur:
        audit = audit_repo.review_decisions(cur, "identity_check", decision["identity_check_id"])
    assert audit[0]["actor"] == "dr.reviewer" and audit[0]["after_state"]["identity_status"] == "identity_review_approved"


def test_identity_rejection_keeps_everything_inactive(wb):
    case = LAB_CASES[0]
    someone_else = add_patient(wb, mrn="OTHER-2", first="Bartholomew", last="Inglethorpe", dob="1944-05-06",
                               by="dr.reviewer")
    report = ingest(wb, someone_else, render_lab(case), "lab_pdf")
    decide_identity(wb, report["identity"]["identity_check_id"], approve=False, by="dr.reviewer")
    after = document_report(wb, report["document_id"])
    assert after["identity"]["status"] == "identity_review_rejected"
    assert not any(f["active"] for f in after["facts"])
    assert {p["outcome"] for p in after["promotions"]} == {"rejected"}
    assert count(wb, "SELECT count(*) FROM chart_lab_results") == 0


def test_missing_identifiers_are_ambiguous_and_held(wb):
    case = LAB_CASES[0]
    # A report that prints only the patient's name: not enough to confirm who it is.
    patient = add_patient(wb, mrn=case.patient.mrn, first=case.patient.first, last=case.patient.last,
                          dob=case.patient.dob, by="dr.reviewer")
    from domain.models import IdentifierKind

    def no_dob_or_mrn(content, source_id, _real=__import__("extract.lab.extractor", fromlist=["x"]).extract_lab):
        result = _real(content, source_id)
        return result.model_copy(update={"identifiers": [i for i in result.identifiers
                                                         if i.kind is IdentifierKind.NAME]})

    from domain.models import DocType
    from extract import registry as formats

    table = formats.EXTRACTORS
    formats.EXTRACTORS = {**table, DocType.LAB_PDF: no_dob_or_mrn}
    try:
        report = ingest(wb, patient, render_lab(case), "lab_pdf")
    finally:
        formats.EXTRACTORS = table
    assert report["identity"]["status"] == "identity_ambiguous_needs_review"
    assert not any(f["active"] for f in report["facts"])
    assert len(patient_facts(wb, patient["id"])["held"]) == len(report["facts"])


def test_review_of_an_uncertain_finding(wb):
    case = next(c for c in INTAKE_CASES if c.review_terms)
    patient = chart_patient(wb, case.patient)
    report = ingest(wb, patient, render_intake(case), "intake_form")
    uncertain = [f for f in report["facts"] if f["certainty"] == "needs_review"]
    assert uncertain and not any(f["active"] for f in uncertain)
    rejected = decide_fact(wb, uncertain[0]["fact_id"], approve=False, by="dr.reviewer", reason="not clinical")
    assert rejected["active"] is False and rejected["promotion_status"] == "rejected"
    if len(uncertain) > 1:
        approved = decide_fact(wb, uncertain[1]["fact_id"], approve=True, by="dr.reviewer")
        assert approved["certainty"] == "verified" and approved["active"] is True


def test_delete_retracts_everything_and_keeps_the_audit(wb):
    case = LAB_CASES[0]
    patient = chart_patient(wb, case.patient)
    report = ingest(wb, patient, render_lab(case), "lab_pdf")
    result = delete_document(wb, report["document_id"], by="dr.reviewer")
    assert result["retracted"]["facts"] == len(case.results)
    assert result["retracted"]["promotions"] == len(case.results)
    assert result["retracted"]["chart_rows"] == len(case.results)
    assert count(wb, "SELECT count(*) FROM document_facts WHERE active") == 0
    assert count(wb, "SELECT count(*) FROM promotions WHERE active") == 0
    assert count(wb, "SELECT count(*) FROM chart_lab_results WHERE active") == 0
    notes = [r[0] for r in wb.db._con.execute("SELECT note FROM chart_lab_results").fetchall()]
    assert all("retracted" in n for n in notes)
    assert all(v == [] for v in patient_facts(wb, patient["id"]).values())
    with wb.db.cursor() as cur:
        actions = [r["action"] for r in audit_repo.retractions_for_document(cur, report["document_id"])]
        job = jobs_repo.by_id(cur, report["job"]["job_id"])
    assert actions.count("fact_retracted") == len(case.results)
    assert actions.count("chart_row_deactivated") == len(case.results) and "document_deleted" in actions
    assert job.status == "retracted"
    # facts stay reviewable in the audit
    assert count(wb, "SELECT count(*) FROM document_facts WHERE retracted_at IS NOT NULL") == len(case.results)


def test_delete_keeps_a_chart_row_another_document_still_supports(wb):
    case = LAB_CASES[0]
    patient = chart_patient(wb, case.patient)
    first = ingest(wb, patient, render_lab(case), "lab_pdf", "first.pdf")
    ingest(wb, patient, render_lab(with_layout(case, "dotted")), "lab_pdf", "second.pdf")
    result = delete_document(wb, first["document_id"], by="dr.reviewer")
    assert result["retracted"]["chart_rows"] == 0
    rows = chart(wb, patient["id"])["chart_lab_results"]
    assert len(rows) == len(case.results) and all("supported by document" in r["note"] for r in rows)


def test_rejecting_a_promoted_finding_takes_it_out_of_the_chart(wb):
    case = LAB_CASES[0]
    patient = chart_patient(wb, case.patient)
    report = ingest(wb, patient, render_lab(case), "lab_pdf")
    fact = report["facts"][0]
    decide_fact(wb, fact["fact_id"], approve=False, by="dr.reviewer", reason="transcription error")
    rows = chart(wb, patient["id"])["chart_lab_results"]
    assert len(rows) == len(case.results) - 1
    assert fact["structured_value"]["test_name"] not in {r["test_name"] for r in rows}
    with wb.db.cursor() as cur:
        note = cur.execute("SELECT note FROM chart_lab_results WHERE NOT active").fetchone()[0]
    assert "rejected by dr.reviewer" in note


def test_replacing_the_chart_value_supersedes_the_chart_row(wb):
    case = LAB_CASES[0]
    patient = chart_patient(wb, case.patient)
    ingest(wb, patient, render_lab(case), "lab_pdf", "first.pdf")
    first_panel, rows = case.panels[0]
    changed = dataclasses.replace(case, panels=((first_panel, (dataclasses.replace(rows[0], value="12.9"), *rows[1:])),
                                                *case.panels[1:]))
    report = ingest(wb, patient, render_lab(changed), "lab_pdf", "corrected.pdf")
    fact = next(f for f in report["facts"] if f["promotion_status"] == "conflict_needs_review")
    decided = decide_fact(wb, fact["fact_id"], approve=True, by="dr.reviewer", resolution="replace")
    assert decided["promotion_status"] == "promoted" and decided["active"] is True
    live = [r for r in chart(wb, patient["id"])["chart_lab_results"] if r["test_name"] == rows[0].test_name]
    assert [r["value"] for r in live] == ["12.9"]
    with wb.db.cursor() as cur:
        old = cur.execute("SELECT note FROM chart_lab_results WHERE NOT active").fetchone()[0]
        still_open = cur.execute("SELECT count(*) FROM promotions WHERE fact_id = ? AND active AND outcome = "
                                 "'conflict_needs_review'", [fact["fact_id"]]).fetchone()[0]
    assert "superseded by reviewer-approved fact" in old and still_open == 0
    assert not any(f["fact_id"] == fact["fact_id"] for f in patient_facts(wb, patient["id"])["needs_review"])


def test_coded_warnings_are_kept_with_the_job(wb):
    from golden.office_fixtures import WORKBOOK_LABS, build_results_workbook

    ident = WORKBOOK_LABS.identity
    last, first = [part.strip() for part in ident.name.split(",", 1)]
    patient = add_patient(wb, mrn=ident.mrn, first=first.split()[0].title(), last=last.title(), dob=ident.dob,
                          by="dr.reviewer")
    report = ingest(wb, patient, build_results_workbook(), "clinical_workbook", "results.xlsx")
    codes = {w["code"] for w in report["job"]["warnings"]}
    assert {"formula_without_value", "xlsx_hidden_rows"} <= codes
    assert all(w["message"] for w in report["job"]["warnings"])
    seen = [(w["code"], w["message"]) for w in report["job"]["warnings"]]
    assert len(seen) == len(set(seen))  # each warning once, not once per layer
