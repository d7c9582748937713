"""Read side: facts, identity and promotions as the CLI and pages show them."""

from __future__ import annotations

from typing import Any

from domain.models import Certainty, IdentityStatus, StoredFact
from domain.policy.facts.chart_rules import CHART_DESTINATIONS, CHART_TABLES, is_critical, review_group
from domain.policy.facts.vital_signs import VITAL_SIGNS, summary
from domain.policy.identity.gate import combine_parts
from core.services.workbench import Workbench
from storage import documents_repo, facts_repo, jobs_repo, promotions_repo, record_version
from storage.rows import FactRow, IdentityCheckRow


def fact_view(row: FactRow) -> dict[str, Any]:
    """The FACT shape of the CLI contract (DESIGN §9)."""
    return StoredFact(
        fact_id=row.id, fact_type=row.fact_type, certainty=Certainty(row.certainty),
        structured_value=row.structured_value or {}, fact_text=row.fact_text, citation=row.citation,
        confidence=row.confidence, promotion_status=row.promotion_status, active=row.active,
        document_id=row.document_id, review_reason=row.review_reason, context=row.context,
        corrected_by=row.corrected_by,
        corrected_at=str(row.corrected_at) if row.corrected_at is not None else None,
    ).model_dump(mode="json")


def _identity_view(check: IdentityCheckRow | None) -> dict[str, Any]:
    if check is None:
        return {"status": "identity_unchecked"}
    return {
        "status": check.identity_status, "identity_check_id": check.id, "scope": check.scope,
        "matched_fields": check.matched_fields, "mismatch_reason": check.mismatch_reason,
        "review_required": check.review_required, "reviewed_by": check.reviewed_by,
        # Identity values printed but not read (never "absent"): approving needs a reason.
        "unread_identifiers": check.unread_identifiers or [],
    }


def document_report(wb: Workbench, document_id: int) -> dict[str, Any]:
    """Everything the ingest command reports about one document. For a batch read in
    parts, the parts' reports merged under the upload's own id (``_merged_parts``)."""
    with wb.db.cursor() as cur:
        parts = documents_repo.parts_of(cur, document_id)
    if parts:
        return _merged_parts(document_id, parts, [document_report(wb, part["id"]) for part in parts])
    with wb.db.cursor() as cur:
        jobs = jobs_repo.for_document(cur, document_id)
        job = jobs[-1] if jobs else None
        checks = facts_repo.identity_checks_for_document(cur, document_id)
        facts = facts_repo.facts_for_document(cur, document_id)
        promotions = promotions_repo.promotions_for_document(cur, document_id)
    doc_check = next((c for c in checks if c.scope is None), None)
    identity = _identity_view(doc_check)
    scoped = [_identity_view(c) for c in checks if c.scope is not None]
    if scoped:
        identity["scopes"] = scoped
    return {
        "document_id": document_id,
        "job": None if job is None else {
            "job_id": job.id, "status": job.status, "error_code": job.error_code,
            "error_message": job.error_message, "attempts": job.attempts, "engine": job.engine,
            "timings_ms": job.timings, "counts": job.counts, "warnings": job.warnings or [],
            # Results printed on the document that no fact reads (the coverage guard).
            "unread_content": (job.counts or {}).get("unread_content", 0),
        },
        "identity": identity,
        "facts": [fact_view(f) for f in facts],
        "promotions": [
            {"promotion_id": p.id, "fact_id": p.fact_id, "outcome": p.outcome,
             "promoted_table": p.promoted_table, "promoted_record_id": p.promoted_record_id,
             "conflict_reason": p.conflict_reason, "active": p.active}
            for p in promotions
        ],
    }


def _merged_parts(document_id: int, rows: list[dict[str, Any]], parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One report for an upload read in parts, in the ingest contract's shape (DESIGN §9):
    its job is failed when a part failed (that part's code and message), succeeded when
    every part did, else still running or pending, with counts and timings summed; its
    identity is the parts' combined as for the messages of one document; facts and
    promotions are every part's. ``parts`` lists each part (its document id, file name
    naming its messages, whether it was deleted on its own, and its job)."""
    # A part deleted on its own (its job retracted) no longer counts towards the upload.
    live = [p for row, p in zip(rows, parts) if not row["deleted"]]
    jobs = [p["job"] for p in live if p["job"] is not None and p["job"]["status"] != "retracted"]
    statuses = [j["status"] for j in jobs]
    failed = next((j for j in jobs if j["status"] == "failed"), None)
    status = "failed" if failed else "succeeded" if statuses and all(s == "succeeded" for s in statuses) \
        else "running" if "running" in statuses else "pending" if statuses else "retracted"

    def summed(key: str) -> dict[str, Any]:
        total: dict[str, Any] = {}
        for job in jobs:
            for name, value in (job[key] or {}).items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    total[name] = total.get(name, 0) + value
        return total

    # Every live part counts: one not checked yet is not trusted, so the upload is never
    # shown verified before all its parts are; while parts are unread and none names
    # another patient, the upload is unchecked.
    states = {f"part {i}": IdentityStatus(p["identity"]["status"]) for i, p in enumerate(live, 1)}
    unread = IdentityStatus.UNCHECKED in states.values() and IdentityStatus.MISMATCH not in states.values()
    combined = combine_parts(states) if states and not unread else None
    return {
        "document_id": document_id,
        "job": {"job_id": None, "status": status, "error_code": failed["error_code"] if failed else None,
                "error_message": failed["error_message"] if failed else None,
                "attempts": max((j["attempts"] for j in jobs), default=0),
                "engine": jobs[0]["engine"] if jobs else None, "timings_ms": summed("timings_ms"),
                "counts": summed("counts"), "warnings": [w for j in jobs for w in j["warnings"]],
                "unread_content": sum(j.get("unread_content", 0) for j in jobs)},
        "identity": {"status": combined.status.value if combined else "identity_unchecked",
                     "mismatch_reason": combined.mismatch_reason if combined else None,
                     "parts": [p["identity"] for p in parts]},
        "facts": [f for p in parts for f in p["facts"]],
        "promotions": [x for p in parts for x in p["promotions"]],
        "parts": [{"document_id": p["document_id"], "filename": row["filename"], "deleted": row["deleted"],
                   "job": p["job"]} for row, p in zip(rows, parts)],
    }


def patient_facts(wb: Workbench, patient_id: int) -> dict[str, list[dict[str, Any]]]:
    """Live facts of a patient grouped for review: verified, document_fact,
    needs_review, and held (identity not trusted: quarantined or awaiting review).
    Read and shaped once per version of the patient's record (a review click re-reads
    none of it until a write); each call gets its own dicts."""
    groups = record_version.kept(wb.db, patient_id, "review.patient_facts", lambda: _patient_facts(wb, patient_id))
    return {name: [dict(f) for f in facts] for name, facts in groups.items()}


def _patient_facts(wb: Workbench, patient_id: int) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {"verified": [], "document_fact": [], "needs_review": [], "held": []}
    with wb.db.cursor() as cur:
        rows = facts_repo.facts_for_patient(cur, patient_id)
    for row in rows:
        if row.document_deleted:
            continue
        group = review_group(row.to_dict())
        if group is not None:
            groups[group].append(fact_view(row) | {"filename": row.filename, "identity_status": row.identity_status})
    return groups


def patient_documents(wb: Workbench, patient_id: int) -> list[dict[str, Any]]:
    with wb.db.cursor() as cur:
        return documents_repo.for_patient(cur, patient_id)


def chart(wb: Workbench, patient_id: int) -> dict[str, list[dict[str, Any]]]:
    with wb.db.cursor() as cur:
        return {table: promotions_repo.patient_chart_rows(cur, table, patient_id) for table in CHART_TABLES.values()}


_CHART_SECTIONS = {"lab_result": "labs", "allergy": "allergies", "medication": "medications", "problem": "problems",
                   "vital_sign": "vital_signs"}


def chart_view(wb: Workbench, patient_id: int) -> dict[str, list[dict[str, Any]]]:
    """The patient's active chart rows as the `chart` command prints them: each row's
    values, ``critical`` for labs, and the live documents that support it."""
    out: dict[str, list[dict[str, Any]]] = {}
    with wb.db.cursor() as cur:
        for fact_type, (table, columns) in CHART_DESTINATIONS.items():
            support = promotions_repo.supported_rows(cur, table, patient_id)
            section = out.setdefault(_CHART_SECTIONS[fact_type], [])
            for row in promotions_repo.patient_chart_rows(cur, table, patient_id):
                item = {"id": row["id"], **{c: (str(row[c]) if c == "collection_date" and row[c] is not None
                                                else row[c]) for c in columns},
                        "source": row["source"], "document_ids": support.get(row["id"], [])}
                if fact_type == "lab_result":
                    item["critical"] = is_critical(row.get("abnormal_flag"))
                section.append(item)
    # Newest reading first, so the first row of each sign is its latest.
    out["vital_signs"].sort(key=lambda r: str(r.get("measured_at") or ""), reverse=True)
    return out


def latest_vital_signs(charted: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The newest chart row of each vital sign (from ``chart_view``), in the
    vocabulary's order of signs, each with its one-line summary."""
    latest: dict[str, dict[str, Any]] = {}
    for row in charted.get("vital_signs", []):
        latest.setdefault(row["kind"], row)
    order = list(VITAL_SIGNS)
    return [row | {"summary": summary(row["kind"], row["value"], row.get("unit") or "")}
            for row in sorted(latest.values(), key=lambda r: order.index(r["kind"]) if r["kind"] in order else 99)]
