"""Intake form extractor (doc_type ``intake_form``): labelled answers -> cited facts.

``extract.intake.layout`` finds the fields of each page (labels read by meaning,
answers that stop at the next label, blocks about other people); this module turns
them into facts: demographics and identity candidates (only from the patient's own
fields - a name or date of an emergency contact, next of kin, guardian, insured or
clinician is a document fact about that person), chief concern, medications,
allergies (an explicit "none known" is a cited NKDA fact), family history,
preferences. An answer given by tick boxes is what its ticked box says; boxes
that contradict each other ask for review. Text that belongs to no field (far to
the right of the answers, or in a Notes box) is kept as a finding of its own and,
when it touches something clinical or is worded uncertainly, asks for human review.
Hedges and red flags are judged by the context policy; every free-text item carries
the answer it came from as ``context_text``. A form that gives the patient two
different names, dates of birth or record numbers identifies nobody by them. How an
answer is cut into items and judged for review is ``extract.intake.answers``'s.
"""

from __future__ import annotations

from dataclasses import replace

from domain.policy.checks.indications import names_a_condition
from domain.content import NormalizedContent, PageContent, Word
from domain.models import (
    Citation, DocType, ExtractionResult, ExtractionWarning, FactProposal, IdentifierKind,
    IdentityCandidate, VitalSignValue,
)
from domain.policy.facts.citations import quote_from_words
from domain.policy.facts.vital_signs import VITAL_SIGNS, implausible, sign_of_label, vital_text
from domain.policy.facts.ocr_readings import speck_accents
from domain.policy.context.mentions import red_flag
from extract.values import labels
from extract.values.identity_labels import record_label_words
from extract.values.lists import NO_KNOWN_TEXT
from extract.values import written_answers as it
from extract.values import text_rules as tr
from extract.intake.answers import (
    allergy_continues, answer_score, family_continues, has_content, item_doubt, leading_date, med_continues,
    merge_items, problem_continues, review_reason, split_items,
)
from extract.intake.layout import LIST_KINDS, Field, Loose, read_page, readings_row
from extract.layout import page_rows, segments, text_of, words_at
from extract.values.dates import document_date_order, settle
from extract.values.prose_vitals import vital_values_in
from extract.values.vital_readings import read_vital

SOURCE_TYPE = DocType.INTAKE_FORM.value


def extract_intake(content: NormalizedContent, source_id: str) -> ExtractionResult:
    """Demographics, chief concern, medications, allergies, family history,
    preferences and review findings from a typed (or OCR'd) intake form."""
    fields: list[Field] = []
    margins: list[Loose] = []
    for page in content.pages:
        if page.words:
            read_page(page_rows(page), fields, margins)
    # One form prints its dates one way: "16/09/2026" beside it settles "02/08/1944".
    builder = _Builder(source_id, document_date_order(" ".join(w.text for w in page.words) for page in content.pages))
    for f in fields:
        builder.field(f)
    for m in margins:
        builder.margin(m)
    builder.finish()
    result = ExtractionResult(doc_type=DocType.INTAKE_FORM, facts=builder.facts, identifiers=builder.identifiers,
                              engine=f"intake-rules+{content.engine or content.source_kind}")
    result.warnings = [ExtractionWarning(code=w.code, message=w.message, page=w.page) for w in content.warnings]
    result.warnings += builder.warnings
    if not fields:
        result.warnings.append(ExtractionWarning(code="no_fields_found", message="No intake form labels were recognised."))
    return result



FORM_VITAL_REASON = "a reading written on a form: no time of measurement goes with it; check it on the page"
_IDENTITY_OF = {IdentifierKind.NAME: ("name", "first_name", "middle_name", "last_name"),
                IdentifierKind.DOB: ("dob",), IdentifierKind.MRN: ("mrn",)}


def _same_person_value(kind: IdentifierKind, value: str) -> str:
    """An identifier value compared across fields: a name by its first and last name."""
    if kind is IdentifierKind.NAME and (name := tr.parse_person_name(value)):
        return f"{name.first} {name.last}".lower()
    return value.lower()


MAX_MRN_PREFIX = 3  # letters of a record number's prefix printed apart from its digits ("C 88123")


def _number_after_prefix(value: str, following: list[Word]) -> bool:
    """``value`` is a short capital-letter prefix and the next word is its number."""
    if not (following and value.isalpha() and value.isupper() and len(value) <= MAX_MRN_PREFIX):
        return False
    nxt = following[0].text.strip(" #:,;")
    return nxt.replace("-", "").isalnum() and any(c.isdigit() for c in nxt)


# A name written in parts is cited by one run of the page's words that covers both
# parts, and only when that run is short (boxes side by side: "Surname | Given
# name(s)" over "OKONJO-HALE | Beatrix" reads as one run of six words).
MAX_NAME_SPAN_WORDS = 12


class _Builder:
    """Turns fields and margin notes into cited facts and identity candidates."""

    def __init__(self, source_id: str, day_first: bool | None = None):
        self.source_id = source_id
        self.day_first = day_first  # how the form's other numeric dates settle an open one
        self.facts: list[FactProposal] = []
        self.identifiers: list[IdentityCandidate] = []
        self.warnings: list[ExtractionWarning] = []
        self._counts: dict[str, int] = {}
        self._name_parts: dict[str, tuple[Field, list[Word], str]] = {}
        # Every value the form prints for the patient's identity, read or not.
        self._printed: dict[IdentifierKind, list[str]] = {kind: [] for kind in _IDENTITY_OF}
        self._order: dict[int, tuple[list[Word], dict[int, int]]] = {}  # page -> words in reading order

    # -- plumbing

    def _reading(self, page: PageContent) -> tuple[list[Word], dict[int, int]]:
        """The page's words in reading order, and each word's place in it."""
        if id(page) not in self._order:
            order = [w for row in page_rows(page) for w in row.words]
            self._order[id(page)] = order, {id(w): i for i, w in enumerate(order)}
        return self._order[id(page)]

    def _with_label(self, f: Field, words: list[Word]) -> list[Word]:
        """The label and its answer as one quote when they read on from each other;
        the answer alone when other words come between (a box heading in a row of
        headings, its answer on the row below)."""
        _, pos = self._reading(f.page)
        idx = [pos.get(id(w), -1) for w in f.label + words]
        return f.label + words if idx == list(range(idx[0], idx[0] + len(idx))) else words

    def _span(self, page: PageContent, words: list[Word]) -> list[Word] | None:
        """The page's words from the first of ``words`` to the last, in reading
        order, if that run is short enough to cite as one quote."""
        order, pos = self._reading(page)
        idx = sorted(pos[id(w)] for w in words if id(w) in pos)
        if len(idx) != len(words) or idx[-1] - idx[0] + 1 > MAX_NAME_SPAN_WORDS:
            return None
        return order[idx[0]: idx[-1] + 1]

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

    # -- fields

    def field(self, f: Field) -> None:
        f, words = self._ticked(f)
        if f is None:
            return
        rows = [" ".join(it.strip_box(w.text) for w in r) for r in f.rows]
        # One item per row for a list: the rows stay apart for the context policy.
        text = ("; ".join(t for t in map(it.clean_item, rows) if t) if f.kind in LIST_KINDS
                else it.clean_item(" ".join(rows)))
        if f.kind == "ignore" and readings_row(text):
            self._readings(words, f.page)  # "Office use - observations: BP 146/92  Pulse 88": readings all the same
            return
        if f.kind == "ignore" or not has_content(text):
            return
        if f.kind in it.IDENTITY_KINDS and labels.reads_as_label(text):
            return  # a blank form's next label ("Last Name: First Name") is no answer
        if f.kind in ("name", "first_name", "last_name", "middle_name") and f.owner is None \
                and it.names_a_clinician(text):
            f.owner = "clinician"  # "Name: Dr. Alan Brooks" on a cover sheet is not the patient
        handler = getattr(self, f"_{f.kind}", None)
        if f.owner is not None:
            self._about_someone_else(f, words, text)
        elif f.kind in LIST_KINDS and it.is_yes_answer(text):
            self._unclear(f, words, text, "answered yes but listed nothing")
        elif f.kind in it.DEMOGRAPHIC_KINDS:
            self._demographic(f, words, text)
        elif handler is not None:
            handler(f, words, text)
        else:
            self._other(f, words, text)

    def _ticked(self, f: Field) -> tuple[Field | None, list[Word]]:
        """The field as answered: by its ticked boxes when it has any (the answer's
        rows keep only what was ticked or written; the words to cite add the ticked
        boxes), as written otherwise. ``None`` when a contradiction went to review."""
        flat = [w for r in f.rows for w in r]
        texts = [w.text for w in flat]
        ticks = it.read_ticks(texts, [n for n, r in enumerate(f.rows) for _ in r])
        yes_and_no = it.offers_yes_and_no(texts)
        if ticks is None and yes_and_no:
            # "Yes No" (or "Yes / No") and no box or circle the text shows: OCR lost the
            # marks, and the printed options are not the patient's answer.
            self._unclear(f, flat, it.clean_item(text_of(flat)),
                          "the question's Yes and No are printed, but no mark beside either was read: check the page")
            return None, flat
        if ticks is None and flat and f.kind not in ("other", "ignore") and it.asks_to_mark(f.label_text):
            # Options to tick or circle, and no mark the page's text shows (a pen circle, a
            # box glyph the text lost): printed options are not the patient's answers.
            self._unclear(f, flat, it.clean_item(text_of(flat)),
                          "the question asks to tick or circle answers, but no mark was read: check the page")
            return None, flat
        # A tick problem on a field no list is read from leaves its words as written, but a
        # yes/no question's is a person's to read, whatever it asks.
        if ticks is None or (ticks.problem and f.kind in ("other", "ignore") and not yes_and_no):
            return f, flat
        if ticks.problem:
            self._unclear(f, flat, it.clean_item(text_of(flat)), ticks.problem)
            return None, flat
        pos = {id(w): k for k, w in enumerate(flat)}
        # Each run of kept words is its own line: options ticked on one row of a grid
        # ("[X] High blood pressure [ ] Asthma [X] Diabetes") are two answers, not one.
        rows: list[list[Word]] = []
        for r in f.rows:
            run: list[Word] = []
            for w in r:
                if pos[id(w)] not in ticks.answer:
                    continue
                if run and pos[id(w)] != pos[id(run[-1])] + 1:
                    rows.append(run)
                    run = []
                run.append(w)
            if run:
                rows.append(run)
        # Quoted from the first ticked box to the answer's last word, so the quote reads on:
        # a ticked "Yes" whose answer is written on the row below ("How much: 10 units")
        # keeps the "Yes" between them.
        kept = [k for k in range(len(flat)) if k in ticks.answer or k in ticks.boxes]
        return replace(f, rows=rows), flat[kept[0]: kept[-1] + 1] if kept else []

    def _unclear(self, f: Field, words: list[Word], text: str, problem: str) -> None:
        """An answer a person must read: boxes that contradict each other, a "yes"
        with nothing listed. A document fact for review, never chart data. A follow-up
        label between the answer's rows ("If yes, list them:") is quoted with them."""
        cite = self._with_label(f, words)
        if f.asked:
            _, pos = self._reading(f.page)
            cite = sorted({id(w): w for w in cite + f.asked}.values(), key=lambda w: pos.get(id(w), -1))
        self._add("other", f"{f.label_text}: {text}", {"field": f.kind, "label": f.label_text, "answer": text},
                  f.page, cite, "needs_review_findings[]", answer_score(0.3, f, True),
                  document_only=True, review=problem, context=text)

    def finish(self) -> None:
        """Identity from a name written in parts; no identifier of a kind where the
        form disagrees with itself about the patient - two different names, or a
        name that reads and one that does not (another page's applicant, OCR noise).
        A "no known allergies" beside allergies the form lists goes to review."""
        self._name_from_parts()
        self._no_known_beside_listed()
        for kind, fields in _IDENTITY_OF.items():
            printed = self._printed[kind]
            distinct = {_same_person_value(kind, v) for v in printed}
            if len(distinct) < 2:
                continue
            self.identifiers = [i for i in self.identifiers if i.kind is not kind]
            reason = (f"the form gives the patient {len(distinct)} different {kind.value} values "
                      f"({', '.join(sorted(set(printed)))})")
            self.warnings.append(ExtractionWarning(code="intake_conflicting_identifiers",
                                                   message=f"{reason}; none of them identifies the patient."))
            self.facts = [fact.model_copy(update={"wants_review": True, "review_reason": reason})
                          if fact.fact_type == "demographic" and fact.structured_value.get("field") in fields
                          else fact for fact in self.facts]

    def _no_known_beside_listed(self) -> None:
        """A form that answers "None" to one allergy question and lists allergies under
        another contradicts itself: its "no known allergies" goes to a person. One
        scoped to drugs or foods ("Allergic to any foods? No") stands beside a list,
        since the list may be of the other kind."""
        listed = [f.structured_value["substance"] for f in self.facts
                  if f.fact_type == "allergy" and f.structured_value.get("substance")]
        if not listed:
            return
        reason = f"the form also lists allergies ({', '.join(listed)})"
        self.facts = [fact.model_copy(update={"wants_review": True, "review_reason": reason})
                      if fact.fact_type == "allergy" and fact.structured_value.get("status") == "no_known_allergies"
                      else fact for fact in self.facts]

    def _name_from_parts(self) -> None:
        """Identity from a name written in parts ("First name" / "Last name")."""
        parts = self._name_parts
        if "first_name" not in parts or "last_name" not in parts:
            return
        (f1, w1, first), (f2, w2, last) = parts["first_name"], parts["last_name"]
        middle = parts["middle_name"][2] if "middle_name" in parts else ""
        name = f"{last}, {first}" + (f" {middle}" if middle else "")
        self._printed[IdentifierKind.NAME].append(name)
        if tr.parse_person_name(name) is None or f1.page is not f2.page:
            return
        cite = self._span(f1.page, f1.label + w1 + f2.label + w2)
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
                  answer_score(0.8, f, False), document_only=True)

    def _demographic(self, f: Field, words: list[Word], text: str) -> None:
        value, parsed, other = text, 1.0, None
        cite_words = self._with_label(f, words)
        if f.kind == "dob":
            found, printed = leading_date(words, f.label_text)
            if found:
                found = settle(found, self.day_first)  # by the form's other dates, when they show the order
                value, cite_words = found.iso, self._with_label(f, printed)
                if found.day_first_iso is not None:  # nothing settled day and month
                    parsed, other = 0.7, found.day_first_iso
                    self.warnings.append(ExtractionWarning(
                        code="intake_ambiguous_date", page=f.page.number,
                        message=f"Date of birth {text_of(printed)!r} could be read day-first or month-first; "
                                f"read as {found.iso}."))
            else:
                parsed = 0.3
        elif f.kind == "name":
            parsed = 1.0 if tr.parse_person_name(text) else 0.3
        elif f.kind in ("first_name", "last_name", "middle_name"):
            # A part alone cannot be judged: the name it makes is (``_name_from_parts``).
            self._name_parts.setdefault(f.kind, (f, words, text))
        elif f.kind == "mrn":
            # "Medical record no.: MRN 6620915": the label printed again is no part of the number
            again = record_label_words([w.text for w in words])
            first = next((w for w in words[again:] if w.text.strip("#:,;")), words[again])
            upto = words.index(first) + 1
            value = first.text.strip(" #:,;")
            if _number_after_prefix(value, words[upto: upto + 1]):
                # "C 88123": a letter prefix and its number, the hyphen between them
                # lost to OCR or printed as a space; the gate ignores the separator.
                value, upto = f"{value} {words[upto].text.strip(' #:,;')}", upto + 1
            cite_words = self._with_label(f, words[:upto])
        self._add("demographic", f"{f.label_text}: {value}", {"field": f.kind, "value": value, "printed": text},
                  f.page, cite_words, f"demographics.{f.kind}", answer_score(parsed, f, False), document_only=True)
        if f.kind in ("name", "dob", "mrn"):
            self._printed[IdentifierKind(f.kind)].append(value)
        if f.kind in ("name", "dob", "mrn") and parsed >= 0.7 and value:
            self.identifiers.append(IdentityCandidate(
                kind=IdentifierKind(f.kind), value=value, other_reading=other,
                citation=self._citation(f.page, cite_words, f"patient.{f.kind}"),
            ))

    def _chief_concern(self, f: Field, words: list[Word], text: str) -> None:
        review = review_reason(text, clinical=True)
        self._add("chief_concern", f"Chief concern: {text}", {"text": text}, f.page, words, "chief_concern",
                  answer_score(1.0, f, bool(item_doubt(text))), document_only=True, review=review, context=text)

    def _medications(self, f: Field, words: list[Word], text: str) -> None:
        if it.is_none_answer(text):
            self._add("other", "Reports taking no current medications", {"no_current_medications": True},
                      f.page, words, "other_document_facts[]", answer_score(1.0, f, False), document_only=True)
            return
        for item, _ in _list_items(f, med_continues):
            item_text = it.clean_item(text_of(item))
            med = it.parse_medication(item_text)
            parts = (0.4 + 0.3 * (med["dose"] is not None) + 0.3 * (med["frequency"] is not None))
            uncertain = bool(item_doubt(item_text, text))
            self._add("medication", f"Takes {item_text}", med, f.page, item, "current_medications[]",
                      answer_score(parts, f, uncertain),
                      review=review_reason(item_text, True, answer=text) or _accent_doubt(med["name"], item),
                      context=text)

    def _allergies(self, f: Field, words: list[Word], text: str) -> None:
        if (status := it.no_known_status(text)) is not None:
            scope = labels.allergy_scope(f.label_text)
            if scope == "substance":  # "Allergic to latex? No": no latex allergy, nothing more
                self._other(f, words, text)
                return
            if status == "no_known_allergies" and scope is not None:  # "Allergies to medicines? No"
                status = f"no_known_{scope}_allergies"
            # An explicit statement, not silence: cited, but never a chart allergy; "NKDA"
            # stays drug-specific ("no known drug allergies reported").
            self._add("allergy", f"{NO_KNOWN_TEXT[status].capitalize()} reported",
                      {"substance": "", "status": status}, f.page, words, "allergies[]",
                      answer_score(1.0, f, False), document_only=True, context=text)
            return
        for item, cells in _list_items(f, allergy_continues):
            item_text = it.clean_item(text_of(item))
            allergy = it.parse_allergy(item_text)
            if cells is not None and len(cells) >= 2:  # a table's row: the substance's cell, then the reaction's
                allergy.update(substance=it.clean_item(text_of(cells[0])), reaction=it.clean_item(text_of(cells[1])))
            allergy["substance"] = it.substance_name(allergy["substance"])
            uncertain = bool(item_doubt(item_text, text))
            parts = 0.7 + 0.3 * (allergy["reaction"] is not None)
            text_out = (f"Allergy: {allergy['substance']}" + (f" ({allergy['reaction']})" if allergy["reaction"] else "")
                        + (f", {allergy['severity']}" if allergy.get("severity") else ""))
            self._add("allergy", text_out, allergy, f.page, item, "allergies[]",
                      answer_score(parts, f, uncertain),
                      review=review_reason(item_text, True, answer=text) or _accent_doubt(allergy["substance"], item),
                      context=text)

    def _family_history(self, f: Field, words: list[Word], text: str) -> None:
        if it.is_none_answer(text):
            return
        for item in merge_items(split_items(f.rows, commas=True), family_continues):
            item_text = it.clean_item(text_of(item))
            fh = it.parse_family_history(item_text)
            parts = 1.0 if fh["relative"] else 0.6
            self._add("family_history", f"Family history: {item_text}", fh, f.page, item, "family_history[]",
                      answer_score(parts, f, bool(item_doubt(item_text, text))), document_only=True,
                      review=review_reason(item_text, True, answer=text), context=text)

    def _problems(self, f: Field, words: list[Word], text: str, label: str = "History") -> None:
        if it.is_none_answer(text):
            return
        for item in merge_items(split_items(f.rows, commas=True), problem_continues):
            item_text = it.clean_item(text_of(item))
            # Self-reported history is cited document content, not chart truth: a
            # reviewer may approve it into the problem list.
            self._add("problem", f"{label}: {item_text}", {"description": item_text, "field": f.label_text},
                      f.page, item, "problems[]", answer_score(0.8, f, bool(item_doubt(item_text, text))),
                      document_only=True, review=review_reason(item_text, True, answer=text), context=text)

    def _symptoms(self, f: Field, words: list[Word], text: str) -> None:
        self._problems(f, words, text, label="Symptom")

    def _pregnancy(self, f: Field, words: list[Word], text: str) -> None:
        review = review_reason(text, clinical=True)
        if review is None and not (it.is_none_answer(text) or text.lower() == "not pregnant"):
            review = "pregnancy status reported; confirm before prescribing or imaging"
        self._add("other", f"Pregnancy: {text}", {"field": "pregnancy", "answer": text}, f.page,
                  self._with_label(f, words),
                  "needs_review_findings[]" if review else "other_document_facts[]",
                  answer_score(1.0, f, bool(item_doubt(text))), document_only=True, review=review, context=text)

    def _preference(self, f: Field, words: list[Word], text: str) -> None:
        self._add("preference", f"{f.label_text}: {text}", {"preference": f.label_text, "value": text},
                  f.page, self._with_label(f, words), "preferences[]", answer_score(1.0, f, False), document_only=True)

    def _notes(self, f: Field, words: list[Word], text: str) -> None:
        for item in split_items(f.rows, commas=False):
            self._free_text(item, f.page, "notes", f"written in the form's {f.label_text!r} box")

    def _vital_sign(self, f: Field, words: list[Word], text: str) -> None:
        """A reading under a sign's label ("BP: 128/82", "Weight: 71.5 kg"): a vital sign
        held for a person (a form gives no time of measurement); any other answer as written."""
        sign = sign_of_label(f.label_text)
        reading = read_vital(sign[0], text, sign[1]) if sign and sign[0] in VITAL_SIGNS else None
        if reading is None:
            self._other(f, words, text)
            return
        value = VitalSignValue(kind=reading.kind, label=f.label_text, value=reading.value, unit=reading.unit,
                               systolic=reading.systolic, diastolic=reading.diastolic).model_dump()
        problem = implausible(reading.kind, reading.value, reading.unit, reading.systolic, reading.diastolic)
        reasons = [FORM_VITAL_REASON, *(reading.doubts or []), *([problem] if problem else [])]
        self._add("vital_sign", vital_text(value), value, f.page, self._with_label(f, words), "vital_signs[]",
                  answer_score(1.0, f, bool(problem)), review="; ".join(reasons), context=text)

    def _readings(self, words: list[Word], page: PageContent) -> None:
        """A row of vital signs by their labels ("BP 146/92   Pulse 88   Temp 37.2 C"):
        one reading each, cited to its own words, held for a person as any reading on a
        form is (no time of measurement goes with it)."""
        for m in vital_values_in(text_of(words)):
            said = words_at(words, m.mention.start, m.mention.end)
            r = m.reading
            value = VitalSignValue(kind=r.kind, label=m.label, value=r.value, unit=r.unit, systolic=r.systolic,
                                   diastolic=r.diastolic).model_dump()
            problem = implausible(r.kind, r.value, r.unit, r.systolic, r.diastolic)
            reasons = [FORM_VITAL_REASON, *(r.doubts or []), *([problem] if problem else [])]
            self._add("vital_sign", vital_text(value), value, page, said, "vital_signs[]", 0.8 if not problem else 0.5,
                      review="; ".join(reasons), context=m.mention.text)

    def _other(self, f: Field, words: list[Word], text: str) -> None:
        if readings_row(text):  # "Triage: BP 146/92  Pulse 88": the readings, each its own
            self._readings(words, f.page)
            return
        self._add("other", f"{f.label_text}: {text}", {"label": f.label_text, "value": text}, f.page,
                  self._with_label(f, words), "other_document_facts[]", answer_score(0.8, f, False), document_only=True)

    # -- text outside the fields

    def margin(self, m: Loose) -> None:
        if m.checklist is not None:
            self._checklist_answer(m)
            return
        if readings_row(text_of(m.words)):
            self._readings(m.words, m.page)
            return
        items = _checklist_items(m.words)
        if len(items) > 1:  # "Diabetes [ ] Y [X] N    Asthma [X] Y [ ] N": each item on its own
            for item in items:
                self.margin(Loose(item, m.page, m.near))
            return
        words, said, near = m.words, m.words, m.near
        ticks = it.read_ticks([w.text for w in words], [0] * len(words))
        text = None
        if ticks is not None and not ticks.problem:  # options of a question, wrapped beside its answer
            if not ticks.answer:
                return  # boxes nobody ticked say nothing
            # The note says what was ticked and cites the options as printed, one run of words.
            said = [w for k, w in enumerate(m.words) if k in ticks.answer]
            stem = _stem(words)
            ticked = it.clean_item(" ".join(it.strip_box(w.text) for w in said if w not in stem))
            if stem and ticked:  # "Smoking [] Never [X] Former": a question of its own, asked beside another answer
                question = it.clean_item(" ".join(w.text for w in stem))
                text = f"{question}: {ticked}"
                if self._reported_history(question, ticked, m.page, words, text):
                    return
                if it.is_habit_question(question):
                    near = None  # never more of the allergy or medicine answer it stands beside
        where = "written outside the form's fields"
        if m.near is not None:
            where += f" (beside {m.near.label_text!r})"
        self._free_text(words, m.page, "margin", where, near=near,
                        text=text or it.clean_item(" ".join(it.strip_box(w.text) for w in said)))

    def _checklist_answer(self, m: Loose) -> None:
        """A row of a checklist whose answers head its columns ("Asthma [X] [ ]" under
        "Yes No"): a condition answered yes is the history the patient reports, as an
        answer ticked beside it is; any other answer is a document fact. Two ticked
        boxes, or a box OCR could not read, go to a person; a row whose boxes were all
        read and none ticked says nothing."""
        question = it.clean_item(text_of(m.label or []))
        answers = m.checklist or ()
        ticked = [a for a, t in answers if t]
        unread = [a for a, t in answers if t is None]
        if not question or (not ticked and not unread):
            return
        shown = ", ".join(ticked) if ticked else "not read"
        text = f"{question}: {shown}"
        value = {"label": question, "value": ", ".join(ticked), "field": "checklist"}
        doubt = None
        if unread:
            doubt = (f"the box under {unread[0]!r} could not be read" if len(unread) == 1 else
                     f"the boxes under {' and '.join(repr(a) for a in unread)} could not be read")
            doubt += ": check which box is ticked on the page"
        elif len(ticked) > 1:
            doubt = "tick boxes contradict each other: check which box is ticked on the page"
        if doubt is not None:
            self._add("other", text, value, m.page, m.words, "needs_review_findings[]", 0.6, document_only=True,
                      review=doubt, context=text)
        elif not self._reported_history(question, ticked[0], m.page, m.words, text):
            self._add("other", text, value, m.page, m.words, "other_document_facts[]", 0.8, document_only=True,
                      context=text)

    def _reported_history(self, question: str, answer: str, page: PageContent, words: list[Word], text: str) -> bool:
        """A medical-history checklist's row answered yes ("Asthma [X] Y [ ] N", or its box
        under "Yes"): the history the patient reports, cited document content, as a listed
        answer is. Whether it was one (and so added)."""
        if not (it.is_yes_answer(answer) and names_a_condition(question)):
            return False
        self._add("problem", f"History: {question}", {"description": question, "field": "checklist"},
                  page, words, "problems[]", 0.8, document_only=True, context=text)
        return True

    def _free_text(self, words: list[Word], page: PageContent, location: str, where: str,
                   near: Field | None = None, text: str | None = None) -> None:
        """A note outside the answers: reviewed when it touches something clinical,
        by its own words or by the field it sits beside; otherwise a document fact."""
        text = it.clean_item(text_of(words)) if text is None else text
        if not has_content(text):
            return
        topic = it.clinical_topic(text)
        by_content = topic is not None
        if topic is None and near is not None and near.kind in it.CLINICAL_KINDS:
            topic = {"allergies": "allergy", "medications": "medication"}.get(near.kind, "symptom")
        uncertain = item_doubt(text)
        # Notes in a Notes box were meant to be written; margin notes were squeezed in.
        confidence = 0.5 + (0.1 if location == "notes" else 0.0) - (0.1 if uncertain else 0.0)
        value: dict = {"note": text, "location": location, "near_field": near.label_text if near else None}
        if topic is None:
            self._add("other", f"Note: {text}", value, page, words, "other_document_facts[]", confidence,
                      document_only=True, context=text)
            return
        fact_type = {"allergy": "allergy", "medication": "medication", "symptom": "problem"}.get(topic, "other")
        if fact_type == "allergy":
            value["substance"] = it.substance_name(text)
            value["reaction"] = None
        reasons = [where, f"mentions {topic}" if by_content else f"beside a {near.kind.replace('_', ' ')} answer"]
        if uncertain:
            reasons.append(uncertain)
        if flag := red_flag(text):
            reasons.append(f"red-flag language ({flag!r})")
        label = {"allergy": "Possible allergy", "medication": "Possible medication",
                 "pregnancy": "Possible pregnancy", "symptom": "Reported symptom"}[topic]
        place = "in the margin" if location == "margin" else "in the notes"
        self._add(fact_type, f"{label} written {place}: {text!r}", value, page, words, "needs_review_findings[]",
                  confidence - (0.0 if by_content else 0.1),
                  document_only=fact_type == "other", review="; ".join(reasons), context=text)


def _list_items(f: Field, continues) -> list[tuple[list[Word], list[list[Word]] | None]]:
    """A list answer's items, each with its cells when it is a table's row: a table row
    is one item as printed; written rows are split and joined as before."""
    out: list[tuple[list[Word], list[list[Word]] | None]] = []
    plain: list[list[Word]] = []

    def flush() -> None:
        out.extend((item, None) for item in merge_items(split_items(plain, commas=True), continues))
        plain.clear()

    for r in f.rows:
        cells = f.cells.get(id(r[0])) if r else None
        if cells is not None and [id(w) for w in r] == [id(w) for c in cells for w in c]:
            flush()
            out.append((r, cells))
        else:
            plain.append(r)
    flush()
    return out


# Checklist items side by side stand further apart than this many text heights.
CHECKLIST_GAP = 2.5


def _checklist_items(words: list[Word]) -> list[list[Word]]:
    """A row printing several checklist items side by side, each a label with its tick
    boxes ("Diabetes [ ] Y [X] N      Asthma [X] Y [ ] N"), as one list of words per
    item; the row whole when it is not such a row. A label's boxes may stand apart from
    it as far as the next item does: they join the label before them."""
    if len(words) < 4:
        return [words]
    items: list[list[Word]] = []
    for part in segments(words, CHECKLIST_GAP):
        if it.starts_with_box([w.text for w in part]) and items:
            items[-1] += part
        else:
            items.append(list(part))
    answered = [i for i in items if it.question_before_boxes([w.text for w in i])]
    return items if len(items) > 1 and len(answered) == len(items) else [words]


def _stem(words: list[Word]) -> list[Word]:
    """The question a line of tick boxes prints before its first box ("Smoking")."""
    return words[:it.question_before_boxes([w.text for w in words])]


def _accent_doubt(name: str | None, words: list[Word]) -> str | None:
    """Why an OCR'd medicine or allergen name needs a person: an accent OCR may have
    read from a speck ("Albutérol" on a faxed form)."""
    if not name or not any(w.conf is not None for w in words):
        return None
    accents = speck_accents(name)
    return f"the name was read by OCR with {accents!r}, which a speck on the page can make" if accents else None
