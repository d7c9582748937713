"""Provenance for each exported clinical resource: its source documents, the exact place
each fact was read (page and box, cell range, OBX field, paragraph: the fact's citation)
with the quote, the engine that read it, and the person who approved or corrected it
(a Practitioner), with the activity: extracted, verified or corrected."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from core.services.exchange.chart_source import ExportItem, Support
from core.services.exchange.fhir_resources import ref
from core.services.exchange.fhir_values import coding, instant, system
from domain.clock import utcnow

WORKBENCH_AGENT = "clinical document review workbench"
_DECISION_TEXT = {"approve": "approved the finding", "correct": "corrected the finding",
                  "identity": "confirmed the document is this patient's"}
_DECISION_ROLE = {"approve": ("verifier", "Verifier"), "correct": ("author", "Author"),
                  "identity": ("attester", "Attester")}


def practitioner_id(username: str) -> str:
    return "practitioner-" + hashlib.sha256(username.encode()).hexdigest()[:16]


def practitioner(username: str) -> dict[str, Any]:
    """A workbench account as a Practitioner: its user name is all the workbench knows."""
    return {"resourceType": "Practitioner", "id": practitioner_id(username),
            "identifier": [{"system": system("username"), "value": username}], "name": [{"text": username}]}


def activity_of(item: ExportItem) -> str:
    if any(s.fact.corrected_by or (s.decision or {}).get("decision") == "correct" for s in item.supports):
        return "corrected"
    if any((s.decision or {}).get("decision") == "approve" for s in item.supports):
        return "verified"
    return "extracted"


def people_of(item: ExportItem) -> list[tuple[str, str]]:
    """(username, decision) of each person who decided on the item's facts, in order, and
    of each who approved the identity of a document they came from ("identity")."""
    found: list[tuple[str, str]] = []
    for s in item.supports:
        if s.decision:
            entry = (str(s.decision["actor"]), str(s.decision["decision"]))
        elif s.fact.corrected_by:
            entry = (str(s.fact.corrected_by), "correct")
        else:
            continue
        if entry not in found:
            found.append(entry)
    for s in item.supports:
        if s.identity_approver and (s.identity_approver, "identity") not in found:
            found.append((s.identity_approver, "identity"))
    return found


def locator_extension(s: Support) -> dict[str, Any]:
    """The fact's citation, whole: where on the source it was read and what it quotes."""
    cit = s.fact.citation or {}
    parts: list[dict[str, Any]] = [{"url": "fact", "valueString": f"fact:{s.fact.id}"}]
    for key, url in (("source_id", "source"), ("source_type", "sourceType"), ("page_or_section", "pageOrSection"),
                     ("field_or_chunk_id", "field"), ("quote_or_value", "quote")):
        if cit.get(key) not in (None, ""):
            parts.append({"url": url, "valueString": str(cit[key])})
    if isinstance(cit.get("page"), int):
        parts.append({"url": "page", "valueInteger": cit["page"]})
    box = cit.get("bounding_box")
    if isinstance(box, dict):
        parts.append({"url": "boundingBox", "extension": [
            {"url": k, "valueDecimal": box[k]} for k in ("x", "y", "width", "height") if k in box]})
    parts.append({"url": "verified", "valueBoolean": bool(cit.get("verified"))})
    return {"url": system("locator_extension"), "extension": parts}


def _recorded(item: ExportItem) -> str:
    moments: list[datetime] = []
    for s in item.supports:
        moments += [m for m in (s.fact.created_at, s.fact.corrected_at) if isinstance(m, datetime)]
        when = (s.decision or {}).get("created_at")
        if isinstance(when, datetime):
            moments.append(when)
    return instant(max(moments) if moments else utcnow())


def provenance(item: ExportItem, target: dict[str, Any]) -> dict[str, Any]:
    activity = activity_of(item)
    agents: list[dict[str, Any]] = []
    for engine in dict.fromkeys(s.engine or "unknown engine" for s in item.supports):
        agents.append({"type": {"coding": [coding("provenance_participant", "performer", "Performer")],
                                "text": "extracting engine"},
                       "who": {"identifier": {"system": system("engine"), "value": engine}, "display": engine}})
    for username, decision in people_of(item):
        code, display = _DECISION_ROLE[decision]
        agents.append({"type": {"coding": [coding("provenance_participant", code, display)],
                                "text": _DECISION_TEXT[decision]},
                       "who": ref("Practitioner", practitioner_id(username)) | {"display": username}})
    return {
        "resourceType": "Provenance", "id": f"provenance-{target['id']}",
        "target": [ref(target["resourceType"], target["id"])],
        "recorded": _recorded(item),
        "activity": {"coding": [coding("activity", activity, activity)], "text": activity},
        "agent": agents,
        "entity": [{"role": "source", "what": ref("DocumentReference", f"document-{s.fact.document_id}"),
                    "extension": [locator_extension(s)]} for s in item.supports],
    }


def retraction_provenance(target: dict[str, Any], before: dict[str, Any] | None, now: datetime) -> dict[str, Any]:
    """For a resource re-sent as entered-in-error: its sources as exported before, the
    activity "retracted", the workbench as the agent (the retraction's own audit names who)."""
    return {
        "resourceType": "Provenance", "id": f"provenance-{target['id']}-retracted",
        "target": [ref(target["resourceType"], target["id"])],
        "recorded": instant(now),
        "activity": {"coding": [coding("activity", "retracted", "retracted")], "text": "retracted"},
        "agent": [{"type": {"coding": [coding("provenance_participant", "custodian", "Custodian")]},
                   "who": {"display": WORKBENCH_AGENT}}],
        "entity": list((before or {}).get("entity") or []),
    }
