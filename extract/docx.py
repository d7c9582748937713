"""DOCX referral letters: normalizer (python-docx) and ``referral_docx`` extractor.

Locators:

* ``paragraph 12`` - the 12th body paragraph (1-based, document order, empty ones counted;
  paragraphs inside body-level content controls count in their place);
* ``table 2 row 3 col 2`` - one cell (1-based; a merged cell is emitted once, at its
  first grid position); ``table 2 row 3`` - the row, unique cell texts joined by " | ";
* ``header 1`` / ``footer 1`` - non-empty header/footer paragraphs (incl. cells of header
  tables), numbered across sections; headers linked to the previous section are skipped.

The extractor reads labelled paragraphs ("Reason for referral: ...", "Re: ...", "DOB: ..."),
labels followed by lists (a "Current medications:" paragraph or heading, then one item per
paragraph), salutation and signature, two-column label/value tables and tables with a
header row (Medication | Dose | Frequency; Allergen | Reaction; Diagnosis | Code).
It never invents a value: dates that do not parse stay text, hedged wording ("? sulfa",
"possible") asks for review.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass, field

from core.content import ContentWarning, NormalizedContent, Section
from core.errors import ExtractionError
from core.models import (
    DocType,
    ExtractionResult,
    ExtractionWarning,
    FactProposal,
    IdentifierKind,
    IdentityCandidate,
)
from extract import values as V
from extract.section_facts import SectionFacts
from extract.ooxml import check_ooxml

SOURCE_TYPE = DocType.REFERRAL_DOCX.value
ENGINE = "python-docx 1.2.0"

# ============================================================================ normalizer


def normalize_docx(data: bytes) -> NormalizedContent:
    """Body paragraphs, table cells and rows, header/footer paragraphs as sections.

    Raises ``ExtractionError``: empty_file, encrypted_file, not_docx, corrupt_file.
    """
    check_ooxml(data, "docx")
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
        return _normalize(document)
    except (OpcError, KeyError, ValueError, XMLSyntaxError) as exc:  # lazily parsed parts
        raise damaged(exc) from None


def _normalize(document) -> NormalizedContent:
    from docx.oxml.ns import qn
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    sections: list[Section] = []
    warnings: list[ContentWarning] = []
    counters = {"paragraph": 0, "table": 0}
    order = 0

    def add(section: Section) -> None:
        nonlocal order
        section.meta["order"] = order
        order += 1
        sections.append(section)

    def paragraph(p_el, parent) -> None:
        counters["paragraph"] += 1
        p = Paragraph(p_el, parent)
        text = p.text
        if not text.strip():
            return
        style = p.style.name if p.style is not None else ""
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
            seen: set[int] = set()
            cells: list[tuple[int, str]] = []
            for c, cell in enumerate(row.cells, start=1):
                key = id(cell._tc)
                if key in seen:
                    continue
                seen.add(key)
                text = cell.text
                cells.append((c, text))
                if text.strip():
                    add(Section(f"table {t} row {r} col {c}", text, "table_cell",
                                {"table": t, "row": r, "col": c}))
            texts = [txt.strip() for _, txt in cells if txt.strip()]
            if texts:
                add(Section(f"table {t} row {r}", " | ".join(texts), "table_row",
                            {"table": t, "row": r, "cells": [(c, txt) for c, txt in cells]}))
        if any(cell.tables for row in tbl.rows for cell in row.cells):
            warnings.append(ContentWarning(
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

    walk(document.element.body, document._body)

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


def _hf_paragraphs(hf) -> list[str]:
    out = [p.text for p in hf.paragraphs]
    for tbl in hf.tables:
        for row in tbl.rows:
            seen: set[int] = set()
            for cell in row.cells:
                if id(cell._tc) not in seen:
                    seen.add(id(cell._tc))
                    out.append(cell.text)
    return out


# ============================================================================ extractor

# Canonical field -> label spellings (lower case, no trailing colon).
_LABELS: dict[str, tuple[str, ...]] = {
    "patient_name": ("patient", "patient name", "name", "patient's name", "client", "client name", "re",
                     "regarding", "name of patient", "full name"),
    "dob": ("dob", "d.o.b", "d.o.b.", "date of birth", "birth date", "birthdate", "born"),
    "mrn": ("mrn", "mrn #", "mrn no", "medical record number", "medical record no", "medical record #",
            "mr number", "mr #", "record number", "hospital number", "hospital no", "chart number",
            "patient id", "patient number", "nhs number"),
    "referring_provider": ("referring provider", "referring physician", "referring doctor", "referring clinician",
                           "referred by", "from", "referrer", "referring gp", "sender"),
    "referring_clinic": ("referring practice", "referring clinic", "referring facility", "practice"),
    "receiving_provider": ("to", "referred to", "receiving provider", "consultant", "recipient", "specialist",
                           "attention", "attn", "receiving physician", "refer to"),
    "receiving_clinic": ("clinic", "receiving clinic", "department", "receiving facility", "receiving service",
                         "refer to clinic", "destination"),
    "reason": ("reason for referral", "referral reason", "reason for consultation", "reason for consult",
               "reason", "presenting complaint", "indication", "clinical question", "reason for request"),
    "requested_service": ("requested service", "service requested", "request", "requested", "specialty",
                          "speciality", "service", "requested investigation", "requested procedure",
                          "referral type", "type of referral", "services requested"),
    "letter_date": ("date", "letter date", "date of letter", "date of referral", "referral date"),
    "appointment": ("appointment", "appointment date", "requested appointment", "appointment requested",
                    "next appointment", "requested date", "preferred appointment"),
    "urgency": ("urgency", "priority"),
    "problems": ("diagnosis", "diagnoses", "problem list", "problems", "active problems", "past medical history",
                 "pmh", "medical history", "working diagnosis", "conditions", "active diagnoses",
                 "relevant diagnoses", "relevant medical history"),
    "medications": ("medications", "current medications", "medication list", "medication", "meds",
                    "current meds", "regular medications", "current medication", "medicines"),
    "allergies": ("allergies", "allergy", "drug allergies", "allergies and reactions", "known allergies",
                  "allergies/adverse reactions", "adverse reactions", "allergies / intolerances"),
}
_LABEL_OF = {label: fieldname for fieldname, labels in _LABELS.items() for label in labels}
_LIST_FIELDS = ("problems", "medications", "allergies")
_REFERRAL_FIELDS = ("referring_provider", "referring_clinic", "receiving_provider", "receiving_clinic", "reason",
                    "requested_service", "letter_date", "appointment", "urgency")
_INLINE = re.compile(r"^\s*([A-Za-z][A-Za-z .'/()&#-]{0,45}?)\s*[:\uff1a]\s*(.*)$", re.DOTALL)
_CLOSING = re.compile(r"^(?:yours (?:sincerely|faithfully|truly)|sincerely|kind regards|best regards|regards"
                      r"|with (?:kind |best )?regards|many thanks|thank you)[,.!]?$", re.IGNORECASE)
_SALUTATION = re.compile(r"^dear\s+(.+?)[,:]?$", re.IGNORECASE)
_DOB_INLINE = re.compile(r"(?:\bDOB\b|\bD\.O\.B\.?|date of birth|\bborn\b)\s*[:#]?\s*([0-9A-Za-z][0-9A-Za-z ,./-]{4,20}?\d{2,4})",
                         re.IGNORECASE)
_MRN_INLINE = re.compile(r"(?:\bMRN\b|medical record (?:number|no\.?|#)|record number|hospital (?:number|no\.?))"
                         r"\s*[:#]?\s*([A-Za-z0-9][A-Za-z0-9-]{2,20})", re.IGNORECASE)
_HEADER_COLUMNS = {
    "medications": {
        "name": ("medication", "medications", "drug", "medicine", "name", "medication name", "drug name"),
        "dose": ("dose", "strength", "dosage", "amount"),
        "frequency": ("frequency", "directions", "sig", "how often", "schedule", "instructions"),
        "route": ("route",),
    },
    "allergies": {
        "substance": ("allergen", "allergy", "allergies", "substance", "agent", "drug", "trigger"),
        "reaction": ("reaction", "reactions", "response", "effect", "manifestation"),
        "severity": ("severity",),
    },
    "problems": {
        "description": ("diagnosis", "diagnoses", "problem", "problems", "condition", "conditions", "description"),
        "code": ("code", "icd", "icd-10", "icd10", "icd code", "icd-10 code"),
        "status": ("status",),
    },
}


def _norm_label(text: str) -> str:
    t = V.normalize_ws(text).lower().rstrip(":\uff1a. ").strip()
    return re.sub(r"\s*/\s*", "/", t)


def label_field(text: str) -> str | None:
    """The canonical field a label names ("Reason for Referral:" -> "reason")."""
    return _LABEL_OF.get(_norm_label(text))


@dataclass(slots=True)
class _Found:
    field: str
    value: str
    section: Section
    how: str  # inline | following | table | header_table | salutation | signature | standalone_date
    quote: str | None = None
    columns: dict[str, str] | None = None  # a row of a table with a header row


@dataclass(slots=True)
class _Ctx(SectionFacts):
    scalars: set[str] = field(default_factory=set)


_BASE = {"table": 0.9, "header_table": 0.88, "inline": 0.86, "following": 0.8, "salutation": 0.62,
         "signature": 0.62, "standalone_date": 0.7}


def extract_referral(content: NormalizedContent, source_id: str) -> ExtractionResult:
    """Referral facts, problems, medications, allergies and identity from ``normalize_docx`` output."""
    ctx = _Ctx.for_content(content, "docx", SOURCE_TYPE, source_id)
    found = _from_paragraphs(content) + _from_tables(content)
    for item in found:
        _emit(ctx, item)
    if not ctx.facts and not ctx.identifiers:
        ctx.warnings.append(ExtractionWarning(
            code="docx_not_a_referral",
            message="No referral details, patient identifiers, problems, medications or allergies were found; "
                    "this document does not look like a referral letter.",
        ))
    return ExtractionResult(doc_type=DocType.REFERRAL_DOCX, facts=ctx.facts, identifiers=ctx.identifiers,
                            warnings=ctx.warnings, engine=ENGINE)


# ---------------------------------------------------------------------------- paragraphs


def _from_paragraphs(content: NormalizedContent) -> list[_Found]:
    """Labelled values, label-then-list blocks, salutation, signature, a standalone date.

    A label without a value ("Current medications:" or a heading) claims the paragraphs
    that follow it: one for a single-valued field, a run of short items for a list. The
    run ends at the next label or heading, at a table (the table is then the list), or
    after more than one empty paragraph.
    """
    out: list[_Found] = []
    pending: str | None = None
    last_index = -10  # index of the last paragraph that a pending label consumed
    closing_seen = False
    for s in content.sections:
        if s.kind in ("table_cell", "table_row", "footer"):
            if s.kind != "footer":
                pending = None
            continue
        text = s.text.strip()
        is_body = s.kind == "paragraph"
        index = s.meta.get("index", 0)
        heading = s.meta.get("heading_level") is not None

        whole = label_field(text) if len(text) <= 50 else None
        if whole and (text.endswith((":", "\uff1a")) or heading or whole in _LIST_FIELDS):
            pending, last_index = whole, index
            continue

        m = _INLINE.match(text)
        f = label_field(m.group(1)) if m else None
        if m and f:
            value = m.group(2).strip()
            if value:
                out.append(_Found(f, value, s, "inline", value))
                pending = None
            else:
                pending, last_index = f, index
            continue

        if pending and is_body and not heading and index - last_index <= 2:
            if pending in _LIST_FIELDS and len(text) <= 240:
                out.append(_Found(pending, text, s, "following", text))
                last_index = index
                continue
            if pending not in _LIST_FIELDS:
                out.append(_Found(pending, text, s, "following", text))
                pending = None
                continue
        pending = None

        sal = _SALUTATION.match(text)
        if sal and is_body:
            out.append(_Found("receiving_provider", sal.group(1).strip(), s, "salutation", sal.group(1).strip()))
            continue
        if _CLOSING.match(text):
            closing_seen = True
            continue
        if closing_seen and is_body and len(text) <= 80:
            out.append(_Found("referring_provider", text, s, "signature", text))
            closing_seen = False
            continue
        parsed = V.parse_date(text) if len(text) <= 40 else None
        if parsed and parsed.iso and is_body:
            out.append(_Found("letter_date", text, s, "standalone_date", text))
    return out


# ---------------------------------------------------------------------------- tables


def _rows_by_table(content: NormalizedContent) -> dict[int, list[Section]]:
    rows: dict[int, list[Section]] = {}
    for s in content.sections:
        if s.kind == "table_row":
            rows.setdefault(s.meta["table"], []).append(s)
    return rows


def _header_kind(cells: list[str]) -> tuple[str, dict[str, int]] | None:
    """(list kind, column name -> index) when a row names the columns of a list table."""
    labels = [_norm_label(c) for c in cells]
    best = None
    for kind, columns in _HEADER_COLUMNS.items():
        mapping = {}
        for i, label in enumerate(labels):
            for col, names in columns.items():
                if label in names and col not in mapping:
                    mapping[col] = i
                    break
        primary = next(iter(columns))
        if primary in mapping and len(mapping) >= 2 and (best is None or len(mapping) > len(best[1])):
            best = (kind, mapping)
    return best


def _from_tables(content: NormalizedContent) -> list[_Found]:
    cells_by_loc = {s.locator: s for s in content.sections if s.kind == "table_cell"}
    out: list[_Found] = []
    for t, rows in _rows_by_table(content).items():
        header: tuple[str, dict[str, int]] | None = None
        for row in rows:
            cells = [(c, txt.strip()) for c, txt in row.meta["cells"]]
            texts = [txt for _, txt in cells]
            non_empty = [(c, txt) for c, txt in cells if txt]
            if len(non_empty) <= 1:
                continue  # a title row such as "PATIENT DETAILS" merged across the table
            kind = _header_kind(texts)
            if kind:
                header = kind
                continue
            if header:
                out += _list_row(header, cells, row, cells_by_loc, t)
                continue
            # Label -> value pairs, possibly two pairs per row (Name | X | DOB | Y).
            k = 0
            while k < len(cells) - 1:
                label_c, label = cells[k]
                f = label_field(label) if label else None
                if f:
                    value_c, value = cells[k + 1]
                    section = cells_by_loc.get(f"table {t} row {row.meta['row']} col {value_c}")
                    if value and section is not None:
                        out.append(_Found(f, value, section, "table", value))
                    k += 2
                else:
                    k += 1
    return out


def _list_row(header: tuple[str, dict[str, int]], cells: list[tuple[int, str]], row: Section,
              cells_by_loc: dict[str, Section], t: int) -> list[_Found]:
    kind, mapping = header
    values = {col: (cells[i][1] if i < len(cells) else "") for col, i in mapping.items()}
    primary = next(iter(_HEADER_COLUMNS[kind]))
    if not values.get(primary):
        return []
    return [_Found(kind, values[primary], row, "header_table", values[primary], columns=values)]


# ---------------------------------------------------------------------------- facts


def _emit(ctx: _Ctx, item: _Found) -> None:
    if item.field in _LIST_FIELDS:
        if item.columns is not None:
            _list_item(ctx, item.field, item.columns, item, item.value)
            return
        for text in V.split_items(item.value, commas=item.field != "medications"):
            _list_item(ctx, item.field, None, item, text)
        return
    if item.field in ("patient_name", "dob", "mrn"):
        _identity(ctx, item)
        return
    _referral(ctx, item)


def _identity(ctx: _Ctx, item: _Found) -> None:
    value = item.value
    if item.field == "patient_name":
        dob = _DOB_INLINE.search(value)
        mrn = _MRN_INLINE.search(value)
        cut = min([m.start() for m in (dob, mrn) if m] or [len(value)])
        name = re.sub(r"[\s,;(\-\u2013]+$", "", value[:cut]).strip()
        if dob:
            _identity(ctx, _Found("dob", dob.group(1).strip(" ,.)"), item.section, item.how))
        if mrn:
            _identity(ctx, _Found("mrn", mrn.group(1), item.section, item.how))
        if name and re.search(r"[A-Za-z]", name) and len(name) <= 80:
            _add_identifier(ctx, IdentifierKind.NAME, V.normalize_ws(name), item.section, name, "patient.name")
        return
    if item.field == "dob":
        parsed, printed = _leading_date(value)
        mrn = _MRN_INLINE.search(value)
        if mrn:  # "DOB: 03/14/1978  MRN: WB-204118" on one line
            _identity(ctx, _Found("mrn", mrn.group(1), item.section, item.how))
        if parsed and parsed.iso:
            value = printed
            if parsed.ambiguous:
                ctx.warnings.append(ExtractionWarning(
                    code="docx_ambiguous_date",
                    message=f"Date of birth {value!r} could be read day-first or month-first; read as {parsed.iso}.",
                ))
            _add_identifier(ctx, IdentifierKind.DOB, parsed.iso, item.section, value, "patient.dob")
        else:
            ctx.warnings.append(ExtractionWarning(
                code="docx_invalid_dob", message=f"Date of birth {value!r} is not a complete date; not used."))
        return
    m = re.search(r"[A-Za-z0-9][A-Za-z0-9-]*\d[A-Za-z0-9-]*", value)
    if m:
        _add_identifier(ctx, IdentifierKind.MRN, m.group(0), item.section, m.group(0), "patient.mrn")


def _leading_date(text: str) -> tuple[V.ParsedDate | None, str]:
    """The longest run of leading words that reads as a date ("14 March 1978 (age 46)")."""
    words = text.split()
    for n in range(min(len(words), 4), 0, -1):
        candidate = " ".join(words[:n]).rstrip(",;")
        parsed = V.parse_date(candidate)
        if parsed is not None:
            return parsed, candidate
    return None, text


def _add_identifier(ctx: _Ctx, kind: IdentifierKind, value: str, section: Section, quote: str, path: str) -> None:
    if any(c.kind == kind and c.value == value for c in ctx.identifiers):
        return
    ctx.identifiers.append(IdentityCandidate(kind=kind, value=value, citation=ctx.cite(section, quote, path)))


def _referral(ctx: _Ctx, item: _Found) -> None:
    f, value = item.field, V.normalize_ws(item.value)
    if f in ctx.scalars and item.how in ("salutation", "signature", "standalone_date"):
        return  # an explicit label already gave this field
    structured: dict = {"field": f, "value": value}
    factors: list[float] = []
    reasons: list[str] = []  # each one asks for review
    if f in ("letter_date", "appointment"):
        parsed = V.parse_date(value)
        if parsed and parsed.iso:
            structured.update(value=parsed.iso, as_printed=value)
            if parsed.ambiguous:
                factors.append(0.85)
                reasons.append(f"date {value!r} could be read day-first or month-first")
        elif f == "letter_date":
            ctx.warnings.append(ExtractionWarning(
                code="docx_unparsed_date", message=f"{item.section.locator}: {value!r} is not a date; ignored."))
            return
        else:
            structured.update(value=None, as_printed=value)
    cue = V.uncertainty_cue(value)
    if cue:
        factors.append(0.7)
        reasons.append(f"uncertain wording ({cue!r})")
    if item.how in ("salutation", "signature"):
        structured["inferred_from"] = item.how  # no label: lower confidence, still a plain document fact
    ctx.scalars.add(f)
    path = f"referral.{f}"
    label = f.replace("_", " ")
    ctx.facts.append(FactProposal(
        fact_type="referral", fact_text=f"Referral {label}: {structured['value'] or value}",
        structured_value=structured, citation=ctx.cite(item.section, item.quote or value, path),
        confidence=V.confidence(_BASE[item.how], factors), wants_review=bool(reasons),
        review_reason="; ".join(reasons) or None, document_fact_only=True,
    ))


def _list_item(ctx: _Ctx, kind: str, columns: dict | None, item: _Found, text: str) -> None:
    text = text.strip()
    if not text:
        return
    factors: list[float] = []
    reasons: list[str] = []
    doc_only = False
    if kind == "medications":
        parsed = V.parse_medication(text)
        if columns:
            parsed = {"name": columns.get("name") or parsed["name"], "dose": columns.get("dose") or None,
                      "frequency": columns.get("frequency") or None, "route": columns.get("route") or None}
        structured = parsed
        if not parsed["dose"]:
            factors.append(0.8)
            reasons.append("dose not stated")
        if not parsed["frequency"]:
            factors.append(0.9)
        fact_type, collection = "medication", "medications"
        summary = " ".join(v for v in (parsed["name"], parsed["dose"], parsed["route"], parsed["frequency"]) if v)
        fact_text = f"Medication: {summary}"
    elif kind == "allergies":
        parsed = V.parse_allergy(text)
        if columns:
            parsed.update(substance=columns.get("substance") or parsed["substance"],
                          reaction=columns.get("reaction") or None, severity=(columns.get("severity") or "").lower() or None)
        structured = parsed
        fact_type, collection = "allergy", "allergies"
        if parsed.get("no_known_allergies"):
            doc_only = True
            fact_text = "Allergies: no known allergies"
        else:
            fact_text = f"Allergy: {parsed['substance']}" + (f" - reaction: {parsed['reaction']}" if parsed["reaction"] else "")
    else:
        parsed = V.parse_problem(text)
        if columns:
            code = columns.get("code") or parsed["code"]
            parsed.update(description=V.parse_problem(columns.get("description", text))["description"], code=code or None,
                          coding_system=parsed["coding_system"] or ("ICD-10" if code and re.match(r"[A-TV-Z]\d", code) else None))
            if columns.get("status"):
                parsed["status"] = columns["status"]
        structured = parsed
        fact_type, collection = "problem", "problems"
        fact_text = f"Problem: {parsed['description']}" + (f" ({parsed['code']})" if parsed.get("code") else "")
    full = " ".join(v for v in (columns or {}).values() if v) if columns else text
    cue = V.uncertainty_cue(full)
    if cue:
        factors.append(0.6)
        reasons.append(f"uncertain wording ({cue!r})")
    path = ctx.path(collection)
    quote = text if not columns else (columns.get(next(iter(_HEADER_COLUMNS[kind]))) or text)
    ctx.facts.append(FactProposal(
        fact_type=fact_type, fact_text=fact_text, structured_value=structured,
        citation=ctx.cite(item.section, quote, path), confidence=V.confidence(_BASE[item.how], factors),
        wants_review=bool(cue) or (kind == "medications" and not structured.get("dose")),
        review_reason="; ".join(reasons) or None, document_fact_only=doc_only,
    ))
