"""Intake form extractor (doc_type ``intake_form``): labelled answers -> cited facts.

A *label* is the start of a row segment ending in ":" or "?" whose wording names a
field (see ``intake_text.classify_label``); its answer is the rest of that
segment, the next segment on the row, and the rows below it until the next label,
a heading or a wide vertical gap. Text that belongs to no field (far to the right
of the answers, or in a Notes box) is kept as a finding of its own and, when it
touches something clinical or is worded uncertainly, asks for human review.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.content import NormalizedContent, PageContent, Word
from core.models import (
    Citation, DocType, ExtractionResult, ExtractionWarning, FactProposal, IdentifierKind,
    IdentityCandidate,
)
from core.policy.citations import quote_from_words
from extract import intake_text as it
from extract import text_rules as tr
from extract.layout import Row, page_rows, segments, text_of

SOURCE_TYPE = DocType.INTAKE_FORM.value
MAX_LABEL_WORDS = 12
# An answer continues onto the next row only if the vertical gap is at most this
# share of the text height (answers are single-spaced; fields are set apart).
CONTINUATION_GAP = 1.0
# A segment starting this share of the page width right of the answer column is
# outside the field: a margin note.
MARGIN_SHIFT = 0.3


@dataclass(slots=True)
class _Field:
    kind: str  # a key of intake_text field kinds, or "other"
    label: list[Word]
    page: PageContent
    rows: list[list[Word]] = field(default_factory=list)  # answer words per row
    last_y1: float = 0.0
    label_x0: float = 0.0
    value_x0: float | None = None
    crowded: bool = False  # stray text sat beside the answer (it was set aside as a margin note)

    @property
    def label_text(self) -> str:
        return text_of(self.label).rstrip(":? ")

    def add(self, words: list[Word], row: Row) -> None:
        self.rows.append(words)
        self.last_y1 = row.y1
        if self.value_x0 is None:
            self.value_x0 = words[0].x0


@dataclass(slots=True)
class _Loose:
    """Text outside every field: a margin note, with the field it sits beside."""

    words: list[Word]
    page: PageContent
    near: _Field | None


def extract_intake(content: NormalizedContent, source_id: str) -> ExtractionResult:
    """Demographics, chief concern, medications, allergies, family history,
    preferences and review findings from a typed (or OCR'd) intake form."""
    fields: list[_Field] = []
    margins: list[_Loose] = []
    for page in content.pages:
        if page.words:
            _read_page(page_rows(page), fields, margins)
    builder = _Builder(source_id)
    for f in fields:
        builder.field(f)
    for m in margins:
        builder.margin(m)
    result = ExtractionResult(doc_type=DocType.INTAKE_FORM, facts=builder.facts, identifiers=builder.identifiers,
                              engine=f"intake-rules+{content.engine or content.source_kind}")
    result.warnings = [ExtractionWarning(code=w.code, message=w.message, page=w.page) for w in content.warnings]
    if not fields:
        result.warnings.append(ExtractionWarning(code="no_fields_found", message="No intake form labels were recognised."))
    return result


# --------------------------------------------------------------------------- layout


def _label_at(seg: list[Word]) -> tuple[int, str] | None:
    """(words in the label, field kind) when ``seg`` starts with a label."""
    for k, w in enumerate(seg[:MAX_LABEL_WORDS]):
        if w.text.endswith((":", "?")) and any(c.isalpha() for c in w.text):
            kind = it.classify_label(text_of(seg[: k + 1]))
            return (k + 1, kind or "other")
        if w.text.startswith("?"):
            return None
    return None


def _is_heading(row: Row, gap: float) -> bool:
    """A section heading ("MEDICAL INFORMATION") set apart from the answer above."""
    letters = [c for c in row.text if c.isalpha()]
    return len(row.words) >= 2 and bool(letters) and all(c.isupper() for c in letters) and gap > 0.6 * row.height


def _read_page(rows: list[Row], fields: list[_Field], margins: list[_Loose]) -> None:
    # Pass 1: where do the recognised labels start? Unknown labels ("Mother: ...")
    # only count when they line up with those, so an answer never becomes a label.
    label_x0s = []
    for row in rows:
        for seg in segments(row.words):
            hit = _label_at(seg)
            if hit and hit[1] != "other":
                label_x0s.append(seg[0].x0)

    def aligned(x0: float, h: float) -> bool:  # same label column, give or take OCR jitter
        return any(abs(x0 - x) <= 0.35 * h for x in label_x0s)

    def set_aside(words: list[Word], row: Row, near: _Field | None) -> None:
        margins.append(_Loose(words, row.page, near))
        if near is not None:
            near.crowded = True

    current: _Field | None = None
    for row in rows:
        segs = segments(row.words)
        hits = [_label_at(s) for s in segs]
        first_hit = hits[0]
        if first_hit and (first_hit[1] != "other" or aligned(segs[0][0].x0, row.height)):
            awaiting = False
            for seg, hit in zip(segs, hits):
                if hit is not None and (hit[1] != "other" or aligned(seg[0].x0, row.height)):
                    n, kind = hit
                    current = _Field(kind, seg[:n], row.page, last_y1=row.y1, label_x0=seg[0].x0)
                    fields.append(current)
                    if seg[n:]:
                        current.add(seg[n:], row)
                    awaiting = not seg[n:]
                elif awaiting and current is not None:
                    current.add(seg, row)
                    awaiting = False
                else:
                    set_aside(seg, row, current)
            continue
        gap = row.y0 - current.last_y1 if current else float("inf")
        if current is not None and gap <= CONTINUATION_GAP * row.height and not _is_heading(row, gap):
            start = current.value_x0 if current.value_x0 is not None else current.label_x0
            first = segs[0]
            if first[0].x0 - start > MARGIN_SHIFT * row.page.width:
                set_aside([w for s in segs for w in s], row, current)
            else:
                current.add(first, row)
                for seg in segs[1:]:
                    set_aside(seg, row, current)
            continue
        # Outside any field: titles and instructions on the left are not findings,
        # but text far to the right of the form's label column is a margin note.
        near = current if current is not None and row.page is current.page else None
        current = None
        if label_x0s and row.x0 - min(label_x0s) > 0.5 * row.page.width:
            set_aside(row.words, row, near)


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
    return [i for i in items if it.clean_item(text_of(i))]


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


class _Builder:
    """Turns fields and margin notes into cited facts and identity candidates."""

    def __init__(self, source_id: str):
        self.source_id = source_id
        self.facts: list[FactProposal] = []
        self.identifiers: list[IdentityCandidate] = []
        self._counts: dict[str, int] = {}

    # -- plumbing

    def _citation(self, page: PageContent, words: list[Word], section: str) -> Citation:
        if section.endswith("[]"):
            n = self._counts.get(section, 0)
            self._counts[section] = n + 1
            section = f"{section[:-2]}[{n}]"
        quote, box = quote_from_words(page, words)
        return Citation(source_type=SOURCE_TYPE, source_id=self.source_id, page_or_section=f"page {page.number}",
                        field_or_chunk_id=section, quote_or_value=quote, page=page.number, bounding_box=box)

    def _add(self, fact_type: str, text: str, value: dict, page: PageContent, words: list[Word], section: str,
             confidence: float, *, document_only: bool = False, review: str | None = None) -> None:
        confs = [w.conf for w in words if w.conf is not None]
        if confs:
            confidence *= 0.5 + 0.5 * sum(confs) / len(confs)
        self.facts.append(FactProposal(
            fact_type=fact_type, fact_text=text, structured_value=value,
            citation=self._citation(page, words, section), confidence=round(max(0.05, min(confidence, 0.99)), 3),
            wants_review=review is not None, review_reason=review, document_fact_only=document_only,
        ))

    @staticmethod
    def _review(text: str, clinical: bool, where: str | None = None) -> str | None:
        """Why a clinically relevant item needs a person: uncertain wording, red flags, place."""
        reasons = []
        if where:
            reasons.append(where)
        if (u := it.uncertain_words(text)) and clinical:
            reasons.append(f"uncertain wording ({u!r})")
        if flag := it.red_flag(text):
            reasons.append(f"red-flag language ({flag!r})")
        return "; ".join(reasons) or None

    @staticmethod
    def _score(parsed_parts: float, f: _Field, uncertain: bool) -> float:
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

    def field(self, f: _Field) -> None:
        words = [w for r in f.rows for w in r]
        text = it.clean_item(text_of(words))
        if f.kind == "ignore" or not text or set(text) <= set("_-. "):
            return
        handler = getattr(self, f"_{f.kind}", None)
        if f.kind in it.DEMOGRAPHIC_KINDS:
            self._demographic(f, words, text)
        elif handler is not None:
            handler(f, words, text)
        else:
            self._other(f, words, text)

    def _demographic(self, f: _Field, words: list[Word], text: str) -> None:
        value, parsed = text, 1.0
        cite_words = f.label + words
        if f.kind == "dob":
            iso = tr.parse_date(text)
            value, parsed = (iso, 1.0) if iso else (text, 0.3)
        elif f.kind == "name":
            parsed = 1.0 if tr.parse_person_name(text) else 0.3
        elif f.kind == "mrn":
            value = words[0].text.strip(" ,;")
            cite_words = f.label + words[:1]
        self._add("demographic", f"{f.label_text}: {value}", {"field": f.kind, "value": value, "printed": text},
                  f.page, cite_words, f"demographics.{f.kind}", self._score(parsed, f, False), document_only=True)
        if f.kind in ("name", "dob", "mrn") and parsed == 1.0:
            self.identifiers.append(IdentityCandidate(
                kind=IdentifierKind(f.kind), value=value,
                citation=self._citation(f.page, cite_words, f"patient.{f.kind}"),
            ))

    def _chief_concern(self, f: _Field, words: list[Word], text: str) -> None:
        review = self._review(text, clinical=True)
        self._add("chief_concern", f"Chief concern: {text}", {"text": text}, f.page, words, "chief_concern",
                  self._score(1.0, f, bool(it.uncertain_words(text))), document_only=True, review=review)

    def _medications(self, f: _Field, words: list[Word], text: str) -> None:
        if it.is_none_answer(text):
            self._add("other", "Reports taking no current medications", {"no_current_medications": True},
                      f.page, words, "other_document_facts[]", self._score(1.0, f, False), document_only=True)
            return
        for item in _merge(_split_items(f.rows, commas=True), _med_continues):
            item_text = it.clean_item(text_of(item))
            med = it.parse_medication(item_text)
            parts = (0.4 + 0.3 * (med["dose"] is not None) + 0.3 * (med["frequency"] is not None))
            uncertain = bool(it.uncertain_words(item_text))
            self._add("medication", f"Takes {item_text}", med, f.page, item, "current_medications[]",
                      self._score(parts, f, uncertain), review=self._review(item_text, clinical=True))

    def _allergies(self, f: _Field, words: list[Word], text: str) -> None:
        if it.is_no_known_allergies(text):
            self._add("other", "No known drug allergies reported", {"no_known_drug_allergies": True},
                      f.page, words, "other_document_facts[]", self._score(1.0, f, False), document_only=True)
            return
        for item in _merge(_split_items(f.rows, commas=True), _allergy_continues):
            item_text = it.clean_item(text_of(item))
            allergy = it.parse_allergy(item_text)
            uncertain = bool(it.uncertain_words(item_text))
            parts = 0.7 + 0.3 * (allergy["reaction"] is not None)
            text_out = f"Allergy: {allergy['substance']}" + (f" ({allergy['reaction']})" if allergy["reaction"] else "")
            self._add("allergy", text_out, allergy, f.page, item, "allergies[]",
                      self._score(parts, f, uncertain), review=self._review(item_text, clinical=True))

    def _family_history(self, f: _Field, words: list[Word], text: str) -> None:
        if it.is_none_answer(text):
            return
        for item in _merge(_split_items(f.rows, commas=True), _family_continues):
            item_text = it.clean_item(text_of(item))
            fh = it.parse_family_history(item_text)
            parts = 1.0 if fh["relative"] else 0.6
            self._add("family_history", f"Family history: {item_text}", fh, f.page, item, "family_history[]",
                      self._score(parts, f, bool(it.uncertain_words(item_text))), document_only=True,
                      review=self._review(item_text, clinical=True))

    def _problems(self, f: _Field, words: list[Word], text: str, label: str = "History") -> None:
        if it.is_none_answer(text):
            return
        for item in _split_items(f.rows, commas=True):
            item_text = it.clean_item(text_of(item))
            # Self-reported history is cited document content, not chart truth: a
            # reviewer may approve it into the problem list.
            self._add("problem", f"{label}: {item_text}", {"description": item_text, "field": f.label_text},
                      f.page, item, "problems[]", self._score(0.8, f, bool(it.uncertain_words(item_text))),
                      document_only=True, review=self._review(item_text, clinical=True))

    def _symptoms(self, f: _Field, words: list[Word], text: str) -> None:
        self._problems(f, words, text, label="Symptom")

    def _pregnancy(self, f: _Field, words: list[Word], text: str) -> None:
        answer = text.lower()
        review = self._review(text, clinical=True)
        if review is None and not answer.startswith(("no", "n/a", "not applicable")):
            review = "pregnancy status reported; confirm before prescribing or imaging"
        self._add("other", f"Pregnancy: {text}", {"field": "pregnancy", "answer": text}, f.page, f.label + words,
                  "needs_review_findings[]" if review else "other_document_facts[]",
                  self._score(1.0, f, bool(it.uncertain_words(text))), document_only=True, review=review)

    def _preference(self, f: _Field, words: list[Word], text: str) -> None:
        self._add("preference", f"{f.label_text}: {text}", {"preference": f.label_text, "value": text},
                  f.page, f.label + words, "preferences[]", self._score(1.0, f, False), document_only=True)

    def _notes(self, f: _Field, words: list[Word], text: str) -> None:
        for item in _split_items(f.rows, commas=False):
            self._free_text(item, f.page, "notes", f"written in the form's {f.label_text!r} box")

    def _other(self, f: _Field, words: list[Word], text: str) -> None:
        self._add("other", f"{f.label_text}: {text}", {"label": f.label_text, "value": text}, f.page,
                  f.label + words, "other_document_facts[]", self._score(0.8, f, False), document_only=True)

    # -- text outside the fields

    def margin(self, m: _Loose) -> None:
        where = "written outside the form's fields"
        if m.near is not None:
            where += f" (beside {m.near.label_text!r})"
        self._free_text(m.words, m.page, "margin", where, near=m.near)

    def _free_text(self, words: list[Word], page: PageContent, location: str, where: str,
                   near: _Field | None = None) -> None:
        """A note outside the answers: reviewed when it touches something clinical,
        by its own words or by the field it sits beside; otherwise a document fact."""
        text = it.clean_item(text_of(words))
        if not text:
            return
        topic = it.clinical_topic(text)
        by_content = topic is not None
        if topic is None and near is not None and near.kind in it.CLINICAL_KINDS:
            topic = {"allergies": "allergy", "medications": "medication"}.get(near.kind, "symptom")
        uncertain = it.uncertain_words(text)
        # Notes in a Notes box were meant to be written; margin notes were squeezed in.
        confidence = 0.5 + (0.1 if location == "notes" else 0.0) - (0.1 if uncertain else 0.0)
        value: dict = {"note": text, "location": location, "near_field": near.label_text if near else None}
        if topic is None:
            self._add("other", f"Note: {text}", value, page, words, "other_document_facts[]", confidence,
                      document_only=True)
            return
        fact_type = {"allergy": "allergy", "medication": "medication", "symptom": "problem"}.get(topic, "other")
        if fact_type == "allergy":
            value["substance"] = it.clean_item(text.replace("?", " ")) or text
            value["reaction"] = None
        reasons = [where, f"mentions {topic}" if by_content else f"beside a {near.kind.replace('_', ' ')} answer"]
        if uncertain:
            reasons.append(f"uncertain wording ({uncertain!r})")
        if flag := it.red_flag(text):
            reasons.append(f"red-flag language ({flag!r})")
        label = {"allergy": "Possible allergy", "medication": "Possible medication",
                 "pregnancy": "Possible pregnancy", "symptom": "Reported symptom"}[topic]
        place = "in the margin" if location == "margin" else "in the notes"
        self._add(fact_type, f"{label} written {place}: {text!r}", value, page, words, "needs_review_findings[]",
                  confidence - (0.0 if by_content else 0.1),
                  document_only=fact_type == "other", review="; ".join(reasons))
