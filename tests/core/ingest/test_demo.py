"""`python -m core demo`: the demo documents load through the normal upload path, give
every review a reviewer should be able to try, and load only once."""

from __future__ import annotations

import pytest

from core.services.ingest.demo import has_documents, load_demo
from core.services.review.facts import chart_view, document_report
from core.services.admin.patients import get_patient
from golden.demo import DOCUMENTS

pytestmark = pytest.mark.slow


def test_the_demo_covers_every_review_and_loads_once(wb):
    assert not has_documents(wb)
    loaded = load_demo(wb, DOCUMENTS)
    assert {d["doc_type"] for d in loaded} == {"lab_pdf", "intake_form", "referral_docx", "clinical_workbook",
                                               "fax_packet", "hl7v2_message"}
    assert all(d["loaded"] and d["job"]["status"] == "succeeded" for d in loaded), loaded
    reports = {d["filename"]: document_report(wb, d["document_id"]) for d in loaded}
    outcomes = {name: {p["outcome"] for p in r["promotions"]} for name, r in reports.items()}
    assert "conflict_needs_review" in outcomes["demo-lab-repeat.pdf"]
    assert reports["demo-wrong-patient-lab.pdf"]["identity"]["status"] == "identity_mismatch_quarantined"
    assert reports["demo-fax-packet.pdf"]["identity"]["status"] == "identity_ambiguous_needs_review"
    assert any(f["certainty"] == "needs_review" and "sulfa" in f["fact_text"].lower()
               for f in reports["demo-intake.pdf"]["facts"])
    scanned = reports["demo-lab-scanned.pdf"]
    assert scanned["job"]["engine"] and "pymupdf" not in scanned["job"]["engine"].lower()  # read by OCR
    assert any(f["certainty"] == "verified" for f in scanned["facts"])
    chart = chart_view(wb, get_patient(wb, mrn="DEMO-1001")["id"])
    assert any(row["critical"] and row["test_name"] == "Potassium" for row in chart["labs"])
    quarantined = reports["demo-wrong-patient-lab.pdf"]["document_id"]
    assert not any(quarantined in row["document_ids"] for rows in chart.values() for row in rows)

    again = load_demo(wb, DOCUMENTS)
    assert not any(d["loaded"] for d in again)
    assert [d["document_id"] for d in again] == [d["document_id"] for d in loaded]
