"""The chart checks' read (``chart_check_facts``) is the active part of ``usable_facts``
with the citation's quote taken out in SQL: the same facts, the same quote, whatever
form the quote takes."""

from __future__ import annotations

from datetime import date

from core.services.admin.patients import add_patient
from core.services.ingest.ingestion import attach_and_extract
from core.services.ingest.worker import Worker
from golden.fixtures import LAB_CASES, render_lab
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
