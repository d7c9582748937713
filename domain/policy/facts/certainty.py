"""Certainty buckets for extracted facts (DESIGN §5).

verified      schema-valid, confident, citation verified against the source, and
              a safe chart destination exists for this kind of fact;
document_fact useful and cited, but not chart truth (demographics, preferences,
              chief concern, preliminary results ...);
needs_review  clinically relevant but uncertain, incomplete or weakly cited:
              visible, labelled, never promoted.
A proposal may also be rejected outright (nothing clinical to keep).

Clinical context (domain/policy/context/mentions.py, set on free-text facts before this runs)
decides before confidence does, so no extractor score can override it:
- hedged ("shellfish?", "possible", "rule out", struck-through text) -> needs_review,
  the reason naming the hedge (e.g. 'hedged: "?"'); preferences are exempt ("if
  possible, mornings" is not a clinical doubt);
- negated ("denies", "NKDA"), about someone else (family, partner) or hypothetical
  ("return if") -> document_fact: shown and cited with its context, never verified;
- historical: allergies and problems stay promotable (a past stroke or a penicillin
  reaction years ago is still the patient's history and belongs in the chart), but a
  medication the patient stopped or used to take is not a current medication ->
  document_fact; so is one whose recorded status says so (a list's "Stopped", "On
  hold"), and a status that says neither goes to review
  (domain/policy/facts/medication_status.py); likewise a problem recorded as resolved,
  inactive or ruled out (domain/policy/facts/problem_status.py).
A numeric lab result without a unit is incomplete (needs_review, "missing unit") in
every format, unless its analyte is a dimensionless number (INR, pH, specific gravity,
ratios: ``unitless`` in domain/policy/facts/analytes.json, read by ``unitless_analyte``).
A lab result whose decimal separator is in doubt is needs_review in every format
(``decimal_separator_doubt``): a decimal comma beside a decimal point ("3.5-5,2", an
OCR misread seen on a scan), a decimal comma beside a thousands group ("1,250" against
"0,5-1,5"), or a thousands group after a zero ("0,057"). Decimal commas alone ("4,6"
against "3,5-5,2") and thousands groups with decimal points ("1,200" against
"150-400") each tell one story and pass.
An allergy, medication or problem whose words are markup or a web address
(``<script>``, ``![x](http://...)``, ``www.``) is no clinical name: needs_review, stored
as written (``markup_or_link``).
A document whose reader had to repair the file (``file_repaired``: a PDF rebuilt by
MuPDF, an HL7 file cut off before its end) holds every fact it yields for review, the
reason saying so first (``held_by_warnings`` / ``hold_for_review``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from domain.models import Certainty, ClinicalContext, FactProposal
from domain.policy.facts.analytes import unitless_analyte
from domain.policy.facts.medication_status import status_reading
from domain.policy.facts.problem_status import not_a_current_problem
from domain.policy.facts.lab_vocabulary import implausible_magnitude, known_analyte, known_unit
from domain.policy.facts.vital_signs import VITAL_SIGNS, implausible

MIN_CONFIDENCE = {"lab_result": 0.7, "allergy": 0.85, "medication": 0.85, "problem": 0.85, "vital_sign": 0.7}
PROMOTABLE = frozenset(MIN_CONFIDENCE)
REVIEW_FLOOR = 0.35  # below this even a review item is noise
OCR_MARGIN = 0.1  # an OCR read must be this much more confident to be promoted
# Paged sources must carry a box a reviewer can see; others cite a cell/segment/paragraph.
_NUMERIC = re.compile(r"^[<>]=?\s*-?\d+(\.\d+)?$|^-?\d+(\.\d+)?$")


# How a printed number uses "," and ".". A comma followed by exactly three digits is a
# thousands separator ("1,200", "12,500.5"); followed by one, two or four and more digits
# it is a decimal comma ("5,2", "0,25"). Any other shape ("0,057", "1.250,5") is in doubt.
_NUMBER_TOKEN = re.compile(r"\d[\d.,]*\d|\d")
_POINT = re.compile(r"\d+\.\d+")
_DECIMAL_COMMA = re.compile(r"\d+,(?:\d{1,2}|\d{4,})")
_THOUSANDS = re.compile(r"[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?")


@dataclass(frozen=True)
class SeparatorDoubt:
    reason: str
    # The numbers can be read two ways ("1,250" beside "0,5-1,5"): not compared at all.
    # Otherwise the reading is unique but its separator was not the one the rest uses.
    ambiguous: bool


def decimal_separator_doubt(*texts: str) -> SeparatorDoubt | None:
    """Why the decimal separators of one printed result (its value, range, limits) are
    in doubt, or None when they tell one story."""
    numbers = [n for t in texts for n in _NUMBER_TOKEN.findall(t or "")]
    shown = ", ".join(f'"{t}"' for t in texts if t and any(c.isdigit() for c in t))
    if odd := [n for n in numbers if "," in n and not (_DECIMAL_COMMA.fullmatch(n) or _THOUSANDS.fullmatch(n))]:
        return SeparatorDoubt(f"decimal separator in doubt: {odd[0]!r} could be a decimal comma or a thousands "
                              f"separator (in {shown}); check the printed number", ambiguous=True)
    commas = [n for n in numbers if _DECIMAL_COMMA.fullmatch(n)]
    if not commas:
        return None
    if thousands := [n for n in numbers if _THOUSANDS.fullmatch(n)]:
        return SeparatorDoubt(f"decimal separator in doubt: {commas[0]!r} has a decimal comma but {thousands[0]!r} "
                              f"a thousands comma (in {shown}); check the printed numbers", ambiguous=True)
    if points := [n for n in numbers if _POINT.fullmatch(n)]:
        return SeparatorDoubt(f"decimal separator in doubt: {commas[0]!r} has a comma where {points[0]!r} has a "
                              f"decimal point (in {shown}), a misread or misprint; check the printed numbers",
                              ambiguous=False)
    return None


# Web addresses and markup: an HTML tag, a Markdown link or image, a URL scheme or "www.".
_MARKUP = re.compile(
    r"<\s*/?\s*[a-z][a-z0-9-]*(?=[\s/>]|$)|!?\[[^\]]*\]\(|\b[a-z][a-z0-9+.-]*://|(?<![\w/])//[\w-]+(?:\.[\w-]+)+"
    r"|\bwww\.|\b(?:javascript|vbscript|data|mailto|file):",
    re.I,
)
NAMED_FACTS = frozenset({"allergy", "medication", "problem"})


def markup_or_link(value: dict) -> str | None:
    """Why a named fact's written words are no clinical name (markup or a web address), or None."""
    for key, text in value.items():
        if isinstance(text, str) and (m := _MARKUP.search(text)):
            return (f"the {key} is written as markup or a web address ({m.group(0).strip()}...), not a clinical "
                    f"name: kept as written for a person to check")
    return None


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


def _vital_sign_doubt(value: dict) -> str | None:
    """Why a vital sign cannot enter the chart unseen: a field missing, a sign the
    vocabulary does not know, or a reading no body gives (``vital_signs.implausible``)."""
    missing = [k for k in ("kind", "value", "unit", "measured_at") if not str(value.get(k) or "").strip()]
    if missing:
        return "missing " + ", ".join("date" if k == "measured_at" else k for k in missing)
    kind = str(value["kind"])
    if kind not in VITAL_SIGNS:
        return f"{kind!r} is not a known vital sign"
    return implausible(kind, str(value["value"]), str(value["unit"]), value.get("systolic"), value.get("diastolic"))


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


def not_a_current_medication(fact_type: str | None, value: dict | None, ctx: ClinicalContext | None) -> str | None:
    """Why a medication is the patient's history and never a current chart medication,
    or None: told as past ("I stopped his amlodipine", "previously on") or recorded with
    a status that says it is not taken now ("Stopped 03/2026"). Checked when a fact is
    classified and again when a reviewer approves one: a person confirming that the
    letter says it does not make a stopped medicine current."""
    if fact_type != "medication":
        return None
    if ctx is not None and ctx.temporality == "historical":
        cue = ", ".join(f'"{t}"' for t in ctx.triggers)
        return f"historical ({cue}): not a current medication" if cue else "historical: not a current medication"
    status = (value or {}).get("status")
    if status_reading(status) == "not_current":
        return f"recorded as {str(status).strip()!r}: not a current medication"
    return None


def not_current(fact_type: str | None, value: dict | None, ctx: ClinicalContext | None) -> str | None:
    """Why a medication or a problem is history, never a current chart row, whoever
    confirms it: a medication told as past or recorded as stopped
    (``not_a_current_medication``), a problem recorded as resolved or ruled out
    (``problem_status.not_a_current_problem``)."""
    return not_a_current_medication(fact_type, value, ctx) or not_a_current_problem(fact_type, value)


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
    if past := not_current(proposal.fact_type, value, proposal.context):
        # Before the extractor's doubts: whatever a person confirms, it is not current.
        return Classification(Certainty.DOCUMENT_FACT, past)
    if proposal.wants_review:
        return Classification(Certainty.NEEDS_REVIEW, proposal.review_reason or "flagged for review by the extractor")
    if proposal.fact_type in NAMED_FACTS and (markup := markup_or_link(value)):
        return Classification(Certainty.NEEDS_REVIEW, markup)
    if absent := not_the_patients_fact(proposal.context):
        return Classification(Certainty.DOCUMENT_FACT, absent)
    if proposal.fact_type == "medication" and status_reading(value.get("status")) == "unknown":
        printed = str(value.get("status")).strip()
        return Classification(Certainty.NEEDS_REVIEW, f"status {printed!r} does not say whether it is taken now")
    if proposal.document_fact_only or proposal.fact_type not in PROMOTABLE:
        return Classification(Certainty.DOCUMENT_FACT)
    if paged and proposal.citation.bounding_box is None:
        return Classification(Certainty.DOCUMENT_FACT, "no bounding box to show a reviewer")
    if proposal.fact_type == "lab_result":
        missing = _missing_lab_fields(value)
        if missing:
            return Classification(Certainty.NEEDS_REVIEW, "missing " + ", ".join(missing))
        if doubt := decimal_separator_doubt(*(str(value.get(k) or "") for k in ("value", "reference_range",
                                                                                 "critical_range"))):
            return Classification(Certainty.NEEDS_REVIEW, doubt.reason)
    if proposal.fact_type == "vital_sign" and (doubt := _vital_sign_doubt(value)):
        return Classification(Certainty.NEEDS_REVIEW, doubt)
    if proposal.confidence < MIN_CONFIDENCE[proposal.fact_type] + (OCR_MARGIN if ocr else 0.0):
        return Classification(Certainty.NEEDS_REVIEW, f"low confidence ({proposal.confidence:.2f})")
    if ocr and (doubt := _ocr_doubts(proposal)):
        return Classification(Certainty.NEEDS_REVIEW, doubt)
    return Classification(Certainty.VERIFIED)


# ------------------------------------------------------------------ damaged files
# One rule for every format: a document with any damaged part sends everything it
# yields to review, the intact parts included.
# - A reader that had to repair a file (MuPDF rebuilding a PDF cut short, an HL7 message
#   whose last segment was cut off) may have read a value wrongly or only in part ("12"
#   of "125").
# - A page the reader could not read (a TIFF frame that does not decode, a PDF page
#   whose drawing instructions are garbage) takes with it whatever it held: the
#   patient's name on a cover page, the second half of a table, a flag key. The intact
#   pages' findings are kept and shown, but a person checks them against the original
#   before any reaches the chart.
# - A file whose list of pages loops or ends early may have lost pages or read one twice.
# Nothing is rejected: every finding stays visible for review (docs/decisions.md).
FILE_REPAIRED = "file_repaired"
FILE_DAMAGED = "file_damaged"
PAGE_UNREADABLE = "page_unreadable"
_HOLDING_WARNINGS = {
    FILE_REPAIRED: "the file was damaged and had to be repaired to be read: compare with the original",
    FILE_DAMAGED: "the file is damaged (pages may be missing or out of order): compare with the original",
    PAGE_UNREADABLE: "part of the file is damaged and could not be read: compare with the original",
}


def held_by_warnings(codes: Iterable[str]) -> str | None:
    """Why every fact of a document waits for review, from the codes of the warnings
    its reading raised, or None when none of them holds the document back."""
    reasons = [_HOLDING_WARNINGS[c] for c in dict.fromkeys(codes) if c in _HOLDING_WARNINGS]
    return "; ".join(reasons) or None


def hold_for_review(decision: Classification, held: str | None) -> Classification:
    """A kept fact of a held document becomes needs_review with the hold's reason first;
    a rejected proposal stays rejected."""
    if held is None or decision.certainty is None:
        return decision
    return Classification(Certainty.NEEDS_REVIEW, "; ".join(r for r in (held, decision.reason) if r))
