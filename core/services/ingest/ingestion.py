"""attach_and_extract: the single entry point for a document joining a chart
(``reread_document`` queues a stored one again; ``ingest_now`` also reads it at once).

Order matters and is the promise of the product: check the request, store the
original bytes, create the document row and (for a mapped category) a pending job
in one transaction. Extraction happens later, in the worker; a failed extraction
never loses the upload.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import telemetry
from domain.errors import BadInput, NotFound
from domain.models import DocType
from domain.policy.access.permissions import Permission
from core.services.admin.accounts import authorize
from core.services.admin.patients import found_nothing, get_patient
from core.services.workbench import Workbench
from extract.fax.extractor import classify_text
from extract.formats.hl7.split import split_batch
from domain.limits import Limits
from extract.sniff import ACCEPTED_FORMATS, MIME_TYPES, sniff_format
from storage import documents_repo, jobs_repo

# The worker id of a job run inline, by a command rather than the worker loop.
INLINE_WORKER = "intake-extractor:cli"


@dataclass
class Part:
    """One part of a batch read in parts: its document, its job and the 1-based numbers
    of its first and last message in the uploaded file."""

    document: dict[str, Any]
    job: dict[str, Any]
    first: int
    last: int


@dataclass
class Attached:
    document: dict[str, Any]
    job: dict[str, Any] | None  # None for a batch read in parts: each part has its job
    parts: list[Part] = field(default_factory=list)

    @property
    def jobs(self) -> list[dict[str, Any]]:
        """Every job this upload queued: its own, or its parts' in message order."""
        return [self.job] if self.job is not None else [p.job for p in self.parts]


def _resolve_category(cur, doc_type: str | None, category: str | None) -> tuple[dict[str, Any] | None, DocType | None]:
    wanted: DocType | None = None
    if doc_type:
        try:
            wanted = DocType(doc_type)
        except ValueError:
            allowed = ", ".join(d.value for d in DocType)
            raise BadInput(f"Unknown doc type {doc_type!r}; use one of: {allowed}.", code="unknown_doc_type") from None
    if category:
        cat = documents_repo.category_by_name(cur, category)
        if cat is None:
            names = ", ".join(c["name"] for c in documents_repo.categories(cur))
            raise BadInput(f"Unknown category {category!r}; use one of: {names}.", code="unknown_category")
        mapped = DocType(cat["doc_type"]) if cat["doc_type"] else None
        if wanted and wanted != mapped:
            what = f"{mapped.value} documents" if mapped else "documents that are stored without extraction"
            raise BadInput(f"Category {cat['name']!r} is for {what}, not {wanted.value}.", code="category_mismatch")
        return cat, mapped
    if wanted:
        cat = documents_repo.category_for_doc_type(cur, wanted.value)
        if cat is None:
            raise BadInput(f"No active category maps to {wanted.value}.", code="unknown_category")
        return cat, wanted
    raise BadInput("Say which category (or doc type) this document belongs to.", code="unknown_category")


def check_upload(data: bytes, filename: str, doc_type: DocType | None, max_bytes: int) -> str | None:
    """Reject what can never become a useful document, before anything is written."""
    if not data:
        raise BadInput(f"{filename} is empty (0 bytes).", code="empty_file")
    if len(data) > max_bytes:
        raise BadInput(
            f"{filename} is {len(data) / 1e6:.1f} MB; the limit is {max_bytes / 1e6:.0f} MB.", code="file_too_large"
        )
    sniffed = sniff_format(data)
    if doc_type is not None and sniffed not in ACCEPTED_FORMATS[doc_type]:
        accepted = ", ".join(sorted(ACCEPTED_FORMATS[doc_type]))
        raise BadInput(
            f"{filename} does not look like a {doc_type.value} file: its bytes are "
            f"{sniffed or 'unrecognised'}, expected {accepted}.",
            code="type_mismatch",
        )
    return sniffed


def read_upload_file(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file given by path, refusing before anything is read what
    can never be an upload: a symbolic link (it could lead anywhere, e.g. to a system
    file), a directory, device or FIFO (reading one may block or never end), or a file
    over the size limit. Opened without following a final symlink and without blocking,
    then judged on what was actually opened, so the path cannot change in between."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise BadInput(f"File not found: {path}", code="file_not_found") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP and path.is_symlink():
            raise BadInput(f"{path} is a symbolic link; give the path of the file itself.",
                           code="symlink_refused") from None
        raise BadInput(f"{path} cannot be opened ({exc.strerror}).", code="file_unreadable") from None
    try:
        _check_opened(path, os.fstat(fd), max_bytes)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as f:
        data = f.read(max_bytes + 1)  # a file that grew since fstat is still held to the limit
    if len(data) > max_bytes:
        raise BadInput(f"{path.name} is over the limit of {max_bytes / 1e6:.0f} MB.", code="file_too_large")
    return data


def _check_opened(path: Path, info: os.stat_result, max_bytes: int) -> None:
    if not stat.S_ISREG(info.st_mode):
        what = "a directory" if stat.S_ISDIR(info.st_mode) else "a device, pipe or socket, not a file"
        raise BadInput(f"{path} is {what}; give the path of a document file.", code="not_a_file")
    if info.st_size > max_bytes:
        raise BadInput(f"{path.name} is {info.st_size / 1e6:.1f} MB; the limit is {max_bytes / 1e6:.0f} MB.",
                       code="file_too_large")


def attach_and_extract(wb: Workbench, *, patient_id: int, source: Path | str, doc_type: str | None = None,
                       category: str | None = None, by: str,
                       data: bytes | None = None, filename: str | None = None) -> Attached:
    """Attach a new document (uploaded ``data``, or the file at path ``source`` when no
    data is given; ``source`` also names it when ``filename`` is not given) to a
    patient's chart and queue its extraction when the category is mapped. To read a
    stored document again, see ``reread_document``.

    ``by`` (an account that may upload, the shell operator ``os:<login>`` or the system,
    e.g. ``system:demo``) is recorded as the document's uploader."""
    uploaded_by = authorize(wb, by, Permission.UPLOAD).name
    patient = get_patient(wb, patient_id=patient_id)
    with wb.db.cursor() as cur:
        cat, job_type = _resolve_category(cur, doc_type, category)
    if data is None:
        path = Path(source)
        filename = filename or path.name
        data = read_upload_file(path, wb.settings.upload_max_bytes)
    filename = filename or "upload"
    sniffed = check_upload(data, filename, job_type, wb.settings.upload_max_bytes)
    sha, stored = wb.blobs.put(data)  # original first: content-addressed, atomic
    cuts = split_batch(data, wb.settings.hl7_messages_per_job, Limits.from_settings(wb.settings)) \
        if job_type == DocType.HL7V2_MESSAGE else None
    pieces = [(cut, *wb.blobs.put(cut.data)) for cut in cuts or []]  # every part's bytes stored before any row
    mime = MIME_TYPES.get(sniffed or "")
    parts: list[Part] = []
    with wb.db.transaction() as cur:
        document = documents_repo.insert(
            cur, patient_id=patient["id"], category_id=cat["id"], filename=filename,
            mime=mime, sha256=sha, size=len(data), stored_path=str(stored),
            uploaded_by=uploaded_by,
        )
        job = jobs_repo.enqueue(cur, patient_id=patient["id"], document_id=document["id"], doc_type=job_type.value).to_dict() \
            if job_type and not pieces else None
        for cut, part_sha, part_path in pieces:
            child = documents_repo.insert(
                cur, patient_id=patient["id"], category_id=cat["id"],
                filename=f"{filename} · {_message_range(cut.first, cut.last)}", mime=mime, sha256=part_sha,
                size=len(cut.data), stored_path=str(part_path), uploaded_by=uploaded_by,
                parent_document_id=document["id"],
            )
            part_job = jobs_repo.enqueue(cur, patient_id=patient["id"], document_id=child["id"],
                                         doc_type=job_type.value).to_dict()
            parts.append(Part(child, part_job, cut.first, cut.last))
    for doc, queued in [(document, job)] + [(p.document, p.job) for p in parts]:
        telemetry.emit("document_attached", settings=wb.settings, patient_id=patient["id"], document_id=doc["id"],
                       doc_type=job_type.value if job_type else None, job_id=queued["id"] if queued else None)
    return Attached(document, job, parts)


def reread_document(wb: Workbench, *, patient_id: int, document_id: int, doc_type: str | None = None,
                    category: str | None = None, by: str) -> Attached:
    """Queue a stored document of this patient's chart to be read again (as ``doc_type``
    or ``category``; stored only, no job, when the category is unmapped). A batch read in
    parts is refused: its parts are read again one by one."""
    authorize(wb, by, Permission.UPLOAD)
    patient = get_patient(wb, patient_id=patient_id)
    with wb.db.cursor() as cur:
        _, job_type = _resolve_category(cur, doc_type, category)
    with wb.db.transaction() as cur:
        document = documents_repo.by_id(cur, document_id)
        if document is None or document["patient_id"] != patient["id"]:
            raise NotFound(f"Document {document_id} is not on this patient's chart.", code="unknown_document")
        if document["deleted"]:
            raise BadInput(f"Document {document_id} was deleted.", code="document_deleted")
        parts = [d["id"] for d in documents_repo.parts_of(cur, document_id) if not d["deleted"]]
        if parts:  # reading the whole upload again would duplicate every part's facts
            raise BadInput(f"Document {document_id} was read in parts; read its parts again instead "
                           f"(documents {', '.join(map(str, parts))}).", code="read_in_parts")
        job = jobs_repo.enqueue(cur, patient_id=patient["id"], document_id=document_id,
                                doc_type=job_type.value).to_dict() if job_type else None
    return Attached(document, job)


@dataclass
class Ingested:
    """An upload read now: what was attached and the document's report (for a batch read
    in parts, merged over its parts, with ``parts``)."""

    attached: Attached
    report: dict[str, Any]


def run_jobs_now(wb: Workbench, jobs: list[dict[str, Any]], *, in_app: bool = False) -> None:
    """Run each queued job here, in order, with the inline worker, index the new facts'
    vectors, and leave the inline worker marked stopped (it is not a live worker).

    ``in_app``: inside the app, for a CLI beside it, the heartbeat file is the app's own
    worker's to write, and that worker may have claimed a job first: ``run_now`` then
    waits for it to end the job."""
    from core.services.review.fact_vectors import index_pending
    from core.services.ingest.worker import Worker

    worker = Worker(wb, worker_id=INLINE_WORKER, heartbeat_file=not in_app)
    try:
        for queued in jobs:
            worker.run_now(queued["id"])
        while index_pending(wb) > 0:  # a pass embeds at most a batch; a workbook or batch has more
            pass
    finally:
        worker.beat("stopped")


def ingest_now(wb: Workbench, *, patient_id: int, source: Path | str, doc_type: str | None = None,
               category: str | None = None, by: str, data: bytes | None = None, filename: str | None = None,
               in_app: bool = False) -> Ingested:
    """Attach a new document (as ``attach_and_extract``) and read it now: every job it
    queued (a batch read in parts has several, in message order) runs here, then the
    vectors are indexed. What the CLI's ``ingest`` does; a failed job is in the report."""
    from core.services.review.facts import document_report

    attached = attach_and_extract(wb, patient_id=patient_id, source=source, doc_type=doc_type, category=category,
                                  by=by, data=data, filename=filename)
    run_jobs_now(wb, attached.jobs, in_app=in_app)
    return Ingested(attached, document_report(wb, attached.document["id"]))


def _message_range(first: int, last: int) -> str:
    return f"message {first}" if first == last else f"messages {first}–{last}"


def list_categories(wb: Workbench) -> list[dict[str, Any]]:
    """Categories with the doc_type each maps to (None: stored without extraction)."""
    with wb.db.cursor() as cur:
        return documents_repo.categories(cur)


# What the fax reader calls a page, as the doc type a PDF made of such pages is read as.
_PAGE_CLASSES = {"cover": DocType.FAX_PACKET, "intake": DocType.INTAKE_FORM, "lab": DocType.LAB_PDF,
                 "letter": DocType.REFERRAL_DOCX}
_NAME_HINTS: tuple[tuple[DocType, tuple[str, ...]], ...] = (
    (DocType.FAX_PACKET, ("fax",)),
    (DocType.INTAKE_FORM, ("intake", "questionnaire")),
    (DocType.REFERRAL_DOCX, ("referral", "letter")),
    (DocType.HL7V2_MESSAGE, ("hl7", "oru")),
    (DocType.FHIR_BUNDLE, ("fhir", "bundle")),
    (DocType.CLINICAL_WORKBOOK, ("workbook", "trend")),
    (DocType.LAB_PDF, ("lab", "result", "panel", "cbc", "bmp", "cmp", "lipid")),
)


def _pdf_page_texts(data: bytes, pages: int = 2) -> list[str]:
    try:
        import pymupdf

        with pymupdf.open(stream=data, filetype="pdf") as pdf:
            return [pdf[i].get_text("text") for i in range(min(pages, pdf.page_count))]
    except Exception:  # noqa: BLE001 - a guess only; the upload check and the job judge the file
        return []


def _pdf_doc_type(data: bytes) -> DocType | None:
    """A typed PDF's doc type from its first pages, judged by the fax reader's own page
    vocabulary: a cover sheet or pages of different classes make a fax packet."""
    classes = {c for c in map(classify_text, _pdf_page_texts(data)) if c != "other"}
    if not classes:
        return None
    if "cover" in classes or len(classes) > 1:
        return DocType.FAX_PACKET
    return _PAGE_CLASSES[classes.pop()]


def suggest_doc_type(filename: str, data: bytes) -> DocType | None:
    """A guess at what a file is, for the upload form: by its bytes (HL7, XLSX, DOCX, FHIR),
    then the words on a PDF's first pages, then its name. The user can change it."""
    sniffed = sniff_format(data)
    fixed = {"hl7": DocType.HL7V2_MESSAGE, "xlsx": DocType.CLINICAL_WORKBOOK, "docx": DocType.REFERRAL_DOCX,
             "fhir": DocType.FHIR_BUNDLE}
    if sniffed in fixed:
        return fixed[sniffed]
    name = (filename or "").lower()
    allowed = {t for t, formats in ACCEPTED_FORMATS.items() if sniffed in formats}
    if sniffed == "pdf" and (judged := _pdf_doc_type(data)) is not None:
        return judged
    for doc_type, words in _NAME_HINTS:
        if doc_type in allowed and any(w in name for w in words):
            return doc_type
    if sniffed == "tiff":
        return DocType.FAX_PACKET  # multi-page TIFF is how faxes arrive
    if sniffed in ("pdf", "png", "jpeg", "webp"):
        return DocType.LAB_PDF
    return None


def suggest_category(filename: str, data: bytes, categories: list[dict[str, Any]]) -> str | None:
    """The name of the category to preselect for an uploaded file (a category mapped to
    the suggested doc type, else one stored without extraction), or None."""
    doc_type = suggest_doc_type(filename, data)
    wanted = doc_type.value if doc_type else None
    for cat in categories:
        if cat["doc_type"] == wanted:
            return cat["name"]
    return next((c["name"] for c in categories if c["doc_type"] is None), None)


def job_progress(wb: Workbench, document_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Where each uploaded document's reading stands: its latest job's status, counts,
    error and ``found_nothing`` (status None: stored without a job)."""
    with wb.db.cursor() as cur:
        latest = jobs_repo.latest_for_documents(cur, list(document_ids))
    out = {}
    for d in document_ids:
        job = latest[d].to_dict() if d in latest else {}
        counts = job.get("counts") or {}
        out[d] = {"status": job.get("status"), "counts": counts, "error_code": job.get("error_code"),
                  "error_message": job.get("error_message"), "found_nothing": found_nothing(latest.get(d))}
    return out
