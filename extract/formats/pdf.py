"""PDF text-layer normalizer (PyMuPDF): bytes -> pages of words, rows and page images.

Words keep PyMuPDF's block/line numbers but are stored in visual reading order
(rows top to bottom, left to right; see ``domain.policy.facts.citations.reading_rows``), so
a table row is one ``Line`` even when the PDF wrote each cell as its own block.
A PDF without any text layer is refused with ``needs_ocr`` so the caller can route
it to OCR; one damaged page becomes a warning, not a failed document. A file MuPDF
could only open by rebuilding it (a truncated download, a broken cross-reference
table) carries a ``file_repaired`` warning, which holds its facts for review; a file
it cannot open at all, or whose page tree loops back on itself, is ``corrupt_file``.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pymupdf

from domain.content import Line, NormalizedContent, PageContent, Word
from domain.errors import ExtractionError
from domain.models import ExtractionWarning
from domain.policy.facts.certainty import FILE_REPAIRED
from domain.policy.facts.citations import reading_rows
from domain.limits import DEFAULT_LIMITS, PAGE_TOO_LARGE, TOO_MANY_PAGES, Limits, exceeded
from extract.formats.pdf_boxes import with_drawn_boxes

MAX_PAGES = DEFAULT_LIMITS.max_pages  # the default; jobs use their settings' ``limits``
ENGINE = "pymupdf"

# MuPDF reports per-page damage (bad streams, broken fonts) as RuntimeError
# subclasses or through its warning log rather than by failing the whole file.
# What MuPDF raises on a damaged page or object: its own errors, a plain RuntimeError
# (a stack overflow on deeply nested arrays) and ValueError ("bad xref" for an object
# the rebuilt index lacks).
PAGE_ERRORS = (pymupdf.mupdf.FzErrorBase, RuntimeError, ValueError)


def normalize_pdf(
    data: bytes,
    *,
    render_dir: Path | None = None,
    dpi: int = 110,
    render_name: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> NormalizedContent:
    """Read a PDF's text layer into ``NormalizedContent`` (source_kind "pdf_text").

    With ``render_dir`` each page is also rendered once to
    ``render_dir/<render_name>-p<N>.png`` (default name: the first 16 hex digits of
    the file's sha256) and reused on later calls. Raises ``ExtractionError`` with
    code empty_file, corrupt_file, encrypted_pdf, too_many_pages, page_too_large or needs_ocr.
    """
    if not data:
        raise ExtractionError("The file is empty (0 bytes).", code="empty_file")
    doc = _open(data, limits.max_pages)
    try:
        check_page_count(doc.page_count, limits.max_pages, "max_pages")
        content = NormalizedContent(source_kind="pdf_text", engine=ENGINE, meta={"page_count": doc.page_count})
        content.warnings += _repair_warnings(doc)
        for number in range(1, doc.page_count + 1):
            page, warning = _read_page(doc, number, limits)
            content.pages.append(page)
            if warning:
                content.warnings.append(warning)
        if not any(p.words for p in content.pages):
            raise ExtractionError(
                "No page of this PDF has a text layer (it looks scanned); OCR is needed to read it.",
                code="needs_ocr",
            )
        if render_dir is not None:
            name = render_name or hashlib.sha256(data).hexdigest()[:16]
            for page in content.pages:
                page.image_path = _render(doc, page.number, Path(render_dir), name, dpi, content)
    finally:
        doc.close()
    warned = {w.page for w in content.warnings}
    for page in content.pages:
        if not page.words and page.number not in warned:
            content.warnings.append(
                ExtractionWarning("page_without_text", f"Page {page.number} has no text layer.", page.number)
            )
    return content


def check_page_count(pages: int, limit: int, setting: str) -> None:
    if pages > limit:
        raise exceeded(TOO_MANY_PAGES, f"The document has {pages} pages; at most {limit} are read.", setting)


def check_page_size(number: int, rect: pymupdf.Rect, limits: Limits) -> None:
    """A page larger than any paper (a crafted MediaBox) would render to gigabytes."""
    area = abs(rect.width * rect.height) / (72.0 * 72.0)
    if area > limits.max_page_area_sq_in:
        raise exceeded(
            PAGE_TOO_LARGE,
            f"Page {number} measures {rect.width / 72:.0f} x {rect.height / 72:.0f} inches; pages up to "
            f"{limits.max_page_area_sq_in:.0f} square inches are read.",
            "max_page_area_sq_in",
        )


def _open(data: bytes, max_pages: int = MAX_PAGES) -> pymupdf.Document:
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except (pymupdf.FileDataError, *PAGE_ERRORS) as exc:
        # MuPDF raises a plain RuntimeError for some structural damage (a page count it
        # cannot believe), FileDataError for the rest: both are a damaged file.
        raise ExtractionError(f"The file is not a readable PDF ({exc}).", code="corrupt_file") from None
    try:
        _check_opened(doc, max_pages)
    except BaseException:
        doc.close()
        raise
    return doc


def _check_opened(doc: pymupdf.Document, max_pages: int) -> None:
    if not doc.is_pdf:  # MuPDF sniffs content and would happily open a PNG as a document
        raise ExtractionError("The file is not a PDF.", code="corrupt_file")
    if doc.needs_pass:
        raise ExtractionError("The PDF is password-protected; it cannot be read.", code="encrypted_pdf")
    try:
        pages = doc.page_count
    except PAGE_ERRORS as exc:
        raise ExtractionError(f"The PDF's list of pages cannot be read ({exc}).", code="corrupt_file") from None
    if pages == 0:
        raise ExtractionError("The PDF has no pages.", code="corrupt_file")
    if pages <= max_pages and _page_tree_loops(doc):  # a longer file is refused for its length anyway
        raise ExtractionError(
            "The PDF is damaged: its list of pages loops back on itself, so its pages cannot be told apart.",
            code="corrupt_file",
        )


_REF = re.compile(r"(\d+)\s+\d+\s+R")


def _kids(doc: pymupdf.Document, xref: int) -> list[int]:
    """Object numbers of a page-tree node's /Kids (the array may itself be a reference);
    none for a node the (rebuilt) index does not hold: MuPDF finds the pages without it."""
    try:
        kind, value = doc.xref_get_key(xref, "Kids")
    except PAGE_ERRORS:
        return []
    if kind == "xref":
        match = _REF.match(value)
        try:
            value = doc.xref_object(int(match.group(1))) if match else ""
        except PAGE_ERRORS:
            return []
    elif kind != "array":
        return []
    return [int(n) for n in _REF.findall(value)]


def _page_tree_loops(doc: pymupdf.Document) -> bool:
    """Whether a /Kids entry points back to a node above it. MuPDF reports such a cycle
    only as a warning and then reads the pages wrongly or not at all. Each node is
    walked once, so the cost is linear in the size of the tree."""
    try:
        kind, value = doc.xref_get_key(doc.pdf_catalog(), "Pages")
    except PAGE_ERRORS:
        return False  # MuPDF found the pages some other way; nothing to walk
    root = _REF.match(value) if kind == "xref" else None
    if root is None:
        return False
    done: set[int] = set()
    path: set[int] = {int(root.group(1))}
    stack = [(int(root.group(1)), iter(_kids(doc, int(root.group(1)))))]
    while stack:
        node, kids = stack[-1]
        kid = next(kids, None)
        if kid is None:
            stack.pop()
            path.discard(node)
            done.add(node)
        elif kid in path:
            return True
        elif kid not in done:
            path.add(kid)
            stack.append((kid, iter(_kids(doc, kid))))
    return False


def _repair_warnings(doc: pymupdf.Document) -> list[ExtractionWarning]:
    if not doc.is_repaired:
        return []
    return [ExtractionWarning(
        FILE_REPAIRED,
        "The PDF is damaged (cut short or with a broken index) and was rebuilt to be read: "
        "some text may be missing or wrong, so its findings wait for a person to check them.",
    )]


def repair_warnings(data: bytes) -> list[ExtractionWarning]:
    """The ``file_repaired`` warning for a PDF read by another route (OCR), or none."""
    try:
        with pymupdf.open(stream=data, filetype="pdf") as doc:
            return _repair_warnings(doc)
    except (pymupdf.FileDataError, *PAGE_ERRORS):
        return []  # the OCR route opened it; a second opinion that fails changes nothing


def _read_page(doc: pymupdf.Document, number: int,
               limits: Limits) -> tuple[PageContent, ExtractionWarning | None]:
    """One page's words and rows; damage is reported, never raised; a page over a
    size limit fails the document (``page_too_large``)."""
    pymupdf.TOOLS.mupdf_warnings(reset=True)
    try:
        page = doc.load_page(number - 1)
        rect = page.rect
        check_page_size(number, rect, limits)
        raw = page.get_text("words")
        _check_text_size(number, raw, limits.max_text_chars_per_page)
        rotation = page.rotation_matrix if page.rotation else None
    except PAGE_ERRORS as exc:
        return (
            PageContent(number=number, width=612.0, height=792.0),
            ExtractionWarning("page_unreadable", f"Page {number} could not be read ({exc}).", number),
        )
    words = with_drawn_boxes(page, _words(raw, rotation), rotation)
    rows = reading_rows(words)
    ordered = [w for row in rows for w in row]
    for i, w in enumerate(ordered):
        w.index = i
    content = PageContent(
        number=number, width=rect.width, height=rect.height,
        words=ordered, lines=[Line(words=row) for row in rows],
    )
    damage = [m for m in pymupdf.TOOLS.mupdf_warnings(reset=True).splitlines() if "error" in m.lower()]
    warning = None
    if damage:
        warning = ExtractionWarning("page_unreadable", f"Page {number} is damaged: {damage[0]}", number)
    return content, warning


def _check_text_size(number: int, raw: list, limit: int) -> None:
    """Checked before the words are put in reading order, the step whose cost grows
    fastest with the text on a page."""
    chars = sum(len(w[4]) for w in raw)
    if chars > limit:
        raise exceeded(
            PAGE_TOO_LARGE,
            f"Page {number} holds {chars:,} characters of text; at most {limit:,} per page are read.",
            "max_text_chars_per_page",
        )


def _words(raw: list, rotation: pymupdf.Matrix | None) -> list[Word]:
    """PyMuPDF word tuples -> ``Word``s in the page's visible (rotated) coordinates."""
    words = []
    for x0, y0, x1, y1, text, block, line, _ in raw:
        if not text.strip():
            continue
        if rotation is not None:
            r = pymupdf.Rect(x0, y0, x1, y1) * rotation
            x0, y0, x1, y1 = r.x0, r.y0, r.x1, r.y1
        words.append(Word(text=text, x0=x0, y0=y0, x1=x1, y1=y1, block=block, line=line))
    return words


def _render(doc: pymupdf.Document, number: int, render_dir: Path, name: str, dpi: int,
            content: NormalizedContent) -> str | None:
    """Render a page PNG once; written to a temp name first so readers never see half a file."""
    path = render_dir / f"{name}-p{number}.png"
    if path.exists():
        return str(path)
    render_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        doc.load_page(number - 1).get_pixmap(dpi=dpi).save(str(tmp), output="png")
    except PAGE_ERRORS as exc:
        content.warnings.append(ExtractionWarning("page_render_failed", f"Page {number} could not be rendered ({exc}).", number))
        return None
    os.replace(tmp, path)
    return str(path)
