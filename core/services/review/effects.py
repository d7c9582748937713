"""What a review decision changed, row by row, so it can be undone exactly.

A decision reads the patient's reviewable state (facts, promotions, chart rows) before
it writes, and again just before its ``review_decisions`` row is added; the difference
is stored with the row (``effects``): each changed row's columns before and after, and
each row it created. The lifetime rule, a superseded chart value and its facts, a
closed conflict: whatever the decision's code path did is in the difference, without
each path having to say so.

Undo (``core.services.review.undo``) checks that every row still reads as the decision
left it, then writes the "before" back; rows the decision created are retired, never
deleted (the audit keeps them).
"""

from __future__ import annotations

from typing import Any

from domain.policy.facts.chart_rules import CHART_TABLES
from storage import review_effects_repo

CHART_TABLE_NAMES: tuple[str, ...] = tuple(CHART_TABLES.values())


def snapshot(cur, patient_id: int, fact_id: int | None = None) -> dict[str, Any]:
    """The patient's reviewable state, to compare with after a decision on ``fact_id``
    (its values, words and citation too: only a decision on a fact changes those)."""
    content_of = [fact_id] if fact_id is not None else []
    return {"patient_id": patient_id, "content_of": content_of,
            **review_effects_repo.patient_state(cur, patient_id, CHART_TABLE_NAMES, content_of)}


def _diff(before: dict[str, dict], after: dict[str, dict]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for row_id, now in after.items():
        was = before.get(row_id)
        if was is None:
            out[row_id] = {"before": None, "after": now}
            continue
        cols = [c for c in now if now[c] != was.get(c)]
        if cols:
            # The whole row after (any later change to it shows), the changed columns before.
            out[row_id] = {"before": {c: was.get(c) for c in cols}, "after": now}
    return out


def changes_since(cur, before: dict[str, Any]) -> dict[str, Any]:
    """What changed in the patient's state since ``before`` (the ``effects`` of a decision)."""
    after = snapshot(cur, before["patient_id"], *before["content_of"][:1])
    # The newest promotion then: a live one made later that points at a chart row the
    # decision changed (a document read since, saying the same value, or differing from
    # it and waiting in the queue) overtakes it.
    upto = max((int(i) for i in after["promotions"]), default=0)
    return {"version": 1, "patient_id": before["patient_id"], "content_of": before["content_of"], "promotions_upto": upto,
            "facts": _diff(before["facts"], after["facts"]),
            "promotions": _diff(before["promotions"], after["promotions"]),
            "chart": {t: d for t in CHART_TABLE_NAMES if (d := _diff(before["chart"].get(t, {}), after["chart"][t]))}}


def touched(effects: dict[str, Any]) -> set[tuple[str, str]]:
    """The rows an effects record names, as (kind, id) with kind "facts", "promotions" or a chart table."""
    found = {("facts", i) for i in effects.get("facts", {})} | {("promotions", i) for i in effects.get("promotions", {})}
    return found | {(t, i) for t, rows in effects.get("chart", {}).items() for i in rows}


def drifted(cur, effects: dict[str, Any]) -> list[tuple[str, str]]:
    """The rows that no longer read as the decision left them (a later change overtook
    them), as (kind, id). Empty: the decision's effects are all still in place."""
    now = snapshot(cur, effects["patient_id"], *(effects.get("content_of") or [])[:1])
    out: list[tuple[str, str]] = []
    for kind in ("facts", "promotions"):
        for row_id, change in effects.get(kind, {}).items():
            current = now[kind].get(row_id)
            # A fact counts as overtaken when a column the decision wrote was written again, or
            # its document was deleted since; a later decision on its other columns (approving a
            # finding after its box was drawn) leaves the decision's own change in place.
            watched = (set(change["before"] or change["after"]) | {"retracted_at"}) if kind == "facts" \
                else set(change["after"])
            if current is None or any(current.get(c) != change["after"].get(c) for c in watched):
                out.append((kind, row_id))
    for table, rows in effects.get("chart", {}).items():
        for row_id, change in rows.items():
            current = now["chart"].get(table, {}).get(row_id)
            if current is None or any(current.get(c) != v for c, v in change["after"].items()):
                out.append((table, row_id))
    rows = {(t, str(i)) for t, changed in effects.get("chart", {}).items() for i in changed}
    upto = int(effects.get("promotions_upto") or 0)
    out += [("promotions", i) for i, p in now["promotions"].items()
            if int(i) > upto and p["active"] and (p["promoted_table"], str(p["promoted_record_id"])) in rows]
    return out


def restore(cur, effects: dict[str, Any], *, retired_note: str, now: str) -> None:
    """Write back every row's "before"; retire the rows the decision created (a promotion
    is retracted, a chart row goes inactive, each with ``retired_note``). Call only
    after ``drifted`` found nothing, in the same transaction."""
    for row_id, change in effects.get("facts", {}).items():
        if change["before"] is None:
            raise ValueError("a review decision never creates a fact")
        review_effects_repo.restore_fact(cur, int(row_id), change["before"])
    for row_id, change in effects.get("promotions", {}).items():
        review_effects_repo.restore_promotion(cur, int(row_id), change["before"] if change["before"] is not None else {
            "outcome": "retracted", "active": False, "retracted_at": now, "retraction_reason": retired_note})
    for table, rows in effects.get("chart", {}).items():
        for row_id, change in rows.items():
            before = change["before"]
            if before is None:
                before = {"active": False, "note": " ".join(filter(None, [change["after"].get("note"),
                                                                          f"[{retired_note}]"]))}
            review_effects_repo.restore_chart_row(cur, table, int(row_id), before, CHART_TABLE_NAMES)
