"""Whether documents keep failing to be read: the signal that turns Health red on the
chart overview and on Operations. A single damaged file is a document's problem (its own
row says so); most of the latest jobs failing is the workbench's.

"Keep failing" is data, not a guess in a page: of the ``last`` finished jobs, at least
``failed`` failed. Retracted (deleted) documents' jobs do not count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.services.workbench import Workbench
from storage import jobs_repo


@dataclass(frozen=True)
class FailingRule:
    last: int  # how many of the latest finished jobs are looked at
    failed: int  # how many of them failing means "jobs keep failing"


KEEP_FAILING = FailingRule(last=5, failed=3)
_FINISHED = ("succeeded", "failed")


def failing_jobs(wb: Workbench, rule: FailingRule = KEEP_FAILING) -> dict[str, Any]:
    """``{"failing": bool, "failed": n, "of": m, "rule": {...}, "job_ids": [...]}`` over the
    latest finished jobs (ids and counts only: PHI-free)."""
    with wb.db.cursor() as cur:
        recent = jobs_repo.recent_jobs(cur, limit=max(50, rule.last * 10))
    finished = sorted((j for j in recent if j.status in _FINISHED and j.finished_at is not None),
                      key=lambda j: (j.finished_at, j.id), reverse=True)[:rule.last]
    failed = [j.id for j in finished if j.status == "failed"]
    return {"failing": len(failed) >= rule.failed, "failed": len(failed), "of": len(finished),
            "rule": {"last": rule.last, "failed": rule.failed}, "job_ids": failed}
