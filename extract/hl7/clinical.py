"""HL7 v2 clinical segments besides results: AL1 -> allergy, DG1/PRB -> problem, RXA ->
an administered vaccine (an ``other`` document fact). In messages other than results
(ADT...) allergies and problems are document facts only."""

from __future__ import annotations

from domain.models import FactProposal
from domain.policy.context.mentions import hedge_cue
from extract.values import numbers as V
from extract.values.lists import NO_KNOWN_TEXT, is_only_no_known, no_known
from extract.values.dates import hl7_date
from extract.hl7.message import MessageFacts, Msg, Review, Seg, seg_review
from extract.formats.hl7.parse import Encoding, component, components, repetitions, unescape
from extract.formats.hl7.values import coded_text

_SEVERITY = {"SV": "severe", "MO": "moderate", "MI": "mild", "U": "unknown"}


def read_allergy(ctx: MessageFacts, msg: Msg, seg: Seg, base: Review, doc_only: bool) -> None:
    """AL1 -> an allergy: substance (AL1-3), reactions (AL1-5), severity (AL1-4)."""
    enc = msg.enc
    substance, _ = coded_text(components(seg.raw(3), enc))
    if not substance:
        return
    review = seg_review(seg, base)
    cue = hedge_cue(substance)
    if cue:
        review.add(f"uncertain wording in the allergen ({cue!r})", 0.7)
    reactions = [t for t in (unescape(r, enc).strip() for r in repetitions(seg.raw(5), enc)) if t and t != '""']
    severity_code = component(seg.raw(4), enc, 1).upper()
    severity = _SEVERITY.get(severity_code, severity_code.lower() or None)
    allergen_type, _ = coded_text(components(seg.raw(2), enc))
    path = ctx.path("allergies")
    cit = ctx.cite_field(seg, 3, [substance], path)
    if cit is None:
        return
    structured = {
        "substance": substance, "reaction": ", ".join(reactions) or None, "severity": severity,
        "allergen_type": allergen_type or None, "code": component(seg.raw(3), enc, 1) or None,
    }
    text = f"Allergy: {substance}" + (f" - reaction: {structured['reaction']}" if reactions else "") + (
        f" ({severity})" if severity else "")
    none = no_known(substance)
    if none is not None and none.exception is None and is_only_no_known(substance):
        # An AL1 that says "No Known Drug Allergies": the statement, never a chart allergy.
        structured.update(substance="", no_known_allergies=True, status=none.status)
        text, doc_only = f"Allergies: {NO_KNOWN_TEXT[none.status]}", True
    elif none is not None:  # "NKDA except penicillin" in one allergen field: a person reads it
        review.add(f"'{NO_KNOWN_TEXT[none.status]}' with more written after it", 0.5)
    ctx.facts.append(FactProposal(
        fact_type="allergy", fact_text=text, structured_value=structured, citation=cit,
        confidence=V.confidence(0.9, review.factors), wants_review=bool(review.reasons),
        review_reason=review.reason, document_fact_only=doc_only, scope=msg.scope,
    ))


def _problem_fact(ctx: MessageFacts, msg: Msg, seg: Seg, field_no: int, code: str, description: str,
                  system: str, base: Review, doc_only: bool, extra: dict) -> None:
    if not (code or description):
        return
    review = seg_review(seg, base)
    cue = hedge_cue(description)
    if cue:
        review.add(f"uncertain wording in the diagnosis ({cue!r})", 0.7)
    if not description:
        review.add("the diagnosis is given only as a code", 0.8)
    path = ctx.path("problems")
    cit = ctx.cite_field(seg, field_no, [description, code], path)
    if cit is None:
        return
    structured = {"code": code or None, "description": description or code, "coding_system": system or None, **extra}
    text = f"Problem: {description or code}" + (f" ({system} {code})" if code and description else "")
    ctx.facts.append(FactProposal(
        fact_type="problem", fact_text=text, structured_value=structured, citation=cit,
        confidence=V.confidence(0.88, review.factors), wants_review=bool(review.reasons),
        review_reason=review.reason, document_fact_only=doc_only, scope=msg.scope,
    ))


def _coded(raw_field: str, enc: Encoding) -> tuple[str, str, str]:
    """A CE/CWE field's identifier, text and coding system (components 1-3)."""
    return component(raw_field, enc, 1), component(raw_field, enc, 2), component(raw_field, enc, 3)


def read_diagnosis(ctx: MessageFacts, msg: Msg, seg: Seg, base: Review, doc_only: bool) -> None:
    """DG1 -> a problem: code and text of DG1-3, else the description in DG1-4."""
    enc = msg.enc
    code, description, system = _coded(seg.raw(3), enc)
    field_no = 3
    if not description:
        description = unescape(seg.raw(4), enc).strip().strip('"').strip()
        if description and not code:
            field_no = 4
    system = system or component(seg.raw(2), enc, 1)
    dtype = component(seg.raw(6), enc, 1).upper()
    extra = {"diagnosis_type": {"A": "admitting", "W": "working", "F": "final"}.get(dtype, dtype or None)}
    _problem_fact(ctx, msg, seg, field_no, code, description, system, base, doc_only, extra)


def read_problem(ctx: MessageFacts, msg: Msg, seg: Seg, base: Review, doc_only: bool) -> None:
    """PRB -> a problem from PRB-3."""
    enc = msg.enc
    code, description, system = _coded(seg.raw(3), enc)
    if code and not description and not system:
        code, description = "", code  # PRB-3 holding plain text
    _problem_fact(ctx, msg, seg, 3, code, description, system, base, doc_only, {"source_segment": "PRB"})


def read_vaccination(ctx: MessageFacts, msg: Msg, seg: Seg, base: Review) -> None:
    """RXA -> the vaccine given (RXA-5) and when (RXA-3), as a document fact."""
    enc = msg.enc
    comps = components(seg.raw(5), enc)
    vaccine, idx = coded_text(comps) if comps else ("", 0)
    if not vaccine:
        return
    system = comps[2].strip() if len(comps) > 2 else ""
    label = vaccine if idx != 1 else f"{system} {vaccine}".strip()
    given = hl7_date(component(seg.raw(3), enc, 1))
    review = seg_review(seg, base)
    path = ctx.path("observations")
    cit = ctx.cite_field(seg, 5, [vaccine], path)
    if cit is None:
        return
    ctx.facts.append(FactProposal(
        fact_type="other",
        fact_text=f"Vaccine administered: {label}" + (f" on {given}" if given else ""),
        structured_value={"observation": "vaccine administered", "value": label, "date": given,
                          "code": comps[0].strip() if comps else None, "coding_system": system or None},
        citation=cit, confidence=V.confidence(0.85, review.factors), wants_review=bool(review.reasons),
        review_reason=review.reason, document_fact_only=True, scope=msg.scope,
    ))
