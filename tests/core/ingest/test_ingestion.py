"""attach_and_extract: validation first, original stored first, nothing half-written."""

import pytest

from domain.errors import BadInput, NotFound
from core.services.ingest.ingestion import attach_and_extract, reread_document
from core.services.ingest.worker import Worker
from storage import documents_repo

PDF = b"%PDF-1.4\n1 0 obj <<>> endobj\n% truncated"


def _count(wb, table):
    with wb.db.cursor() as cur:
        return cur.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_original_is_kept_when_extraction_fails(wb, demo_patient, tmp_path):
    f = tmp_path / "broken.pdf"
    f.write_bytes(PDF)
    attached = attach_and_extract(wb, patient_id=demo_patient["id"], source=f, doc_type="lab_pdf", by="dr.reviewer")
    assert attached.job["status"] == "pending"
    job = Worker(wb).run_once()
    assert job["status"] == "failed" and job["error_code"]
    with wb.db.cursor() as cur:
        doc = documents_repo.by_id(cur, attached.document["id"])
        facts = cur.execute("SELECT count(*) FROM document_facts").fetchone()[0]
        promos = cur.execute("SELECT count(*) FROM promotions").fetchone()[0]
    assert wb.blobs.get(doc["sha256"]) == PDF and not doc["deleted"]
    assert facts == 0 and promos == 0


def test_existing_document_id_is_reprocessed_not_restored(wb, demo_patient, tmp_path):
    f = tmp_path / "lab.pdf"
    f.write_bytes(PDF)
    first = attach_and_extract(wb, patient_id=demo_patient["id"], source=f, doc_type="lab_pdf", by="dr.reviewer")
    again = reread_document(wb, patient_id=demo_patient["id"], document_id=first.document["id"], doc_type="lab_pdf",
                            by="dr.reviewer")
    assert again.document["id"] == first.document["id"]
    assert again.job["id"] != first.job["id"]
    assert _count(wb, "documents") == 1


def test_unmapped_category_stores_without_a_job(wb, demo_patient, tmp_path):
    f = tmp_path / "note.pdf"
    f.write_bytes(PDF)
    attached = attach_and_extract(wb, patient_id=demo_patient["id"], source=f, category="Other", by="dr.reviewer")
    assert attached.job is None and attached.document["id"]


@pytest.mark.parametrize(
    "content, kwargs, code",
    [
        (b"", {"doc_type": "lab_pdf"}, "empty_file"),
        (PDF, {"doc_type": "hl7v2_message"}, "type_mismatch"),
        (b"MSH|^~\\&|LAB\r", {"doc_type": "lab_pdf"}, "type_mismatch"),
        (PDF, {"category": "Radiology Films"}, "unknown_category"),
        (PDF, {"doc_type": "x_ray"}, "unknown_doc_type"),
        (PDF, {"category": "Lab Report", "doc_type": "intake_form"}, "category_mismatch"),
    ],
)
def test_bad_input_is_rejected_before_anything_is_written(wb, demo_patient, tmp_path, content, kwargs, code):
    f = tmp_path / "upload.bin"
    f.write_bytes(content)
    with pytest.raises(BadInput) as err:
        attach_and_extract(wb, patient_id=demo_patient["id"], source=f, **kwargs, by="dr.reviewer")
    assert err.value.code == code
    assert _count(wb, "documents") == 0 and _count(wb, "processing_jobs") == 0
    assert not wb.settings.documents_dir.exists() or not any(wb.settings.documents_dir.rglob("*"))


def test_oversized_file_is_rejected(wb, demo_patient, tmp_path, monkeypatch):
    monkeypatch.setattr(wb.settings, "upload_max_bytes", 10)
    f = tmp_path / "big.pdf"
    f.write_bytes(PDF)
    with pytest.raises(BadInput) as err:
        attach_and_extract(wb, patient_id=demo_patient["id"], source=f, doc_type="lab_pdf", by="dr.reviewer")
    assert err.value.code == "file_too_large" and "limit" in err.value.message


def test_missing_path_and_unknown_patient(wb, demo_patient, tmp_path):
    with pytest.raises(BadInput) as err:
        attach_and_extract(wb, patient_id=demo_patient["id"], source=tmp_path / "nope.pdf", doc_type="lab_pdf",
                           by="dr.reviewer")
    assert err.value.code == "file_not_found"
    with pytest.raises(NotFound) as err:
        attach_and_extract(wb, patient_id=99999, source=tmp_path / "nope.pdf", doc_type="lab_pdf", by="dr.reviewer")
    assert err.value.code == "unknown_patient"
