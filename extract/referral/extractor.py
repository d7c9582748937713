"""Referral letter extractor (doc_type ``referral_docx``): ``extract.formats.office.docx`` sections,
or a letter printed to PDF read as paragraphs (``extract.referral.pages``) -> cited referral details,
problems, medications, allergies, results told in sentences and identity.

The extractor reads labelled paragraphs ("Reason for referral: ...", "Re: ...", "DOB: ..."),
labels followed by lists (a "Current medications:" paragraph or heading, then one item per
paragraph), salutation and signature, two-column label/value tables and tables with a
header row (Medication | Dose | Frequency; Allergen | Reaction; Diagnosis | Code), result
tables with a column per test (``extract.referral.result_tables``), and a
referral written as prose ("I would be grateful if you could see Mr X for ..."; see
``extract.referral.prose``): reason, service asked for and urgency, each quoted as printed,
used only where no label gave that field. Allergies, medications, problems and results
told in sentences ("She is allergic to penicillin, which gave her a rash") are read by
``extract.referral.sentence_facts`` and held for review.

Only the patient's own fields identify the patient: a name or date under a heading or
table title about someone else ("Referring physician", "Next of kin") is that person's
(the referring/receiving clinician, or a document fact about the other person), a
"Dear Dr ..." line is never taken as the answer to an empty "Re:", and a value that names
a clinician ("Dr ...", "..., MD") or a topic ("Referral for ...") is not a patient name.
It never invents a value: dates that do not parse stay text, hedged wording ("? sulfa",
"possible") and struck-through text (written ``~~like this~~`` by the normaliser) ask for
review, judged by the context policy.

Label spellings are in ``extract.referral.labels``; turning what is found into facts
and identifiers is ``extract.referral.facts``.
"""

from __future__ import annotations

import re

from domain.content import NormalizedContent, Section
from domain.models import DocType, ExtractionResult, ExtractionWarning
from domain.policy.context.mentions import assess
from domain.policy.facts.medication_status import status_after, status_before
from extract.referral import prose as P
from extract.referral.pages import as_sections
from extract.referral.result_tables import results_in_tables
from extract.referral.sentence_facts import read_sentence
from extract.values.prose_text import sentences
from extract.values.dates import document_date_order, parse_date
from extract.formats.office.docx import ENGINE
from extract.layout import OCR_TRUSTED_CONF
from extract.values.labels import read_label
from extract.values.lists import parse_medication
from extract.referral.facts import INFERRED, SENTENCE_REASON, Ctx, Found, emit
from extract.referral.labels import (
    CLOSING, DOB_INLINE, HEADER_COLUMNS, IDENTITY_FIELDS, INLINE, LIST_FIELDS, MRN_INLINE, NOBODY, NOT_SIGNER,
    SALUTATION, header_kind, is_other_heading, label_field, list_status, names_one_item, names_other_section,
)

SOURCE_TYPE = DocType.REFERRAL_DOCX.value


def extract_referral(content: NormalizedContent, source_id: str) -> ExtractionResult:
    """Referral facts, problems, medications, allergies and identity from ``normalize_docx`` output."""
    if content.pages and not content.sections:  # a letter printed as a PDF: its paragraphs, cited by box
        ctx = Ctx(SOURCE_TYPE, source_id, warnings=[ExtractionWarning(code=w.code, message=w.message)
                                                    for w in content.warnings])
        content = as_sections(content)
    else:
        ctx = Ctx.for_content(content, "docx", SOURCE_TYPE, source_id)
    # One letter prints its dates one way: "16/09/2026" in its results settles "02/08/1944".
    ctx.day_first = document_date_order(s.text for s in content.sections)
    results, result_tables, unread = results_in_tables(content)
    ctx.warnings += unread
    found = _from_paragraphs(content) + _from_tables(content, skip=result_tables) + results
    for item in [i for i in found if i.how not in INFERRED] + [i for i in found if i.how in INFERRED]:
        emit(ctx, item)
    _drop_problems_told_again(ctx)
    _hold_doubtful_ocr(ctx)
    if not ctx.facts and not ctx.identifiers:
        ctx.warnings.append(ExtractionWarning(
            code="docx_not_a_referral",
            message="No referral details, patient identifiers, problems, medications or allergies were found; "
                    "this document does not look like a referral letter.",
        ))
    return ExtractionResult(doc_type=DocType.REFERRAL_DOCX, facts=ctx.facts, identifiers=ctx.identifiers,
                            warnings=ctx.warnings, engine=content.engine if content.source_kind != "docx" else ENGINE)


def _drop_problems_told_again(ctx: Ctx) -> None:
    """A condition a sentence names that the letter also lists ("4. Hypercholesterolemia:
    the patient was put on Zocor" in the hospital course, "Hypercholesterolemia" among the
    discharge diagnoses) adds nothing to the list's reading: it is not held for review a
    second time. A sentence that tells something else of it (negated, someone else's:
    a document fact) stays."""
    def name(fact) -> str:
        return " ".join(str((fact.structured_value or {}).get("description") or "").lower().split())

    listed = {name(f) for f in ctx.facts if f.fact_type == "problem" and SENTENCE_REASON not in (f.review_reason or "")}
    ctx.facts = [f for f in ctx.facts
                 if not (f.fact_type == "problem" and f.wants_review and not f.document_fact_only
                         and SENTENCE_REASON in (f.review_reason or "") and name(f) in listed)]


def _hold_doubtful_ocr(ctx: Ctx) -> None:
    """A fact of a scanned or faxed letter whose quoted words OCR read below the readers'
    trust line goes to a person, as an OCR'd lab result does: "2.5 mg" may have been
    printed where "25 mg" was read."""
    for i, fact in enumerate(ctx.facts):
        conf = ctx.ocr_conf.get(fact.citation.field_or_chunk_id or "")
        if conf is None or conf >= OCR_TRUSTED_CONF or fact.document_fact_only:
            continue
        reason = f"read by OCR with low confidence ({conf:.2f}): check it against the page"
        ctx.facts[i] = fact.model_copy(update={
            "wants_review": True, "confidence": min(fact.confidence, conf),
            "review_reason": "; ".join(filter(None, [fact.review_reason, reason]))})


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


def _for_person(item: Found, person: str | None) -> Found:
    """A patient-identity field read inside a block about someone else becomes that
    person's detail: the referring or receiving clinician's name, or another person's."""
    if person is None or item.field not in IDENTITY_FIELDS:
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


def _opens_another_block(text: str) -> bool:
    """A short line that is a label alone ("Plan:", "Impression and plan:"), one the
    reader does not know (those are read before): what follows it is not more of the
    list above."""
    if is_other_heading(text):
        return True  # "Results" set alone as a heading: the list above is over
    m = INLINE.match(text)
    if m is not None and names_other_section(m.group(1)):
        return True  # "Results at discharge: potassium 5.1 mmol/L, ...": read as the sentence it is
    return m is not None and len(text) <= 50 and not m.group(2).strip()


# A paragraph of running text after a list: at least this many words, and more than one
# sentence or a sentence about the patient ("She stopped ramipril in October ...").
PROSE_MIN_WORDS = 12
_ABOUT_THE_PATIENT = frozenset({"she", "he", "they", "i", "we", "her", "his", "their", "mr", "mrs", "ms", "miss"})


def _reads_as_prose(text: str) -> bool:
    """A paragraph that is running text, not one more item of the list above: read by
    the sentence readers, whose vital signs, results and context a list item would lose."""
    words = text.split()
    if len(words) < PROSE_MIN_WORDS:
        return False
    return len(sentences(text)) > 1 or words[0].lower().strip(".,") in _ABOUT_THE_PATIENT


def _stopping_heading(text: str) -> bool:
    """A short line in a list of medicines that names no medicine's dose but speaks of
    stopping ("Stopped during admission", "Ceased:"). A line whose status opens it and a
    medicine follows ("Stopped: ramipril", "Held metformin") is an item of the list."""
    if len(text.split()) > 6 or parse_medication(text)["dose"] is not None or status_after(text) is None:
        return False
    lead = status_before(text.strip())
    rest = lead[1].strip(" .:") if lead else ""
    return not rest or rest.split()[0].lower() in _WHEN_WORDS


# Words that open when or where a heading's medicines were stopped ("Ceased on the ward").
_WHEN_WORDS = frozenset({"during", "on", "in", "at", "while", "since", "this", "for", "before", "after", "from",
                         "prior", "whilst"})


# "Re Grace OKAFOR, born 22/04/1957, ...": a letter's subject line whose colon OCR lost.
_RE_WITHOUT_COLON = re.compile(r"^\s*(Re|RE|Regarding)\s+(?=[A-Z])(.*)$", re.DOTALL)


def _re_line_colon_lost(s: Section, text: str) -> re.Match | None:
    """The subject line of a scanned or faxed letter printed "Re:" but read "Re", taken as
    the label it is when it also names a birth date or a record number: an OCR'd
    paragraph only (a typed "Re Smith" without its colon is not read so)."""
    words = s.meta.get("words") or []
    if not words or all(w.conf is None for w in words) or len(text) > 200:
        return None
    m = _RE_WITHOUT_COLON.match(text)
    return m if m and (DOB_INLINE.search(m.group(2)) or MRN_INLINE.search(m.group(2))) else None


# "Diagnosis. Acute kidney injury ...": a label whose colon OCR read as a full stop or a
# comma, at the start of a scanned paragraph.
_COLON_READ_AS_STOP = re.compile(r"^\s*([A-Za-z][A-Za-z /&()-]{1,40}?)[.,;]\s+(\S.*)$", re.DOTALL)
MAX_LABEL_WORDS_WITHOUT_COLON = 4


def _label_colon_lost(s: Section, text: str) -> re.Match | None:
    """A label the reader knows ("Diagnosis", "Allergies", "Current medications") whose
    colon OCR read as "." or ",": an OCR'd paragraph only (typed, "Diagnosis. Acute ..."
    is a sentence as printed)."""
    words = s.meta.get("words") or []
    if not words or all(w.conf is None for w in words):
        return None
    m = _COLON_READ_AS_STOP.match(text)
    if m is None or len(m.group(1).split()) > MAX_LABEL_WORDS_WITHOUT_COLON or label_field(m.group(1)) is None:
        return None
    return m


# A known label opening a later sentence of a labelled line ("PMH: COPD, AF on apixaban.
# Allergy: penicillin - rash."): a field of its own.
_LATER_LABEL = re.compile(r"(?<=[.;])\s+([A-Z][A-Za-z /&()'-]{1,40}?)\s*[:\uff1a]\s*(?=\S)")


def _labelled_parts(label: str, value: str) -> list[tuple[str, str]]:
    """(label, value) for a labelled line, split where a later sentence opens with
    another label the reader knows; one pair when none does."""
    for m in _LATER_LABEL.finditer(value):
        if label_field(m.group(1)) is not None:
            head = value[:m.start()].strip().rstrip(".;")
            return [(label, head), *_labelled_parts(m.group(1), value[m.end():].strip())] if head else \
                _labelled_parts(m.group(1), value[m.end():].strip())
    return [(label, value)]


def _from_paragraphs(content: NormalizedContent) -> list[Found]:
    """Labelled values, label-then-list blocks, salutation, signature, a standalone date,
    and referral requests written as prose.

    A label without a value ("Current medications:" or a heading) claims the paragraphs
    that follow it: one for a single-valued field, a run of short items for a list. The
    run ends at the next label or heading, at a table (the table is then the list), or
    after more than one empty paragraph. A heading about someone else ("Referring
    clinician", "Next of kin") makes the name and date lines under it that person's.
    """
    out: list[Found] = []
    pending: str | None = None
    pending_status: str | None = None  # of every item of the pending list ("stopped")
    pending_one = False  # the pending list's label names one item ("Principal diagnosis")
    last_index = -10  # index of the last paragraph that a pending label consumed
    closing_seen = False
    person: str | None = None  # the block's subject when it is not the patient
    for s in content.sections:
        if s.section_type in ("table_cell", "table_row", "footer"):
            if s.section_type != "footer":
                pending = None
            continue
        text = s.text.strip()
        is_body = s.section_type == "paragraph"
        index = s.meta.get("index", 0)
        heading = s.meta.get("heading_level") is not None
        if is_body and _is_title(text, heading):
            person = person_of(text.rstrip(":\uff1a"))

        whole = label_field(text) if len(text) <= 50 else None
        if whole and (text.endswith((":", "\uff1a")) or heading or whole in LIST_FIELDS):
            pending, last_index, pending_status = whole, index, list_status(text)
            pending_one = names_one_item(text)
            if whole in ("referring_provider", "receiving_provider"):
                person = whole.split("_")[0]
            continue

        m = INLINE.match(text) or _re_line_colon_lost(s, text) or _label_colon_lost(s, text)
        f = label_field(m.group(1)) if m else None
        if m and f:
            value = m.group(2).strip()
            if f in IDENTITY_FIELDS and read_label(m.group(1)).names_patient:
                person = None  # "Patient name:" is the patient's whatever came before
            elif f not in IDENTITY_FIELDS and f not in ("referring_clinic", "receiving_clinic"):
                person = None
            if value:
                for label, said in _labelled_parts(m.group(1), value):
                    out.append(_for_person(Found(label_field(label), said, s, "inline", said,
                                                 status=list_status(label), whole=names_one_item(label)), person))
                pending = None
            else:
                pending, last_index, pending_status = f, index, list_status(m.group(1))
                pending_one = names_one_item(m.group(1))
                if f in ("referring_provider", "receiving_provider"):
                    person = f.split("_")[0]
            continue

        letter_line = SALUTATION.match(text) or CLOSING.match(text.splitlines()[0].strip() if text else "")
        if pending and _opens_another_block(text):
            pending = None  # "Plan:", "Impression:": a label the reader does not know ends the list, it is no item
            if not (m and m.group(2).strip()):
                continue
        if pending and is_body and not heading and index - last_index <= 2 and not letter_line:
            if pending == "medications" and _stopping_heading(text):
                # A heading the reader does not know that speaks of stopping ("Ceased on the
                # ward"): the items under it take its status ("Ceased"), or, when its words
                # are not a status the policy knows, go to a person.
                pending_status, last_index = status_after(text), index
                continue
            if pending in LIST_FIELDS and len(text) <= 240 and not _reads_as_prose(text):
                out.append(Found(pending, text, s, "following", text, status=pending_status, whole=pending_one))
                last_index = index
                continue
            if pending not in LIST_FIELDS:
                out.append(_for_person(Found(pending, text, s, "following", text),
                                       None if pending not in IDENTITY_FIELDS else person))
                pending = None
                continue
        pending = None
        if not is_body:
            continue
        if len(text) > 80:
            person = None  # prose: any block about someone else is over

        sal = SALUTATION.match(text)
        if sal:
            who = sal.group(1).strip()
            if not NOBODY.match(who):
                out.append(Found("receiving_provider", who, s, "salutation", who))
            continue
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if CLOSING.match(lines[0]):
            signer = next((ln for ln in lines[1:] if not NOT_SIGNER.match(ln)), None)
            if signer and len(signer) <= 80:
                out.append(Found("referring_provider", signer, s, "signature", signer))
                closing_seen = False
            else:
                closing_seen = True
            continue
        if closing_seen and len(text) <= 80:
            if NOT_SIGNER.match(text):
                continue
            out.append(Found("referring_provider", text, s, "signature", text))
            closing_seen = False
            continue
        parsed = parse_date(text) if len(text) <= 40 else None
        if parsed and parsed.iso:
            out.append(Found("letter_date", text, s, "standalone_date", text))
            continue
        out += _from_prose(s)
    return out


# Sentences that may state urgency or the service asked for without a request verb.
# "We would like him seen within two weeks" asks too; "he was seen in clinic" tells.
_ABOUT_REFERRAL = re.compile(r"\brefer(?:ral|red|ring)?\b|\bappointment\b|\bbe seen\b|\bsee (?:him|her|them)\b|"
                             r"\b(?<!was )(?<!were )(?<!been )(?<!being )seen\b|"
                             r"\bopinion\b|\breview\b|\bassess", re.IGNORECASE)


def _from_prose(s: Section) -> list[Found]:
    """Reason, service and urgency from a letter's sentences ("I would be grateful if
    you could see Mr X urgently for ..."), and labelled values that open a sentence
    inside a paragraph ("... seen today. Reason for request: persistent cough ...");
    each quoted exactly as printed. A label inside prose never gives the patient's
    name, date of birth or number: the paragraph may be about someone else."""
    out: list[Found] = []
    for sentence in sentences(s.text):
        m = INLINE.match(sentence.text)
        f = label_field(m.group(1)) if m else None
        if f in ("medications", "problems") or f is None or f == "allergies" and not m.group(2).strip():
            out += read_sentence(s, sentence)  # what it tells of allergies, medications, problems, results
        if f in ("medications", "problems"):
            continue
        if f and f not in IDENTITY_FIELDS and (value := m.group(2).strip().rstrip(".")):
            out.append(Found(f, value, s, "inline", value, context=sentence.text))
            continue
        requested = P.request_in(sentence.text) is not None
        if not requested and not _ABOUT_REFERRAL.search(sentence.text):
            continue
        if requested and (reason := P.reason_in(sentence.text)):
            out.append(Found("reason", reason.text, s, "prose", reason.text, context=sentence.text))
        if service := P.service_in(sentence.text):
            out.append(Found("requested_service", service.text, s, "prose", service.text, context=sentence.text))
        urgency = P.urgency_in(sentence.text)
        if urgency and not _hypothetical(sentence.text, urgency.text):
            out.append(Found("urgency", urgency.value, s, "prose", urgency.text, context=sentence.text))
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
        if s.section_type == "table_row":
            rows.setdefault(s.meta["table"], []).append(s)
    return rows


def _titles_before_tables(content: NormalizedContent) -> dict[int, str]:
    """The title paragraph right before each table ("Next of kin" above a details table)."""
    titles: dict[int, str] = {}
    last: str | None = None
    for s in content.sections:
        if s.section_type == "paragraph":
            heading = s.meta.get("heading_level") is not None
            last = s.text.strip() if _is_title(s.text.strip(), heading) else None
        elif s.section_type == "table_row" and s.meta.get("row") == 1 and last is not None:
            titles[s.meta["table"]] = last
    return titles


def _from_tables(content: NormalizedContent, skip: set[int] = frozenset()) -> list[Found]:
    """Label/value tables and list tables; ``skip``: tables of results read elsewhere."""
    cells_by_loc = {s.locator: s for s in content.sections if s.section_type == "table_cell"}
    titles = _titles_before_tables(content)
    out: list[Found] = []
    for t, rows in _rows_by_table(content).items():
        if t in skip:
            continue
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
            kind = header_kind(texts)
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
                        out.append(_for_person(Found(f, value, section, "table", value), person))
                    k += 2
                else:
                    k += 1
    return out


def _list_row(header: tuple[str, dict[str, int]], cells: list[tuple[int, str]], row: Section,
              cells_by_loc: dict[str, Section], t: int) -> list[Found]:
    kind, mapping = header
    values = {col: (cells[i][1] if i < len(cells) else "") for col, i in mapping.items()}
    if kind == "medications":
        # A column the header does not name ("Duration | WITHHELD until GP review") may
        # still say the medicine is not taken now: its cells are read as notes are.
        others = [text for i, (_, text) in enumerate(cells) if i not in mapping.values() and text.strip()]
        values["notes"] = " ; ".join(t for t in (values.get("notes", ""), *others) if t.strip())
    primary = next(iter(HEADER_COLUMNS[kind]))
    if not values.get(primary):
        return []
    return [Found(kind, values[primary], row, "header_table", values[primary], columns=values)]
