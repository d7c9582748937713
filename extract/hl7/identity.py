"""HL7 v2 PID -> who the message is about: identity candidates (name as "FAMILY, GIVEN
MIDDLE", DOB as YYYY-MM-DD, the MR identifier or else the first CX id), placeholder names
and invalid birth dates as warnings, a non-human subject (PID-35), and in ADT messages
demographic document facts. ``pid_name`` and ``pid_mrn`` are also how the MLLP
listener routes a message and shows a reviewer whom it names."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from domain.models import ExtractionWarning, FactProposal, IdentifierKind, IdentityCandidate
from extract.values import numbers as V
from extract.values.dates import hl7_date
from extract.hl7.message import MessageFacts, Msg, Review, Seg, seg_review
from extract.formats.hl7.parse import Encoding, component, components, first_subcomponent, is_null, repetitions, unescape
from extract.formats.hl7.values import coded_text

_PLACEHOLDER = re.compile(
    r"^(?:X{3,}|(?:FAKE[ _]?)?(?:LAST|FIRST|MIDDLE|GIVEN|FAMILY)[ _]?NAME|UNKNOWN|REDACTED|ANONYMOUS|NONE|NULL)$",
    re.IGNORECASE,
)
_SEX = {"F": "female", "M": "male", "U": "unknown", "O": "other", "A": "ambiguous", "N": "not applicable"}
_HUMAN = re.compile(r"homo sapiens|\bhuman\b|^337915000$", re.IGNORECASE)


def non_human_species(pid: Seg, enc: Encoding, version: str) -> str | None:
    """A non-human species from PID-35 (added in v2.5), e.g. "Beagle"; None for people."""
    if version[:3] < "2.5" or is_null(pid.raw(35)):
        return None
    comps = components(pid.raw(35), enc)
    text, _ = coded_text(comps)
    if not re.search(r"[A-Za-z]", text) or any(_HUMAN.search(c.strip()) for c in comps if c.strip()):
        return None
    return text


def _name_parts(rep_comps: list[str], enc: Encoding) -> tuple[str, str, str]:
    family = first_subcomponent(rep_comps[0], enc) if rep_comps else ""
    given = rep_comps[1].strip() if len(rep_comps) > 1 else ""
    middle = rep_comps[2].strip() if len(rep_comps) > 2 else ""
    return V.normalize_ws(family), V.normalize_ws(given), V.normalize_ws(middle)


@dataclass(frozen=True, slots=True)
class PidName:
    """The patient's name as PID-5 gives it, the way the identity gate compares it."""

    printed: str  # "FAMILY, GIVEN MIDDLE"
    quote: str  # the components as received, for the citation
    placeholder: bool  # "UNKNOWN", "XXX", "LASTNAME"...: never used for identity


def pid_name(raw: str, enc: Encoding) -> PidName | None:
    """PID-5's legal (else first usable) name; None when no repetition names anyone."""
    picked = _pick_name(raw, enc)
    if picked is None:
        return None
    family, given, middle, quote = picked
    return PidName(printed=f"{family}, {' '.join(p for p in (given, middle) if p)}".strip().rstrip(","),
                   quote=quote, placeholder=any(_PLACEHOLDER.match(p) for p in (family, given) if p))


def _pick_name(raw: str, enc: Encoding) -> tuple[str, str, str, str] | None:
    """(family, given, middle, quote) from the legal-name repetition or the first usable one."""
    best = None
    for i, rep in enumerate(repetitions(raw, enc)):
        comps = components(raw, enc, i)
        family, given, middle = _name_parts(comps, enc)
        if not family and not given:
            continue
        name_type = comps[6].strip().upper() if len(comps) > 6 else ""
        last = max(k for k, c in enumerate(comps) if c.strip())
        quote = enc.component.join(comps[: min(last, 2) + 1]).rstrip(enc.component)
        candidate = (family, given, middle, quote)
        if name_type == "L":
            return candidate
        best = best or candidate
    return best


def pick_identifier(raw: str, enc: Encoding) -> str | None:
    """The MRN-typed identifier of a CX field (PID-3 style), else its first one."""
    ids = []
    for i, _ in enumerate(repetitions(raw, enc)):
        comps = components(raw, enc, i)
        value = comps[0].strip() if comps else ""
        if not value:
            continue
        id_type = comps[4].strip().upper() if len(comps) > 4 else ""
        authority = first_subcomponent(comps[3], enc).upper() if len(comps) > 3 else ""
        ids.append((value, id_type in ("MR", "MRN") or authority.endswith("MRN")))
    for value, is_mr in ids:
        if is_mr:
            return value
    return ids[0][0] if ids else None


def pid_mrn(raw_field: Callable[[int], str], enc: Encoding) -> tuple[str, int] | None:
    """A PID's MRN and the field it came from: PID-3, else PID-2, else PID-4, skipping
    placeholders ("UNKNOWN", "MRN", "ID"). ``raw_field(n)`` gives field n as received.
    The extractor's identity and the MLLP router's chart choice both read it here."""
    for n in (3, 2, 4):
        mrn = pick_identifier(raw_field(n), enc)
        if mrn and not _PLACEHOLDER.match(mrn) and mrn.upper() not in ("MRN", "ID", "MR"):
            return mrn, n
    return None


def read_identity(ctx: MessageFacts, msg: Msg, pid: Seg, base: Review) -> None:
    """PID -> identity candidates (name, DOB, MRN) and, in ADT messages, demographics."""
    enc = msg.enc
    adt = msg.message_class == "adt"
    review = seg_review(pid, base)

    def ident(kind: IdentifierKind, value: str, n: int, quote: str, path: str) -> None:
        cit = ctx.cite_field(pid, n, [quote, value], path)
        key = (kind, value, msg.scope)
        if key in ctx.identifier_keys:
            return
        ctx.identifier_keys.add(key)
        ctx.identifiers.append(IdentityCandidate(kind=kind, value=value, citation=cit, scope=msg.scope))

    def demographic(fld: str, value: str, n: int, quote: str, extra: dict | None = None) -> None:
        cit = ctx.cite_field(pid, n, [quote, value], f"demographics.{fld}")
        if cit is None:
            return
        ctx.facts.append(FactProposal(
            fact_type="demographic", fact_text=f"Patient {fld.replace('_', ' ')}: {value}",
            structured_value={"field": fld, "value": value, **(extra or {})}, citation=cit,
            confidence=V.confidence(0.9, review.factors), wants_review=bool(review.reasons),
            review_reason=review.reason, document_fact_only=True, scope=msg.scope,
        ))

    name = pid_name(pid.raw(5), enc)
    if name:
        if name.placeholder:
            ctx.warnings.append(ExtractionWarning(
                code="hl7_placeholder_identity",
                message=f"PID-5 holds a placeholder name ({name.quote!r}); it was not used for identity.",
            ))
        else:
            ident(IdentifierKind.NAME, name.printed, 5, name.quote, "patient.name")
            if adt:
                demographic("name", name.printed, 5, name.quote)

    dob_raw = unescape(pid.raw(7), enc).strip()
    if dob_raw:
        dob = hl7_date(dob_raw)
        if dob:
            ident(IdentifierKind.DOB, dob, 7, dob_raw[:8], "patient.dob")
            if adt:
                demographic("date_of_birth", dob, 7, dob_raw[:8])
        else:
            ctx.warnings.append(ExtractionWarning(
                code="hl7_invalid_dob",
                message=f"PID-7 {dob_raw!r} is not a valid date of birth; it was not used for identity.",
            ))

    picked = pid_mrn(pid.raw, enc)
    if picked:
        mrn, n = picked
        ident(IdentifierKind.MRN, mrn, n, mrn, "patient.mrn")

    if adt:
        sex = component(pid.raw(8), enc, 1)
        if sex:
            demographic("sex", _SEX.get(sex.upper(), sex), 8, sex, {"code": sex})
        addr = components(pid.raw(11), enc)
        if any(c.strip() for c in addr):
            parts = [c.strip() for c in addr[:6]]
            street = ", ".join(p for p in parts[:2] if p)
            city_line = " ".join(p for p in (parts[2] if len(parts) > 2 else "", parts[3] if len(parts) > 3 else "",
                                             parts[4] if len(parts) > 4 else "") if p)
            printed = ", ".join(p for p in (street, city_line) if p)
            first = next(p for p in parts if p)
            demographic("address", printed, 11, first)
