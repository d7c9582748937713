"""What a reviewer sees for a citation: the page image with the cited box drawn,
or, for non-paged sources, the cited paragraph, cell range or segment field."""

from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image, ImageDraw

from domain.models import Citation
from core.services.workbench import Workbench
from storage import documents_repo, guideline_repo


@dataclass
class SourceView:
    citation: Citation
    image_png: bytes | None = None  # page with the box drawn
    location: str = ""  # "page 2" / "OBX[3]-5" / "Results!B4:F4"
    note: str | None = None
    source_text: str | None = None  # the cited paragraph, cell range, segment field or guideline chunk
    title: str = ""


def _page_image(wb: Workbench, document: dict, page: int) -> Image.Image | None:
    """The cached page render of ``core.services.review.document_view`` (one render per page)."""
    from domain.errors import NotFound
    from core.services.review.document_view import page_image

    try:
        return Image.open(io.BytesIO(page_image(wb, document["id"], page))).convert("RGB")
    except NotFound:
        return None


def source_view(wb: Workbench, citation: Citation | dict) -> SourceView:
    citation = Citation.model_validate(citation)
    view = SourceView(citation=citation, location=citation.page_or_section)
    if citation.source_type == "guideline":
        with wb.db.cursor() as cur:
            found = guideline_repo.get_chunks(cur, guideline_repo.active_version(cur), [citation.field_or_chunk_id])
        chunk = found.get(citation.field_or_chunk_id) if found else None
        if chunk is not None:
            view.title, view.source_text = f"{chunk.source_title} — {chunk.section}", chunk.text
            view.note = chunk.source_reference
        return view
    if not citation.source_id.startswith("documents:"):
        view.note = "entered in the chart by hand"
        return view
    doc_id = int(citation.source_id.split(":", 1)[1])
    with wb.db.cursor() as cur:
        document = documents_repo.by_id(cur, doc_id)
    if document is None:
        view.note = "document not found"
        return view
    view.title = document["filename"]
    if document["deleted"]:
        from core.services.review.document_view import deleted_note

        # An old answer may still cite a deleted document: say so beside whatever is shown.
        shown = _document_view(wb, document, view)
        shown.note = "; ".join(filter(None, [f"the source was {deleted_note(document)}", shown.note]))
        return shown
    return _document_view(wb, document, view)


def _document_view(wb: Workbench, document: dict, view: SourceView) -> SourceView:
    citation = view.citation
    if citation.page is None:
        return _section_view(wb, document, view)
    image = _page_image(wb, document, citation.page)
    if image is None:
        view.note = "page image unavailable; showing the quote and page only"
        return view
    if citation.bounding_box is not None:
        box = citation.bounding_box
        w, h = image.size
        draw = ImageDraw.Draw(image)
        pad = 3
        draw.rectangle([box.x * w - pad, box.y * h - pad, (box.x + box.width) * w + pad,
                        (box.y + box.height) * h + pad], outline=(220, 30, 30), width=3)
    else:
        view.note = "no bounding box recorded for this citation"
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    view.image_png = buf.getvalue()
    return view


def _section_view(wb: Workbench, document: dict, view: SourceView) -> SourceView:
    """Non-paged sources (DOCX, XLSX, HL7) are re-read as the pipeline read them (the
    viewer's cached copy) to show the cited location."""
    from domain.errors import NotFound
    from core.services.review.native_views import source_sections

    try:
        sections = source_sections(wb, document)
    except NotFound as exc:
        view.note = exc.message  # "<file> could not be re-read (<code>)."
        return view
    for section in sections:
        if section.locator == view.citation.page_or_section:
            view.source_text = section.text
            return view
    from domain.policy.facts.citations import rows_text

    joined = rows_text(sections, view.citation.page_or_section)  # a reading cited over two rows
    if joined is not None:
        view.source_text = joined
        return view
    view.note = "the cited location was not found in the source"
    return view


@dataclass(frozen=True)
class SourceName:
    name: str  # "lab.pdf", "ADA Standards of Care — Glycemic targets", "the chart"
    deleted: str | None = None  # "deleted on … by …" when the cited document was deleted


def source_name(wb: Workbench, citation: Citation | dict) -> SourceName:
    """What a citation's source is called, without rendering it: a label for the place an
    answer cites (one small query, no page image)."""
    citation = Citation.model_validate(citation)
    if citation.source_type == "guideline":
        with wb.db.cursor() as cur:
            version = guideline_repo.active_version(cur)
            found = guideline_repo.get_chunks(cur, version, [citation.field_or_chunk_id]) if version else {}
        chunk = found.get(citation.field_or_chunk_id)
        return SourceName(f"{chunk.source_title} — {chunk.section}" if chunk else f"guideline {citation.page_or_section}")
    if not citation.source_id.startswith("documents:"):
        return SourceName("the chart")
    with wb.db.cursor() as cur:
        document = documents_repo.by_id(cur, int(citation.source_id.split(":", 1)[1]))
    if document is None:
        return SourceName("a document that no longer exists")
    from core.services.review.document_view import deleted_note

    return SourceName(document["filename"], deleted_note(document))
