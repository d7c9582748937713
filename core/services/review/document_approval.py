"""Approve a whole document's remaining findings in one step, after saying what it will
change. Conflicts with the chart are never decided here: each needs its explicit choice
(replace, keep both, keep the chart value), so they are named and left in the queue, as
are the findings whose approval would meet a chart value and results no reader read.

Over decisions.approval_preview / decide_fact: the same safeguards and the same audit
as approving each finding on its own."""

from __future__ import annotations

from typing import Any

from domain.errors import BadInput, NotFound
from domain.policy.facts.review_rules import CONFLICT
from core.services.review.decisions import approval_preview, authorize_decision, decide_fact, queue_items
from core.services.workbench import Workbench


def _remaining(wb: Workbench, patient_id: int, document_id: int) -> tuple[list[dict], list[dict], list[dict]]:
    """One document's open items: findings approval may take, conflicts, and the rest
    (results no reader read, a waiting patient match)."""
    items = [i for i in queue_items(wb, patient_id) if i["document_id"] == document_id]
    identity = [i for i in items if i["kind"] == "identity"]
    facts = [i for i in items if i["kind"] == "fact"]
    conflicts = [i for i in facts if i["reason"] == CONFLICT]
    unread = [i for i in facts if i["fact"]["fact_type"] == "unread_content"]
    takes = [i for i in facts if i not in conflicts and i not in unread]
    return takes, conflicts, unread + identity


def document_preview(wb: Workbench, patient_id: int, document_id: int) -> dict[str, Any]:
    """What approving this document's remaining findings would do, before anything is
    done: ``approve`` (fact ids that go to the chart as they are), ``conflicts`` (named,
    left for a choice each), ``meets_chart`` (findings whose approval would change a
    chart value: left for a choice each), ``left`` (results no reader read, a waiting
    patient match) and ``patient_match_waits``."""
    takes, conflicts, left = _remaining(wb, patient_id, document_id)
    waits = any(i["kind"] == "identity" for i in left)
    preview = approval_preview(wb, [i["item_id"] for i in takes]) if takes and not waits else \
        {"replaces": [], "own_decision": [], "refused": []}
    meets = {e["fact_id"]: e for e in preview["replaces"] + preview["own_decision"]}
    refused = {r["fact_id"]: r["error"] for r in preview["refused"]}
    approve = [] if waits else [i["item_id"] for i in takes if i["item_id"] not in meets and i["item_id"] not in refused]
    return {"document_id": document_id, "approve": approve,
            "approve_texts": [i["fact"]["fact_text"] for i in takes if i["item_id"] in approve],
            "conflicts": [{"fact_id": i["item_id"], "finding": i["fact"]["fact_text"]} for i in conflicts],
            "meets_chart": list(meets.values()), "refused": [{"fact_id": k, "error": v} for k, v in refused.items()],
            "left": [{"key": i["key"], "kind": i["kind"]} for i in left], "patient_match_waits": waits}


def approve_document(wb: Workbench, patient_id: int, document_id: int, *, by: str,
                     expected: list[int] | None = None) -> dict[str, Any]:
    """Approve the findings ``document_preview`` says go to the chart as they are, each
    decided and audited on its own. ``expected`` is the list the reviewer was shown:
    when the document's findings changed meanwhile the call is refused, writing nothing,
    so nothing is approved that was not in the preview."""
    by = authorize_decision(wb, by)
    preview = document_preview(wb, patient_id, document_id)
    if preview["patient_match_waits"]:
        raise BadInput("This document's patient match waits for a decision: decide it first; its findings are "
                       "approved after it.", code="identity_pending")
    if expected is not None and sorted(expected) != sorted(preview["approve"]):
        raise BadInput("This document's findings changed since the preview; look at the new preview and approve "
                       "again.", code="preview_changed")
    results = []
    for fact_id in preview["approve"]:
        try:
            results.append({"ok": True, **decide_fact(wb, fact_id, approve=True, by=by)})
        except (BadInput, NotFound) as exc:  # one that fails is reported; it does not undo the others
            results.append({"ok": False, "fact_id": fact_id, "code": exc.code, "error": exc.message})
    return {"document_id": document_id, "results": results, "approved": sum(r["ok"] for r in results),
            "conflicts_left": len(preview["conflicts"]), "meets_chart_left": len(preview["meets_chart"])}
