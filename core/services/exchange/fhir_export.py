"""A patient's trusted chart as one FHIR R4 Bundle (type collection), every resource
validated with the fhir.resources R4B models before anything is written (issue 25).

In the bundle: the Patient; each live, trusted, promoted chart row (labs, vital signs,
allergies, medications, problems) and each trusted fact the chart has no table for
(family history, "no known allergies"); a DocumentReference per source document; one
Provenance per clinical resource and a Practitioner per person who approved or corrected
one. Items waiting for review come only when asked (``include_review``), marked
unconfirmed. What a bundle id exported is remembered (``fhir_export_entries``): when the
same id is exported again, a resource that has left the chart since is sent once more
with the status entered-in-error, and its retraction gets a Provenance of its own.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from fhir.resources.R4B import get_fhir_model_class
from fhir.resources.R4B.bundle import Bundle
from pydantic import ValidationError

from core.services.admin.access_audit import VIEW_CHART, record_view
from core.services.admin.patients import get_patient
from core.services.exchange.chart_source import ChartSource, read_chart_source
from core.services.exchange.fhir_provenance import practitioner, people_of, provenance, retraction_provenance
from core.services.exchange.fhir_resources import (clinical_resource, document_reference, entered_in_error,
                                                   patient_resource, ref)
from core.services.exchange.fhir_values import instant, system
from core.services.workbench import Workbench
from domain.clock import utcnow
from domain.errors import BadInput, WorkbenchError
from domain.policy.facts.chart_rules import identity_trusted
from storage import documents_repo, facts_repo, fhir_exports_repo

_BUNDLE_ID = re.compile(r"^[A-Za-z0-9\-.]{1,64}$")
# Resource types that leave a bundle id's exports as entered-in-error when their source
# has gone; the Patient, Practitioners and Provenances are never withdrawn.
_WITHDRAWABLE = ("Observation", "AllergyIntolerance", "MedicationStatement", "Condition", "FamilyMemberHistory",
                 "DocumentReference")
_ORDER = ("Patient", "Practitioner", "DocumentReference", "Observation", "AllergyIntolerance", "MedicationStatement",
          "Condition", "FamilyMemberHistory", "Provenance")


@dataclass
class FhirExport:
    bundle: dict[str, Any]
    bundle_id: str
    patient_mrn: str
    counts: dict[str, int]
    review_items: int = 0
    entered_in_error: list[str] = field(default_factory=list)  # "Observation/lab-12"

    def summary(self) -> dict[str, Any]:
        """The CLI contract's answer (DESIGN §9), without the bundle itself."""
        return {"patient_mrn": self.patient_mrn, "bundle_id": self.bundle_id, "resources": self.counts,
                "review_items": self.review_items, "entered_in_error": self.entered_in_error}


def export_fhir(wb: Workbench, *, mrn: str, include_review: bool = False, bundle_id: str | None = None,
                by: str | None = None, channel: str = "cli") -> FhirExport:
    """Build, validate and record the bundle of the patient with ``mrn``."""
    bundle_id = bundle_id or str(uuid.uuid4())
    if not _BUNDLE_ID.match(bundle_id):
        raise BadInput("A bundle id is 1 to 64 letters, digits, '-' or '.'.", code="bad_bundle_id")
    patient = get_patient(wb, mrn=mrn)
    with wb.db.cursor() as cur:
        owner = fhir_exports_repo.bundle_patient(cur, bundle_id)
        previous = fhir_exports_repo.exported_entries(cur, bundle_id)
    if owner is not None and owner != patient["id"]:
        raise BadInput("This bundle id was used for another patient's export; choose another.",
                       code="bundle_id_in_use")
    now = utcnow()
    # Everything live, review items included, so that a review item left out now is not
    # mistaken for one that was withdrawn.
    source = read_chart_source(wb, patient, include_review=True)
    # A resource this bundle id sent as confirmed that now waits for review is sent again,
    # unconfirmed, even without include_review: the receiver must not keep it as confirmed.
    sent_confirmed = {e["resource_id"] for e in previous if not _unconfirmed(e["resource"])}
    resources, review_items = _resources(wb, source, include_review, sent_confirmed)
    withdrawn = _withdrawn(wb, source, previous, {(r["resourceType"], r["id"]) for r in resources}, now)
    resources += withdrawn
    bundle = _validated_bundle(bundle_id, resources, now)
    with wb.db.transaction() as cur:
        fhir_exports_repo.record_export(cur, bundle_id, patient["id"], [e["resource"] for e in bundle["entry"]])
    if by:
        record_view(wb, by, VIEW_CHART, patient_id=patient["id"], object_type="fhir_bundle", object_id=bundle_id,
                    channel=channel)
    counts: dict[str, int] = {}
    for entry in bundle["entry"]:
        counts[entry["resource"]["resourceType"]] = counts.get(entry["resource"]["resourceType"], 0) + 1
    return FhirExport(bundle=bundle, bundle_id=bundle_id, patient_mrn=patient["mrn"], counts=counts,
                      review_items=review_items,
                      entered_in_error=[f"{r['resourceType']}/{r['id']}" for r in withdrawn
                                        if r["resourceType"] != "Provenance"])


def write_bundle(export: FhirExport, path: Path) -> Path:
    return write_bundle_json(export.bundle, path)


def write_bundle_json(bundle: dict[str, Any], path: Path) -> Path:
    """A bundle as JSON at ``path``, written whole or not at all."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(bundle, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise WorkbenchError(f"The bundle could not be written ({type(exc).__name__}).", code="write_failed") from None
    return path


def _unconfirmed(resource: dict[str, Any]) -> bool:
    return any(t.get("code") == "unconfirmed" for t in (resource.get("meta") or {}).get("tag", []))


def _resources(wb: Workbench, source: ChartSource, include_review: bool,
               sent_confirmed: set[str]) -> tuple[list[dict[str, Any]], int]:
    patient = patient_resource(source.patient)
    subject = ref("Patient", patient["id"])
    items = [i for i in source.items if include_review or not i.review or i.key in sent_confirmed]
    clinical, provenances, people = [], [], {}
    for item in items:
        resource = clinical_resource(item, subject)
        clinical.append(resource)
        provenances.append(provenance(item, resource))
        for username, _ in people_of(item):
            people.setdefault(username, practitioner(username))
    documents = []
    for doc_id in sorted({s.fact.document_id for i in items for s in i.supports}):
        doc = source.documents[doc_id]
        documents.append(document_reference(doc | {"doc_type": _doc_type(source, doc_id)}, subject,
                                            _stored_bytes(wb, doc["sha256"])))
    return [patient, *people.values(), *documents, *clinical, *provenances], sum(i.review for i in items)


def _doc_type(source: ChartSource, doc_id: int) -> str | None:
    return next((s.fact.doc_type for i in source.items for s in i.supports if s.fact.document_id == doc_id), None)


def _stored_bytes(wb: Workbench, sha256: str) -> bytes | None:
    try:
        return wb.blobs.get(sha256)
    except (OSError, ValueError, WorkbenchError):
        return None  # the hash is still named by its sha256 identifier


def _withdrawn(wb: Workbench, source: ChartSource, previous: list[dict[str, Any]],
               present: set[tuple[str, str]], now: datetime) -> list[dict[str, Any]]:
    """What this bundle id exported before whose source has gone since, as entered-in-error,
    each with a retraction Provenance. A review item merely left out this time (no
    ``include_review``), or a reviewed fact now exported as its chart row, is not gone."""
    live_keys = {i.key for i in source.items}
    live_facts = {s.fact.id for i in source.items for s in i.supports}
    provenances = {e["resource_id"]: e["resource"] for e in previous if e["resource_type"] == "Provenance"}
    out: list[dict[str, Any]] = []
    for entry in previous:
        kind, rid, before = entry["resource_type"], entry["resource_id"], entry["resource"]
        if kind not in _WITHDRAWABLE or (kind, rid) in present or not _gone(wb, rid, live_keys, live_facts):
            continue
        withdrawn = entered_in_error(before)
        out.append(withdrawn)
        if kind != "DocumentReference":
            out.append(retraction_provenance(withdrawn, provenances.get(f"provenance-{rid}"), now))
    return out


def _gone(wb: Workbench, rid: str, live_keys: set[str], live_facts: set[int]) -> bool:
    if rid.startswith("document-"):
        return _document_gone(wb, int(rid.split("-", 1)[1]))
    if rid.startswith("fact-"):
        return int(rid.split("-", 1)[1]) not in live_facts
    return rid not in live_keys


def _document_gone(wb: Workbench, document_id: int) -> bool:
    """Deleted, or no longer this patient's: no identity check in force trusts any part of it."""
    with wb.db.cursor() as cur:
        doc = documents_repo.by_id(cur, document_id)
        checks = facts_repo.identity_checks_for_document(cur, document_id)
    if doc is None or doc["deleted"] or not doc["active"]:
        return True
    return bool(checks) and not any(identity_trusted(c.identity_status) for c in checks)


def _validated_bundle(bundle_id: str, resources: list[dict[str, Any]], now: datetime) -> dict[str, Any]:
    """Each resource through its R4B model, then the bundle; the JSON the models write."""
    resources = sorted(resources, key=lambda r: _ORDER.index(r["resourceType"]))
    entries = []
    for resource in resources:
        try:
            model = get_fhir_model_class(resource["resourceType"]).model_validate(resource)
        except ValidationError as exc:
            # Field locations only: a message may quote a value from the chart.
            where = sorted({".".join(str(p) for p in e["loc"]) for e in exc.errors()})[:5]
            raise WorkbenchError(f"{resource['resourceType']}/{resource['id']} is not valid FHIR R4 "
                                 f"(at {', '.join(where)}); nothing was written.", code="fhir_invalid") from None
        entries.append({"fullUrl": f"{system('workbench')}/{resource['resourceType']}/{resource['id']}",
                        "resource": json.loads(model.json())})
    bundle = {"resourceType": "Bundle", "id": bundle_id, "type": "collection", "timestamp": instant(now),
              "identifier": {"system": system("bundle"), "value": bundle_id}, "entry": entries}
    return json.loads(Bundle.model_validate(bundle).json())
