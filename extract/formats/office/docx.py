"""DOCX normaliser (python-docx): bytes -> ``NormalizedContent`` of sections; the
``referral_docx`` extractor reading them is ``extract.referral.extractor``.

Locators:

* ``paragraph 12`` - the 12th body paragraph (1-based, document order, empty ones counted;
  paragraphs inside body-level content controls count in their place);
* ``table 2 row 3 col 2`` - one cell (1-based; a merged cell is emitted once, at its
  first grid position); ``table 2 row 3`` - the row, unique cell texts joined by " | ";
* ``header 1`` / ``footer 1`` - non-empty header/footer paragraphs (incl. cells of header
  tables), numbered across sections; headers linked to the previous section are skipped.

Struck-through text is written ``~~like this~~`` (the context policy reads it as struck out).
"""

from __future__ import annotations

import io
import re
import zipfile

from domain.content import NormalizedContent, Section
from domain.errors import ExtractionError
from domain.models import ExtractionWarning
from domain.limits import DEFAULT_LIMITS, DOCUMENT_TOO_LONG, Limits, exceeded
from extract.formats.office.docx_internals import body, distinct_cells
from extract.formats.office.ooxml import check_ooxml, scan_part

ENGINE = "python-docx 1.2.0"


def normalize_docx(data: bytes, limits: Limits = DEFAULT_LIMITS) -> NormalizedContent:
    """Body paragraphs, table cells and rows, header/footer paragraphs as sections.

    Raises ``ExtractionError``: empty_file, encrypted_file, not_docx, corrupt_file,
    archive_too_large, document_too_long.
    """
    zf = check_ooxml(data, "docx", limits)
    _check_paragraph_count(zf, limits.max_docx_paragraphs)
    import docx as python_docx
    from docx.opc.exceptions import OpcError
    from lxml.etree import XMLSyntaxError

    def damaged(exc: Exception) -> ExtractionError:
        return ExtractionError(
            f"The Word document is damaged and could not be read ({type(exc).__name__}: {exc}).",
            code="corrupt_file",
        )

    try:
        document = python_docx.Document(io.BytesIO(data))
    except (OpcError, KeyError, ValueError, zipfile.BadZipFile, XMLSyntaxError,
            AttributeError, TypeError, IndexError) as exc:
        # python-docx trips over malformed package XML with whatever error its parser
        # reaches first; at this point the bytes, not our code, are at fault.
        raise damaged(exc) from None
    try:
        return _normalize(document, limits.max_docx_paragraphs)
    except (OpcError, KeyError, ValueError, XMLSyntaxError) as exc:  # lazily parsed parts
        raise damaged(exc) from None


# A paragraph start tag in any namespace prefix (``<w:p>``, ``<w:p w:rsidR=..>``);
# DrawingML's ``<a:p>`` counts too, which only errs on the safe side.
_PARAGRAPH_TAG = re.compile(rb"<(?:[\w.-]+:)?p[\s/>]")


def _check_paragraph_count(zf: zipfile.ZipFile, limit: int) -> None:
    """Count the body's paragraphs in the raw XML before python-docx builds a tree of it."""
    count = 0
    for _ in scan_part(zf, "word/document.xml", _PARAGRAPH_TAG):
        count += 1
        if count > limit:
            raise _too_long(f"more than {limit:,}", limit)


def _too_long(count: str, limit: int) -> ExtractionError:
    return exceeded(DOCUMENT_TOO_LONG, f"The Word document has {count} paragraphs; at most {limit:,} are read.",
                    "max_docx_paragraphs")


def _paragraph_styles(document):
    """style id -> name for paragraph styles, and the default style's name, read once:
    python-docx's ``Paragraph.style`` searches every style of the document for each
    paragraph, which made a long letter from a large template quadratic."""
    from docx.enum.style import WD_STYLE_TYPE

    styles = document.styles
    by_id = {s.style_id: s.name for s in styles if s.type == WD_STYLE_TYPE.PARAGRAPH}
    default = styles.default(WD_STYLE_TYPE.PARAGRAPH)
    return by_id, (default.name if default is not None else "")


def _normalize(document, max_paragraphs: int = DEFAULT_LIMITS.max_docx_paragraphs) -> NormalizedContent:
    from docx.oxml.ns import qn
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    style_names, default_style = _paragraph_styles(document)
    sections: list[Section] = []
    warnings: list[ExtractionWarning] = []
    counters = {"paragraph": 0, "table": 0}
    order = 0

    def add(section: Section) -> None:
        nonlocal order
        section.meta["order"] = order
        order += 1
        sections.append(section)

    def paragraph(p_el, parent) -> None:
        counters["paragraph"] += 1
        if counters["paragraph"] > max_paragraphs:
            raise _too_long(f"more than {max_paragraphs:,}", max_paragraphs)
        p = Paragraph(p_el, parent)
        text = _marked_text(p)
        if not text.strip():
            return
        style = style_names.get(p_el.style, default_style) or ""
        level = None
        m = re.match(r"Heading (\d)", style or "")
        if m:
            level = int(m[1])
        elif style == "Title":
            level = 0
        is_list = bool(p_el.find(qn("w:pPr")) is not None and p_el.find(qn("w:pPr")).find(qn("w:numPr")) is not None)
        is_list = is_list or (style or "").lower().startswith("list")
        add(Section(f"paragraph {counters['paragraph']}", text, "paragraph",
                    {"index": counters["paragraph"], "style": style, "heading_level": level, "list": is_list}))

    def table(tbl_el, parent) -> None:
        counters["table"] += 1
        t = counters["table"]
        tbl = Table(tbl_el, parent)
        for r, row in enumerate(tbl.rows, start=1):
            cells: list[tuple[int, str]] = []
            for c, cell in distinct_cells(row.cells):
                text = "\n".join(_marked_text(p) for p in cell.paragraphs)
                cells.append((c, text))
                if text.strip():
                    add(Section(f"table {t} row {r} col {c}", text, "table_cell",
                                {"table": t, "row": r, "col": c}))
            texts = [txt.strip() for _, txt in cells if txt.strip()]
            if texts:
                add(Section(f"table {t} row {r}", " | ".join(texts), "table_row",
                            {"table": t, "row": r, "cells": [(c, txt) for c, txt in cells]}))
        if any(cell.tables for row in tbl.rows for cell in row.cells):
            warnings.append(ExtractionWarning(
                "docx_nested_table", f"Table {t} contains nested tables; their text was not read separately."))

    def walk(container_el, parent) -> None:
        for child in container_el.iterchildren():
            if child.tag == qn("w:p"):
                paragraph(child, parent)
            elif child.tag == qn("w:tbl"):
                table(child, parent)
            elif child.tag == qn("w:sdt"):
                content = child.find(qn("w:sdtContent"))
                if content is not None:
                    walk(content, parent)

    walk(document.element.body, body(document))

    for part_name in ("header", "footer"):
        n = 0
        for sec in document.sections:
            hf = getattr(sec, part_name)
            if hf.is_linked_to_previous:
                continue
            for p in _hf_paragraphs(hf):
                if p.strip():
                    n += 1
                    add(Section(f"{part_name} {n}", p, part_name, {"index": n}))

    return NormalizedContent(source_kind="docx", sections=sections, warnings=warnings, engine=ENGINE,
                             meta={"paragraphs": counters["paragraph"], "tables": counters["table"]})


def _marked_text(p) -> str:
    """A paragraph's text with struck-through runs written ``~~like this~~`` (the
    mark the context policy reads as struck-out text), otherwise ``p.text``."""
    text = p.text
    groups: list[tuple[str, bool]] = []
    for run in p.runs:
        struck = bool(run.font.strike or run.font.double_strike)
        if groups and groups[-1][1] == struck:
            groups[-1] = (groups[-1][0] + run.text, struck)
        else:
            groups.append((run.text, struck))
    struck_texts = [t.strip() for t, struck in groups if struck and t.strip()]
    if not struck_texts:
        return text
    out, pos = [], 0
    for t in struck_texts:
        i = text.find(t, pos)
        if i < 0:
            continue
        out += [text[pos:i], f"~~{t}~~"]
        pos = i + len(t)
    return "".join(out) + text[pos:]


def _hf_paragraphs(hf) -> list[str]:
    out = [p.text for p in hf.paragraphs]
    for tbl in hf.tables:
        for row in tbl.rows:
            out += [cell.text for _, cell in distinct_cells(row.cells)]
    return out
