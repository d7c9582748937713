"""FHIR R4 JSON (a Bundle or a single resource) -> cited element sections.

Locators are JSON paths in FHIR's own notation, rooted at the top resource's type:

* ``Bundle.entry[3].resource`` - one resource (or ``Observation`` for a file holding a
  single resource), text = the resource's JSON exactly as the file writes it;
* ``Bundle.entry[3].resource.valueQuantity``, ``...referenceRange[0].low`` - an element
  of it, down to three steps below the resource, text = the element as written.

Every section's text is a slice of the file, so a citation quoting a value as the file
writes it (``5.40``, ``mmol/L``) is found again in the section its locator names.

Each resource is validated with the ``fhir.resources`` R4B models (the R4 line). One that
fails is kept as a section (meta ``valid`` False) and named in a ``fhir_invalid_resource``
warning with its path and the fields at fault, never dropped: the reader leaves it
unread and the coverage guard makes it a review item. A resource its sender marked
``entered-in-error`` carries meta ``withdrawn``.
"""

from __future__ import annotations

import json
from importlib.metadata import version

from domain.content import NormalizedContent, Section
from domain.errors import ExtractionError
from domain.limits import DEFAULT_LIMITS, FHIR_TOO_LARGE, Limits, exceeded
from domain.models import ExtractionWarning
from extract.formats.fhir.spans import Node, TooDeep, parse

ENGINE = f"fhir json reader + fhir.resources {version('fhir.resources')} (R4B models)"
ELEMENT_DEPTH = 3  # path steps below a resource that get a section of their own
_SKIPPED = frozenset({"text", "contained", "meta"})  # narrative HTML and housekeeping: shown, never cited
WITHDRAWN = "entered-in-error"


def normalize_fhir(data: bytes, limits: Limits = DEFAULT_LIMITS) -> NormalizedContent:
    """Read FHIR JSON into resource and element sections. Raises ``ExtractionError``
    with code ``empty_file``, ``fhir_too_large``, ``corrupt_file`` (not JSON, not UTF-8)
    or ``not_fhir`` (JSON without a ``resourceType``)."""
    if len(data) > limits.max_fhir_bytes:
        raise exceeded(FHIR_TOO_LARGE, f"The FHIR file is {len(data) / 2**20:,.1f} MB; at most "
                       f"{limits.max_fhir_bytes / 2**20:,.0f} MB are read in one file.", "max_fhir_bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ExtractionError(f"The FHIR file is not UTF-8 text (byte {exc.start} cannot be decoded); FHIR JSON "
                              "is always UTF-8. The original is kept: ask the sender for a new copy.",
                              code="corrupt_file") from None
    if not text.strip():
        raise ExtractionError("The FHIR file is empty.", code="empty_file")
    try:
        root = parse(text, depth_limit=limits.max_fhir_depth)
    except TooDeep:
        raise exceeded(FHIR_TOO_LARGE, f"The FHIR file nests its JSON more than {limits.max_fhir_depth} levels "
                       "deep.", "max_fhir_depth") from None
    except json.JSONDecodeError as exc:
        raise ExtractionError(f"The FHIR file is not valid JSON ({exc.msg} at line {exc.lineno}, column "
                              f"{exc.colno}). The original is kept: ask the sender for a new copy.",
                              code="corrupt_file") from None
    resource_type = root.value.get("resourceType") if isinstance(root.value, dict) else None
    if not isinstance(resource_type, str) or not resource_type:
        raise ExtractionError("The file is JSON but not FHIR: its top-level object has no resourceType.",
                              code="not_fhir")
    warnings: list[ExtractionWarning] = []
    sections: list[Section] = []
    if resource_type == "Bundle":
        entries = root.get("entry")
        items = entries.items if entries is not None and isinstance(entries.value, list) else []
        with_resource = [(i, e.get("resource")) for i, e in enumerate(items)]
        with_resource = [(i, r) for i, r in with_resource if r is not None]
        if len(with_resource) > limits.max_fhir_resources:
            raise exceeded(FHIR_TOO_LARGE, f"The FHIR Bundle holds {len(with_resource):,} resources; at most "
                           f"{limits.max_fhir_resources:,} are read in one file.", "max_fhir_resources")
        problem = _bundle_problem(root.value)
        if problem:
            warnings.append(ExtractionWarning("fhir_invalid_bundle", f"Bundle: {problem}; its resources were "
                                              "read one by one."))
        for i, node in with_resource:
            full_url = items[i].value.get("fullUrl") if isinstance(items[i].value, dict) else None
            sections += _resource_sections(text, node, f"Bundle.entry[{i}].resource", i, full_url, warnings)
    else:
        sections += _resource_sections(text, root, resource_type, None, None, warnings)
    resources = [s for s in sections if s.section_type == "resource"]
    return NormalizedContent(
        source_kind="fhir", sections=sections, warnings=warnings, engine=ENGINE,
        meta={"root": resource_type, "bundle_type": root.value.get("type") if resource_type == "Bundle" else None,
              "resources": len(resources), "invalid": sum(not s.meta["valid"] for s in resources)},
    )


def _bundle_problem(bundle: dict) -> str | None:
    """Why the Bundle itself (its entries' resources left out) is not valid R4, or None."""
    shell = dict(bundle)
    if isinstance(shell.get("entry"), list):
        shell["entry"] = [{k: v for k, v in e.items() if k != "resource"} if isinstance(e, dict) else e
                          for e in shell["entry"]]
    return validation_problem(shell)


def validation_problem(resource: object) -> str | None:
    """Why a resource fails the R4B model of its type, in field names and rules only
    (never the values, which may be a patient's), or None when it is valid."""
    from fhir.resources.R4B import get_fhir_model_class
    from pydantic import ValidationError

    if not isinstance(resource, dict):
        return "the entry's resource is not a JSON object"
    resource_type = resource.get("resourceType")
    try:
        model = get_fhir_model_class(str(resource_type))
    except (ValueError, KeyError, AttributeError):
        return f"{str(resource_type)[:40]!r} is not an R4 resource type"
    try:
        model.model_validate(resource)
    except ValidationError as exc:
        parts = []
        for err in exc.errors()[:5]:
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "__root__") or "resource"
            parts.append(f"{where}: {str(err.get('msg', 'invalid')).split('. ')[0][:120]}")
        more = len(exc.errors()) - 5
        return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")
    except (ValueError, TypeError) as exc:  # a model's own check raising outside pydantic
        return f"{type(exc).__name__} in the R4 model"
    return None


def _status(resource: dict) -> str | None:
    """The resource's status as the sender gives it: ``status``, else the code of
    ``verificationStatus`` (AllergyIntolerance, Condition)."""
    status = resource.get("status")
    if isinstance(status, str):
        return status
    verification = resource.get("verificationStatus")
    codings = verification.get("coding") if isinstance(verification, dict) else None
    for coding in codings if isinstance(codings, list) else []:
        if isinstance(coding, dict) and isinstance(coding.get("code"), str):
            return coding["code"]
    return None


def _category_codes(resource: dict) -> list[str]:
    """The codes of a resource's categories (an Observation's "laboratory", "vital-signs")."""
    found = resource.get("category")
    out = []
    for concept in found if isinstance(found, list) else []:
        codings = concept.get("coding") if isinstance(concept, dict) else None
        out += [c["code"] for c in codings if isinstance(c, dict) and isinstance(c.get("code"), str)] \
            if isinstance(codings, list) else []
    return out


def _grouping(resource: dict) -> bool:
    """An observation that only groups others (a panel's ``hasMember``), with no value of its own."""
    return bool(resource.get("hasMember")) and not resource.get("component") and \
        not any(k.startswith("value") for k in resource)


def summary(resource: dict) -> str:
    """A few words naming a resource for a reviewer: its type, what it is about, a value."""
    code = next((resource.get(k) for k in ("code", "medicationCodeableConcept", "vaccineCode")
                 if isinstance(resource.get(k), dict)), None)
    name = ""
    if code:
        codings = [c for c in code.get("coding") or [] if isinstance(c, dict)]
        name = str(code.get("text") or next((c.get("display") for c in codings if c.get("display")), "")
                   or next((c.get("code") for c in codings if c.get("code")), ""))
    quantity = resource.get("valueQuantity")
    value = ""
    if isinstance(quantity, dict) and quantity.get("value") is not None:
        value = f"{quantity.get('value')} {quantity.get('unit') or quantity.get('code') or ''}".strip()
    elif isinstance(resource.get("valueString"), str):
        value = resource["valueString"]
    return " ".join(p for p in (str(resource.get("resourceType") or "resource"), name[:80], value[:40]) if p)


def _resource_sections(text: str, node: Node, path: str, entry: int | None, full_url: object,
                       warnings: list[ExtractionWarning]) -> list[Section]:
    value = node.value if isinstance(node.value, dict) else {}
    resource_type = str(value.get("resourceType") or "")
    problem = validation_problem(node.value)
    if problem:
        warnings.append(ExtractionWarning(
            "fhir_invalid_resource",
            f"{path} ({resource_type or 'no resourceType'}) failed FHIR R4 validation ({problem}); it was not read."))
    status = _status(value)
    meta = {"resource_type": resource_type, "id": value.get("id") if isinstance(value.get("id"), str) else None,
            "full_url": full_url if isinstance(full_url, str) else None, "entry": entry, "valid": problem is None,
            "problem": problem, "status": status, "withdrawn": status == WITHDRAWN, "summary": summary(value),
            "grouping": _grouping(value), "categories": _category_codes(value)}
    out = [Section(path, node.raw(text), "resource", meta)]
    if isinstance(node.value, dict):
        for key, child in node.members.items():
            if key not in _SKIPPED and key != "resourceType":
                _element_sections(text, child, f"{path}.{key}", path, 1, out)
    return out


def _element_sections(text: str, node: Node, path: str, resource: str, depth: int, out: list[Section]) -> None:
    out.append(Section(path, node.raw(text), "element", {"resource": resource}))
    if depth >= ELEMENT_DEPTH:
        return
    for key, child in node.members.items():
        _element_sections(text, child, f"{path}.{key}", resource, depth + 1, out)
    for i, child in enumerate(node.items):
        _element_sections(text, child, f"{path}[{i}]", resource, depth + 1, out)
