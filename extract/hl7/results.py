"""HL7 v2 OBR/OBX in result messages -> lab_result facts (``LabResultValue``) for NM, SN,
ST, TX, FT, CE/CWE...: F/C results can be verified, P results are document facts labelled
preliminary, I/R/O/S/X/D/W or empty results and orders without any OBX become
needs-review items that never carry a value. Ask-at-order-entry answers (OBX-29 QST/SCI,
patient age, employment...), lab comments and observations outside result messages
become ``other`` document facts. NTE notes attach to the OBX, order or message before them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from domain.models import ExtractionWarning, FactProposal, LabResultValue
from domain.policy.facts.analytes import specimen_named, usual_units_problem, with_specimen
from domain.policy.facts.chart_row_checks import VALUE_PROBLEM
from domain.policy.facts.result_comments import comment_doubts
from domain.policy.context.mentions import hedge_cue
from extract.values import numbers as V
from extract.values.dates import hl7_date
from extract.values.flags import resolve_flag
from extract.values.ranges import split_range_unit
from extract.hl7.message import MessageFacts, Msg, Review, Seg, seg_review
from extract.formats.hl7.parse import Encoding, component, components, is_null, repetitions, unescape
from extract.formats.hl7.values import coded_text, flag_codes, loinc_code, range_text, render_value, unit_text

_FINAL = {"F": 0.95, "C": 0.93, "A": 0.93, "U": 0.9, "B": 0.9}
_PENDING = {
    "I": "result pending",
    "R": "result pending (entered but not yet verified)",
    "O": "result pending (order detail only)",
    "S": "result pending (partial results)",
}
_NO_VALUE = {"D": "result deleted by the sender", "W": "result marked wrong by the sender",
             "N": "observation not performed"}
_AOE_CODES = {
    "35659-2", "21612-7", "30525-0", "11294-6", "95418-0", "95417-2", "95419-8", "95421-4",
    "65222-2", "82810-3", "77974-4", "76691-5", "11368-8", "8339-4", "49051-6", "57722-1",
}
_AOE_NAME = re.compile(
    r"\bage\b|employ|pregnan|symptom|onset|congregate|resides|first test|hospitali[sz]ed"
    r"|\bicu\b|health ?care (?:setting|worker)|occupation|birth ?weight|gestation|residence",
    re.IGNORECASE,
)
_COMMENT_NAME = re.compile(r"\bcomments?\b|\bnarrative\b|\bcomment-discussion\b|\bnotes?\b", re.IGNORECASE)
_SEE_COMMENTS = re.compile(r"^\s*see\s+(?:comments?|notes?|below|report|text)\b", re.IGNORECASE)


@dataclass(slots=True)
class _Obx:
    seg: Seg
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Group:
    obr: Seg | None
    notes: list[str] = field(default_factory=list)
    obxs: list[_Obx] = field(default_factory=list)
    specimens: list[Seg] = field(default_factory=list)  # its SPM segments (v2.5 on)


def _group_specimen(group: _Group, enc: Encoding) -> str | None:
    """The specimen other than blood a group's results are of, as its order says it: the
    specimen type (SPM-4), the specimen source (OBR-15, before v2.5) or the order's own
    name (OBR-4 "UA^URINALYSIS"). A urinalysis's "GLU^Glucose" is the urine's glucose,
    never the blood's (``analytes.with_specimen``)."""
    fields = [spm.raw(4) for spm in group.specimens]
    if group.obr is not None:
        fields += [group.obr.raw(15), group.obr.raw(4)]
    for raw in fields:
        for comp in components(raw, enc) if raw else ():
            if (specimen := specimen_named(comp)) is not None:
                return specimen
    return None


def _note_text(seg: Seg, enc: Encoding) -> str:
    return "\n".join(t for t in (unescape(r, enc).strip() for r in repetitions(seg.raw(3), enc)) if t)


def _groups(msg: Msg) -> tuple[list[_Group], list[str]]:
    groups: list[_Group] = []
    message_notes: list[str] = []
    current: _Group | None = None
    last_obx: _Obx | None = None
    for seg in msg.segs:
        if seg.name == "OBR":
            current = _Group(seg)
            groups.append(current)
            last_obx = None
        elif seg.name == "OBX":
            if current is None:
                current = _Group(None)
                groups.append(current)
            last_obx = _Obx(seg)
            current.obxs.append(last_obx)
        elif seg.name == "NTE":
            note = _note_text(seg, msg.enc)
            if not note:
                continue
            if last_obx is not None:
                last_obx.notes.append(note)
            elif current is not None:
                current.notes.append(note)
            else:
                message_notes.append(note)
        elif seg.name in ("ORC", "SPM"):
            last_obx = None  # a note after these is about the order or specimen
            if seg.name == "SPM" and current is not None:
                current.specimens.append(seg)
    return groups, message_notes


def _shift(seg: Seg, enc: Encoding) -> int:
    """Detect OBX fields shifted right (value in OBX-7, status in OBX-13...): 0 if none.

    Only accepted when OBX-5/6 are empty, OBX-11 holds no status, and OBX-(11+k) holds
    a one-letter result status while OBX-(5+k) holds a value.
    """
    if not is_null(seg.raw(5)) or not is_null(seg.raw(11)):
        return 0
    for k in (1, 2, 3):
        status = seg.raw(11 + k).strip().upper()
        if re.fullmatch(r"[FCPIRSXDWUOAN]", status) and not is_null(seg.raw(5 + k)):
            if all(is_null(seg.raw(n)) for n in range(5, 5 + k)):
                return k
    return 0


def _is_aoe(seg: Seg, enc: Encoding, name: str) -> bool:
    if seg.raw(29).strip().upper() in ("QST", "SCI"):
        return True
    return component(seg.raw(3), enc, 1) in _AOE_CODES or bool(_AOE_NAME.search(name))


def _test_name(obx: Seg, obr: Seg | None, enc: Encoding) -> tuple[str, str | None]:
    """(name, review reason or None)."""
    comps = components(obx.raw(3), enc)
    text, idx = coded_text(comps) if comps else ("", 0)
    if idx in (2, 9, 5) and text:
        return text, None
    code = comps[0].strip() if comps else ""
    code = code if any(ch.isalnum() for ch in code) else ""
    if obr is not None:
        ocomps = components(obr.raw(4), enc)
        otext, oidx = coded_text(ocomps) if ocomps else ("", 0)
        if otext and oidx != 1:
            same = code and ocomps and ocomps[0].strip() == code
            if same and oidx in (2, 9, 5):
                return otext, None
            return otext, ("the observation is not named in OBX-3; the name was taken from its order (OBR-4)"
                           if not same else "the test name sits in an unusual component of OBR-4; the coding looks malformed")
    if text and idx != 1:
        return text, "the test name sits in an unusual component of OBX-3; the coding looks malformed"
    if code:
        return code, "the observation is named only by its code"
    return "unnamed observation", "the observation has no name or code"


def _collection_date(obx: Seg, obr: Seg | None, enc: Encoding, shift: int) -> str | None:
    for raw in (obx.raw(14 + shift), obr.raw(7) if obr else ""):
        d = hl7_date(component(raw, enc, 1))
        if d:
            return d
    return None


def read_observations(ctx: MessageFacts, msg: Msg, base: Review) -> None:
    """Every OBR/OBX group of a message: results, pending orders, other observations."""
    groups, message_notes = _groups(msg)
    for group in groups:
        if msg.message_class == "result" and group.obr is not None and not group.obxs:
            _pending_order(ctx, msg, group, message_notes, base)
        for obx in group.obxs:
            if msg.message_class == "result":
                _result(ctx, msg, group, obx, message_notes, base)
            else:
                _other_observation(ctx, msg, group, obx, base)


def _rejection_reason(status: str, notes: list[str]) -> str:
    if status == "X":
        if any("reject" in n.lower() for n in notes):
            return "specimen rejected"
        return "result cannot be obtained (status X)"
    return _NO_VALUE.get(status) or _PENDING.get(status) or "result pending"


def _pending_order(ctx: MessageFacts, msg: Msg, group: _Group, message_notes: list[str], base: Review) -> None:
    obr, enc = group.obr, msg.enc
    assert obr is not None
    comps = components(obr.raw(4), enc)
    name, _idx = coded_text(comps) if comps else ("unnamed order", 0)
    status = obr.raw(25).strip().upper()
    notes = group.notes + message_notes
    reason = _rejection_reason("X", notes) if status == "X" else "result pending"
    path = ctx.path("results")
    cit = ctx.cite_field(obr, 4, [name], path) or ctx.cite_field(obr, 1, [], path)
    if cit is None:
        return
    review = seg_review(obr, base)
    review.add(reason, 1.0)
    lab = LabResultValue(
        test_name=name, value="", collection_date=hl7_date(component(obr.raw(7), enc, 1)),
        result_status=status or None,
    ).model_dump()
    lab["pending"] = True
    lab["notes"] = group.notes
    ctx.facts.append(FactProposal(
        fact_type="lab_result",
        fact_text=f"{name}: {reason} - the message carries no result for this order"
        + (f" (order status {status})" if status else ""),
        structured_value=lab, citation=cit, confidence=V.confidence(0.9, review.factors),
        wants_review=True, review_reason=review.reason, scope=msg.scope,
    ))


def _result(ctx: MessageFacts, msg: Msg, group: _Group, obx_item: _Obx, message_notes: list[str], base: Review) -> None:
    obx, obr, enc = obx_item.seg, group.obr, msg.enc
    shift = _shift(obx, enc)
    review = seg_review(obx, base)
    name, name_problem = _test_name(obx, obr, enc)
    review.add(name_problem, 0.85)
    name = with_specimen(name, _group_specimen(group, enc))
    value_type = obx.raw(2).strip()
    comment_like = _COMMENT_NAME.search(name) and value_type.upper() in ("ST", "TX", "FT", "CE", "CWE")
    if _is_aoe(obx, enc, name) or comment_like:
        _other_observation(ctx, msg, group, obx_item, base)
        return
    value_field = 5 + shift
    status = obx.raw(11 + shift).strip().upper()
    notes = obx_item.notes
    if shift:
        review.add(
            f"OBX fields are shifted by {shift} position(s): the value was found in OBX-{value_field} "
            f"and the status in OBX-{11 + shift}", 0.6)
        ctx.warnings.append(ExtractionWarning(
            code="hl7_shifted_fields",
            message=f"{obx.loc}: fields appear shifted by {shift}; value read from OBX-{value_field}.",
        ))
    empty = is_null(obx.raw(value_field))
    value = None if empty else render_value(value_type, obx.raw(value_field), enc)
    if value is not None and not value.text:
        empty, value = True, None

    if value_type.upper() in ("TX", "FT") and empty and status in _FINAL:
        return  # a blank line of a narrative report, not a missing result
    ref, unit = split_range_unit(range_text(obx.raw(7 + shift), enc), unit_text(obx.raw(6 + shift), enc))
    printed_flags = flag_codes(obx.raw(8 + shift), enc)
    coll = _collection_date(obx, obr, enc, shift)

    if empty or status in _PENDING or status in _NO_VALUE or status == "X":
        all_notes = notes + (group.notes if group else []) + message_notes
        if empty and status in _FINAL:
            reason = "no result value given"
        else:
            reason = _rejection_reason(status, all_notes)
        path = ctx.path("results")
        cit = ctx.cite_field(obx, 3, [name], path) or ctx.cite_field(obx, 11 + shift, [status], path)
        if cit is None:
            return
        review.add(reason)
        lab = LabResultValue(test_name=name, value="", unit=unit, reference_range=ref,
                             collection_date=coll, result_status=status or None).model_dump()
        lab["pending"] = True
        lab["notes"] = notes
        ctx.facts.append(FactProposal(
            fact_type="lab_result",
            fact_text=f"{name}: {reason}" + (f" ({'; '.join(all_notes)[:200]})" if all_notes else ""),
            structured_value=lab, citation=cit, confidence=V.confidence(0.9, review.factors),
            wants_review=True, review_reason=review.reason, scope=msg.scope,
        ))
        return

    assert value is not None
    review.add(value.problem, 0.6)
    # Text in the result's place that says no result was given ("Unable to calculate:
    # triglycerides above 400 mg/dL"): the lab's words, kept and shown, but no value a
    # chart row can hold; approving it as it is is refused (chart_row_checks).
    no_result = V.no_result_words(value.text) if value_type.upper() in ("ST", "TX", "FT") \
        and V.not_resulted(value.text) else None
    if no_result:
        review.add(no_result[0], 0.8)
    # Critical limits are labelled in OBX-7 or in the result's own notes.
    reading = resolve_flag(printed_flags, value.text, ref, notes=notes)
    flag, flag_derived = reading.flag, reading.derived
    for reason, factor in reading.doubts():
        review.add(reason, factor)
    loinc = loinc_code(obx.raw(3), enc)
    review.add(usual_units_problem(name, unit, loinc), 0.7)
    # A note under the OBX is about its result; one under the order or the message about
    # the results it names, or all of them ("Specimen haemolysed").
    for reason in comment_doubts(name, own=notes, scope=(group.notes if group else []) + message_notes,
                                 loinc=loinc, unit=unit):
        review.add(reason, 0.7)
    if _SEE_COMMENTS.match(value.text):
        review.add("the result is given in the comments", 0.8)
    cue = hedge_cue(value.text) if value_type.upper() not in ("NM", "SN") else None
    if cue:
        review.add(f"uncertain wording in the result ({cue!r})", 0.8)
    if value_type.upper() in ("NM", "SN") and not unit:
        review.penalise(0.9)
    if coll is None:
        review.penalise(0.95)

    if status in _FINAL:
        base_conf, doc_only, label = _FINAL[status], False, ("Corrected result" if status == "C" else "")
    elif status == "P":
        base_conf, doc_only, label = 0.7, True, "Preliminary result"
    else:
        base_conf, doc_only, label = 0.6, False, ""
        review.add(f"result status {'missing' if not status else repr(status)}: not known to be final", 1.0)

    path = ctx.path("results")
    cit = ctx.cite_field(obx, value_field, value.quotes, path)
    if cit is None:
        return
    lab = LabResultValue(
        test_name=name, value=value.text, unit=unit, reference_range=ref, collection_date=coll,
        abnormal_flag=flag, flag_derived=flag_derived, result_status=status or None,
    ).model_dump()
    if printed_flags:
        lab["flags_as_printed"] = printed_flags
    if reading.critical_range:
        lab["critical_range"] = reading.critical_range
    code = component(obx.raw(3), enc, 1)
    if code:
        lab["code"] = code
    if loinc:
        lab["loinc"] = loinc
    if notes:
        lab["notes"] = notes
    text = _lab_text(label, lab)
    if no_result:
        lab[VALUE_PROBLEM] = no_result[1]
        text = (f"{label}: " if label else "") + f"{name}: no result ({value.text[:200]})"
    ctx.facts.append(FactProposal(
        fact_type="lab_result", fact_text=text, structured_value=lab, citation=cit,
        confidence=V.confidence(base_conf, review.factors), wants_review=bool(review.reasons),
        review_reason=review.reason, document_fact_only=doc_only, scope=msg.scope,
    ))


def _lab_text(label: str, lab: dict) -> str:
    value = lab["value"] if len(lab["value"]) <= 300 else lab["value"][:297] + "..."
    parts = [f"{lab['test_name']}: {value}"]
    if lab["unit"]:
        parts.append(lab["unit"])
    if lab["reference_range"]:
        parts.append(f"(ref {lab['reference_range']})")
    if lab["abnormal_flag"] not in ("unknown", "normal"):
        parts.append(f"[{lab['abnormal_flag'].replace('_', ' ')}]")
    if lab["collection_date"]:
        parts.append(f"collected {lab['collection_date']}")
    text = " ".join(parts)
    return f"{label}: {text}" if label else text


def _other_observation(ctx: MessageFacts, msg: Msg, group: _Group, obx_item: _Obx, base: Review) -> None:
    """Observations outside result messages, and ask-at-order-entry answers: document facts."""
    obx, enc = obx_item.seg, msg.enc
    value_type = obx.raw(2).strip()
    if is_null(obx.raw(5)):
        return
    value = render_value(value_type, obx.raw(5), enc)
    if not value.text:
        return
    review = seg_review(obx, base)
    if msg.message_class == "document":
        name = "Report text"
    else:
        name, problem = _test_name(obx, group.obr, enc)
        review.add(problem if msg.message_class == "result" else None, 0.85)
    review.add(value.problem, 0.6)
    unit = unit_text(obx.raw(6), enc)
    path = ctx.path("observations")
    cit = ctx.cite_field(obx, 5, value.quotes, path)
    if cit is None:
        return
    status = obx.raw(11).strip().upper()
    structured = {
        "observation": name, "value": value.text, "unit": unit,
        "code": component(obx.raw(3), enc, 1) or None, "value_type": value_type or None,
        "result_status": status or None, "date": hl7_date(component(obx.raw(14), enc, 1)),
        "message_type": msg.meta.get("type"),
    }
    text = f"{name}: {value.text}" + (f" {unit}" if unit else "")
    ctx.facts.append(FactProposal(
        fact_type="other", fact_text=text[:400], structured_value=structured, citation=cit,
        confidence=V.confidence(_FINAL.get(status, 0.75), review.factors),
        wants_review=bool(review.reasons), review_reason=review.reason,
        document_fact_only=True, scope=msg.scope,
    ))
