"""HL7 v2 facts: walks the segments ``extract.formats.hl7.normalize.normalize_hl7`` stored and builds facts,
handing each segment to the module that reads it (``identity``: PID; ``results``:
OBR/OBX/NTE; ``clinical``: AL1, DG1, PRB, RXA).

* PID -> identity candidates (name as "FAMILY, GIVEN MIDDLE", DOB as YYYY-MM-DD, the MR
  identifier or else the first CX id); in ADT messages also demographic document facts.
* OBR/OBX in result messages -> lab_result facts (``LabResultValue``) for NM, SN, ST, TX,
  FT, CE/CWE...; F/C results can be verified, P results are document facts labelled
  preliminary, I/R/O/S/X/D/W or empty results and orders without any OBX become
  needs-review items that never carry a value. Ask-at-order-entry answers (OBX-29
  QST/SCI, patient age, employment...) and lab comments become ``other`` document facts.
* AL1 -> allergy, DG1/PRB -> problem; in ADT messages these are document facts only.
* Everything in ADT, MDM, VXU and order messages is ``document_fact_only``.

Confidence starts from the result status (F 0.95, C 0.93, P 0.7, none 0.6) and is
multiplied down by what went wrong on the way (shifted fields, a malformed test code, a
re-assembled segment, a unit that does not fit the analyte...); each reason that should
stop promotion is also written into ``review_reason``.
"""

from __future__ import annotations

from collections import defaultdict

from domain.content import NormalizedContent, Section
from domain.errors import ExtractionError
from domain.models import DocType, ExtractionResult, ExtractionWarning
from extract.hl7.clinical import read_allergy, read_diagnosis, read_problem, read_vaccination
from extract.hl7.identity import non_human_species, read_identity
from extract.hl7.message import SOURCE_TYPE, MessageFacts, Msg, Seg, message_review
from extract.formats.hl7.normalize import ENGINE
from extract.formats.hl7.parse import Encoding, segment_fields
from extract.hl7.results import read_observations


def extract_facts(content: NormalizedContent, source_id: str, engine: str) -> ExtractionResult:
    """Facts and identity candidates from ``normalize_hl7`` output."""
    ctx = MessageFacts.for_content(content, "hl7", SOURCE_TYPE, source_id)
    ctx.sections = {s.locator: s for s in content.sections}
    by_message: dict[int, list[Section]] = defaultdict(list)
    for s in content.sections:
        if s.section_type == "segment":
            by_message[s.meta["message"]].append(s)
    multi = len(content.meta.get("messages", [])) > 1
    for meta in content.meta.get("messages", []):
        enc = Encoding.from_meta(meta["encoding"])
        segs = [
            Seg(s.meta["segment"], s.meta["occurrence"], segment_fields(s.meta["raw"], enc),
                s.locator, s.meta["reassembled"], s.meta["split_inline"], s.meta["unknown"])
            for s in by_message[meta["index"]]
        ]
        msg = Msg(meta, enc, segs, f"message {meta['index']}" if multi else None)
        _extract_message(ctx, msg)
    if not ctx.facts and not ctx.identifiers:
        raise ExtractionError(
            "The HL7 file was read but holds no patient data (no PID, results, allergies or "
            "diagnoses were found).",
            code="no_clinical_content",
        )
    return ExtractionResult(
        doc_type=DocType.HL7V2_MESSAGE, facts=ctx.facts, identifiers=ctx.identifiers,
        warnings=ctx.warnings, engine=engine,
    )


def _extract_message(ctx: MessageFacts, msg: Msg) -> None:
    base = message_review(msg)
    pids = [s for s in msg.segs if s.name == "PID"]
    if len(pids) > 1:
        # Which patient a result belongs to is then a guess: every PID's identifiers go
        # to the gate (differing ones make it a mismatch) and every fact to review.
        base.add(f"the message names {len(pids)} patients (PID segments); check whose results these are", 0.5)
        ctx.warnings.append(ExtractionWarning(
            code="hl7_several_patients",
            message=f"Message {msg.meta['index']} has {len(pids)} PID segments: it names more than one patient.",
        ))
    for pid in pids:
        species = non_human_species(pid, msg.enc, msg.meta.get("version", ""))
        if species:
            base.add(f"the subject of this message is not a person (species: {species})", 0.5)
            ctx.warnings.append(ExtractionWarning(
                code="hl7_non_human_subject",
                message=f"PID-35 names a species ({species}): this report is about an animal.",
            ))
    for pid in pids:
        read_identity(ctx, msg, pid, base)
    if not pids and msg.message_class in ("result", "adt"):
        ctx.warnings.append(ExtractionWarning(
            code="hl7_no_pid", message=f"Message {msg.meta['index']} has no PID segment: no patient identifiers."))

    doc_only = msg.message_class != "result"
    for seg in msg.segs:
        if seg.name == "AL1":
            read_allergy(ctx, msg, seg, base, doc_only)
        elif seg.name == "DG1":
            read_diagnosis(ctx, msg, seg, base, doc_only)
        elif seg.name == "PRB":
            read_problem(ctx, msg, seg, base, doc_only)
        elif seg.name == "RXA":
            read_vaccination(ctx, msg, seg, base)
    read_observations(ctx, msg, base)


def extract_hl7(content: NormalizedContent, source_id: str) -> ExtractionResult:
    """The registered extractor for ``hl7v2_message``: facts and identity candidates from
    ``normalize_hl7`` output, recorded as read by the normaliser's engine."""
    return extract_facts(content, source_id, ENGINE)
