"""What a reviewer sees for a citation: the page image with the cited box drawn,
or, for non-paged sources, the cited paragraph, cell range or segment field."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

from core.models import Citation
from core.services.workbench import Workbench
from storage import documents_repo


@dataclass
class SourceView:
    citation: Citation
    image_png: bytes | None = None  # page with the box drawn
    location: str = ""  # "page 2" / "OBX[3]-5" / "Results!B4:F4"
    note: str | None = None


def _page_image(wb: Workbench, document: dict, page: int) -> Image.Image | None:
    render_dir = wb.settings.renders_dir / document["sha256"][:16]
    cached = sorted(render_dir.glob(f"*-p{page}.png")) if render_dir.is_dir() else []
    if cached:
        return Image.open(cached[0]).convert("RGB")
    if (document.get("mime") or "") != "application/pdf":
        return None
    import pymupdf

    with pymupdf.open(stream=wb.blobs.get(document["sha256"]), filetype="pdf") as pdf:
        if not 1 <= page <= pdf.page_count:
            return None
        pix = pdf[page - 1].get_pixmap(dpi=110)
        return Image.open(io.BytesIO(pix.tobytes("png"))).convert("RGB")


def source_view(wb: Workbench, citation: Citation | dict) -> SourceView:
    citation = Citation.model_validate(citation)
    view = SourceView(citation=citation, location=citation.page_or_section)
    if citation.page is None:
        view.note = "non-paged source: the quote comes from the cited location"
        return view
    doc_id = int(citation.source_id.split(":", 1)[1])
    with wb.db.cursor() as cur:
        document = documents_repo.by_id(cur, doc_id)
    if document is None:
        view.note = "document not found"
        return view
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


def render_cache_dir(wb: Workbench, sha256: str) -> Path:
    return wb.settings.renders_dir / sha256[:16]
