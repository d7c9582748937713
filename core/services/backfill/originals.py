"""The backfill's first phase: every original stored before anything is read.

Each manifest row becomes an ``Item``: a bad row fails here with a code (the row, the
file, the patient or the category), nothing written; a good one is stored through the
upload's own ``attach_and_extract`` (content-addressed bytes, the document row and its
pending job in one transaction), unless the same bytes are already a document of the
same patient: then that document is taken up again, and its jobs that are not finished
are read now. That is what makes a backfill idempotent and resumable: the database is
the record of what is done, and a rerun reads only what is not.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from core.services.admin.patients import get_patient
from core.services.backfill.manifest import BAD_ROW, ManifestRow
from core.services.ingest.ingestion import attach_and_extract, list_categories, read_upload_file
from core.services.workbench import Workbench
from domain.errors import BadInput, NotFound
from domain.models import DocType
from storage import documents_repo

FINISHED = ("succeeded", "failed", "retracted")
UNKNOWN_PATIENT = "unknown_patient"
UNKNOWN_CATEGORY = "unknown_category"
DUPLICATE_ROW = "duplicate_row"
ALREADY_DONE = "already_done"


@dataclass
class Item:
    """One manifest row on its way: its document, the jobs it waits for, its outcome."""

    row: ManifestRow
    document_id: int | None = None
    stored: bool = False  # its original was stored by this run (not found from an earlier one)
    jobs: list[int] = field(default_factory=list)  # job ids still to read, in order
    finals: dict[int, dict[str, Any]] = field(default_factory=dict)  # job id -> the finished job row
    outcome: str | None = None  # set when the row is settled (report.OUTCOMES)
    code: str | None = None
    message: str | None = None

    def fail(self, code: str, message: str) -> "Item":
        self.outcome, self.code, self.message = "failed", code, message
        return self


class _Chart:
    """Per patient, the top-level documents by content and each one's latest jobs (its
    parts' for a batch read in parts), read once per patient."""

    def __init__(self, wb: Workbench):
        self.wb = wb
        self._patients: dict[str, dict | None] = {}
        self._documents: dict[int, dict[str, dict]] = {}
        self._jobs: dict[int, dict[int, list[tuple[int, str]]]] = {}

    def patient(self, mrn: str) -> dict | None:
        if mrn not in self._patients:
            try:
                self._patients[mrn] = get_patient(self.wb, mrn=mrn)
            except NotFound:
                self._patients[mrn] = None
        return self._patients[mrn]

    def _load(self, patient_id: int) -> None:
        with self.wb.db.cursor() as cur:
            listed = documents_repo.for_patient(cur, patient_id)
        by_sha: dict[str, dict] = {}
        jobs: dict[int, list[tuple[int, str]]] = {}
        for doc in sorted(listed, key=lambda d: d["id"]):
            owner = doc["parent_document_id"] or doc["id"]
            if doc["job_id"] is not None:
                jobs.setdefault(owner, []).append((doc["job_id"], doc["job_status"]))
            if doc["parent_document_id"] is None:
                by_sha.setdefault(doc["sha256"], doc)  # the first stored is the original
        self._documents[patient_id], self._jobs[patient_id] = by_sha, jobs

    def existing(self, patient_id: int, sha: str) -> tuple[dict, list[tuple[int, str]]] | None:
        if patient_id not in self._documents:
            self._load(patient_id)
        doc = self._documents[patient_id].get(sha)
        return (doc, self._jobs[patient_id].get(doc["id"], [])) if doc else None


def _kind(value: str, categories: dict[str, dict]) -> dict[str, str] | None:
    """The row's third column as attach_and_extract's doc_type or category, or None."""
    if value in {d.value for d in DocType}:
        return {"doc_type": value}
    category = categories.get(value.strip().lower())
    return {"category": category["name"]} if category else None


def store_originals(wb: Workbench, rows: list[ManifestRow], *, by: str) -> list[Item]:
    """An Item per row, every good row's original stored (or found) with its jobs."""
    chart = _Chart(wb)
    categories = {c["name"].lower(): c for c in list_categories(wb)}
    seen: dict[tuple[int, str], int] = {}
    items = []
    for row in rows:
        item = Item(row)
        items.append(item)
        if row.error == BAD_ROW:
            item.fail(BAD_ROW, "This row needs a file path, a patient MRN and a category or doc type.")
            continue
        patient = chart.patient(row.mrn)
        if patient is None:
            item.fail(UNKNOWN_PATIENT, "No patient on the chart has this row's MRN; add the patient first.")
            continue
        kind = _kind(row.kind, categories)
        if kind is None:
            item.fail(UNKNOWN_CATEGORY, "This row's third column is neither a document category nor a doc type.")
            continue
        try:
            data = read_upload_file(row.path, wb.settings.upload_max_bytes)
        except BadInput as exc:
            item.fail(exc.code, exc.message)
            continue
        key = (patient["id"], hashlib.sha256(data).hexdigest())
        if key in seen:  # the same file twice for one patient: one document
            item.outcome, item.code = "skipped", DUPLICATE_ROW
            item.message = f"The same file for the same patient as line {seen[key]}."
            continue
        seen[key] = row.line
        found = chart.existing(*key)
        if found is not None:
            document, jobs = found
            item.document_id = document["id"]
            item.jobs = [job_id for job_id, status in jobs if status not in FINISHED]
            if not item.jobs:
                item.outcome, item.code = "skipped", ALREADY_DONE  # finished by an earlier run (or an upload)
            continue
        try:
            attached = attach_and_extract(wb, patient_id=patient["id"], source=row.path, data=data,
                                          filename=row.path.name, by=by, **kind)
        except BadInput as exc:  # empty, too large, not what the category reads: nothing was stored
            item.fail(exc.code, exc.message)
            continue
        item.document_id, item.stored = attached.document["id"], True
        item.jobs = [job["id"] for job in attached.jobs]
        if not item.jobs:
            item.outcome = "stored_only"  # a category stored without extraction
    return items
