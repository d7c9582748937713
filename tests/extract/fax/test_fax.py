"""Fax packets: pages classified, each part extracted by its kind, identity per part."""

from __future__ import annotations

from datetime import date

import pymupdf

from core.services.review.facts import document_report
from core.services.ingest.ingestion import attach_and_extract
from core.services.admin.patients import add_patient
from core.services.ingest.worker import Worker
from extract.fax.extractor import classify_page, split_parts
from extract.formats.pdf import normalize_pdf
from golden.fax import packet
from golden.fixtures import INTAKE_CASES, LAB_CASES

WREN_LAB, WREN_INTAKE, OTHER_LAB = LAB_CASES[5], INTAKE_CASES[1], LAB_CASES[0]


def test_pages_are_classified_and_grouped():
    content = normalize_pdf(packet([WREN_LAB, WREN_INTAKE, OTHER_LAB]))
    kinds = [classify_page(p) for p in content.pages]
    assert kinds[0] == "cover" and kinds[1] == "lab" and kinds[2] == "intake" and kinds[-1] == "lab"
    parts = split_parts(content)
    assert [p.page_class for p in parts] == ["cover", "lab", "intake", "lab"]


def test_continuation_page_stays_with_its_report():
    two_page = LAB_CASES[4]  # a report whose second page repeats no patient header
    with pymupdf.open(stream=packet([two_page], with_cover=False), filetype="pdf") as doc:
        pages = doc.page_count
    parts = split_parts(normalize_pdf(packet([two_page], with_cover=False)))
    assert pages == 2 and len(parts) in (1, 2)
    assert all(p.page_class == "lab" for p in parts)


def test_mixed_patient_packet_quarantines_only_the_foreign_page(wb):
    p = WREN_LAB.patient
    wren = add_patient(wb, mrn=p.mrn, first=p.first, last=p.last, dob=date.fromisoformat(p.dob), sex=p.sex,
                       by="dr.reviewer")
    attached = attach_and_extract(wb, patient_id=wren["id"], source="fax.pdf", filename="fax.pdf",
                                  data=packet([WREN_LAB, WREN_INTAKE, OTHER_LAB]), doc_type="fax_packet",
                                  by="dr.reviewer")
    job = Worker(wb).run_specific(attached.job["id"])
    assert job["status"] == "succeeded", job["error_message"]
    report = document_report(wb, attached.document["id"])
    scopes = {s["scope"]: s["status"] for s in report["identity"]["scopes"]}
    assert scopes == {"page 2": "identity_verified", "page 3": "identity_verified",
                      "page 4": "identity_mismatch_quarantined"}
    assert report["identity"]["status"] == "identity_ambiguous_needs_review"
    assert "page 4" in report["identity"]["mismatch_reason"]
    labs = [f for f in report["facts"] if f["fact_type"] == "lab_result"]
    wren_labs = [f for f in labs if f["citation"]["page"] == 2]
    foreign = [f for f in labs if f["citation"]["page"] == 4]
    assert len(wren_labs) == len(WREN_LAB.results) and all(f["active"] for f in wren_labs)
    assert len(foreign) == len(OTHER_LAB.results) and not any(f["active"] for f in foreign)
    promoted_pages = {f["citation"]["page"] for f in report["facts"] if f["promotion_status"] == "promoted"}
    assert promoted_pages <= {2, 3} and 2 in promoted_pages
    assert all(f["citation"]["source_type"] == "fax_packet" for f in report["facts"])
