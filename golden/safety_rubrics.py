"""Rubrics on what must never happen in any case: nothing from an untrusted document in
the chart, nothing on or naming the wrong patient, no identifier in a log, a deleted
document fully retracted and never retrieved, no chart row promoted twice."""

from __future__ import annotations

from typing import Any

from golden.matching import same
from golden.redact import find
from golden.observation import Observation
from golden.verdicts import SUPPORTING, TRUSTED, Verdict, answer_citations, cited_document_id, folded_text, verdict_from


def identity_safe(obs: Observation) -> Verdict:
    """Nothing counts unless the current identity check of its part (or, for a fact of no
    part, of the whole document) is trusted; chart rows rest on such facts alone."""
    problems = []
    for name, checks in obs.checks.items():
        current = {c["scope"]: c["identity_status"] for c in checks}
        for f in obs.raw_facts[name]:
            status = current.get(f["scope"], current.get(None))
            if status not in TRUSTED and (f["active"] or f["promotion_status"] in SUPPORTING):
                problems.append(f"{name}: fact {f['id']} counts although its identity is {status}")
    for name, want in (obs.case.expect.get("documents") or {}).items():
        if "identity" in want:
            got = obs.reports[name]["identity"]["status"] if name in obs.reports else None
            if not same(got, want["identity"]):
                problems.append(f"{name}: identity {got}, expected {want['identity']}")
    return verdict_from(problems, "identity states are as expected and nothing untrusted counts")


def no_wrong_patient(obs: Observation) -> Verdict:
    problems = []
    for key, chart in obs.charts.items():
        pid = obs.patient_ids[key]
        for section, rows in chart.items():
            for row in rows:
                strangers = [d for d in row["document_ids"] if obs.document_owner.get(d, pid) != pid]
                if strangers:
                    problems.append(f"{key}'s {section} row {row['id']} rests on another patient's document")
    for a in obs.answers:
        pid = obs.patient_ids[a["patient"]]
        for c in answer_citations(a["payload"]):
            d = cited_document_id(c)
            if d is not None and obs.document_owner.get(d, pid) != pid:
                problems.append(f"answer to step {a['step']} cites another patient's document")
        others = [str(p[k]) for k2, p in obs.case.patients.items() if k2 != a["patient"]
                  for k in ("first", "last", "mrn")]
        if find(a["payload"]["text"], [o for o in others if len(o) >= 4]):
            problems.append(f"answer to step {a['step']} names another patient")
    return verdict_from(problems, "every chart row and answer stays with its own patient")


def no_phi_in_logs(obs: Observation, leaks: list[dict[str, Any]]) -> Verdict:
    problems = [f"{leak['canary']} found in {leak['file']}" for leak in leaks]
    return verdict_from(problems, f"none of {len(obs.case.phi_strings())} planted identifiers in logs or heartbeat")


def retraction_complete(obs: Observation) -> Verdict:
    if not obs.deleted:
        return True, "no document deleted in this case"
    from storage import promotions_repo

    problems = []
    for name in obs.deleted:
        doc_id = obs.uploads[name].document_id
        live = [f["id"] for f in obs.raw_facts[name] if f["active"]]
        if live:
            problems.append(f"{name}: {len(live)} facts still active after deletion")
        with obs.wb.db.cursor() as cur:
            promos = promotions_repo.promotions_for_document(cur, doc_id)
        if any(p.active and p.outcome in SUPPORTING for p in promos):
            problems.append(f"{name}: a promotion still counts after deletion")
        for key, chart in obs.charts.items():
            for section, rows in chart.items():
                if any(doc_id in row["document_ids"] for row in rows):
                    problems.append(f"{name}: still supports a {section} row of {key}")
                if any(not row["document_ids"] and row["source"] == "promoted" for row in rows):
                    problems.append(f"{key}: a promoted {section} row is left without a live source")
        if obs.reports[name]["job"] and obs.reports[name]["job"]["status"] not in ("retracted", "failed"):
            problems.append(f"{name}: its job is {obs.reports[name]['job']['status']}, not retracted")
    return verdict_from(problems, f"{len(obs.deleted)} deleted documents left nothing active behind")


def deleted_document_not_retrieved(obs: Observation) -> Verdict:
    if not obs.deleted:
        return True, "no document deleted in this case"
    problems = []
    index = obs.wb.fact_index
    for name in obs.deleted:
        doc_id = obs.uploads[name].document_id
        if index is not None and hasattr(index, "count") and index.count(document_id=doc_id, active_only=True):
            problems.append(f"{name}: its facts are still in the vector index")
        if index is not None:
            upload = obs.uploads[name]
            for f in obs.raw_facts[name][:5]:
                hits = index.search(obs.patient_ids[upload.patient], f["fact_text"], k=5)
                if any(h.fact_id == f["id"] for h in hits):
                    problems.append(f"{name}: fact {f['id']} is still found by search")
                    break
    for a in obs.answers:
        gone = {obs.uploads[n].document_id for n, step in a["after_deletions"].items()}
        if any(cited_document_id(c) in gone for c in answer_citations(a["payload"])):
            problems.append(f"answer to step {a['step']} cites a deleted document")
    return verdict_from(problems, "deleted documents are absent from search, vectors and later answers")


def _clinical_key(section: str, row: dict[str, Any]) -> tuple:
    from domain.policy.facts.analytes import canonical_analyte

    if section == "labs":
        name = row.get("test_name") or ""
        return (canonical_analyte(name) or folded_text(name), str(row.get("collection_date")))
    if section == "vital_signs":
        return (row.get("kind"), str(row.get("measured_at")))
    column = {"allergies": "substance", "medications": "name", "problems": "name"}[section]
    return (folded_text(row.get(column) or row.get("description")),)


def no_duplicate_promotion(obs: Observation) -> Verdict:
    problems = []
    for key, chart in obs.charts.items():
        for section, rows in chart.items():
            seen: dict[tuple, int] = {}
            for row in rows:
                k = _clinical_key(section, row)
                if k in seen:
                    problems.append(f"{key}: {section} rows {seen[k]} and {row['id']} hold the same thing")
                seen[k] = row["id"]
    from storage import promotions_repo

    for name, upload in obs.uploads.items():
        with obs.wb.db.cursor() as cur:
            promos = promotions_repo.promotions_for_document(cur, upload.document_id)
        per_fact: dict[int, int] = {}
        for p in promos:
            if p.active and p.outcome in SUPPORTING:
                per_fact[p.fact_id] = per_fact.get(p.fact_id, 0) + 1
        doubled = [f for f, n in per_fact.items() if n > 1]
        if doubled:
            problems.append(f"{name}: fact {doubled[0]} has {per_fact[doubled[0]]} live promotions")
        prints = [f["fact_fingerprint"] for f in obs.raw_facts[name]]
        if len(prints) != len(set(prints)):
            problems.append(f"{name}: the same fact is stored twice")
    return verdict_from(problems, "no chart row, promotion or fact is duplicated")
