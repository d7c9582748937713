"""Certainty buckets for extracted facts (DESIGN §5).

verified      schema-valid, confident, citation verified against the source, and
              a safe chart destination exists for this kind of fact;
document_fact useful and cited, but not chart truth (demographics, preferences,
              chief concern, preliminary results ...);
needs_review  clinically relevant but uncertain, incomplete or weakly cited:
              visible, labelled, never promoted.
A proposal may also be rejected outright (nothing clinical to keep).

Clinical context (core/policy/context.py, set on free-text facts before this runs)
decides before confidence does, so no extractor score can override it:
- hedged ("shellfish?", "possible", "rule out", struck-through text) -> needs_review,
  the reason naming the hedge (e.g. 'hedged: "?"'); preferences are exempt ("if
  possible, mornings" is not a clinical doubt);
- negated ("denies", "NKDA"), about someone else (family, partner) or hypothetical
  ("return if") -> document_fact: shown and cited with its context, never verified;
- historical: allergies and problems stay promotable (a past stroke or a penicillin
  reaction years ago is still the patient's history and belongs in the chart), but a
  medication the patient stopped or used to take is not a current medication ->
  document_fact.
A numeric lab result without a unit is incomplete (needs_review, "missing unit") in
every format, unless its analyte is a dimensionless number (INR, pH, specific gravity,
ratios: ``unitless`` in core/policy/analytes.json, read by ``unitless_analyte``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.models import Certainty, ClinicalContext, FactProposal
from core.policy.analytes import unitless_analyte
from core.policy.lab_vocabulary import implausible_magnitude, known_analyte, known_unit

MIN_CONFIDENCE = {"lab_result": 0.7, "allergy": 0.85, "medication": 0.85, "problem": 0.85}
PROMOTABLE = frozenset(MIN_CONFIDENCE)
REVIEW_FLOOR = 0.35  # below this even a review item is noise
OCR_MARGIN = 0.1  # an OCR read must be this much more confident to be promoted
# Paged sources must carry a box a reviewer can see; others cite a cell/segment/paragraph.
_NUMERIC = re.compile(r"^[<>]=?\s*-?\d+(\.\d+)?$|^-?\d+(\.\d+)?$")


# Facts whose hedges are not clinical doubts ("if possible, mornings").
HEDGE_EXEMPT = frozenset({"preference", "demographic"})


@dataclass(frozen=True)
class Classification:
    certainty: Certainty | None  # None = rejected
    reason: str | None = None


def _missing_lab_fields(value: dict) -> list[str]:
    missing = [k for k in ("test_name", "value") if not str(value.get(k) or "").strip()]
    if not value.get("collection_date"):
        missing.append("collection_date")
    if _NUMERIC.match(str(value.get("value") or "").strip()) and not str(value.get("unit") or "").strip() \
            and not unitless_analyte(str(value.get("test_name") or ""), value.get("loinc")):
        missing.append("unit")  # INR, pH, specific gravity and ratios have none to print
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


def hedged(ctx: ClinicalContext | None) -> str | None:
    """Why a mention is in doubt (it is hedged), naming the hedge, or None."""
    if ctx is None or not ctx.uncertain:
        return None
    # The context lists its hedges first.
    return f'hedged: "{ctx.triggers[0]}"' if ctx.triggers else "hedged wording"


def not_the_patients_fact(ctx: ClinicalContext | None) -> str | None:
    """Why a mention is no fact about the patient now (negated, someone else's,
    hypothetical), or None. Such mentions stay document facts."""
    if ctx is None:
        return None
    cue = ", ".join(f'"{t}"' for t in ctx.triggers)
    if ctx.negated:
        return f"negated ({cue})"
    if ctx.experiencer != "patient":
        return f"about the patient's {'family' if ctx.experiencer == 'family' else 'contacts'} ({cue})"
    if ctx.temporality == "hypothetical":
        return f"hypothetical ({cue})"
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
    if proposal.fact_type not in HEDGE_EXEMPT and (hedge := hedged(proposal.context)):
        reasons = [hedge] + ([proposal.review_reason] if proposal.wants_review and proposal.review_reason else [])
        return Classification(Certainty.NEEDS_REVIEW, "; ".join(reasons))
    if proposal.wants_review:
        return Classification(Certainty.NEEDS_REVIEW, proposal.review_reason or "flagged for review by the extractor")
    if absent := not_the_patients_fact(proposal.context):
        return Classification(Certainty.DOCUMENT_FACT, absent)
    if proposal.fact_type == "medication" and proposal.context and proposal.context.temporality == "historical":
        return Classification(Certainty.DOCUMENT_FACT, "historical: not a current medication")
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
