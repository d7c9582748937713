"""The chart checks' read (``chart_check_facts``) is the active part of ``usable_facts``
with the citation's quote taken out in SQL: the same facts, the same quote, whatever
form the quote takes."""

from __future__ import annotations

from datetime import date

from core.services.admin.patients import add_patient
from core.services.ingest.ingestion import attach_and_extract
from core.services.ingest.worker import Worker
from golden.fixtures import LAB_CASES, LAB_LAYOUTS, render_lab, with_layout
from storage import evidence_repo, facts_repo


def test_chart_check_facts_are_the_active_usable_facts_with_their_quotes(wb):
    named = LAB_CASES[0].patient  # the page's own patient: its identity verifies, so its facts are usable
    patient = add_patient(wb, mrn=named.mrn, first=named.first, last=named.last, dob=date.fromisoformat(named.dob),
                          by="dr.reviewer")
    attached = attach_and_extract(wb, patient_id=patient["id"], source="lab.pdf", data=render_lab(LAB_CASES[0]),
                                  filename="lab.pdf", doc_type="lab_pdf", by="dr.reviewer")
    assert Worker(wb, worker_id="test:evidence").run_specific(attached.job["id"])["status"] == "succeeded"
    with wb.db.transaction() as cur:
        usable = evidence_repo.usable_facts(cur, patient["id"])
        active = [f for f in usable if f["active"]]
        assert len(active) >= 4
        facts_repo.update_fact(cur, active[0]["id"], active=False)  # out of the chart: not read
        # Quotes in the other forms a citation may hold: a number, JSON null, absent.
        for fact, citation in zip(active[1:4], ['{"quote_or_value": 95.5}', '{"quote_or_value": null}', '{}']):
            cur.execute("UPDATE document_facts SET citation = ? WHERE id = ?", [citation, fact["id"]])
    with wb.db.cursor() as cur:
        expected = [(f["id"], f["fact_text"], f["structured_value"], (f["citation"] or {}).get("quote_or_value"))
                    for f in evidence_repo.usable_facts(cur, patient["id"]) if f["active"]]
        got = [(f["id"], f["fact_text"], f["structured_value"], f["quote"])
               for f in evidence_repo.chart_check_facts(cur, patient["id"])]
    assert got == expected
    assert active[0]["id"] not in {fid for fid, *_ in got}
    assert [q for fid, *_, q in got if fid == active[1]["id"]] == [95.5]


def test_chart_check_facts_follow_the_identity_check_in_force_of_each_document(wb):
    """The check in force is the latest of each document and scope, whatever other
    patients' documents hold: a newer quarantine takes a document's facts out, a newer
    approval brings them back, and another patient's checks change nothing."""
    from domain.models import IdentityStatus

    def ingest(case, source, patient=None):
        named = case.patient
        patient = patient or add_patient(wb, mrn=named.mrn, first=named.first, last=named.last,
                                         dob=date.fromisoformat(named.dob), by="dr.reviewer")
        attached = attach_and_extract(wb, patient_id=patient["id"], source=source, data=render_lab(case),
                                      filename=source, doc_type="lab_pdf", by="dr.reviewer")
        assert Worker(wb, worker_id="test:evidence").run_specific(attached.job["id"])["status"] == "succeeded"
        return patient, attached.document

    def check(cur, patient, document, status):
        facts_repo.insert_identity_check(cur, patient_id=patient["id"], document_id=document["id"], job_id=None,
                                         doc_type="lab_pdf", scope=None, status=status.value, identifiers=[],
                                         matched={}, mismatch_reason=None, review_required=False)

    def both(cur, patient):
        usable = [f["id"] for f in evidence_repo.usable_facts(cur, patient["id"]) if f["active"]]
        return usable, [f["id"] for f in evidence_repo.chart_check_facts(cur, patient["id"])]

    first, first_doc = ingest(LAB_CASES[0], "a.pdf")
    _, other_doc = ingest(with_layout(LAB_CASES[0], sorted(LAB_LAYOUTS)[-1]), "a2.pdf", first)
    second, second_doc = ingest(LAB_CASES[1], "b.pdf")
    with wb.db.transaction() as cur:
        everything, got = both(cur, first)
        assert got == everything
        of_other = [f.id for f in facts_repo.facts_for_document(cur, other_doc["id"]) if f.id in everything]
        assert of_other and len(of_other) < len(everything)
        check(cur, second, second_doc, IdentityStatus.MISMATCH)  # another patient's document
        assert both(cur, first) == (everything, everything)
        assert both(cur, second) == ([], [])
        check(cur, first, first_doc, IdentityStatus.MISMATCH)  # one of the patient's two documents
        assert both(cur, first) == (of_other, of_other)
        check(cur, first, first_doc, IdentityStatus.APPROVED)
        assert both(cur, first) == (everything, everything)
