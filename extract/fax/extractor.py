"""Fax packets (doc_type ``fax_packet``): classify pages, extract each part by its class.

A packet mixes a cover sheet, lab reports, intake forms, letters and anything else, often
for more than one patient. Pages are classified by vocabulary; consecutive pages
of the same class form one part, and a page that prints its own patient
identifiers starts a new part (so a continuation page without a header stays
with its report). Every fact and identifier of a part carries the part's scope
("page 3" or "pages 3-4"): the identity gate checks each part on its own, so a
page of another patient is quarantined without blocking the pages that match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.content import NormalizedContent, PageContent
from domain.models import Citation, DocType, ExtractionResult, ExtractionWarning, FactProposal
from domain.policy.facts.citations import quote_from_words
from extract.intake.extractor import extract_intake
from extract.lab.extractor import extract_lab
from extract.referral.extractor import extract_referral

_GREETING_OR_SIGN_OFF = (r"\bdear\s+(?:dr|doctor|mr|mrs|ms|miss|prof|colleague|sir)\b"
                         r"|\byours\s+(?:sincerely|faithfully|truly)")
_VOCAB = {
    "lab": re.compile(r"\b(result|results|reference|range|units?|flag|specimen|collected|laboratory|lab report|"
                      r"wbc|hemoglobin|a1c|cholesterol|glucose|creatinine|platelets|ldl|hdl|tsh|panel)\b", re.I),
    "intake": re.compile(r"\b(intake|chief (concern|complaint)|reason for visit|brings you|medications?|medicines|"
                         r"allerg\w*|family history|emergency contact|insurance|questionnaire|symptoms)\b", re.I),
    "cover": re.compile(r"\b(fax|facsimile|cover|transmission|pages?|confidential|to:|from:|re:|sender|recipient|"
                        r"intended recipient)\b", re.I),
    # A letter's greeting, thanks, request and sign-off ("Dear Dr Whitcombe", "Thank you for
    # seeing", "I would be grateful", "Yours sincerely").
    "letter": re.compile(rf"(?:{_GREETING_OR_SIGN_OFF}|\b(?:kind|best|warm)\s+regards\b|\bmany thanks\b|"
                         r"\bthank you for (?:asking|referring|seeing|your referral)|\bi (?:would be|am) grateful\b|"
                         r"\bgrateful if you\b|\breferr(?:al|ed|ing)\b|\bon examination\b|\bsincerely\b"
                         # a discharge or transfer summary's headings: a letter about a stay, no form
                         r"|\b(?:discharge|transfer|clinic) (?:summary|letter)\b|\bdischarged\b|\badmitted\b|"
                         r"\bdate of (?:admission|discharge)\b|\bconsultant\b|\bdiagnos[ei]s\b|\bhospital course\b|"
                         r"\bcourse in hospital\b|\bmedication changes\b|\bchanges to (?:medicines|medications)\b)", re.I),
}
_LETTER_MARKS = re.compile(_GREETING_OR_SIGN_OFF, re.I)  # they weigh double
_IDENTIFIER = re.compile(r"\b(patient( name)?|name|dob|date of birth|mrn|account|chart ?#?)\s*:", re.I)
MIN_SCORE = 3


def classify_page(page: PageContent) -> str:
    """lab | intake | letter | cover | other, by how much of each vocabulary the page uses."""
    return classify_text(" ".join(w.text for w in page.words))


def classify_text(text: str) -> str:
    """lab | intake | letter | cover | other for one page's text (see ``classify_page``)."""
    scores = {page_class: len(pattern.findall(text)) for page_class, pattern in _VOCAB.items()}
    scores["letter"] += len(_LETTER_MARKS.findall(text))  # a greeting or a sign-off weighs double
    page_class, best = max(scores.items(), key=lambda kv: kv[1])
    if best < MIN_SCORE:
        return "other"
    # A cover sheet mentions "pages" and "fax" but a report page outweighs it.
    if page_class == "cover" and max(scores["lab"], scores["intake"], scores["letter"]) >= best:
        page_class = max(("lab", "intake", "letter"), key=lambda c: scores[c])
    return page_class


@dataclass
class _Part:
    page_class: str
    pages: list[PageContent]

    @property
    def scope(self) -> str:
        first, last = self.pages[0].number, self.pages[-1].number
        return f"page {first}" if first == last else f"pages {first}-{last}"


def split_parts(content: NormalizedContent) -> list[_Part]:
    parts: list[_Part] = []
    for page in content.pages:
        page_class = classify_page(page)
        page.page_class = page_class
        has_ids = bool(_IDENTIFIER.search(" ".join(w.text for w in page.words[:200])))
        previous = parts[-1] if parts else None
        if previous and previous.page_class == page_class and page_class in ("lab", "intake", "letter") and not has_ids:
            previous.pages.append(page)
        else:
            parts.append(_Part(page_class, [page]))
    return parts


def _cover_fact(page: PageContent, source_id: str, scope: str | None) -> FactProposal | None:
    words = page.words[:40]
    if not words:
        return None
    quote, box = quote_from_words(page, words[: min(len(words), 12)])
    return FactProposal(
        fact_type="other", fact_text=f"Fax cover sheet (page {page.number}): {quote}", structured_value={"page_kind": "cover"},
        citation=Citation(source_type=DocType.FAX_PACKET.value, source_id=source_id, page_or_section=f"page {page.number}",
                          field_or_chunk_id="cover", quote_or_value=quote, page=page.number, bounding_box=box),
        confidence=0.9, document_fact_only=True, scope=scope,
    )


def extract_fax(content: NormalizedContent, source_id: str) -> ExtractionResult:
    result = ExtractionResult(doc_type=DocType.FAX_PACKET, engine=f"fax pages via {content.engine or 'text'}",
                              warnings=[ExtractionWarning(code=w.code, message=w.message, page=w.page)
                                        for w in content.warnings])
    for part in split_parts(content):
        sub = NormalizedContent(source_kind=content.source_kind, pages=part.pages, engine=content.engine)
        if part.page_class == "lab":
            found = extract_lab(sub, source_id)
        elif part.page_class == "intake":
            found = extract_intake(sub, source_id)
        elif part.page_class == "letter":
            found = extract_referral(sub, source_id)
        else:
            if part.page_class == "cover" and (fact := _cover_fact(part.pages[0], source_id, None)):
                result.facts.append(fact)
            for page in part.pages:
                result.warnings.append(ExtractionWarning(code=f"page_{part.page_class}", page=page.number,
                                                         message=f"page {page.number} classified as {part.page_class}"))
            continue
        for fact in found.facts:
            cit = fact.citation.model_copy(update={"source_type": DocType.FAX_PACKET.value})
            result.facts.append(fact.model_copy(update={"scope": part.scope, "citation": cit}))
        for ident in found.identifiers:
            result.identifiers.append(ident.model_copy(update={"scope": part.scope}))
        result.warnings += found.warnings
    return result
