"""Showing an eval case's cited source: rebuild the fixture document and find the cited place.

A paged citation is drawn as a page image (the page draws the box); any other citation
shows the paragraph, cell range or segment text the rebuilt document holds there.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Callable

from domain.errors import ExtractionError, NotFound


def document_key_for(result: dict, citation: dict) -> str | None:
    """Which of the case's documents a ``documents:<id>`` citation points at."""
    source = str(citation.get("source_id") or "")
    if not source.startswith("documents:"):
        return None
    try:
        doc_id = int(source.split(":", 1)[1])
    except ValueError:
        return None
    for key, doc in ((result.get("actual") or {}).get("documents") or {}).items():
        if isinstance(doc, dict) and doc.get("document_id") == doc_id:
            return key
    return None


@dataclass
class FixtureSource:
    """A fixture document's cited place: a page image (box drawn by the page) or the
    cited paragraph / cell range / segment text."""

    title: str
    location: str
    quote: str
    page_png: bytes | None = None
    box: dict | None = None
    source_text: str | None = None
    note: str | None = None


Builder = Callable[[str, str], tuple[bytes, str]]


def _default_builder(case_id: str, name: str) -> tuple[bytes, str]:
    """Rebuild the document a case uploaded as ``name`` (a document key, or the
    ``"as"`` name of an upload step, e.g. a second upload of the same file)."""
    from golden.cases import load_case
    from golden.documents import SharedDataMissing, build

    try:
        case = load_case(case_id)
        key = name if name in case.documents else next(
            (s.upload for s in case.steps if s.upload and s.name == name), name)
        return build(case_id, key)
    except KeyError as exc:  # no such case file, or no such document in it
        raise NotFound(f"case {case_id} has no document {name} here ({exc})") from None
    except SharedDataMissing as exc:
        raise NotFound(str(exc)) from None


def _render_page(data: bytes, page: int) -> bytes | None:
    from extract.sniff import sniff_format

    file_format = sniff_format(data)
    if file_format == "pdf":
        import pymupdf

        with pymupdf.open(stream=data, filetype="pdf") as pdf:
            if not 1 <= page <= pdf.page_count:
                return None
            return pdf[page - 1].get_pixmap(dpi=110).tobytes("png")
    if file_format in ("png", "jpeg", "webp", "tiff"):
        from PIL import Image

        with Image.open(io.BytesIO(data)) as image:
            try:
                image.seek(page - 1)
            except EOFError:
                return None
            buf = io.BytesIO()
            image.convert("RGB").save(buf, format="PNG")
            return buf.getvalue()
    return None


def cited_source(case_id: str, doc_key: str, citation: dict, *, builder: Builder | None = None) -> FixtureSource:
    """Rebuild the case's fixture document and find the cited place in it."""
    source = FixtureSource(title=doc_key, location=str(citation.get("page_or_section") or ""),
                           quote=str(citation.get("quote_or_value") or ""))
    try:
        data, filename = (builder or _default_builder)(case_id, doc_key)
    except NotFound as exc:
        source.note = f"the fixture document could not be rebuilt: {exc.message}"
        return source
    source.title = filename
    page = citation.get("page")
    if page is not None:
        source.page_png = _render_page(data, int(page))
        source.box = citation.get("bounding_box")
        if source.page_png is None:
            source.note = f"page {page} could not be drawn; showing the quote only"
        elif not source.box:
            source.note = "no bounding box recorded for this citation"
        return source
    from extract.normalize import normalize

    try:
        content = normalize(data, allow_ocr=False)
    except ExtractionError as exc:
        source.note = f"the source could not be re-read ({exc.code})"
        return source
    for section in content.sections:
        if section.locator == source.location:
            source.source_text = section.text
            return source
    source.note = "the cited location was not found in the rebuilt document"
    return source
