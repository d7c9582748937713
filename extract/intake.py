"""Intake form extractor (doc_type ``intake_form``): labelled answers -> cited facts.

``extract.intake_layout`` finds the fields of each page (labels read by meaning,
answers that stop at the next label, blocks about other people); this module turns
them into facts: demographics and identity candidates (only from the patient's own
fields - a name or date of an emergency contact, next of kin, guardian, insured or
clinician is a document fact about that person), chief concern, medications,
allergies (an explicit "none known" is a cited NKDA fact), family history,
preferences. Text that belongs to no field (far to the right of the answers, or in
a Notes box) is kept as a finding of its own and, when it touches something
clinical or is worded uncertainly, asks for human review. Hedges and red flags are
judged by the context policy; every free-text item carries the answer it came from
as ``context_text``.
"""

from __future__ import annotations

from core.content import NormalizedContent, PageContent, Word
from core.models import (
    Citation, DocType, ExtractionResult, ExtractionWarning, FactProposal, IdentifierKind,
    IdentityCandidate,
)
from core.policy.citations import quote_from_words
from extract import intake_labels as labels
from extract import intake_text as it
from extract import text_rules as tr
from extract.intake_layout import Field, Loose, read_page
from extract.layout import page_rows, text_of

SOURCE_TYPE = DocType.INTAKE_FORM.value


def extract_intake(content: NormalizedContent, source_id: str) -> ExtractionResult:
    """Demographics, chief concern, medications, allergies, family history,
    preferences and review findings from a typed (or OCR'd) intake form."""
    fields: list[Field] = []
    margins: list[Loose] = []
    for page in content.pages:
        if page.words:
            read_page(page_rows(page), fields, margins)
    builder = _Builder(source_id)
    for f in fields:
        builder.field(f)
    for m in margins:
        builder.margin(m)
    builder.finish()
    result = ExtractionResult(doc_type=DocType.INTAKE_FORM, facts=builder.facts, identifiers=builder.identifiers,
                              engine=f"intake-rules+{content.engine or content.source_kind}")
    result.warnings = [ExtractionWarning(code=w.code, message=w.message, page=w.page) for w in content.warnings]
    if not fields:
        result.warnings.append(ExtractionWarning(code="no_fields_found", message="No intake form labels were recognised."))
    return result


# --------------------------------------------------------------------------- facts


def _split_items(rows: list[list[Word]], *, commas: bool) -> list[list[Word]]:
    """Word runs for list items: one per row, split further at ";" (and "," outside
    parentheses when ``commas``); bullets and numbering are dropped."""
    items: list[list[Word]] = []
    for words in rows:
        cur: list[Word] = []
        depth = 0
        for w in words:
            if not cur and (w.text in ("-", "•", "*", "·") or (w.text[:-1].isdigit() and w.text[-1:] in ".)")):
                continue
            cur.append(w)
            depth += w.text.count("(") - w.text.count(")")
            if w.text.endswith(";") or (commas and depth <= 0 and w.text.endswith(",")):
                items.append(cur)
                cur = []
        if cur:
            items.append(cur)
    return [i for i in items if _has_content(it.clean_item(text_of(i)))]


def _has_content(text: str) -> bool:
    """Words, not just a blank line, a tick box glyph or punctuation."""
    return any(c.isalnum() for c in text)


def _merge(items: list[list[Word]], belongs_to_previous) -> list[list[Word]]:
    """Re-join fragments a comma or a line wrap cut off their item; ";" is final."""
    out: list[list[Word]] = []
    for item in items:
        prev = text_of(out[-1]) if out else ""
        if out and not prev.endswith(";") and belongs_to_previous(prev, text_of(item)):
            out[-1] = out[-1] + item
        else:
            out.append(item)
    return out


def _med_continues(prev: str, item: str) -> bool:
    """"..., as needed" or "..., at bedtime" finish the previous medication."""
    t = it.clean_item(item)
    return not t[:1].isalpha() or it.starts_like_frequency(t)


def _allergy_continues(prev: str, item: str) -> bool:
    """"Latex - itching, swelling": a bare reaction adds to the previous one."""
    return it.is_reaction(item) and it.parse_allergy(prev)["reaction"] is not None


def _family_continues(prev: str, item: str) -> bool:
    """"Father - heart disease, diabetes": conditions after a leading relative."""
    return it.leads_with_relative(prev) and not it.has_relative(item)


def _leading_date(words: list[Word]) -> tuple[str | None, list[Word]]:
    """The date an answer starts with, and its words ("07/22/1958 (age 67)")."""
    for n in range(min(len(words), 4), 0, -1):
        iso = tr.parse_date(text_of(words[:n]))
        if iso:
            return iso, words[:n]
    return None, words


def _name_part(text: str) -> bool:
    """A given or family name as written: letters, hyphens, apostrophes, spaces."""
    return bool(text) and all(t[:1].isalpha() and all(c.isalpha() or c in "-'’." for c in t)
                              for t in text.split())


# A name written in parts is cited by one run of the page's words that covers both
# parts, and only when that run is short (boxes side by side: "Surname | Given
# name(s)" over "OKONJO-HALE | Beatrix" reads as one run of six words).
MAX_NAME_SPAN_WORDS = 12


def _reading_span(page: PageContent, first: list[Word], last: list[Word]) -> list[Word] | None:
    """The page's words from the first of ``first + last`` to the last of them, in
    reading order, if that run is short enough to cite as one quote."""
    order = [w for row in page_rows(page) for w in row.words]
    pos = {id(w): i for i, w in enumerate(order)}
    want = first + last
    idx = sorted(pos[id(w)] for w in want if id(w) in pos)
    if len(idx) != len(want) or idx[-1] - idx[0] + 1 > MAX_NAME_SPAN_WORDS:
        return None
    return order[idx[0]: idx[-1] + 1]


_IDENTITY_KINDS = frozenset({"name", "first_name", "middle_name", "last_name", "dob", "mrn"})
_LIST_KINDS = frozenset({"medications", "allergies", "family_history", "problems", "symptoms"})


class _Builder:
    """Turns fields and margin notes into cited facts and identity candidates."""

    def __init__(self, source_id: str):
        self.source_id = source_id
        self.facts: list[FactProposal] = []
        self.identifiers: list[IdentityCandidate] = []
        self._counts: dict[str, int] = {}
        self._name_parts: dict[str, tuple[Field, list[Word], str]] = {}
        self._order: dict[int, dict[int, int]] = {}  # page -> word -> position in reading order

    # -- plumbing

    def _with_label(self, f: Field, words: list[Word]) -> list[Word]:
        """The label and its answer as one quote when they read on from each other;
        the answer alone when other words come between (a box heading in a row of
        headings, its answer on the row below)."""
        order = self._order.get(id(f.page))
        if order is None:
            order = self._order[id(f.page)] = {id(w): i for i, w in
                                               enumerate(w for row in page_rows(f.page) for w in row.words)}
        idx = [order.get(id(w), -1) for w in f.label + words]
        return f.label + words if idx == list(range(idx[0], idx[0] + len(idx))) else words

    def _citation(self, page: PageContent, words: list[Word], section: str) -> Citation:
        if section.endswith("[]"):
            n = self._counts.get(section, 0)
            self._counts[section] = n + 1
            section = f"{section[:-2]}[{n}]"
        quote, box = quote_from_words(page, words)
        return Citation(source_type=SOURCE_TYPE, source_id=self.source_id, page_or_section=f"page {page.number}",
                        field_or_chunk_id=section, quote_or_value=quote, page=page.number, bounding_box=box)

    def _add(self, fact_type: str, text: str, value: dict, page: PageContent, words: list[Word], section: str,
             confidence: float, *, document_only: bool = False, review: str | None = None,
             context: str | None = None) -> None:
        confs = [w.conf for w in words if w.conf is not None]
        if confs:
            confidence *= 0.5 + 0.5 * sum(confs) / len(confs)
        self.facts.append(FactProposal(
            fact_type=fact_type, fact_text=text, structured_value=value,
            citation=self._citation(page, words, section), confidence=round(max(0.05, min(confidence, 0.99)), 3),
            wants_review=review is not None, review_reason=review, document_fact_only=document_only,
            context_text=context,
        ))

    @staticmethod
    def _doubt(text: str, answer: str | None = None) -> str | None:
        """Why an item is uncertain: a hedge, a "?" or struck-through text in it, or a
        hedge in its answer whose scope reaches it."""
        cue = it.answer_doubt(text, answer)
        return f"uncertain wording ({cue!r})" if cue else None

    @classmethod
    def _review(cls, text: str, clinical: bool, where: str | None = None, answer: str | None = None) -> str | None:
        """Why a clinically relevant item needs a person: uncertain wording, red flags, place."""
        reasons = []
        if where:
            reasons.append(where)
        if clinical and (doubt := cls._doubt(text, answer)):
            reasons.append(doubt)
        if flag := it.red_flag(text):
            reasons.append(f"red-flag language ({flag!r})")
        return "; ".join(reasons) or None

    @staticmethod
    def _score(parsed_parts: float, f: Field, uncertain: bool) -> float:
        """0.55 base + label recognised + answer stands alone + item parsed, minus doubt.

        A clean, fully parsed item under a known label scores 0.95; uncertain
        wording costs 0.25, stray text beside the answer 0.07.
        """
        score = 0.55
        score += 0.15 if f.kind != "other" else 0.05
        score += 0.03 if f.crowded else 0.10
        score += 0.15 * parsed_parts
        return score - (0.25 if uncertain else 0.0)

    # -- fields

    def field(self, f: Field) -> None:
        words = [w for r in f.rows for w in r]
        if f.kind in _LIST_KINDS:  # one item per row: keep the rows apart for the context policy
            text = "; ".join(t for t in (it.clean_item(text_of(r)) for r in f.rows) if t)
        else:
            text = it.clean_item(text_of(words))
        if f.kind == "ignore" or not _has_content(text):
            return
        if f.kind in _IDENTITY_KINDS and labels.reads_as_label(text):
            return  # a blank form's next label ("Last Name: First Name") is no answer
        if f.kind in ("name", "first_name", "last_name", "middle_name") and f.owner is None \
                and it.names_a_clinician(text):
            f.owner = "clinician"  # "Name: Dr. Alan Brooks" on a cover sheet is not the patient
        handler = getattr(self, f"_{f.kind}", None)
        if f.owner is not None:
            self._about_someone_else(f, words, text)
        elif f.kind in it.DEMOGRAPHIC_KINDS:
            self._demographic(f, words, text)
        elif handler is not None:
            handler(f, words, text)
        else:
            self._other(f, words, text)

    def finish(self) -> None:
        """Identity from a name written in parts ("First name" / "Last name")."""
        parts = self._name_parts
        if "first_name" not in parts or "last_name" not in parts:
            return
        (f1, w1, first), (f2, w2, last) = parts["first_name"], parts["last_name"]
        middle = parts["middle_name"][2] if "middle_name" in parts else ""
        name = f"{last}, {first}" + (f" {middle}" if middle else "")
        if tr.parse_person_name(name) is None or f1.page is not f2.page:
            return
        cite = _reading_span(f1.page, f1.label + w1, f2.label + w2)
        if cite is None:
            return
        self.identifiers.append(IdentityCandidate(kind=IdentifierKind.NAME, value=name,
                                                  citation=self._citation(f1.page, cite, "patient.name")))

    def _about_someone_else(self, f: Field, words: list[Word], text: str) -> None:
        """A field about an emergency contact, next of kin, guardian, the insured, a
        clinician: a document fact, never a patient identifier."""
        label = f.label_text
        said = f"{label}: {text}" if f.owner.split()[0] in label.lower() else f"{label}: {text} ({f.owner})"
        value = {"label": label, "value": text, "person": f.owner}
        if f.kind not in ("other", None):
            value["field"] = f.kind
        self._add("other", said, value, f.page, self._with_label(f, words), "other_document_facts[]",
                  self._score(0.8, f, False), document_only=True)

    def _demographic(self, f: Field, words: list[Word], text: str) -> None:
        value, parsed = text, 1.0
        cite_words = self._with_label(f, words)
        if f.kind == "dob":
            iso, printed = _leading_date(words)
            if iso:
                value, cite_words = iso, self._with_label(f, printed)
            else:
                value, parsed = text, 0.3
        elif f.kind == "name":
            parsed = 1.0 if tr.parse_person_name(text) else 0.3
        elif f.kind in ("first_name", "last_name", "middle_name"):
            parsed = 1.0 if _name_part(text) else 0.3
            if parsed == 1.0:
                self._name_parts.setdefault(f.kind, (f, words, text))
        elif f.kind == "mrn":
            first = next((w for w in words if w.text.strip("#:,;")), words[0])
            value = first.text.strip(" #:,;")
            cite_words = self._with_label(f, words[: words.index(first) + 1])
        self._add("demographic", f"{f.label_text}: {value}", {"field": f.kind, "value": value, "printed": text},
                  f.page, cite_words, f"demographics.{f.kind}", self._score(parsed, f, False), document_only=True)
        if f.kind in ("name", "dob", "mrn") and parsed == 1.0 and value:
            self.identifiers.append(IdentityCandidate(
                kind=IdentifierKind(f.kind), value=value,
                citation=self._citation(f.page, cite_words, f"patient.{f.kind}"),
            ))

    def _chief_concern(self, f: Field, words: list[Word], text: str) -> None:
        review = self._review(text, clinical=True)
        self._add("chief_concern", f"Chief concern: {text}", {"text": text}, f.page, words, "chief_concern",
                  self._score(1.0, f, bool(self._doubt(text))), document_only=True, review=review, context=text)

    def _medications(self, f: Field, words: list[Word], text: str) -> None:
        if it.is_none_answer(text):
            self._add("other", "Reports taking no current medications", {"no_current_medications": True},
                      f.page, words, "other_document_facts[]", self._score(1.0, f, False), document_only=True)
            return
        for item in _merge(_split_items(f.rows, commas=True), _med_continues):
            item_text = it.clean_item(text_of(item))
            med = it.parse_medication(item_text)
            parts = (0.4 + 0.3 * (med["dose"] is not None) + 0.3 * (med["frequency"] is not None))
            uncertain = bool(self._doubt(item_text, text))
            self._add("medication", f"Takes {item_text}", med, f.page, item, "current_medications[]",
                      self._score(parts, f, uncertain), review=self._review(item_text, True, answer=text),
                      context=text)

    def _allergies(self, f: Field, words: list[Word], text: str) -> None:
        if it.is_no_known_allergies(text):
            # An explicit statement, not silence: cited, but never a chart allergy.
            self._add("allergy", "No known allergies reported", {"substance": "", "status": "no_known_allergies"},
                      f.page, words, "allergies[]", self._score(1.0, f, False), document_only=True, context=text)
            return
        for item in _merge(_split_items(f.rows, commas=True), _allergy_continues):
            item_text = it.clean_item(text_of(item))
            allergy = it.parse_allergy(item_text)
            if "?" in allergy["substance"]:  # "shellfish?": the mark is doubt, not part of the name
                allergy["substance"] = it.clean_item(allergy["substance"].replace("?", " ")) or allergy["substance"]
            uncertain = bool(self._doubt(item_text, text))
            parts = 0.7 + 0.3 * (allergy["reaction"] is not None)
            text_out = f"Allergy: {allergy['substance']}" + (f" ({allergy['reaction']})" if allergy["reaction"] else "")
            self._add("allergy", text_out, allergy, f.page, item, "allergies[]",
                      self._score(parts, f, uncertain), review=self._review(item_text, True, answer=text),
                      context=text)

    def _family_history(self, f: Field, words: list[Word], text: str) -> None:
        if it.is_none_answer(text):
            return
        for item in _merge(_split_items(f.rows, commas=True), _family_continues):
            item_text = it.clean_item(text_of(item))
            fh = it.parse_family_history(item_text)
            parts = 1.0 if fh["relative"] else 0.6
            self._add("family_history", f"Family history: {item_text}", fh, f.page, item, "family_history[]",
                      self._score(parts, f, bool(self._doubt(item_text, text))), document_only=True,
                      review=self._review(item_text, True, answer=text), context=text)

    def _problems(self, f: Field, words: list[Word], text: str, label: str = "History") -> None:
        if it.is_none_answer(text):
            return
        for item in _split_items(f.rows, commas=True):
            item_text = it.clean_item(text_of(item))
            # Self-reported history is cited document content, not chart truth: a
            # reviewer may approve it into the problem list.
            self._add("problem", f"{label}: {item_text}", {"description": item_text, "field": f.label_text},
                      f.page, item, "problems[]", self._score(0.8, f, bool(self._doubt(item_text, text))),
                      document_only=True, review=self._review(item_text, True, answer=text), context=text)

    def _symptoms(self, f: Field, words: list[Word], text: str) -> None:
        self._problems(f, words, text, label="Symptom")

    def _pregnancy(self, f: Field, words: list[Word], text: str) -> None:
        answer = text.lower()
        review = self._review(text, clinical=True)
        # A bare "Not sure" governs nothing by itself; said of pregnancy it is doubt.
        if review is None and (cue := it.uncertain_words(f"Pregnant: {text}")):
            review = f"uncertain wording ({cue!r})"
        if review is None and not answer.startswith(("no", "n/a", "not applicable")):
            review = "pregnancy status reported; confirm before prescribing or imaging"
        self._add("other", f"Pregnancy: {text}", {"field": "pregnancy", "answer": text}, f.page, self._with_label(f, words),
                  "needs_review_findings[]" if review else "other_document_facts[]",
                  self._score(1.0, f, bool(self._doubt(text))), document_only=True, review=review, context=text)

    def _preference(self, f: Field, words: list[Word], text: str) -> None:
        self._add("preference", f"{f.label_text}: {text}", {"preference": f.label_text, "value": text},
                  f.page, self._with_label(f, words), "preferences[]", self._score(1.0, f, False), document_only=True)

    def _notes(self, f: Field, words: list[Word], text: str) -> None:
        for item in _split_items(f.rows, commas=False):
            self._free_text(item, f.page, "notes", f"written in the form's {f.label_text!r} box")

    def _other(self, f: Field, words: list[Word], text: str) -> None:
        self._add("other", f"{f.label_text}: {text}", {"label": f.label_text, "value": text}, f.page,
                  self._with_label(f, words), "other_document_facts[]", self._score(0.8, f, False), document_only=True)

    # -- text outside the fields

    def margin(self, m: Loose) -> None:
        where = "written outside the form's fields"
        if m.near is not None:
            where += f" (beside {m.near.label_text!r})"
        self._free_text(m.words, m.page, "margin", where, near=m.near)

    def _free_text(self, words: list[Word], page: PageContent, location: str, where: str,
                   near: Field | None = None) -> None:
        """A note outside the answers: reviewed when it touches something clinical,
        by its own words or by the field it sits beside; otherwise a document fact."""
        text = it.clean_item(text_of(words))
        if not _has_content(text):
            return
        topic = it.clinical_topic(text)
        by_content = topic is not None
        if topic is None and near is not None and near.kind in it.CLINICAL_KINDS:
            topic = {"allergies": "allergy", "medications": "medication"}.get(near.kind, "symptom")
        uncertain = self._doubt(text)
        # Notes in a Notes box were meant to be written; margin notes were squeezed in.
        confidence = 0.5 + (0.1 if location == "notes" else 0.0) - (0.1 if uncertain else 0.0)
        value: dict = {"note": text, "location": location, "near_field": near.label_text if near else None}
        if topic is None:
            self._add("other", f"Note: {text}", value, page, words, "other_document_facts[]", confidence,
                      document_only=True, context=text)
            return
        fact_type = {"allergy": "allergy", "medication": "medication", "symptom": "problem"}.get(topic, "other")
        if fact_type == "allergy":
            value["substance"] = it.clean_item(text.replace("?", " ")) or text
            value["reaction"] = None
        reasons = [where, f"mentions {topic}" if by_content else f"beside a {near.kind.replace('_', ' ')} answer"]
        if uncertain:
            reasons.append(uncertain)
        if flag := it.red_flag(text):
            reasons.append(f"red-flag language ({flag!r})")
        label = {"allergy": "Possible allergy", "medication": "Possible medication",
                 "pregnancy": "Possible pregnancy", "symptom": "Reported symptom"}[topic]
        place = "in the margin" if location == "margin" else "in the notes"
        self._add(fact_type, f"{label} written {place}: {text!r}", value, page, words, "needs_review_findings[]",
                  confidence - (0.0 if by_content else 0.1),
                  document_only=fact_type == "other", review="; ".join(reasons), context=text)
