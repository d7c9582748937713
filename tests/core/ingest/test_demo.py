"""`python -m core demo`: the demo documents, as the demo generator writes them
(``python -m golden.demo --write DIR``), load through the normal upload path, give every
review a reviewer should be able to try, and load only once."""

from __future__ import annotations

import json

import pytest

from core.services.ingest.demo import build_demo_documents, has_documents, load_demo, read_demo_dir
from core.services.review.facts import chart_view, document_report
from core.services.admin.patients import get_patient
from domain.errors import BadInput
from golden.demo import DOCUMENTS

pytestmark = pytest.mark.slow


def test_the_demo_covers_every_review_and_loads_once(wb, tmp_path):
    assert not has_documents(wb)
    written = read_demo_dir(build_demo_documents(tmp_path / "demo"))  # the generator, as `core demo` runs it
    assert [(d.patient_mrn, d.filename, d.doc_type) for d in written] == [
        (d.patient_mrn, d.filename, d.doc_type) for d in DOCUMENTS]
    loaded = load_demo(wb, written)
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

    again = load_demo(wb, written)
    assert not any(d["loaded"] for d in again)
    assert [d["document_id"] for d in again] == [d["document_id"] for d in loaded]


def test_a_demo_directory_is_read_only_through_its_manifest(tmp_path):
    (tmp_path / "a.hl7").write_bytes(b"MSH|x")
    with pytest.raises(BadInput, match="no readable manifest.json"):
        read_demo_dir(tmp_path)
    entry = {"patient_mrn": "DEMO-1001", "filename": "a.hl7", "doc_type": "hl7v2_message", "file": "a.hl7"}
    for bad in ({"documents": [entry | {"file": "../a.hl7"}]}, {"documents": [entry | {"file": "missing.hl7"}]},
                {"documents": [entry | {"doc_type": None}]}, {"documents": "a.hl7"}, []):
        (tmp_path / "manifest.json").write_text(json.dumps(bad))
        with pytest.raises(BadInput):
            read_demo_dir(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"documents": [entry | {"filename": "shown-name.hl7"}]}))
    (doc,) = read_demo_dir(tmp_path)
    assert (doc.filename, doc.build()) == ("shown-name.hl7", b"MSH|x")
