"""Load demo documents through the normal upload path, once.

The documents themselves are built by the caller (the CLI uses ``golden.demo``); this
service only attaches them like any upload and, unless asked to leave the work to the
running worker, processes each job. A document already on the patient's chart under the
same file name is not loaded again, so running the demo twice changes nothing.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Protocol

from core.services.review.facts import document_report
from core.services.ingest.ingestion import attach_and_extract
from core.services.admin.patients import get_patient
from core.services.workbench import Workbench
from storage import documents_repo

# The demo is loaded by the system, not a person: a system actor may only upload.
DEMO_UPLOADER = "system:demo"


class DemoDocument(Protocol):
    patient_mrn: str
    filename: str
    doc_type: str

    def build(self) -> bytes: ...


def has_documents(wb: Workbench) -> bool:
    with wb.db.cursor() as cur:
        return documents_repo.any_document(cur)


def load_demo(wb: Workbench, documents: Iterable[DemoDocument], *, process: bool = True,
              on_loaded: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    from core.services.review.fact_vectors import index_pending
    from core.services.ingest.worker import Worker

    out = []
    for doc in documents:
        patient = get_patient(wb, mrn=doc.patient_mrn)
        with wb.db.cursor() as cur:
            existing = next((d for d in documents_repo.for_patient(cur, patient["id"]) if d["filename"] == doc.filename),
                            None)
        if existing is not None:
            entry = {"document_id": existing["id"], "patient_mrn": doc.patient_mrn, "doc_type": doc.doc_type,
                     "filename": doc.filename, "loaded": False,
                     "job": {"status": existing["job_status"], "error_code": existing["error_code"]}}
        else:
            attached = attach_and_extract(wb, patient_id=patient["id"], source=doc.filename, data=doc.build(),
                                          filename=doc.filename, doc_type=doc.doc_type, by=DEMO_UPLOADER)
            if process and attached.job is not None:
                Worker(wb, worker_id="intake-extractor:demo").run_specific(attached.job["id"])
            job = document_report(wb, attached.document["id"])["job"] or {}
            entry = {"document_id": attached.document["id"], "patient_mrn": doc.patient_mrn,
                     "doc_type": doc.doc_type, "filename": doc.filename, "loaded": True,
                     "job": {"status": job.get("status"), "error_code": job.get("error_code")}}
        out.append(entry)
        if on_loaded:
            on_loaded(entry)
    if process:
        index_pending(wb)
    return out
