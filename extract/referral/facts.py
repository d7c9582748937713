"""What the referral reader found (``Found``) and how each finding becomes a fact or an
identifier: referral details, problems, medications, allergies, the patient's name,
date of birth and number, and other people's details as document facts only."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field

from domain.content import Section
from domain.models import (Citation, ExtractionWarning, FactProposal, IdentifierKind, IdentityCandidate,
                           VitalSignValue)
from domain.policy.facts.medication_status import status_in_note, status_reading, status_with_stop, status_words
from domain.policy.facts.result_comments import comment_doubts
from domain.policy.facts.vital_signs import implausible, vital_text
from extract.values import lists as phrases
from extract.values.lists import NO_KNOWN_TEXT
from extract.referral import prose as P
from extract.referral.pages import cite_words, words_of
from extract.values.prose_allergies import AllergyMention, allergy_in
from extract.values.prose_meds import medications_in
from extract.values import text_rules as tr
from extract.values import numbers as V
from extract.values.dates import ParsedDate, find_date, parse_date, settle
from extract.values.flags import fared_flag, resolve_flag
from extract.values.written_answers import answer_doubt, doubt_reason, is_no_known_allergies, names_a_clinician
from extract.referral.labels import (DOB_INLINE, HEADER_COLUMNS, IDENTITY_FIELDS, LIST_FIELDS, MRN_INLINE, MRN_VALUE,
                                     OTHER_ID_INLINE)
from extract.section_facts import SectionFacts


@dataclass(slots=True)
class Found:
    """One value the reader found in a letter, before it becomes a fact or an identifier."""

    field: str
    value: str
    section: Section
    how: str  # inline | following | table | header_table | salutation | signature | standalone_date | prose
    #           | sentence | result_table (a cell of a table with a column per test)
    quote: str | None = None
    columns: dict[str, str] | None = None  # a row of a table with a header row
    person: str | None = None  # an identity field of someone else: whose ("next of kin"...)
    context: str | None = None  # the sentence or answer a free-text value was read from
    parsed: dict | None = None  # an item a sentence reader took apart (how == "sentence")
    status: str | None = None  # what the list's heading says of every item ("stopped": "Medications stopped")
    whole: bool = False  # one item, commas and all (under "Principal diagnosis")


@dataclass(slots=True)
class Ctx(SectionFacts):
    """One letter's facts; ``scalars``: the referral fields already given."""

    scalars: set[str] = field(default_factory=set)
    day_first: bool | None = None  # how the letter's other numeric dates settle "02/08/1944"
    # Cited by OCR'd words: the least confidence among each citation's words, by field path.
    ocr_conf: dict[str, float] = field(default_factory=dict)

    def cite(self, section: Section, quote: str, path: str) -> Citation:
        """A paragraph of a PDF letter is cited by page and the box of the quoted words."""
        if "words" in section.meta:
            words = words_of(section, quote) or section.meta["words"]
            confs = [w.conf for w in words if w.conf is not None]
            if confs:
                self.ocr_conf[path] = min(confs)
            return cite_words(self.source_type, self.source_id, section, path, words)
        return SectionFacts.cite(self, section, quote, path)


_BASE = {"table": 0.9, "header_table": 0.88, "inline": 0.86, "following": 0.8, "salutation": 0.62,
         "signature": 0.62, "standalone_date": 0.7, "prose": 0.68,
         "sentence": 0.6, "result_table": 0.8}
# Values read without a label of their own: an explicit label for the same field wins.
INFERRED = ("salutation", "signature", "standalone_date", "prose")


def emit(ctx: Ctx, item: Found) -> None:
    """A finding as list items, another person's detail, an identifier or a referral fact."""
    if item.how == "sentence":
        _sentence_item(ctx, item)
        return
    if item.how == "result_table":
        _table_result(ctx, item)
        return
    if item.field in LIST_FIELDS:
        if item.columns is not None:
            _list_item(ctx, item.field, item.columns, item, item.value)
            return
        if item.field == "allergies":
            for text in phrases.allergy_items(item.value):
                told = allergy_in(text) if len(text.split()) >= MIN_PROSE_WORDS else None
                _list_item(ctx, item.field, None, item, text, told=told)
            return
        items = [item.value] if item.whole else phrases.problem_items(item.value) if item.field == "problems" \
            else phrases.split_items(item.value, commas=item.field != "medications")
        for text in items:
            told = medications_in(text, listed=True) if item.field == "medications" and not _with_status(text) else []
            if len(told) > 1 or (told and len(phrases.parse_medication(text)["name"].split()) > MAX_NAME_WORDS):
                # "She takes warfarin 5 mg daily and metformin 500 mg bd": one item per drug, as told
                why = LIST_LINE_REASON if _one_line_list(text, told) else SENTENCE_REASON
                for m in told:
                    _list_item(ctx, item.field, None, item, m.mention.text, sentence=True, why=why, said=m.status)
                continue
            _list_item(ctx, item.field, None, item, text)
        return
    if item.person is not None:
        _other_person(ctx, item)
        return
    if item.field in IDENTITY_FIELDS:
        _identity(ctx, item)
        return
    _referral(ctx, item)


def _column_status(ctx: Ctx, columns: dict[str, str]) -> tuple[str | None, str | None]:
    """(status, doubt) of a medicine from its table's "Status" and "Stopped" columns
    (the medication status policy reads them; a stop still to come is a doubt)."""
    status = V.normalize_ws(columns.get("status") or "")
    status = None if not status or V.NULL_VALUE.match(status) else status
    if status is None and (noted := status_in_note(columns.get("notes"))):
        status = noted  # "Comments: Stopped 01/11/2026 - hyponatraemia": the policy reads it
    stop = V.normalize_ws(columns.get("stop") or "")
    if not stop or V.NULL_VALUE.match(stop):
        return status, None
    found = find_date(stop)
    iso = None
    if found is not None:
        found = settle(found, ctx.day_first)  # by the letter's other dates, when they show the order
        iso = found.iso if found.day_first_iso is None else None  # an open order: the date as printed
    return status_with_stop(status, iso or stop, datetime.date.today().isoformat())


def _with_status(text: str) -> bool:
    """A listed medicine that prints its status after it ("Diltiazem 120 mg daily -
    STOPPED, replaced by bisoprolol"): one item, whatever else its status names."""
    parsed = phrases.parse_medication(text)
    return bool(parsed.get("status")) and 0 < len(parsed["name"].split()) <= MAX_NAME_WORDS


def _other_person(ctx: Ctx, item: Found) -> None:
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


def _identity(ctx: Ctx, item: Found) -> None:
    value = item.value
    if item.field == "patient_name":
        dob = DOB_INLINE.search(value)
        mrn = MRN_INLINE.search(value)
        other = OTHER_ID_INLINE.search(value)  # "NHS No 943 476 5919": compared only when it is the chart's MRN
        cut = min([m.start() for m in (dob, mrn, other) if m] or [len(value)])
        if other:
            _add_identifier(ctx, IdentifierKind.OTHER_ID, other.group(1), item.section, other.group(1),
                            "patient.other_id")
        # Trailing punctuation, and OCR's debris of a rule or a box after the name ("_", "|")
        name = re.sub(r"(?:[\s,;(\-\u2013]|\s[_|\\/.:~`'\"]+)+$", "", value[:cut]).strip()
        if dob:
            _identity(ctx, Found("dob", dob.group(1).strip(" ,.)"), item.section, item.how))
        if mrn:
            _identity(ctx, Found("mrn", mrn.group(1), item.section, item.how))
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
        mrn = MRN_INLINE.search(value)
        if mrn:  # "DOB: 03/14/1978  MRN: WB-204118" on one line
            _identity(ctx, Found("mrn", mrn.group(1), item.section, item.how))
        if parsed and parsed.iso:
            value, iso, other = printed, parsed.iso, None
            if (found := find_date(printed)) is not None:
                found = settle(found, ctx.day_first)  # by the letter's other dates, when they show the order
                iso, other = found.iso, found.day_first_iso
            if other is not None or (parsed.ambiguous and found is None):
                ctx.warnings.append(ExtractionWarning(
                    code="docx_ambiguous_date",
                    message=f"Date of birth {value!r} could be read day-first or month-first; read as {iso}.",
                ))
            _add_identifier(ctx, IdentifierKind.DOB, iso, item.section, value, "patient.dob", other)
        else:
            ctx.warnings.append(ExtractionWarning(
                code="docx_invalid_dob", message=f"Date of birth {value!r} is not a complete date; not used."))
        return
    m = MRN_VALUE.search(value)
    if m:
        _add_identifier(ctx, IdentifierKind.MRN, m.group(0), item.section, m.group(0), "patient.mrn")


def _leading_date(text: str) -> tuple[ParsedDate | None, str]:
    """The longest run of leading words that reads as a date ("14 March 1978 (age 46)")."""
    words = text.split()
    for n in range(min(len(words), 4), 0, -1):
        candidate = " ".join(words[:n]).rstrip(",;")
        parsed = parse_date(candidate)
        if parsed is not None:
            return parsed, candidate
    return None, text


def _add_identifier(ctx: Ctx, kind: IdentifierKind, value: str, section: Section, quote: str, path: str,
                    other_reading: str | None = None) -> None:
    if any(c.kind == kind and c.value == value for c in ctx.identifiers):
        return
    ctx.identifiers.append(IdentityCandidate(kind=kind, value=value, citation=ctx.cite(section, quote, path),
                                             other_reading=other_reading))


def _referral(ctx: Ctx, item: Found) -> None:
    f, value = item.field, V.normalize_ws(item.value)
    if f in ctx.scalars and item.how in INFERRED:
        return  # an explicit label (or an earlier sentence) already gave this field
    structured: dict = {"field": f, "value": value}
    factors: list[float] = []
    reasons: list[str] = []  # each one asks for review
    if f in ("letter_date", "appointment"):
        parsed = parse_date(value)
        if parsed and parsed.iso:
            iso, ambiguous = parsed.iso, parsed.ambiguous
            if ambiguous and (found := find_date(value)) is not None and found.start == 0 \
                    and found.end == len(value) and found.day_first_iso:
                # By the letter's other dates, when they show the order (a birth date "09/23/1971").
                found = settle(found, ctx.day_first)
                iso, ambiguous = found.iso, found.day_first_iso is not None
            structured.update(value=iso, as_printed=value)
            if ambiguous:
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


def _one_line_list(text: str, told: list) -> bool:
    """Medicines written one after another on a labelled line ("Meds: lisinopril 20mg
    daily, metformin 1000mg BID, ..."), nothing between them but commas or "and"."""
    gaps = [text[a.mention.end:b.mention.start] for a, b in zip(told, told[1:])]
    return not text[:told[0].mention.start].strip() and all(re.fullmatch(r"[\s,;]*(?:and\s+)?", g) for g in gaps)


def _list_item(ctx: Ctx, kind: str, columns: dict | None, item: Found, text: str,
               told: AllergyMention | None = None, sentence: bool = False, why: str | None = None,
               said: str | None = None) -> None:
    """One problem, medication or allergy. ``told``: an allergy read out of a sentence
    (its substance and reaction), cited by the whole sentence and held for review:
    a sentence is read less surely than a list. ``said``: a medicine's change its
    sentence tells ("stop amlodipine 5 mg" on a labelled line)."""
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
            status, doubt = _column_status(ctx, columns)
            if status:
                parsed["status"] = status
            if doubt:
                reasons.append(doubt)
        if said and not parsed.get("status"):
            parsed["status"] = said  # the sentence's own verb, before any heading's
        if item.status and not parsed.get("status"):
            parsed["status"] = item.status  # under "Medications stopped": the medicine's history
        structured = parsed
        if not parsed["dose"]:
            factors.append(0.8)
            reasons.append("dose not stated")
        if not parsed["frequency"]:
            factors.append(0.9)
        if sentence:
            factors.append(0.85)
            reasons.append(why or SENTENCE_REASON)
        fact_type, collection = "medication", "medications"
        summary = " ".join(v for v in (parsed["name"], parsed["dose"], parsed["route"], parsed["frequency"]) if v)
        fact_text = f"Medication: {summary}" + (f" ({status_words(parsed['status'])})" if parsed.get("status") else "")
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
        fact_text, none_known = phrases.allergy_fact_text(parsed)
        if none_known:
            doc_only = True  # an explicit statement, cited, but never a chart allergy
            if not is_no_known_allergies(text):  # more written after it than a none
                factors.append(0.5)
                reasons.append(f"'{NO_KNOWN_TEXT[parsed['status']]}' with more written after it ({text!r})")
        elif parsed.get("exception_to"):  # "NKDA except penicillin": the penicillin allergy, checked
            reasons.append(_exception_reason(parsed["exception_to"]))
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
    quote = text if not columns else (columns.get(next(iter(HEADER_COLUMNS[kind]))) or text)
    base = _BASE[item.how]
    if item.how == "following" and told is None and _reads_cleanly(kind, structured):
        base = max(base, _BASE["inline"])  # a clean item of a list under its heading is as good as a labelled line
    ctx.facts.append(FactProposal(
        fact_type=fact_type, fact_text=fact_text, structured_value=structured,
        citation=ctx.cite(item.section, quote, path), confidence=V.confidence(base, factors),
        wants_review=bool(reasons),
        review_reason="; ".join(reasons) or None, document_fact_only=doc_only, context_text=answer,
    ))


def _exception_reason(status: str) -> str:
    return f"an exception written after '{NO_KNOWN_TEXT[status]}': check the allergy against the source"


# ---------------------------------------------------------------------------- told in a sentence

SENTENCE_REASON = "read from a sentence of the letter, not a list: check it against the sentence"
# Medicines written one after another on one line after their label: read apart by their
# doses, which the line's commas may not match ("... 40mg qhs, ASA 81mg daily").
LIST_LINE_REASON = "one of several medicines written on one line: check it against the line"
VITAL_SENTENCE_REASON = ("a reading told in a sentence of the letter: no time of measurement goes with it; "
                         "check the sign, the numbers and the unit against the sentence")
LAB_SENTENCE_REASON = ("a result told in a sentence of the letter: no reference range or collection date goes "
                       "with it; check the test, value and unit in the source before it enters the chart")


def _sentence_item(ctx: Ctx, item: Found) -> None:
    """An allergy, medication, problem or result a sentence told (``extract.referral.sentence_facts``).
    Held for review; one the context policy reads as not the patient's (negated,
    someone else's, hypothetical) is a document fact carrying that context instead."""
    parsed = dict(item.parsed or {})
    other = parsed.pop("not_the_patients", False)
    reasons = [] if other else [SENTENCE_REASON]
    if item.field == "labs":
        when = parsed.pop("stated_when", None)
        value = {"test_name": parsed["test_name"], "value": parsed["value"], "unit": parsed["unit"],
                 "reference_range": "", "collection_date": None, "abnormal_flag": "unknown"}
        if when:
            value["stated_when"] = when
        if parsed.get("analyte"):
            value["analyte"] = parsed["analyte"]
        if code := parsed.get("printed_flag"):  # "resistant to trimethoprim": R, said "resistant" in answers
            value["flags_as_printed"] = [code]
            value["abnormal_flag"] = fared_flag(code)
        fact_type, collection, reasons = "lab_result", "text_results", [LAB_SENTENCE_REASON]
        # "potassium 6.2, but the sample was haemolysed": the letter passes on the lab's doubt
        reasons += comment_doubts(value["test_name"], scope=[item.context or ""], unit=value["unit"])
        text = f"{value['test_name']} {value['value']}" + (f" {value['unit']}" if value["unit"] else "") \
            + (f" ({when})" if when else "") + " (stated in the letter)"
    elif item.field == "vitals":
        value = VitalSignValue(**{k: parsed[k] for k in ("kind", "label", "value", "unit", "systolic", "diastolic")})
        fact_type, collection, text = "vital_sign", "vital_signs", vital_text(value.model_dump()) + " (stated in the letter)"
        problem = implausible(value.kind, value.value, value.unit, value.systolic, value.diastolic)
        reasons = [VITAL_SENTENCE_REASON, *parsed["doubts"], *([problem] if problem else [])]
        value = value.model_dump()
    elif item.field == "allergies" and parsed.get("no_known_allergies"):
        status = parsed.get("status") or "no_known_allergies"
        fact_type, collection, text, reasons, other = "allergy", "allergies", f"Allergies: {NO_KNOWN_TEXT[status]}", \
            [], True
        value = {"substance": "", "reaction": None, "severity": None, "no_known_allergies": True, "status": status}
    elif item.field == "allergies":
        value = {"substance": parsed["substance"], "reaction": parsed["reaction"], "severity": None,
                 "no_known_allergies": False}
        fact_type, collection = "allergy", "allergies"
        if parsed.get("exception_to"):
            value["exception_to"] = parsed["exception_to"]
            reasons = [*reasons, _exception_reason(parsed["exception_to"])]
        text = f"Allergy: {value['substance']}" + (f" - reaction: {value['reaction']}" if value["reaction"] else "")
    elif item.field == "medications":
        value = {k: parsed.get(k) for k in ("name", "dose", "route", "frequency")}
        fact_type, collection = "medication", "medications"
        text = "Medication: " + " ".join(v for v in value.values() if v)
        if parsed.get("status"):  # "stop amlodipine 5 mg": the letter's change, never a current medicine unseen
            value["status"] = parsed["status"]
            text += f" ({status_words(parsed['status'])})"
    else:
        value = {"description": parsed["description"], "code": None, "coding_system": None}
        fact_type, collection = "problem", "problems"
        text = f"Problem: {value['description']}"
    ctx.facts.append(FactProposal(
        fact_type=fact_type, fact_text=text, structured_value=value,
        citation=ctx.cite(item.section, item.quote or item.value, ctx.path(collection)),
        confidence=V.confidence(_BASE["sentence"], []), wants_review=bool(reasons),
        review_reason="; ".join(reasons) or None, document_fact_only=bool(other), context_text=item.context,
    ))


# ---------------------------------------------------------------------------- a table with a column per test

TABLE_RESULT_REASON = ("a result from a table in the letter, not from the laboratory's report: check the test, "
                       "value, unit and date against the table before it enters the chart")


def _table_result(ctx: Ctx, item: Found) -> None:
    """A result from a letter's table with one column per test (``extract.referral.result_tables``),
    cited to its cell and held for review like every result a letter tells."""
    p = dict(item.parsed or {})
    if item.field == "vitals":
        _table_reading(ctx, item, p)
        return
    reading = resolve_flag([p["printed_flag"]] if p["printed_flag"] else [], p["value"], p["reference_range"])
    reasons = [TABLE_RESULT_REASON, *reading.review_reasons()]
    if p["date_problem"]:
        reasons.append(p["date_problem"])
    reasons += comment_doubts(p["test_name"], own=p.get("notes") or [], unit=p["unit"])
    value = {"test_name": p["test_name"], "value": p["value"], "unit": p["unit"],
             "reference_range": p["reference_range"], "collection_date": p["collection_date"],
             "abnormal_flag": reading.flag, "flag_derived": reading.derived, "analyte": p["analyte"]}
    if p["printed_flag"]:
        value["flags_as_printed"] = [p["printed_flag"]]
    text = f"{value['test_name']}: {value['value']}" + (f" {value['unit']}" if value["unit"] else "") \
        + (f" (ref {value['reference_range']})" if value["reference_range"] else "") \
        + (f" collected {value['collection_date']}" if value["collection_date"] else "") + " (table in the letter)"
    ctx.facts.append(FactProposal(
        fact_type="lab_result", fact_text=text, structured_value=value,
        citation=ctx.cite(item.section, item.quote or item.value, ctx.path("text_results")),
        confidence=V.confidence(_BASE["result_table"], [0.9] * (len(reasons) - 1)), wants_review=True,
        review_reason="; ".join(reasons), document_fact_only=False, context_text=item.section.text,
    ))


TABLE_VITAL_REASON = "a reading from a table in the letter: check the sign, the numbers, the unit and the date"


def _table_reading(ctx: Ctx, item: Found, p: dict) -> None:
    """A vital sign from a letter's table (``extract.referral.result_tables``), cited to
    its cell and dated by its row or column; held for review as every reading a letter
    tells."""
    value = VitalSignValue(**{k: p[k] for k in ("kind", "label", "value", "unit", "systolic", "diastolic",
                                                "measured_at")})
    problem = implausible(value.kind, value.value, value.unit, value.systolic, value.diastolic)
    reasons = [TABLE_VITAL_REASON, *p["doubts"], *([p["date_problem"]] if p["date_problem"] else []),
               *([problem] if problem else [])]
    ctx.facts.append(FactProposal(
        fact_type="vital_sign", fact_text=vital_text(value.model_dump()) + " (table in the letter)",
        structured_value=value.model_dump(),
        citation=ctx.cite(item.section, item.quote or item.value, ctx.path("vital_signs")),
        confidence=V.confidence(_BASE["result_table"], [0.9] * (len(reasons) - 1)), wants_review=True,
        review_reason="; ".join(reasons), document_fact_only=False, context_text=item.section.text,
    ))
