"""The backfill's report: one outcome per manifest row, counted, and every failure with
its code and line number. Outcomes: ``succeeded`` (read, its identity verified),
``held_for_identity`` (read, but the document's identity waits for a person: its
findings stay out of the chart), ``failed`` (with a code), ``skipped`` (finished by an
earlier run or upload, or the same file twice) and ``stored_only`` (a category stored
without extraction). Paths are the user's own input; no name or MRN is in it."""

from __future__ import annotations

from collections import Counter
from typing import Any

from core.services.backfill.originals import Item

OUTCOMES = ("succeeded", "held_for_identity", "failed", "skipped", "stored_only")


def settle(item: Item) -> None:
    """A row's outcome from its finished jobs (a batch read in parts has several): the
    first failure, else held when any part's identity is not trusted."""
    finals = [item.finals[job_id] for job_id in item.jobs]
    failed = next((f for f in finals if f["status"] != "succeeded"), None)
    if failed is not None:
        item.fail(failed.get("error_code") or "failed", failed.get("error_message") or "")
    elif any(not (f.get("counts") or {}).get("identity_trusted") for f in finals):
        item.outcome = "held_for_identity"
    else:
        item.outcome = "succeeded"


def build_report(items: list[Item], *, engine, reclaimed: int, documents: int, read_seconds: float,
                 seconds: float) -> dict[str, Any]:
    outcomes = Counter(item.outcome or "failed" for item in items)
    failures = [item for item in items if item.outcome == "failed"]
    return {
        "rows": len(items),
        "stored": sum(item.stored for item in items),  # originals stored by this run
        **{outcome: outcomes.get(outcome, 0) for outcome in OUTCOMES},
        "failed_by_code": dict(Counter(item.code for item in failures)),
        "failures": [{"row": item.row.line, "path": str(item.row.path) if item.row.path else None,
                      "code": item.code, "message": item.message, "document_id": item.document_id}
                     for item in failures],
        "held": [{"row": item.row.line, "document_id": item.document_id}
                 for item in items if item.outcome == "held_for_identity"],
        "skipped_rows": [{"row": item.row.line, "document_id": item.document_id, "code": item.code}
                         for item in items if item.outcome == "skipped"],
        "documents_read": documents,
        "documents_per_second": round(documents / read_seconds, 3) if documents and read_seconds > 0 else 0.0,
        "reclaimed_jobs": reclaimed,
        "engine": engine.name,
        "readers": engine.workers,
        "seconds": round(seconds, 3),
    }
