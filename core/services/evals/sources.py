"""Showing an eval case's cited source: the fixture document the run kept, and the cited place in it.

The gate keeps every fixture document a case uploaded, content-addressed, under
``<eval-results>/documents/<sha256>`` (:func:`keep_document`), and names them in the case
result's ``kept_documents`` (docs/evals.md). The page reads those bytes back
(:func:`kept_documents`); nothing is rebuilt, and the gate is never imported. A run that
kept no documents (an older run, or one read back from the database) says so in a note.

A paged citation is drawn as a page image (the page draws the box); any other citation
shows the paragraph, cell range or segment text the document holds there.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from domain.errors import ExtractionError, NotFound

KEPT_DIR = "documents"  # under eval-results/
NOT_KEPT = "documents_not_kept"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")

# Reads a case's fixture document: (case id, document name) -> (bytes, file name); NotFound when it cannot.
Builder = Callable[[str, str], tuple[bytes, str]]


def keep_document(results_dir: Path, data: bytes, filename: str) -> dict[str, str]:
    """Store ``data`` under ``<results_dir>/documents/<sha256>`` (written once: the same
    bytes kept by another case or run are already there) and return the reference a case
    result keeps: ``{"sha256", "filename"}``. Safe for several processes at once."""
    digest = hashlib.sha256(data).hexdigest()
    folder = Path(results_dir) / KEPT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / digest
    if not path.is_file():
        tmp = folder / f".{digest}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        tmp.write_bytes(data)
        tmp.replace(path)
    return {"sha256": digest, "filename": filename}


def kept_document(results_dir: Path, result: dict[str, Any], name: str) -> tuple[bytes, str]:
    """The bytes and file name of the document a case uploaded as ``name``, as the run
    kept them. :class:`NotFound` (code ``documents_not_kept`` when the run kept none)."""
    kept = result.get("kept_documents")
    if not isinstance(kept, dict):
        raise NotFound("this run did not keep its documents", code=NOT_KEPT)
    ref = kept.get(name)
    digest = str(ref.get("sha256") or "") if isinstance(ref, dict) else ""
    if not _SHA256.match(digest):
        raise NotFound(f"the run kept no document {name}")
    filename = str(ref.get("filename") or name)
    try:
        data = (Path(results_dir) / KEPT_DIR / digest).read_bytes()
    except OSError:
        raise NotFound(f"the kept document {filename} is gone from eval-results/{KEPT_DIR}") from None
    if hashlib.sha256(data).hexdigest() != digest:
        raise NotFound(f"the kept document {filename} does not match its checksum")
    return data, filename


def kept_documents(results_dir: Path, result: dict[str, Any]) -> Builder:
    """A :data:`Builder` over the documents one case result kept."""
    return lambda case_id, name: kept_document(results_dir, result, name)


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


def cited_source(case_id: str, doc_key: str, citation: dict, *, builder: Builder) -> FixtureSource:
    """Find the cited place in the case's fixture document, read with ``builder``
    (for a stored run, :func:`kept_documents`)."""
    source = FixtureSource(title=doc_key, location=str(citation.get("page_or_section") or ""),
                           quote=str(citation.get("quote_or_value") or ""))
    try:
        data, filename = builder(case_id, doc_key)
    except NotFound as exc:
        source.note = exc.message if exc.code == NOT_KEPT else f"the fixture document could not be read: {exc.message}"
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
    source.note = "the cited location was not found in the document"
    return source
