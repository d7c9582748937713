"""Domain types shared by every layer.

This module imports nothing else from the project: extractors, storage, services and
pages all speak these types. Normalized document content lives in ``domain.content``
(plain dataclasses, because pages carry thousands of words and pydantic would be the
slowest part of ingestion); everything that crosses a trust boundary is pydantic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class DocType(str, Enum):
    LAB_PDF = "lab_pdf"
    INTAKE_FORM = "intake_form"
    REFERRAL_DOCX = "referral_docx"
    CLINICAL_WORKBOOK = "clinical_workbook"
    FAX_PACKET = "fax_packet"
    HL7V2_MESSAGE = "hl7v2_message"
    FHIR_BUNDLE = "fhir_bundle"  # FHIR R4 JSON: a Bundle or a single resource


class Certainty(str, Enum):
    VERIFIED = "verified"
    DOCUMENT_FACT = "document_fact"
    NEEDS_REVIEW = "needs_review"


class IdentityStatus(str, Enum):
    UNCHECKED = "identity_unchecked"
    VERIFIED = "identity_verified"
    AMBIGUOUS = "identity_ambiguous_needs_review"
    MISMATCH = "identity_mismatch_quarantined"
    APPROVED = "identity_review_approved"
    REJECTED = "identity_review_rejected"


class PromotionOutcome(str, Enum):
    PROMOTED = "promoted"
    ALREADY_EXISTS = "already_exists"
    DUPLICATE_SKIPPED = "duplicate_skipped"
    CONFLICT_NEEDS_REVIEW = "conflict_needs_review"
    NOT_PROMOTABLE = "not_promotable"
    NEEDS_REVIEW = "needs_review"
    REJECTED = "rejected"
    PROMOTION_FAILED = "promotion_failed"
    RETRACTED = "retracted"


AbnormalFlag = Literal[
    "normal", "high", "low", "critical_high", "critical_low", "abnormal", "unknown"
]

FactType = Literal[
    "lab_result",
    "allergy",
    "medication",
    "problem",
    "chief_concern",
    "family_history",
    "demographic",
    "preference",
    "referral",
    "vital_sign",
    "other",
    # Result-like content no fact cites (the coverage guard, extract/coverage.py): one
    # review item per document, never a clinical finding, never promoted.
    "unread_content",
]


class BoundingBox(BaseModel):
    """A box normalised to 0..1 from the page's top-left corner."""

    model_config = ConfigDict(frozen=True)

    x: float
    y: float
    width: float
    height: float

    @model_validator(mode="after")
    def _inside_page(self) -> "BoundingBox":
        values = (self.x, self.y, self.width, self.height)
        if not all(math.isfinite(v) for v in values):
            raise ValueError("bounding box values must be finite")
        if self.width <= 0 or self.height <= 0:
            raise ValueError("bounding box must have a positive size")
        eps = 1e-6
        if self.x < -eps or self.y < -eps:
            raise ValueError("bounding box starts outside the page")
        if self.x + self.width > 1 + eps or self.y + self.height > 1 + eps:
            raise ValueError("bounding box ends outside the page")
        return self


class Citation(BaseModel):
    """Where a fact came from, precisely enough for a reviewer to find it again."""

    source_type: str
    source_id: str
    page_or_section: str
    field_or_chunk_id: str
    quote_or_value: str
    page: int | None = None
    bounding_box: BoundingBox | None = None
    # Set only by the citation verifier after re-finding the quote in the source.
    verified: bool = False

    @field_validator("quote_or_value")
    @classmethod
    def _quote_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("a citation needs a quote or value")
        return v


class LabResultValue(BaseModel):
    test_name: str
    value: str
    unit: str = ""
    reference_range: str = ""
    collection_date: str | None = None  # YYYY-MM-DD
    abnormal_flag: AbnormalFlag = "unknown"
    flag_derived: bool = False
    result_status: str | None = None  # HL7 OBX-11 and similar


class VitalSignValue(BaseModel):
    """One measurement of a vital sign. ``kind`` is the canonical sign
    (``domain.policy.facts.vital_signs``); a blood pressure keeps its two numbers
    apart as well as together ("152/94")."""

    kind: str  # blood_pressure, heart_rate, temperature, respiratory_rate, spo2, weight, height, bmi
    label: str = ""  # as printed ("B/P", "HR", "O2 sat")
    value: str
    unit: str = ""
    systolic: str | None = None
    diastolic: str | None = None
    measured_at: str | None = None  # YYYY-MM-DD, or YYYY-MM-DD HH:MM when a time is printed


class _ChartItemValue(BaseModel):
    """The structured value of a fact that may become a chart row. Every field is
    optional because not every such fact names a subject (a "no known allergies"
    statement, a margin note beside the medications box): promotion finds it not
    promotable. What is checked is the shape: each field the chart or a reader takes is
    text (or absent), never a number, list or object. Keys an extractor adds for the
    reader (a margin note's ``note``, HL7's ``allergen_type``) are kept as they are."""

    model_config = ConfigDict(extra="allow")

    status: str | None = None  # "no_known_allergies", a workbook's "active" / "stopped"


class AllergyValue(_ChartItemValue):
    substance: str | None = None  # the chart row's subject
    reaction: str | None = None
    severity: str | None = None
    allergen_type: str | None = None  # HL7 AL1-2
    code: str | None = None
    no_known_allergies: bool | None = None


class MedicationValue(_ChartItemValue):
    name: str | None = None  # the chart row's subject
    dose: str | None = None
    frequency: str | None = None
    route: str | None = None
    start_date: str | None = None  # YYYY-MM-DD


class ProblemValue(_ChartItemValue):
    description: str | None = None  # the chart row's subject
    code: str | None = None
    coding_system: str | None = None  # "ICD-10", "SNOMED CT", ...


# fact_type -> the model its structured_value must fit; other fact types carry free
# key/value pairs for the reader and are not checked.
VALUE_MODELS: dict[str, type[BaseModel]] = {
    "lab_result": LabResultValue,
    "allergy": AllergyValue,
    "medication": MedicationValue,
    "problem": ProblemValue,
    "vital_sign": VitalSignValue,
}


class ClinicalContext(BaseModel):
    """How a mention in free text is meant (ConText-style attributes): "denies chest
    pain" is negated, "mother had breast cancer" is about a family member, "history
    of" is historical, "return if" is hypothetical, "? sulfa" is uncertain."""

    model_config = ConfigDict(frozen=True)

    negated: bool = False
    experiencer: Literal["patient", "family", "other"] = "patient"
    temporality: Literal["current", "historical", "hypothetical"] = "current"
    uncertain: bool = False
    # The trigger phrases that set the attributes, as printed (for the reviewer).
    triggers: tuple[str, ...] = ()


class IdentifierKind(str, Enum):
    NAME = "name"
    DOB = "dob"
    MRN = "mrn"
    # A number that identifies the patient elsewhere (NHS, Medicare, health card) or the
    # visit (account, encounter): by nature it may differ from the chart MRN, so it can
    # agree with it (a chart kept under the NHS number) but never contradicts it.
    OTHER_ID = "other_id"


class IdentityCandidate(BaseModel):
    """A patient identifier as printed on the document, with its citation."""

    kind: IdentifierKind
    value: str
    citation: Citation | None = None
    scope: str | None = None  # e.g. "page 3" for per-page checks in fax packets
    # A numeric date of birth nothing on the document settles ("11/03/1950"): ``value``
    # is its month-first reading, this its day-first one. The gate calls neither a match.
    other_reading: str | None = None


class UnreadIdentifier(BaseModel):
    """An identity value the document prints that no reader attributed: a date of birth
    or identifier under a label the reader did not take, a known label whose value it
    could not read, a bare birth date beside the patient's name. Printed, so never
    "absent": the identity gate sends the document to a person, who must say why it
    is this patient's before approving it."""

    kind: Literal["name", "dob", "record_number", "identifier"]  # what the value looks like
    label: str | None = None  # the label as printed; None when the value stands alone
    value: str
    reason: str
    citation: Citation
    scope: str | None = None  # the part it was printed in (fax page), None = the document


class FactProposal(BaseModel):
    """What an extractor says it found. Nothing here is trusted yet."""

    fact_type: FactType
    fact_text: str
    structured_value: dict[str, Any] = Field(default_factory=dict)
    citation: Citation
    confidence: float = Field(ge=0.0, le=1.0)
    # An extractor may ask for review (uncertain wording, margin note); it cannot
    # ask for "verified": that is decided by policy after citation checks.
    wants_review: bool = False
    review_reason: str | None = None
    document_fact_only: bool = False  # e.g. demographics, preferences
    scope: str | None = None  # identity scope (fax packet page), None = whole document
    # Free-text facts: the sentence or answer the item was read from, when it is more
    # than the quote ("denies chest pain, fever"), so context rules see the trigger.
    context_text: str | None = None
    context: ClinicalContext | None = None  # set by the context policy, not by extractors


@dataclass(slots=True)
class ExtractionWarning:
    """Something a reader or an extractor could not do cleanly ("page 3 has no text
    layer", "segment recovered"), with its code; one type from normalising to the job.
    A plain dataclass, so a normaliser can write ``ExtractionWarning(code, message, page)``;
    pydantic validates it inside ``ExtractionResult`` all the same."""

    code: str
    message: str
    page: int | None = None


class ExtractionResult(BaseModel):
    doc_type: DocType
    facts: list[FactProposal] = Field(default_factory=list)
    identifiers: list[IdentityCandidate] = Field(default_factory=list)
    # Identity values printed but not attributed (``UnreadIdentifier``): never "absent".
    unread_identifiers: list[UnreadIdentifier] = Field(default_factory=list)
    warnings: list[ExtractionWarning] = Field(default_factory=list)
    engine: str = "deterministic"  # which extractor / OCR engine produced it


class StoredFact(BaseModel):
    """A fact as stored and shown, of any certainty (verified, document_fact or
    needs_review): the FACT shape of the CLI contract."""

    fact_id: int
    fact_type: str
    certainty: Certainty
    structured_value: dict[str, Any]
    fact_text: str
    citation: Citation
    confidence: float
    promotion_status: str | None = None
    active: bool
    document_id: int | None = None
    review_reason: str | None = None
    context: ClinicalContext | None = None
    # Set when a reviewer corrected a misread value; the citation still quotes the page.
    corrected_by: str | None = None
    corrected_at: str | None = None


class EvidenceItem(BaseModel):
    """One piece of evidence the retriever found for a request."""

    evidence_id: str  # "chart_lab_results:12", "fact:33", "guideline:<chunk_id>"
    kind: Literal["chart", "document_fact", "needs_review", "guideline"]
    fact_type: str | None = None
    topic: str | None = None
    text: str
    structured: dict[str, Any] = Field(default_factory=dict)
    citations: list[Citation]
    abnormal: bool = False
    date: str | None = None
    score: float | None = None


class AnswerItem(BaseModel):
    """ITEM of the CLI contract: a sentence and the citations that support it."""

    text: str
    citations: list[Citation] = Field(default_factory=list)
    evidence_ids: list[str] = Field(default_factory=list)
    kind: str = "finding"  # finding | attention | review | guideline | missing


class AnswerSections(BaseModel):
    patient_findings: list[AnswerItem] = Field(default_factory=list)
    needs_review: list[AnswerItem] = Field(default_factory=list)
    guideline_evidence: list[AnswerItem] = Field(default_factory=list)
    missing: list[AnswerItem] = Field(default_factory=list)
