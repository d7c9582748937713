"""The review queue grouped for one look: each item's reason group (reasons that differ
only by a confidence number are one) and confidence band, the filters on them, and the
bulk approval of one group.

Over decisions.queue_items / approve_facts; the grouping rules are in
domain/policy/facts/review_groups.py."""

from __future__ import annotations

from typing import Any

from domain.errors import BadInput
from domain.policy.facts.review_groups import confidence_band, reason_group
from core.services.review.decisions import approve_facts
from core.services.workbench import Workbench


def with_groups(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The queue items, each with ``reason_group``, ``confidence`` (a finding's reading;
    None for a patient-match check) and its ``band``."""
    out = []
    for item in items:
        confidence = item["fact"].get("confidence") if item["kind"] == "fact" else None
        out.append(item | {"reason_group": reason_group(item["reason"]), "confidence": confidence,
                           "band": confidence_band(confidence) if item["kind"] == "fact" else None})
    return out


def keep(items: list[dict[str, Any]], *, reason_group: str | None = None,
         band: str | None = None) -> list[dict[str, Any]]:
    """Items (from ``with_groups``) in this reason group and confidence band (None: any)."""
    return [i for i in items if (reason_group is None or i["reason_group"] == reason_group)
            and (band is None or i["band"] == band)]


def group_counts(items: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """How many items each reason group and band would keep (the filters' labels)."""
    counts: dict[str, dict[str, int]] = {"reason_group": {}, "band": {}}
    for item in items:
        for field, seen in counts.items():
            if item[field] is not None:
                seen[item[field]] = seen.get(item[field], 0) + 1
    return counts


def approve_group(wb: Workbench, items: list[dict[str, Any]], *, by: str,
                  replace_chart_values: bool = False) -> list[dict[str, Any]]:
    """Approve selected findings of one reason group: each exact reason goes through the
    ordinary bulk approval (approve_facts, which keeps its own one-reason rule and its
    chart-value safeguards); findings of different groups, or a patient-match check,
    are refused whole before anything is written."""
    if any(i["kind"] != "fact" for i in items):
        raise BadInput("Bulk approval takes findings only; decide a patient match on its own.", code="mixed_reasons")
    groups = {reason_group(i["reason"]) for i in items}
    if len(groups) > 1:
        raise BadInput("Bulk approval takes findings that wait for one reason; these wait for: "
                       + "; ".join(sorted(g or "" for g in groups)) + ".", code="mixed_reasons")
    by_reason: dict[str, list[int]] = {}
    for item in items:
        by_reason.setdefault(item["reason"], []).append(item["item_id"])
    results: list[dict[str, Any]] = []
    for ids in by_reason.values():
        results += approve_facts(wb, ids, by=by, replace_chart_values=replace_chart_values)
    return results
