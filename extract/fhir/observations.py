"""FHIR Observation -> lab_result facts (``LabResultValue``), vital_sign facts
(``VitalSignValue``, by the vital-signs profile's LOINC codes), or ``other`` document
facts (social history, surveys, exams).

A lab result: ``code`` names the test (its text, else a coding's display; LOINC kept),
``value[x]`` the value (a Quantity's number as written, its comparator before it, its
unit as written, else its UCUM code), ``referenceRange`` the range (its text, else low-
high), ``interpretation`` the flag (v3-ObservationInterpretation codes through the one
flag rule, extract.values.flags), ``effectiveDateTime`` (or the period's start) the
collection date, ``status`` what it may become (domain.policy.facts.fhir_reading). A
panel without a value of its own is read through its components.
"""

from __future__ import annotations

from domain.models import FactProposal, LabResultValue, VitalSignValue
from domain.policy.context.mentions import hedge_cue
from domain.policy.facts.analytes import specimen_named, usual_units_problem, with_specimen
from domain.policy.facts.result_comments import comment_doubts
from domain.policy.facts.fhir_reading import (BP_COMPONENT_LOINC, LAB_CATEGORIES, LOINC, OTHER_CATEGORIES,
                                              UCUM_VITAL_UNITS, VITAL_SIGN_LOINC, VITAL_SIGNS_CATEGORY,
                                              StatusReading, status_reading)
from domain.policy.facts.vital_signs import canonical_unit, implausible, vital_text
from extract.fhir.bundle import FhirFacts, Node, Resource, code_in, concept_codes, concept_name, date_time, \
    first_date, text
from extract.values.review_reasons import Review
from extract.values import numbers as V
from extract.values.flags import resolve_flag

_VALUE_KEYS = ("valueQuantity", "valueString", "valueCodeableConcept", "valueInteger", "valueBoolean")
_UNREAD_VALUES = ("valueRange", "valueRatio", "valueSampledData", "valuePeriod", "valueTime", "valueDateTime")


def _categories(res: Resource) -> set[str]:
    cats = res.get("category")
    return {code for c in (cats.items if cats is not None else []) for code in concept_codes(c)}


def _effective(res: Resource) -> str | None:
    return text(res.get("effectiveDateTime")) or text(res.get("effectivePeriod", "start")) or \
        text(res.get("effectiveInstant")) or None


def read_observation(ctx: FhirFacts, res: Resource, base: Review, scope: str | None,
                     by_reference: dict[str, Resource] | None = None) -> None:
    if res.section.meta.get("grouping"):
        return  # a panel's members are resources of their own, read as such
    specimen = _specimen(res, by_reference or {})
    status = status_reading("Observation", "status", text(res.get("status")))
    loinc = code_in(res.get("code"), LOINC)
    kind = VITAL_SIGN_LOINC.get(loinc or "")
    categories = _categories(res)
    if kind is None and VITAL_SIGNS_CATEGORY in categories:
        kind = _vital_by_name(res)
    if kind is not None:
        _vital(ctx, res, kind, status, base, scope)
    elif (categories & OTHER_CATEGORIES or VITAL_SIGNS_CATEGORY in categories) and not categories & LAB_CATEGORIES:
        _other(ctx, res, status, base, scope)  # a vital sign the table does not know (a pain score): no lab result
    elif _value_key(res.node) is None and res.get("component") is not None:
        for i, comp in enumerate(res.get("component").items):
            if isinstance(comp.value, dict):
                _lab(ctx, res, ("component", i), comp, status, base, scope, specimen)
    else:
        _lab(ctx, res, (), res.node, status, base, scope, specimen)


def _specimen(res: Resource, by_reference: dict[str, Resource]) -> str | None:
    """The specimen other than blood an Observation is of: its ``specimen`` reference's
    display, or the referenced Specimen's type ("Urine, midstream"). A urinalysis's
    "Glucose" is the urine's, never the blood's (``analytes.with_specimen``)."""
    spec = res.get("specimen")
    if spec is None:
        return None
    target = by_reference.get(text(spec.get("reference")))
    named = [text(spec.get("display")), concept_name(target.get("type"))[0] if target is not None else ""]
    return next((s for t in named if (s := specimen_named(t))), None)


def _vital_by_name(res: Resource) -> str | None:
    from domain.policy.facts.vital_signs import sign_of_label

    name, _ = concept_name(res.get("code"))
    sign = sign_of_label(name) if name else None
    return sign[0] if sign and sign[0] not in ("systolic", "diastolic") else None


def _value_key(node: Node) -> str | None:
    return next((k for k in (*_VALUE_KEYS, *_UNREAD_VALUES) if k in node.members), None)


def _value(res: Resource, at: tuple, node: Node) -> tuple[str, str, str, tuple, Node] | None:
    """(value as written, unit, UCUM code, steps to the element, the node quoted), or None."""
    key = _value_key(node)
    if key is None or key in _UNREAD_VALUES:
        return None
    element = node.members[key]
    if key == "valueQuantity":
        number = element.get("value")
        if number is None or isinstance(number.value, (str, bool)) or number.value is None:
            return None
        comparator = text(element.get("comparator"))
        unit = text(element.get("unit")) or text(element.get("code"))
        ucum = text(element.get("code")) if text(element.get("system")) in ("", "http://unitsofmeasure.org") else ""
        return comparator + res.raw(number), unit, ucum, (*at, key), number
    if key == "valueCodeableConcept":
        name, quoted = concept_name(element)
        return (name, "", "", (*at, key), quoted) if quoted is not None else None
    if key in ("valueString",) and text(element):
        return text(element), "", "", (*at, key), element
    if key in ("valueInteger", "valueBoolean") and element.value is not None:
        return res.raw(element), "", "", (*at, key), element
    return None


def _range(res: Resource, node: Node) -> str:
    """The first reference range as written: its text, else low-high from the numbers."""
    ranges = node.get("referenceRange")
    first = ranges.items[0] if ranges is not None and ranges.items else None
    if first is None or not isinstance(first.value, dict):
        return ""
    if text(first.get("text")):
        return text(first.get("text"))
    low, high = first.get("low", "value"), first.get("high", "value")
    low_t = res.raw(low) if low is not None and low.value is not None else ""
    high_t = res.raw(high) if high is not None and high.value is not None else ""
    if low_t and high_t:
        return f"{low_t}-{high_t}"
    return f">={low_t}" if low_t else (f"<={high_t}" if high_t else "")


def _interpretation(node: Node) -> list[str]:
    found = node.get("interpretation")
    return [code for c in (found.items if found is not None else []) for code in concept_codes(c)]


def _not_done(ctx: FhirFacts, res: Resource, name: str, status: StatusReading, review: Review, at: tuple,
              scope: str | None) -> None:
    """An observation without a result (registered, cancelled, or a value not given):
    a review item that carries no value, citing its code."""
    code = res.get(*at, "code") if at else res.get("code")
    _, quoted = concept_name(code)
    cited = quoted or res.get(*at, "status") or res.get("status") or res.get("resourceType")
    review.add(status.reason or "no result value given")
    absent = res.get(*at, "dataAbsentReason") if at else res.get("dataAbsentReason")
    why, _ = concept_name(absent)
    lab = LabResultValue(test_name=name or "unnamed observation", value="", result_status=text(res.get("status"))
                         or None, collection_date=first_date(_effective(res) or "")).model_dump()
    lab["pending"] = True
    ctx.facts.append(FactProposal(
        fact_type="lab_result", fact_text=f"{lab['test_name']}: {status.reason or 'no result value given'}"
        + (f" ({why})" if why else ""), structured_value=lab,
        citation=ctx.cite_at(res, (*at, "code") if quoted else (), cited, ctx.path("results")),
        confidence=V.confidence(0.9, review.factors), wants_review=True, review_reason=review.reason, scope=scope))


def _lab(ctx: FhirFacts, res: Resource, at: tuple, node: Node, status: StatusReading, base: Review,
         scope: str | None, specimen: str | None = None) -> None:
    review = base.copy()
    name, _ = concept_name(node.get("code"))
    name = with_specimen(name, specimen) if name else name
    loinc = code_in(node.get("code"), LOINC)
    if not name:
        review.add("the observation is not named (no code text, display or code)", 0.7)
    if status.treatment == "withdrawn":
        return
    read = _value(res, at, node)
    if status.treatment == "not_done" or read is None:
        if read is None and status.treatment != "not_done" and _value_key(node) in _UNREAD_VALUES:
            review.add(f"the value is a {_value_key(node)[5:]}, which this reader does not read", 0.8)
        _not_done(ctx, res, name, status, review, at, scope)
        return
    value, unit, ucum, steps, quoted = read
    ref = _range(res, node)
    reading = resolve_flag(_interpretation(node), value, ref)
    for reason, factor in reading.doubts():
        review.add(reason, factor)
    review.add(usual_units_problem(name, unit, loinc), 0.7)
    for reason in comment_doubts(name or "", own=_notes(res), loinc=loinc, unit=unit):
        review.add(reason, 0.7)  # "Specimen haemolysed: potassium may be falsely raised"
    if steps[-1] != "valueQuantity" and (cue := hedge_cue(value)):
        review.add(f"uncertain wording in the result ({cue!r})", 0.8)
    if steps[-1] == "valueQuantity" and not unit:
        review.penalise(0.9)
    effective = _effective(res)
    if not first_date(effective or ""):
        review.penalise(0.95)
    review.add(status.reason if status.treatment == "review" else None, 0.75)
    doc_only = status.treatment == "document"
    lab = LabResultValue(test_name=name or (loinc or "unnamed observation"), value=value, unit=unit,
                         reference_range=ref, collection_date=first_date(effective or ""),
                         abnormal_flag=reading.flag, flag_derived=reading.derived,
                         result_status=text(res.get("status")) or None).model_dump()
    if loinc:
        lab["loinc"] = loinc
        lab["code"] = loinc
    if ucum:
        lab["ucum"] = ucum
    interpretation = _interpretation(node)
    if interpretation:
        lab["flags_as_printed"] = interpretation
    base_conf = {"final": 0.95, "amended": 0.93, "corrected": 0.93}.get(text(res.get("status")), 0.7)
    label = "Corrected result: " if text(res.get("status")) in ("corrected", "amended") else ""
    parts = [f"{lab['test_name']}: {value}", unit, f"(ref {ref})" if ref else "",
             f"[{reading.flag.replace('_', ' ')}]" if reading.flag not in ("unknown", "normal") else "",
             f"collected {lab['collection_date']}" if lab["collection_date"] else ""]
    ctx.facts.append(FactProposal(
        fact_type="lab_result", fact_text=label + " ".join(p for p in parts if p), structured_value=lab,
        citation=ctx.cite_at(res, steps, quoted, ctx.path("results")),
        confidence=V.confidence(base_conf, review.factors), wants_review=bool(review.reasons),
        review_reason=review.reason, document_fact_only=doc_only, scope=scope))


def _notes(res: Resource) -> list[str]:
    """The texts of the Observation's notes (Annotation.text)."""
    found = res.get("note")
    return [t for n in (found.items if found is not None else []) if isinstance(n.value, dict)
            and (t := text(n.get("text")))]


def _vital_unit(kind: str, unit: str, ucum: str) -> str:
    return canonical_unit(kind, unit) or UCUM_VITAL_UNITS.get(ucum) or canonical_unit(kind, ucum) or unit


def _vital(ctx: FhirFacts, res: Resource, kind: str, status: StatusReading, base: Review, scope: str | None) -> None:
    if status.treatment == "withdrawn":
        return
    review = base.copy()
    name, _ = concept_name(res.get("code"))
    measured_at = date_time(_effective(res) or "")
    if measured_at is None:
        review.penalise(0.95)
    if kind == "blood_pressure":
        parts: dict[str, tuple[int, Node, str]] = {}
        comps = res.get("component")
        for i, comp in enumerate(comps.items if comps is not None else []):
            part = BP_COMPONENT_LOINC.get(code_in(comp.get("code"), LOINC) or "")
            number = comp.get("valueQuantity", "value")
            if part and number is not None and not isinstance(number.value, (str, bool)) and number.value is not None:
                parts[part] = (i, number, res.raw(number))
        if set(parts) != {"systolic", "diastolic"} or status.treatment == "not_done":
            review.add(status.reason if status.treatment == "not_done" else
                       "the blood pressure does not give both its systolic and diastolic numbers")
            _not_done(ctx, res, name or "Blood pressure", status, review, (), scope)
            return
        systolic, diastolic = parts["systolic"][2], parts["diastolic"][2]
        value = VitalSignValue(kind=kind, label=name, value=f"{systolic}/{diastolic}", unit="mmHg",
                               systolic=systolic, diastolic=diastolic, measured_at=measured_at)
        steps, quoted = ("component", parts["systolic"][0], "valueQuantity"), parts["systolic"][1]
    else:
        read = _value(res, (), res.node)
        if read is None or status.treatment == "not_done" or read[3][-1] != "valueQuantity":
            _not_done(ctx, res, name or kind, status, review, (), scope)
            return
        number, unit, ucum, steps, quoted = read
        value = VitalSignValue(kind=kind, label=name, value=number, unit=_vital_unit(kind, unit, ucum),
                               measured_at=measured_at)
    if problem := implausible(value.kind, value.value, value.unit, value.systolic, value.diastolic):
        review.add(problem, 0.6)
    review.add(status.reason if status.treatment == "review" else None, 0.75)
    ctx.facts.append(FactProposal(
        fact_type="vital_sign", fact_text=vital_text(value.model_dump()), structured_value=value.model_dump(),
        citation=ctx.cite_at(res, steps, quoted, ctx.path("vital_signs")),
        confidence=V.confidence(0.92, review.factors), wants_review=bool(review.reasons),
        review_reason=review.reason, document_fact_only=status.treatment == "document", scope=scope))


def _other(ctx: FhirFacts, res: Resource, status: StatusReading, base: Review, scope: str | None) -> None:
    """Social history, surveys, exams: document facts, never chart rows."""
    if status.treatment in ("withdrawn", "not_done"):
        return
    read = _value(res, (), res.node)
    if read is None:
        return
    name, _ = concept_name(res.get("code"))
    value, unit, _, steps, quoted = read
    text_ = f"{name or 'Observation'}: {value}" + (f" {unit}" if unit else "")
    ctx.facts.append(FactProposal(
        fact_type="other", fact_text=text_[:400],
        structured_value={"observation": name, "value": value, "unit": unit, "code": code_in(res.get("code"), LOINC),
                          "category": sorted(_categories(res)), "result_status": text(res.get("status")) or None,
                          "date": first_date(_effective(res) or "")},
        citation=ctx.cite_at(res, steps, quoted, ctx.path("observations")), confidence=0.9,
        wants_review=bool(base.reasons), review_reason=base.reason, document_fact_only=True, scope=scope))

