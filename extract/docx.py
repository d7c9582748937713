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
header row (Medication | Dose | Frequency; Allergen | Reaction; Diagnosis | Code), and a
referral written as prose ("I would be grateful if you could see Mr X for ..."; see
``extract.referral_prose``): reason, service asked for and urgency, each quoted as printed,
used only where no label gave that field.

Only the patient's own fields identify the patient: a name or date under a heading or
table title about someone else ("Referring physician", "Next of kin") is that person's
(the referring/receiving clinician, or a document fact about the other person), a
"Dear Dr ..." line is never taken as the answer to an empty "Re:", and a value that names
a clinician ("Dr ...", "..., MD") or a topic ("Referral for ...") is not a patient name.
It never invents a value: dates that do not parse stay text, hedged wording ("? sulfa",
"possible") and struck-through text (written ``~~like this~~`` by the normalizer) ask for
review, judged by the context policy.
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
from core.policy.context import assess
from extract import phrases
from extract import referral_prose as P
from extract import text_rules as tr
from extract import values as V
from extract.intake_labels import read_label, reads_as_label
from extract.intake_text import answer_doubt, doubt_reason, is_no_known_allergies, names_a_clinician
from extract.limits import DEFAULT_LIMITS, DOCUMENT_TOO_LONG, Limits, exceeded
from extract.ooxml import check_ooxml, scan_part
from extract.section_facts import SectionFacts

SOURCE_TYPE = DocType.REFERRAL_DOCX.value
ENGINE = "python-docx 1.2.0"

# ============================================================================ normalizer


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
            seen: set[int] = set()
            cells: list[tuple[int, str]] = []
            for c, cell in enumerate(row.cells, start=1):
                key = id(cell._tc)
                if key in seen:
                    continue
                seen.add(key)
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
            "patient id", "patient number", "nhs number", "nhs no", "unit number", "unit no", "clinic id",
            "hospital id", "chart #", "chart no"),
    "referring_provider": ("referring provider", "referring physician", "referring doctor", "referring clinician",
                           "referred by", "from", "referrer", "referring gp", "sender", "requested by"),
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
_INLINE = re.compile(r"^\s*([A-Za-z][A-Za-z .'/()&#-]{0,45}?)\s*[:\uff1a]\s*(.*)$", re.DOTALL)
_CLOSING = re.compile(r"^(?:yours (?:sincerely|faithfully|truly)|yours|sincerely|kind regards|best regards|regards"
                      r"|warm regards|with (?:kind |best |warm )?(?:regards|wishes)|best wishes|many thanks"
                      r"|thank you|respectfully)[,.!]?$", re.IGNORECASE)
_SALUTATION = re.compile(r"^dear\s+(.+?)[,:]?$", re.IGNORECASE)
# "Dear Colleague" names nobody.
_NOBODY = re.compile(r"^(?:colleagues?|sir(?:\s*(?:/|or)\s*madam)?|madam|doctor|team|all|friend|"
                     r"(?:the )?(?:clinic|department|team)(?: team)?)$", re.IGNORECASE)
# Lines of a signature block that are not the signer.
_NOT_SIGNER = re.compile(r"^(?:dictated|electronically signed|signed electronically|typed by|pp\.?\s|cc\b|enc)",
                         re.IGNORECASE)
_DOB_INLINE = re.compile(r"(?:\bDOB\b|\bD\.O\.B\.?|date of birth|\bborn\b)\s*[:#]?\s*([0-9A-Za-z][0-9A-Za-z ,./-]{4,20}?\d{2,4})",
                         re.IGNORECASE)
_MRN_INLINE = re.compile(r"(?:\bMRN\b|medical record (?:number|no\.?|#)|record number|hospital (?:number|no\.?)"
                         r"|\bNHS (?:number|no\.?)|patient (?:id|number|no\.?)|chart (?:number|no\.?|#)"
                         r"|\bunit (?:number|no\.?)|(?:clinic|hospital) id\b)"
                         r"\s*[:#]?\s*([A-Za-z0-9][A-Za-z0-9-]{2,20}(?: \d{3,4}){0,2})\b", re.IGNORECASE)
# A printed identifier value: letters/digits with at least one digit ("WB-204118",
# "943 476 5919").
_MRN_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*\d[A-Za-z0-9-]*(?: \d{3,4}){0,2}\b")
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
    """The canonical field a label names ("Reason for Referral:" -> "reason"). An
    allergy label is also read by meaning, in any of its wordings ("Drug
    sensitivities", "Intolerances", "Allergies/ADRs", "Adverse drug reactions"): a
    short label made only of label words that names allergies (the intake label
    vocabulary, ``extract.intake_labels``). Missing one would read as "no allergies"."""
    exact = _LABEL_OF.get(_norm_label(text))
    if exact is not None:
        return exact
    if len(text.split()) <= MAX_ALLERGY_LABEL_WORDS and reads_as_label(text):
        meaning = read_label(text)
        if meaning.kind == "allergies" and meaning.owner is None:
            return "allergies"
    return None


MAX_ALLERGY_LABEL_WORDS = 5


@dataclass(slots=True)
class _Found:
    field: str
    value: str
    section: Section
    how: str  # inline | following | table | header_table | salutation | signature | standalone_date | prose
    quote: str | None = None
    columns: dict[str, str] | None = None  # a row of a table with a header row
    person: str | None = None  # an identity field of someone else: whose ("next of kin"...)
    context: str | None = None  # the sentence or answer a free-text value was read from


@dataclass(slots=True)
class _Ctx(SectionFacts):
    scalars: set[str] = field(default_factory=set)


_BASE = {"table": 0.9, "header_table": 0.88, "inline": 0.86, "following": 0.8, "salutation": 0.62,
         "signature": 0.62, "standalone_date": 0.7, "prose": 0.68}
# Values read without a label of their own: an explicit label for the same field wins.
_INFERRED = ("salutation", "signature", "standalone_date", "prose")
_IDENTITY_FIELDS = ("patient_name", "dob", "mrn")


def extract_referral(content: NormalizedContent, source_id: str) -> ExtractionResult:
    """Referral facts, problems, medications, allergies and identity from ``normalize_docx`` output."""
    ctx = _Ctx.for_content(content, "docx", SOURCE_TYPE, source_id)
    found = _from_paragraphs(content) + _from_tables(content)
    for item in [i for i in found if i.how not in _INFERRED] + [i for i in found if i.how in _INFERRED]:
        _emit(ctx, item)
    if not ctx.facts and not ctx.identifiers:
        ctx.warnings.append(ExtractionWarning(
            code="docx_not_a_referral",
            message="No referral details, patient identifiers, problems, medications or allergies were found; "
                    "this document does not look like a referral letter.",
        ))
    return ExtractionResult(doc_type=DocType.REFERRAL_DOCX, facts=ctx.facts, identifiers=ctx.identifiers,
                            warnings=ctx.warnings, engine=ENGINE)


# ---------------------------------------------------------------------------- whose details


def person_of(title: str) -> str | None:
    """Whom a heading or label is about when it is not the patient: "referring" or
    "receiving" for the clinicians of the referral, else who ("next of kin",
    "emergency contact", "insured", "clinician"...)."""
    meaning = read_label(title)
    if meaning.owner is None:
        return None
    if meaning.owner in ("clinician", "fax sender or recipient"):
        t = title.lower()
        if re.search(r"\breferr(?:ing|er|ed by)\b|\bfrom\b|\bsender\b|\bgp\b|general practitioner", t):
            return "referring"
        if re.search(r"\bto\b|\breceiving\b|\brecipient\b|\bconsultant\b|\bspecialist\b|\batt(?:entio)?n\b", t):
            return "receiving"
    return meaning.owner


def _for_person(item: _Found, person: str | None) -> _Found:
    """A patient-identity field read inside a block about someone else becomes that
    person's detail: the referring or receiving clinician's name, or another person's."""
    if person is None or item.field not in _IDENTITY_FIELDS:
        return item
    if person in ("referring", "receiving") and item.field == "patient_name":
        item.field = f"{person}_provider"
        return item
    item.person = {"referring": "referring clinician", "receiving": "receiving clinician"}.get(person, person)
    return item


def _is_title(text: str, heading: bool) -> bool:
    """A heading, or a short line standing alone as one ("NEXT OF KIN", "Referrer details:")."""
    if heading:
        return True
    words = text.rstrip(":\uff1a").split()
    return 0 < len(words) <= 6 and (text.endswith((":", "\uff1a")) or (text.isupper() and text[:1].isalpha()))


# ---------------------------------------------------------------------------- paragraphs


def _from_paragraphs(content: NormalizedContent) -> list[_Found]:
    """Labelled values, label-then-list blocks, salutation, signature, a standalone date,
    and referral requests written as prose.

    A label without a value ("Current medications:" or a heading) claims the paragraphs
    that follow it: one for a single-valued field, a run of short items for a list. The
    run ends at the next label or heading, at a table (the table is then the list), or
    after more than one empty paragraph. A heading about someone else ("Referring
    clinician", "Next of kin") makes the name and date lines under it that person's.
    """
    out: list[_Found] = []
    pending: str | None = None
    last_index = -10  # index of the last paragraph that a pending label consumed
    closing_seen = False
    person: str | None = None  # the block's subject when it is not the patient
    for s in content.sections:
        if s.kind in ("table_cell", "table_row", "footer"):
            if s.kind != "footer":
                pending = None
            continue
        text = s.text.strip()
        is_body = s.kind == "paragraph"
        index = s.meta.get("index", 0)
        heading = s.meta.get("heading_level") is not None
        if is_body and _is_title(text, heading):
            person = person_of(text.rstrip(":\uff1a"))

        whole = label_field(text) if len(text) <= 50 else None
        if whole and (text.endswith((":", "\uff1a")) or heading or whole in _LIST_FIELDS):
            pending, last_index = whole, index
            if whole in ("referring_provider", "receiving_provider"):
                person = whole.split("_")[0]
            continue

        m = _INLINE.match(text)
        f = label_field(m.group(1)) if m else None
        if m and f:
            value = m.group(2).strip()
            if f in _IDENTITY_FIELDS and read_label(m.group(1)).names_patient:
                person = None  # "Patient name:" is the patient's whatever came before
            elif f not in _IDENTITY_FIELDS and f not in ("referring_clinic", "receiving_clinic"):
                person = None
            if value:
                out.append(_for_person(_Found(f, value, s, "inline", value), person))
                pending = None
            else:
                pending, last_index = f, index
                if f in ("referring_provider", "receiving_provider"):
                    person = f.split("_")[0]
            continue

        letter_line = _SALUTATION.match(text) or _CLOSING.match(text.splitlines()[0].strip() if text else "")
        if pending and is_body and not heading and index - last_index <= 2 and not letter_line:
            if pending in _LIST_FIELDS and len(text) <= 240:
                out.append(_Found(pending, text, s, "following", text))
                last_index = index
                continue
            if pending not in _LIST_FIELDS:
                out.append(_for_person(_Found(pending, text, s, "following", text),
                                       None if pending not in _IDENTITY_FIELDS else person))
                pending = None
                continue
        pending = None
        if not is_body:
            continue
        if len(text) > 80:
            person = None  # prose: any block about someone else is over

        sal = _SALUTATION.match(text)
        if sal:
            who = sal.group(1).strip()
            if not _NOBODY.match(who):
                out.append(_Found("receiving_provider", who, s, "salutation", who))
            continue
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if _CLOSING.match(lines[0]):
            signer = next((ln for ln in lines[1:] if not _NOT_SIGNER.match(ln)), None)
            if signer and len(signer) <= 80:
                out.append(_Found("referring_provider", signer, s, "signature", signer))
                closing_seen = False
            else:
                closing_seen = True
            continue
        if closing_seen and len(text) <= 80:
            if _NOT_SIGNER.match(text):
                continue
            out.append(_Found("referring_provider", text, s, "signature", text))
            closing_seen = False
            continue
        parsed = V.parse_date(text) if len(text) <= 40 else None
        if parsed and parsed.iso:
            out.append(_Found("letter_date", text, s, "standalone_date", text))
            continue
        out += _from_prose(s)
    return out


# Sentences that may state urgency or the service asked for without a request verb.
# "We would like him seen within two weeks" asks too; "he was seen in clinic" tells.
_ABOUT_REFERRAL = re.compile(r"\brefer(?:ral|red|ring)?\b|\bappointment\b|\bbe seen\b|\bsee (?:him|her|them)\b|"
                             r"\b(?<!was )(?<!were )(?<!been )(?<!being )seen\b|"
                             r"\bopinion\b|\breview\b|\bassess", re.IGNORECASE)


def _from_prose(s: Section) -> list[_Found]:
    """Reason, service and urgency from a letter's sentences ("I would be grateful if
    you could see Mr X urgently for ..."), and labelled values that open a sentence
    inside a paragraph ("... seen today. Reason for request: persistent cough ...");
    each quoted exactly as printed. A label inside prose never gives the patient's
    name, date of birth or number: the paragraph may be about someone else."""
    out: list[_Found] = []
    for sentence in P.sentences(s.text):
        m = _INLINE.match(sentence.text)
        f = label_field(m.group(1)) if m else None
        if f and f not in _IDENTITY_FIELDS and (value := m.group(2).strip().rstrip(".")):
            out.append(_Found(f, value, s, "inline", value, context=sentence.text))
            continue
        requested = P.request_in(sentence.text) is not None
        if not requested and not _ABOUT_REFERRAL.search(sentence.text):
            continue
        if requested and (reason := P.reason_in(sentence.text)):
            out.append(_Found("reason", reason.text, s, "prose", reason.text, context=sentence.text))
        if service := P.service_in(sentence.text):
            out.append(_Found("requested_service", service.text, s, "prose", service.text, context=sentence.text))
        urgency = P.urgency_in(sentence.text)
        if urgency and not _hypothetical(sentence.text, urgency.text):
            out.append(_Found("urgency", urgency.value, s, "prose", urgency.text, context=sentence.text))
    return out


# "I would be grateful if she could be seen urgently" asks politely; it is no condition.
_POLITE_IF = re.compile(r"\b(?:grateful|appreciate(?: it)?|thankful|helpful|happy|glad|pleased)\s+if\b",
                        re.IGNORECASE)


def _hypothetical(sentence: str, phrase: str) -> bool:
    """"If she deteriorates, please see her urgently": a plan, not this referral's urgency."""
    ctx = assess(_POLITE_IF.sub(lambda m: m.group(0)[: -len("if")] + "that", sentence), phrase)
    return ctx.temporality == "hypothetical" or ctx.negated


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


def _titles_before_tables(content: NormalizedContent) -> dict[int, str]:
    """The title paragraph right before each table ("Next of kin" above a details table)."""
    titles: dict[int, str] = {}
    last: str | None = None
    for s in content.sections:
        if s.kind == "paragraph":
            heading = s.meta.get("heading_level") is not None
            last = s.text.strip() if _is_title(s.text.strip(), heading) else None
        elif s.kind == "table_row" and s.meta.get("row") == 1 and last is not None:
            titles[s.meta["table"]] = last
    return titles


def _from_tables(content: NormalizedContent) -> list[_Found]:
    cells_by_loc = {s.locator: s for s in content.sections if s.kind == "table_cell"}
    titles = _titles_before_tables(content)
    out: list[_Found] = []
    for t, rows in _rows_by_table(content).items():
        header: tuple[str, dict[str, int]] | None = None
        person = person_of(titles[t].rstrip(":\uff1a")) if t in titles else None
        for row in rows:
            cells = [(c, txt.strip()) for c, txt in row.meta["cells"]]
            texts = [txt for _, txt in cells]
            non_empty = [(c, txt) for c, txt in cells if txt]
            if len(non_empty) <= 1:
                # A title row such as "PATIENT DETAILS" or "NEXT OF KIN" merged across
                # the table: it says whose details the rows below are.
                person = person_of(non_empty[0][1]) if non_empty else person
                continue
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
                        out.append(_for_person(_Found(f, value, section, "table", value), person))
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
        if item.field == "allergies":
            for text in phrases.allergy_items(item.value):
                told = P.allergy_in(text) if len(text.split()) >= MIN_PROSE_WORDS else None
                _list_item(ctx, item.field, None, item, text, told=told)
            return
        for text in phrases.split_items(item.value, commas=item.field != "medications"):
            _list_item(ctx, item.field, None, item, text)
        return
    if item.person is not None:
        _other_person(ctx, item)
        return
    if item.field in _IDENTITY_FIELDS:
        _identity(ctx, item)
        return
    _referral(ctx, item)


def _other_person(ctx: _Ctx, item: _Found) -> None:
    """A name, date of birth or number of someone other than the patient (next of
    kin, a clinician in a details block): a document fact, never an identifier."""
    what = {"patient_name": "name", "dob": "date of birth", "mrn": "number"}[item.field]
    value = V.normalize_ws(item.value)
    ctx.facts.append(FactProposal(
        fact_type="other", fact_text=f"{item.person.capitalize()} {what}: {value}",
        structured_value={"person": item.person, "field": what, "value": value},
        citation=ctx.cite(item.section, item.quote or value, ctx.path("other_people")),
        confidence=V.confidence(_BASE[item.how], []), document_fact_only=True,
    ))


# Words that show a "Re:" line names a matter, not a person ("Re: Referral for ...").
_NOT_A_NAME = frozenset({"referral", "refer", "request", "letter", "assessment", "review", "clinic", "urgent",
                         "routine", "re", "regarding", "for", "of", "the", "and", "to", "with", "dear", "patient",
                         "appointment", "results", "summary", "discharge", "consultation", "follow-up"})
_NAME_PARTICLES = frozenset({"de", "da", "del", "della", "di", "van", "von", "der", "den", "la", "le", "bin",
                             "binti", "al", "el", "ter", "ten", "st", "mc", "mac", "y"})


def _patient_name_problem(name: str) -> str | None:
    """Why a value under a name label is not the patient's name, or None: a clinician,
    not a name by ``text_rules.parse_person_name``, a topic ("Referral for ..."), or
    words that are not capitalised as names are."""
    if names_a_clinician(name):
        return "it names a clinician"
    words = [w.strip(",.") for w in name.split() if w.strip(",.")]
    if tr.parse_person_name(name) is None or any(w.lower() in _NOT_A_NAME for w in words) \
            or not all(w[:1].isupper() or w.lower() in _NAME_PARTICLES for w in words):
        return "it does not read as a person's name"
    return None


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
            problem = _patient_name_problem(name)
            if problem is None:
                _add_identifier(ctx, IdentifierKind.NAME, V.normalize_ws(name), item.section, name, "patient.name")
            else:
                ctx.warnings.append(ExtractionWarning(
                    code="docx_name_not_patient",
                    message=f"{item.section.locator}: {name!r} was not used as the patient's name ({problem})."))
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
    m = _MRN_VALUE.search(value)
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
    if f in ctx.scalars and item.how in _INFERRED:
        return  # an explicit label (or an earlier sentence) already gave this field
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
    # The printed words are judged (the urgency "urgent" was printed "urgently"); only a
    # reason is judged in its sentence - "could be seen" in a polite request is no doubt
    # about how soon.
    cue = answer_doubt(item.quote or value, item.context if f == "reason" else None)
    if cue:
        factors.append(0.7)
        reasons.append(doubt_reason(cue))
    if item.how in ("salutation", "signature", "prose"):
        structured["inferred_from"] = item.how  # no label: lower confidence, still a plain document fact
    if f == "urgency":
        read = P.urgency_in(value)
        structured["level"] = read.value if read else None  # urgent, soon, routine or 2-week wait
        if item.how == "prose":
            structured["as_printed"] = item.quote
    ctx.scalars.add(f)
    path = f"referral.{f}"
    label = f.replace("_", " ")
    ctx.facts.append(FactProposal(
        fact_type="referral", fact_text=f"Referral {label}: {structured['value'] or value}",
        structured_value=structured, citation=ctx.cite(item.section, item.quote or value, path),
        confidence=V.confidence(_BASE[item.how], factors), wants_review=bool(reasons),
        review_reason="; ".join(reasons) or None, document_fact_only=True,
        context_text=item.context or (value if f == "reason" else None),
    ))


# An allergy item of this many words or more may be a sentence telling of one ("He
# wonders whether the chlorhexidine wash gave him a rash"); shorter ones are listed.
MIN_PROSE_WORDS = 5
# A listed allergen is a name of a few words; longer "substances" are sentences the
# list reader could not take apart.
MAX_SUBSTANCE_WORDS = 4


# A listed medication's name or problem's description is at most this many words;
# more is a sentence the list reader did not take apart.
MAX_NAME_WORDS = 4
MAX_DESCRIPTION_WORDS = 8
_NAME_LIKE = re.compile(r"^[A-Za-z][\w'\u2019/().,+-]*(?:\s+[\w'\u2019/().,+-]+)*$")


def _reads_cleanly(kind: str, parsed: dict) -> bool:
    """Whether a list item parsed into the parts its kind needs, and nothing but
    them: a medication's name (a few words) with its dose, a problem's short
    description, one allergen. Items under a list heading that do are as sure as a
    labelled line; the rest keep the lower confidence of a guessed list."""
    if kind == "medications":
        name = parsed.get("name") or ""
        return bool(parsed.get("dose")) and 0 < len(name.split()) <= MAX_NAME_WORDS and bool(_NAME_LIKE.match(name))
    if kind == "allergies":
        substance = parsed.get("substance") or ""
        return 0 < len(substance.split()) <= MAX_SUBSTANCE_WORDS and bool(_NAME_LIKE.match(substance))
    description = parsed.get("description") or ""
    return 0 < len(description.split()) <= MAX_DESCRIPTION_WORDS and bool(_NAME_LIKE.match(description)) \
        and not description.rstrip().endswith((".", "?", "!"))


def _list_item(ctx: _Ctx, kind: str, columns: dict | None, item: _Found, text: str,
               told: P.AllergyMention | None = None) -> None:
    """One problem, medication or allergy. ``told``: an allergy read out of a sentence
    (its substance and reaction), cited by the whole sentence and held for review:
    a sentence is read less surely than a list."""
    text = text.strip()
    if not text:
        return
    factors: list[float] = []
    reasons: list[str] = []
    doc_only = False
    if kind == "medications":
        parsed = phrases.parse_medication(text)
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
        parsed = phrases.parse_allergy(text)
        if columns:
            parsed.update(substance=columns.get("substance") or parsed["substance"],
                          reaction=columns.get("reaction") or None, severity=(columns.get("severity") or "").lower() or None)
        structured = parsed
        fact_type, collection = "allergy", "allergies"
        if told is not None:
            parsed.update(substance=told.substance.text, reaction=told.reaction.text if told.reaction else None,
                          severity=None)
            factors.append(0.85)
            reasons.append("allergy read from a sentence, not a list")
        elif not columns and not parsed.get("no_known_allergies") \
                and len((parsed["substance"] or "").split()) > MAX_SUBSTANCE_WORDS:
            factors.append(0.8)
            reasons.append(f"{parsed['substance']!r} does not read as one allergen")
        if parsed["substance"] and "~~" in parsed["substance"]:
            parsed["substance"] = parsed["substance"].replace("~~", "").strip()
        if parsed.get("no_known_allergies"):
            doc_only = True  # an explicit statement, cited, but never a chart allergy
            parsed.update(substance="", status="no_known_allergies")
            fact_text = "Allergies: no known allergies"
            if not is_no_known_allergies(text):  # "NKDA except penicillin": not only a none
                factors.append(0.5)
                reasons.append(f"'no known allergies' with more written after it ({text!r})")
        else:
            fact_text = f"Allergy: {parsed['substance']}" + (f" - reaction: {parsed['reaction']}" if parsed["reaction"] else "")
    else:
        parsed = phrases.parse_problem(text)
        if columns:
            code = columns.get("code") or parsed["code"]
            parsed.update(description=phrases.parse_problem(columns.get("description", text))["description"], code=code or None,
                          coding_system=parsed["coding_system"] or ("ICD-10" if code and re.match(r"[A-TV-Z]\d", code) else None))
            if columns.get("status"):
                parsed["status"] = columns["status"]
        structured = parsed
        fact_type, collection = "problem", "problems"
        fact_text = f"Problem: {parsed['description']}" + (f" ({parsed['code']})" if parsed.get("code") else "")
    full = " ".join(v for v in (columns or {}).values() if v) if columns else text
    answer = full if columns else V.normalize_ws(item.section.text if item.how == "table" else item.value)
    cue = answer_doubt(full, answer)
    if cue:
        factors.append(0.6)
        reasons.append(doubt_reason(cue))
    path = ctx.path(collection)
    quote = text if not columns else (columns.get(next(iter(_HEADER_COLUMNS[kind]))) or text)
    base = _BASE[item.how]
    if item.how == "following" and told is None and _reads_cleanly(kind, structured):
        base = max(base, _BASE["inline"])  # a clean item of a list under its heading is as good as a labelled line
    ctx.facts.append(FactProposal(
        fact_type=fact_type, fact_text=fact_text, structured_value=structured,
        citation=ctx.cite(item.section, quote, path), confidence=V.confidence(base, factors),
        wants_review=bool(reasons),
        review_reason="; ".join(reasons) or None, document_fact_only=doc_only, context_text=answer,
    ))
