"""What a case's FHIR exports must hold (``expect.fhir_exports``), checked on the bundle
the export step wrote: every bundle and every resource in it through its own
fhir.resources R4B model (a second check, independent of the export's own), then the
case's counts, the resources it must hold (``has``) and those it must not (``lacks``).
A ``where`` path is dotted, list positions as numbers: ``interpretation.0.coding.0.code``;
a path that is not there never matches."""

from __future__ import annotations

from typing import Any

from golden.matching import row_matches
from golden.observation import Observation

_MISSING = object()


def _at(resource: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(resource, list) and part.isdigit() and int(part) < len(resource):
            resource = resource[int(part)]
        elif isinstance(resource, dict) and part in resource:
            resource = resource[part]
        else:
            return _MISSING
    return resource


def _matches(resource: dict[str, Any], want: dict[str, Any]) -> bool:
    """As a chart row is matched (golden.matching.row_matches: "~" before a text means
    "contains"), with each path's value as the row's column."""
    if want.get("resourceType") not in (None, resource.get("resourceType")):
        return False
    where = want.get("where") or {}
    found = {path: _at(resource, path) for path in where}
    return _MISSING not in found.values() and row_matches(found, where)


def _invalid(bundle: dict[str, Any]) -> list[str]:
    from fhir.resources.R4B import get_fhir_model_class
    from fhir.resources.R4B.bundle import Bundle
    from pydantic import ValidationError

    problems = []
    try:
        Bundle.model_validate(bundle)
    except ValidationError as exc:
        problems.append(f"the bundle is not valid R4 ({exc.error_count()} errors)")
    for entry in bundle.get("entry", []):
        resource = entry.get("resource", {})
        try:
            get_fhir_model_class(resource.get("resourceType", "")).model_validate(resource)
        except (ValidationError, KeyError, ValueError) as exc:
            problems.append(f"{resource.get('resourceType')}/{resource.get('id')} is not valid R4 ({type(exc).__name__})")
    return problems


def fhir_export_problems(obs: Observation) -> list[str]:
    problems: list[str] = []
    for step, bundle in obs.fhir_exports.items():
        problems += [f"export at step {step}: {p}" for p in _invalid(bundle)]
    for want in obs.case.expect.get("fhir_exports", []):
        bundle = obs.fhir_exports.get(want["step"])
        if bundle is None:
            problems.append(f"step {want['step']} wrote no FHIR bundle ({obs.step_errors.get(want['step'], 'no export')})")
            continue
        resources = [e["resource"] for e in bundle.get("entry", [])]
        label = f"the bundle of step {want['step']}"
        for kind, n in (want.get("resources") or {}).items():
            got = sum(r.get("resourceType") == kind for r in resources)
            if not (got == n if isinstance(n, int) else n[0] <= got <= n[1]):
                problems.append(f"{label} holds {got} {kind}, expected {n}")
        for matcher in want.get("has", []):
            if not any(_matches(r, matcher) for r in resources):
                problems.append(f"{label} holds no {matcher.get('resourceType', 'resource')} with {matcher.get('where')}")
        for matcher in want.get("lacks", []):
            if any(_matches(r, matcher) for r in resources):
                problems.append(f"{label} holds a {matcher.get('resourceType', 'resource')} with "
                                f"{matcher.get('where')}, which it must not")
    return problems
