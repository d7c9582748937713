"""FHIR Patient -> who the file is about: identity candidates for the gate (name as
"FAMILY, GIVEN MIDDLE", birth date, the medical record number) and, in the order a
reviewer reads them, demographics as document facts.

An identifier is the MRN when its type is v2-0203 ``MR`` or its system or type names a
medical record number; any other identifier (a national, insurance or visit number) is
an ``other_id``: it may agree with the chart's MRN, never contradict it. A Patient that
fails validation gives no identity: its name and birth date are "printed but not read",
so a person decides (the gate never verifies it)."""

from __future__ import annotations

import re

from domain.models import FactProposal, IdentifierKind, IdentityCandidate, UnreadIdentifier
from extract.fhir.bundle import FhirFacts, Node, Resource, codings, first_date, text

_MRN_WORDS = re.compile(r"\bmrn\b|medical[ -_]?record|medicalrecord|patient[ -_]?record", re.IGNORECASE)
_SEX = {"female": "female", "male": "male", "other": "other", "unknown": "unknown"}


def _name(res: Resource) -> tuple[str, tuple, Node] | None:
    """(printed name, steps to the name, the node quoted) of the official name, else the first."""
    names = res.get("name")
    items = [(i, n) for i, n in enumerate(names.items if names is not None else []) if isinstance(n.value, dict)]
    chosen = next(((i, n) for i, n in items if text(n.get("use")) == "official"), None) or next(iter(items), None)
    if chosen is None:
        return None
    i, node = chosen
    family = text(node.get("family"))
    given_node = node.get("given")
    given = [g.value.strip() for g in (given_node.items if given_node is not None else [])
             if isinstance(g.value, str) and g.value.strip()]
    if not family and not given:
        whole = text(node.get("text"))
        return (whole, ("name", i), node.get("text")) if whole else None
    quoted = node.get("family") if family else given_node.items[0]
    return f"{family}, {' '.join(given)}".strip().strip(","), ("name", i), quoted


def _is_mrn(identifier: Node) -> bool:
    kind = identifier.get("type")
    if any(text(c.get("code")).upper() in ("MR", "MRN") for c in codings(kind)):
        return True
    words = " ".join([text(identifier.get("system")), text(kind.get("text")) if kind else "",
                      *(text(c.get("display")) for c in codings(kind))])
    return bool(_MRN_WORDS.search(words))


def read_patient(ctx: FhirFacts, res: Resource, scope: str | None) -> None:
    """A valid Patient -> identity candidates and demographic document facts."""
    seen = {(c.kind, c.value, c.scope) for c in ctx.identifiers}

    def ident(kind: IdentifierKind, value: str, steps: tuple, quoted: Node, path: str) -> None:
        if (kind, value, scope) in seen:
            return
        seen.add((kind, value, scope))
        ctx.identifiers.append(IdentityCandidate(kind=kind, value=value, citation=ctx.cite_at(res, steps, quoted, path),
                                                 scope=scope))

    def demographic(field: str, value: str, steps: tuple, quoted: Node) -> None:
        ctx.facts.append(FactProposal(
            fact_type="demographic", fact_text=f"Patient {field.replace('_', ' ')}: {value}",
            structured_value={"field": field, "value": value}, citation=ctx.cite_at(res, steps, quoted,
                                                                                   f"demographics.{field}"),
            confidence=0.95, document_fact_only=True, scope=scope))

    name = _name(res)
    if name:
        printed, steps, quoted = name
        ident(IdentifierKind.NAME, printed, steps, quoted, "patient.name")
        demographic("name", printed, steps, quoted)
    birth = res.get("birthDate")
    if text(birth) and first_date(text(birth)):
        ident(IdentifierKind.DOB, first_date(text(birth)), ("birthDate",), birth, "patient.dob")
        demographic("date_of_birth", first_date(text(birth)), ("birthDate",), birth)
    identifiers = res.get("identifier")
    for i, item in enumerate(identifiers.items if identifiers is not None else []):
        value = item.get("value") if isinstance(item.value, dict) else None
        if not text(value):
            continue
        kind = IdentifierKind.MRN if _is_mrn(item) else IdentifierKind.OTHER_ID
        ident(kind, text(value), ("identifier", i), value, "patient.mrn" if kind is IdentifierKind.MRN
              else "patient.identifier")
    gender = res.get("gender")
    if text(gender):
        demographic("sex", _SEX.get(text(gender), text(gender)), ("gender",), gender)


def unread_patient(ctx: FhirFacts, res: Resource, scope: str | None) -> list[UnreadIdentifier]:
    """An invalid Patient's name, birth date and identifiers: printed, not read."""
    why = "the Patient resource failed FHIR R4 validation, so it was not read"
    out = []
    name = _name(res)
    if name:
        out.append(UnreadIdentifier(kind="name", label="Patient.name", value=name[0], reason=why,
                                    citation=ctx.cite_at(res, name[1], name[2], "patient.name"), scope=scope))
    birth = res.get("birthDate")
    if text(birth):
        out.append(UnreadIdentifier(kind="dob", label="Patient.birthDate", value=text(birth), reason=why,
                                    citation=ctx.cite_at(res, ("birthDate",), birth, "patient.dob"), scope=scope))
    identifiers = res.get("identifier")
    for i, item in enumerate(identifiers.items if identifiers is not None else []):
        value = item.get("value") if isinstance(item.value, dict) else None
        if text(value):
            out.append(UnreadIdentifier(kind="record_number", label="Patient.identifier", value=text(value),
                                        reason=why, citation=ctx.cite_at(res, ("identifier", i), value,
                                                                         "patient.identifier"), scope=scope))
    if not out:  # nothing recognisable: the resource itself stands for the patient not read
        out.append(UnreadIdentifier(kind="identifier", label="Patient", value=res.type, reason=why,
                                    citation=ctx.cite(res.section, res.type, "patient"), scope=scope))
    return out
