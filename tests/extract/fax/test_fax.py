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


def _typed_pages(*pages: list[str | tuple[str, ...]]) -> bytes:
    """One page per list of paragraphs (a tuple: a paragraph's wrapped lines), a blank
    line between paragraphs, as a letter is typed."""
    doc = pymupdf.open()
    for paragraphs in pages:
        page, y = doc.new_page(width=612, height=792), 72
        for paragraph in paragraphs:
            for line in (paragraph,) if isinstance(paragraph, str) else paragraph:
                page.insert_text((72, y), line, fontsize=11, fontname="helv")
                y += 14
            y += 14
    return doc.tobytes()


COVER = ["FACSIMILE", "To: Dr Ines Varga   Fax: 03 9555 0199", "From: Ridgeway Renal Service   Pages: 3",
         "Confidential: for the intended recipient only."]
LETTER = ["Ridgeway Renal Service", "2 December 2026", "Dear Dr Varga,",
          "Re: Tomasz KOWALCZYK, DOB 09/03/1961, MRN RR-330417",
          ("Thank you for referring Mr Kowalczyk, whom I saw in clinic today with his daughter. His",
           "renal function has declined steadily over the last year. He has chronic kidney disease",
           "stage 4 and atrial fibrillation, and an episode of gout last winter."),
          "Allergies: penicillin (anaphylaxis)", "Medications: ramipril 10 mg daily, allopurinol 100 mg daily"]
LETTER_END = [("I would be grateful if you could repeat his renal function in four weeks and let me know",
               "if his potassium rises."), "Yours sincerely,", "Dr Helena Ruiz, Nephrologist"]


def test_a_letter_in_a_packet_is_read_as_a_letter_with_its_continuation_page():
    content = normalize_pdf(_typed_pages(COVER, LETTER, LETTER_END))
    assert [classify_page(p) for p in content.pages] == ["cover", "letter", "letter"]
    assert [p.page_class for p in split_parts(content)] == ["cover", "letter"]
    from extract.fax.extractor import extract_fax

    result = extract_fax(content, "documents:9")
    facts = {(f.fact_type, (f.structured_value or {}).get("substance") or (f.structured_value or {}).get("name")
              or (f.structured_value or {}).get("description")): f for f in result.facts}
    assert {("allergy", "penicillin"), ("medication", "ramipril"), ("medication", "allopurinol"),
            ("problem", "chronic kidney disease stage 4"), ("problem", "atrial fibrillation")} <= set(facts)
    assert all(f.scope == "pages 2-3" and f.citation.source_type == "fax_packet" for f in result.facts
               if f.fact_type != "other")
    assert {i.kind.value for i in result.identifiers} == {"name", "dob", "mrn"}
    assert any(f.fact_type == "referral" and "Ruiz" in f.fact_text for f in result.facts)  # the signer, page 3


def test_a_discharge_summary_in_a_packet_is_read_as_a_letter_not_as_a_form():
    # A held-out packet (cover, discharge summary, cumulative lab): the summary has no
    # greeting or sign-off, scored as a form on "medications" and "allergies", and the form
    # reader charted nothing it printed after a status ("STOPPED: Ramipril ...").
    summary = ["GREYFRIARS HOSPITAL - DISCHARGE SUMMARY",
               "Name: Teodor NOWAK     Hospital No: GH-118204     DOB: 02/02/1944",
               "Admitted: 19/11/2026     Discharged: 27/11/2026",
               "Diagnosis: Pneumonia, right lower lobe",
               "Allergies: Penicillin - rash",
               "Changes to medications:", "STOPPED: Amlodipine 10 mg daily (ankle swelling)",
               "NEW: Doxycycline 100 mg daily for 5 days", "Medications on discharge:", "Aspirin 75 mg daily"]
    content = normalize_pdf(_typed_pages(COVER, summary))
    assert [classify_page(p) for p in content.pages] == ["cover", "letter"]
    from extract.fax.extractor import extract_fax

    medicines = {f.structured_value["name"]: f.structured_value.get("status")
                 for f in extract_fax(content, "documents:9").facts if f.fact_type == "medication"}
    assert medicines == {"Amlodipine": "STOPPED", "Doxycycline": "NEW", "Aspirin": None}


def test_a_typed_letter_pdf_is_suggested_as_a_referral_letter():
    from core.services.ingest.ingestion import suggest_doc_type
    from domain.models import DocType

    assert suggest_doc_type("scan0042.pdf", _typed_pages(LETTER, LETTER_END)) is DocType.REFERRAL_DOCX
    assert suggest_doc_type("scan0043.pdf", _typed_pages(COVER, LETTER)) is DocType.FAX_PACKET
