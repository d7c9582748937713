"""What the document viewer shows, without Streamlit: page images (rendered once and
cached), the words on a page, every cited box of a document with its colour class, and
the document re-read as the pipeline read it (the native views of non-paged sources,
built from it, are core.services.review.native_views).

Boxes are returned as data, never painted into the PNG: highlighting another fact must
not re-render a page.
"""

from __future__ import annotations

import io
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

from domain.errors import ExtractionError, NotFound
from domain.models import DocType
from domain.policy.facts.chart_rules import review_group
from core.services.review.facts import fact_view
from core.services.workbench import Workbench
from storage import documents_repo, facts_repo, jobs_repo, record_version
from storage.rows import JobRow

DEFAULT_DPI = 110  # the dpi the pipeline renders text-layer PDFs at (extract.formats.pdf), so its PNGs are reused
BOX_CLASSES = ("verified", "document_fact", "needs_review", "held")
# How many renders / parsed documents stay in memory; pages are ~100-300 kB each.
_PAGE_CACHE_SIZE = 96
_CONTENT_CACHE_SIZE = 24

# Counts real page rasterisations, so tests and the benchmark can prove a page is
# rendered once however often it is shown.
render_stats: Counter[str] = Counter()


class _Lru:
    """A small thread-safe LRU (the app serves every session from one process)."""

    def __init__(self, size: int):
        self.size, self._data, self._lock = size, OrderedDict(), threading.Lock()

    def get_or_make(self, key: Any, make: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        value = make()
        with self._lock:
            self._data[key] = value
            while len(self._data) > self.size:
                self._data.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


_pages = _Lru(_PAGE_CACHE_SIZE)
_contents = _Lru(_CONTENT_CACHE_SIZE)


def clear_caches() -> None:
    _pages.clear()
    _contents.clear()


# ----------------------------------------------------------------------------- documents


def document_row(wb: Workbench, document_id: int) -> dict[str, Any]:
    with wb.db.cursor() as cur:
        document = documents_repo.by_id(cur, document_id)
    if document is None:
        raise NotFound(f"No document with id {document_id}.", code="unknown_document")
    return document


def _is_pdf(document: dict) -> bool:
    return (document.get("mime") or "") == "application/pdf"


def _is_image(document: dict) -> bool:
    return (document.get("mime") or "").startswith("image/")


def is_paged(document: dict) -> bool:
    return _is_pdf(document) or _is_image(document)


def deleted_note(document: dict) -> str | None:
    """"deleted on 2026-12-01 17:20 by dr.alice" for a deleted document, else None."""
    if not document.get("deleted"):
        return None
    when = str(document.get("deleted_at") or "")[:16] or "an unknown date"
    return f"deleted on {when} by {document.get('deleted_by') or 'an unknown user'}"


# ----------------------------------------------------------------------------- page images


def _render_name(document: dict) -> str:
    return document["sha256"][:16]


def _pipeline_render(wb: Workbench, document: dict, page: int):
    """The PNG the pipeline saved for this page (for scans: the corrected image the
    OCR boxes refer to), or None."""
    path = wb.settings.renders_dir / _render_name(document) / f"{_render_name(document)}-p{page}.png"
    return path if path.is_file() else None


def page_count(wb: Workbench, document_id: int) -> int:
    """How many pages a PDF or image upload has (0 for non-paged sources)."""
    document = document_row(wb, document_id)
    if not is_paged(document):
        return 0
    return _contents.get_or_make(("pages", document["sha256"]), lambda: _count_pages(wb, document))


def _count_pages(wb: Workbench, document: dict) -> int:
    data = wb.blobs.get(document["sha256"])
    if _is_pdf(document):
        import pymupdf

        try:
            with pymupdf.open(stream=data, filetype="pdf") as pdf:
                return pdf.page_count
        except Exception:  # noqa: BLE001 - a damaged file shows no pages, its job says why
            return 0
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            return getattr(img, "n_frames", 1) if img.format == "TIFF" else 1
    except Exception:  # noqa: BLE001
        return 0


def page_image(wb: Workbench, document_id: int, page: int, *, dpi: int = DEFAULT_DPI) -> bytes:
    """The page as PNG bytes, rendered once per (sha256, page, dpi) and kept in memory
    and under the renders dir. Raises NotFound when the page cannot be shown."""
    document = document_row(wb, document_id)
    if not is_paged(document):
        raise NotFound(f"Document {document_id} has no pages ({document['filename']}).", code="not_paged")
    return _pages.get_or_make((document["sha256"], int(page), int(dpi)),
                              lambda: _make_page_image(wb, document, int(page), int(dpi)))


def _make_page_image(wb: Workbench, document: dict, page: int, dpi: int) -> bytes:
    stored = _pipeline_render(wb, document, page)
    # A scan's boxes refer to the pipeline's corrected image, whatever the dpi asked.
    if stored is not None and (dpi == DEFAULT_DPI or not _is_pdf(document) or not _has_text_layer(wb, document)):
        return _fit_width(stored.read_bytes(), max_width=dpi * 11)
    if not _is_pdf(document):
        raise NotFound(f"Page {page} of {document['filename']} has no stored image.", code="page_unavailable")
    suffix = "" if dpi == DEFAULT_DPI else f"@{dpi}"
    target = wb.settings.renders_dir / _render_name(document) / f"{_render_name(document)}-p{page}{suffix}.png"
    if target.is_file():
        return target.read_bytes()
    import pymupdf

    with pymupdf.open(stream=wb.blobs.get(document["sha256"]), filetype="pdf") as pdf:
        if not 1 <= page <= pdf.page_count:
            raise NotFound(f"{document['filename']} has no page {page}.", code="page_unavailable")
        png = pdf[page - 1].get_pixmap(dpi=dpi).tobytes("png")
    render_stats["renders"] += 1
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_bytes(png)
    tmp.replace(target)  # readers never see half a file
    return png


def _has_text_layer(wb: Workbench, document: dict) -> bool:
    if not _is_pdf(document):
        return False

    def probe() -> bool:
        import pymupdf

        with pymupdf.open(stream=wb.blobs.get(document["sha256"]), filetype="pdf") as pdf:
            return any(p.get_text("words") for p in pdf)

    return _contents.get_or_make(("text-layer", document["sha256"]), probe)


def _fit_width(png: bytes, *, max_width: int) -> bytes:
    """Scans are stored at OCR resolution; the screen needs far less. Boxes are 0..1,
    so a uniform downscale keeps them in place. The OCR'd page is grey already, and a
    grey PNG is a fraction of the size of an RGB one."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as img:
        if img.width <= max_width:
            return png
        scaled = img.convert("L").resize((max_width, round(img.height * max_width / img.width)), Image.LANCZOS)
    buf = io.BytesIO()
    scaled.save(buf, format="PNG", optimize=False)
    render_stats["downscales"] += 1
    return buf.getvalue()


# ----------------------------------------------------------------------------- page words


def _latest_job(wb: Workbench, document_id: int) -> JobRow | None:
    with wb.db.cursor() as cur:
        return jobs_repo.latest_for_documents(cur, [document_id]).get(document_id)


def _read_as(job: JobRow | None) -> DocType | None:
    """The doc type the pipeline read the document as (its latest job's), or None."""
    return DocType(job.doc_type) if job and job.doc_type else None


def reread_content(wb: Workbench, document: dict, *, allow_ocr: bool):
    """The document re-read as the pipeline read it (cached per content): with the job's
    doc type, which settles text that holds an HL7 message behind a banner and a damaged
    zip, as it did for the pipeline."""
    from extract.normalize import normalize

    doc_type = _read_as(_latest_job(wb, document["id"]))

    def read():
        return normalize(wb.blobs.get(document["sha256"]), allow_ocr=allow_ocr, doc_type=doc_type,
                         ocr_engine=wb.settings.ocr_preference)

    return _contents.get_or_make(("content", document["sha256"], doc_type, allow_ocr), read)


def page_words(wb: Workbench, document_id: int, page: int) -> list[dict[str, Any]]:
    """The words the pipeline saw on ``page``, each ``{text, x, y, width, height}`` in
    0..1 page space (the space citation boxes use)."""
    document = document_row(wb, document_id)
    if not is_paged(document):
        return []
    try:
        content = reread_content(wb, document, allow_ocr=True)
    except ExtractionError:
        return []
    if not 1 <= page <= len(content.pages):
        return []
    p = content.page(page)
    out = []
    for w in p.words:
        x, y, width, height = p.normalize(w.x0, w.y0, w.x1, w.y1)
        out.append({"text": w.text, "x": x, "y": y, "width": width, "height": height})
    return out


# ----------------------------------------------------------------------------- boxes


@dataclass
class PageView:
    number: int
    boxes: list[dict[str, Any]] = field(default_factory=list)  # {fact_id, page, box, box_class, label}
    warnings: list[str] = field(default_factory=list)
    page_class: str | None = None  # a fax packet's page not read as a report: "cover" or "other"


@dataclass
class DocumentView:
    document_id: int
    filename: str
    kind: str  # pdf | image | hl7 | xlsx | docx | fhir | other
    paged: bool
    page_count: int
    pages: list[PageView]
    facts: list[dict[str, Any]]  # fact views + identity_status, box_class, where
    unboxed: list[int]  # fact ids cited without a box (or on a non-paged source)
    warnings: list[str]  # warnings not tied to a page
    deleted: str | None = None  # "deleted on … by …"
    sha256: str = ""  # the original's content hash: a cache key for its page images

    def boxes(self) -> list[dict[str, Any]]:
        return [b for p in self.pages for b in p.boxes]

    def page_of(self, fact_id: int | None) -> int | None:
        for b in self.boxes():
            if b["fact_id"] == fact_id:
                return b["page"]
        return None


# The fax reader's page classes (extract/fax): a page it did not read as a report.
_PAGE_CLASSES = {"page_cover": "cover", "page_other": "other"}


def box_class(fact: dict[str, Any]) -> str | None:
    """The viewer colour of a fact: its review group (None: closed, listed not drawn)."""
    return review_group(fact)


# How a non-paged source is shown, by the doc type it was read as.
_NATIVE_VIEW = {DocType.HL7V2_MESSAGE: "hl7", DocType.CLINICAL_WORKBOOK: "xlsx", DocType.REFERRAL_DOCX: "docx",
                DocType.FHIR_BUNDLE: "fhir"}


def _kind(document: dict, read_as: DocType | None) -> str:
    if _is_pdf(document):
        return "pdf"
    if _is_image(document):
        return "image"
    if read_as in _NATIVE_VIEW:
        return _NATIVE_VIEW[read_as]
    mime = document.get("mime") or ""  # sniffed from the bytes at upload
    for kind, marker in (("docx", "wordprocessingml"), ("xlsx", "spreadsheetml"), ("hl7", "hl7"), ("fhir", "fhir")):
        if marker in mime:
            return kind
    return "other"


def _document_facts(wb: Workbench, document: dict, *, include_deleted: bool) -> list[dict[str, Any]]:
    """The document's facts as the viewer draws them, read once per version of its
    patient's record (shared: ``document_view`` copies each before adding to it)."""
    what = ("review.document_facts", document["id"], include_deleted)
    return record_version.kept(wb.db, document["patient_id"], what,
                               lambda: _read_document_facts(wb, document, include_deleted=include_deleted))


def _read_document_facts(wb: Workbench, document: dict, *, include_deleted: bool) -> list[dict[str, Any]]:
    with wb.db.cursor() as cur:
        rows = facts_repo.facts_for_document(cur, document["id"])
        checks = facts_repo.identity_checks_for_document(cur, document["id"])
    status_by_scope = {c.scope: c.identity_status for c in checks}
    out = []
    for row in rows:
        if row.retracted_at is not None and not (include_deleted and document["deleted"]):
            continue
        # A fact follows its own part's check (fax page, HL7 message), as in patient_facts.
        out.append(fact_view(row) | {"identity_status": status_by_scope.get(row.scope), "scope": row.scope})
    return out


def document_view(wb: Workbench, document_id: int, facts: list[dict[str, Any]] | None = None, *,
                  include_deleted: bool = False) -> DocumentView:
    """Every cited box of a document, page by page, with its colour class; the job's
    warnings per page; and the facts that have no box. ``facts`` (fact views, e.g. one
    review item) replaces the document's own facts; facts of a deleted document are
    drawn only with ``include_deleted``."""
    document = document_row(wb, document_id)
    if facts is None:
        facts = _document_facts(wb, document, include_deleted=include_deleted)
    else:
        facts = _with_identity(wb, document, facts)
    paged = is_paged(document)
    count = page_count(wb, document_id) if paged else 0
    pages = [PageView(n) for n in range(1, count + 1)]
    job = _latest_job(wb, document_id)
    loose: list[str] = []
    for w in (job.warnings if job else None) or []:
        text = w.get("message") or str(w.get("code") or "")
        number = w.get("page")
        if isinstance(number, int) and 1 <= number <= count and str(w.get("code") or "") in _PAGE_CLASSES:
            pages[number - 1].page_class = _PAGE_CLASSES[str(w["code"])]  # what the page is, not a warning
        elif isinstance(number, int) and 1 <= number <= count:
            pages[number - 1].warnings.append(text)
        else:
            loose.append(text)
    unboxed: list[int] = []
    shown: list[dict[str, Any]] = []
    for fact in facts:
        fact = dict(fact)
        fact["box_class"] = box_class(fact)
        shown.append(fact)
        cit = fact.get("citation") or {}
        number, box = cit.get("page"), cit.get("bounding_box")
        if not (paged and box and isinstance(number, int) and 1 <= number <= count) or fact["box_class"] is None:
            unboxed.append(fact["fact_id"])
            continue
        pages[number - 1].boxes.append({"fact_id": fact["fact_id"], "page": number, "box": dict(box),
                                        "box_class": fact["box_class"], "label": fact.get("fact_text") or ""})
    return DocumentView(document_id=document_id, filename=document["filename"], kind=_kind(document, _read_as(job)),
                        paged=paged, page_count=count, pages=pages, facts=shown, unboxed=unboxed, warnings=loose,
                        deleted=deleted_note(document), sha256=document["sha256"])


def _with_identity(wb: Workbench, document: dict, facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if all("identity_status" in f for f in facts):
        return facts
    with wb.db.cursor() as cur:
        checks = {c.scope: c.identity_status for c in facts_repo.identity_checks_for_document(cur, document["id"])}
    return [f if "identity_status" in f else f | {"identity_status": checks.get(f.get("scope"))} for f in facts]


# ----------------------------------------------------------------------------- the Documents page list


def document_choices(wb: Workbench, patient_id: int) -> list[dict[str, Any]]:
    """The patient's documents for the picker, newest first: the live ones as
    ``patients.chart_documents`` gives them, then the deleted ones with ``deleted_note``."""
    from core.services.admin.patients import chart_documents

    live = [d | {"deleted_note": None} for d in chart_documents(wb, patient_id)]
    with wb.db.cursor() as cur:
        gone = [documents_repo.by_id(cur, d["id"]) | {"job_status": d["job_status"], "doc_type": d["doc_type"],
                                                       "identity_status": d["identity_status"],
                                                       "error_code": d["error_code"],
                                                       "error_message": d["error_message"]}
                for d in documents_repo.for_patient(cur, patient_id, include_deleted=True) if d["deleted"]]
    deleted = [d | {"counts": {}, "warnings": [], "found_nothing": False, "deleted_note": deleted_note(d)}
               for d in gone]
    return live + deleted
