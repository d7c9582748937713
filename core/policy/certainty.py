"""Certainty buckets for extracted facts (DESIGN §5).

verified      schema-valid, confident, citation verified against the source, and
              a safe chart destination exists for this kind of fact;
document_fact useful and cited, but not chart truth (demographics, preferences,
              chief concern, preliminary results ...);
needs_review  clinically relevant but uncertain, incomplete or weakly cited:
              visible, labelled, never promoted.
A proposal may also be rejected outright (nothing clinical to keep).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.models import Certainty, FactProposal
from core.policy.lab_vocabulary import implausible_magnitude, known_analyte, known_unit

MIN_CONFIDENCE = {"lab_result": 0.7, "allergy": 0.85, "medication": 0.85, "problem": 0.85}
PROMOTABLE = frozenset(MIN_CONFIDENCE)
REVIEW_FLOOR = 0.35  # below this even a review item is noise
OCR_MARGIN = 0.1  # an OCR read must be this much more confident to be promoted
# Paged sources must carry a box a reviewer can see; others cite a cell/segment/paragraph.
_NUMERIC = re.compile(r"^[<>]=?\s*-?\d+(\.\d+)?$|^-?\d+(\.\d+)?$")


@dataclass(frozen=True)
class Classification:
    certainty: Certainty | None  # None = rejected
    reason: str | None = None


def _missing_lab_fields(value: dict) -> list[str]:
    missing = [k for k in ("test_name", "value") if not str(value.get(k) or "").strip()]
    if not value.get("collection_date"):
        missing.append("collection_date")
    if _NUMERIC.match(str(value.get("value") or "").strip()) and not str(value.get("unit") or "").strip():
        missing.append("unit")
    return missing


def _ocr_doubts(proposal: FactProposal) -> str | None:
    """Why an OCR read cannot be promoted without a person, or None."""
    value = proposal.structured_value or {}
    if proposal.fact_type in ("allergy", "medication"):
        return "read by OCR: confirm the spelling before it enters the chart"
    if proposal.fact_type != "lab_result":
        return None
    if not known_analyte(str(value.get("test_name") or "")):
        return f"read by OCR: test name {value.get('test_name')!r} is not a known analyte"
    unit = str(value.get("unit") or "")
    if unit and not known_unit(unit):
        return f"read by OCR: unit {unit!r} is not a known unit"
    if implausible_magnitude(str(value.get("value") or ""), str(value.get("reference_range") or "")):
        return "read by OCR: value is more than ten times outside its range (a lost decimal point?)"
    return None


def classify(proposal: FactProposal, *, citation_verified: bool, paged: bool, ocr: bool = False) -> Classification:
    """Pure: decide the bucket for one proposal after its citation was checked.
    ``ocr``: the words came from OCR, which can misread; promotion asks more of them."""
    value = proposal.structured_value or {}
    if proposal.fact_type == "lab_result" and not str(value.get("value") or "").strip() and not proposal.wants_review:
        return Classification(None, "lab result without a value")
    if not citation_verified:
        if proposal.confidence < REVIEW_FLOOR:
            return Classification(None, "citation not found in the source and confidence too low")
        return Classification(Certainty.NEEDS_REVIEW, "the quoted text could not be found in the source")
    if proposal.wants_review:
        return Classification(Certainty.NEEDS_REVIEW, proposal.review_reason or "flagged for review by the extractor")
    if proposal.document_fact_only or proposal.fact_type not in PROMOTABLE:
        return Classification(Certainty.DOCUMENT_FACT)
    if paged and proposal.citation.bounding_box is None:
        return Classification(Certainty.DOCUMENT_FACT, "no bounding box to show a reviewer")
    if proposal.fact_type == "lab_result":
        missing = _missing_lab_fields(value)
        if missing:
            return Classification(Certainty.NEEDS_REVIEW, "missing " + ", ".join(missing))
    if proposal.confidence < MIN_CONFIDENCE[proposal.fact_type] + (OCR_MARGIN if ocr else 0.0):
        return Classification(Certainty.NEEDS_REVIEW, f"low confidence ({proposal.confidence:.2f})")
    if ocr and (doubt := _ocr_doubts(proposal)):
        return Classification(Certainty.NEEDS_REVIEW, doubt)
    return Classification(Certainty.VERIFIED)
