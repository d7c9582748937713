"""Undo any review decision, restoring the chart exactly (issue 26).

A decision on a finding (approve, reject, correct, keep, keep-chart, acknowledge, a
drawn box; a bulk approval is one decision per finding) stored what it changed, row
by row (``core.services.review.effects``). Undoing it writes every row back as it
was: the finding's status and values, a superseded chart value current again, the
chart rows it added retired, the review item back in the queue. An identity decision
is undone by ``identity_review.undo_identity_decision`` (the gate is asked again).

Fails closed, never a half-restore: refused when the decision was already undone, is
itself an undo, recorded nothing to restore (before undo existed), when its finding's
document was deleted, or when any row it changed no longer reads as it left it (a
later decision on the same chart value, a patient-match decision, a deletion). The
decision rows stay; an "undo" row naming the undone decision is added.
"""

from __future__ import annotations

from typing import Any

from domain.clock import utcnow
from domain.errors import BadInput, NotFound
from domain.policy.facts.chart_rules import FACT_TYPE_OF_TABLE
from domain.policy.facts.review_rules import DECIDED_WORDS, closing_decision, undone_id
from domain.policy.facts.vital_signs import summary as vital_summary
from core.services.checks.alerts import refresh_alerts
from core.services.review.decisions import authorize_decision, fact_state
from core.services.review.effects import changes_since, drifted, restore, snapshot, touched
from core.services.review.fact_vectors import index_pending, remove_vectors
from core.services.review.identity_review import undo_identity_decision, undoable_decisions
from core.services.workbench import Workbench
from storage import audit_repo, documents_repo, facts_repo, promotions_repo

# Decisions on a finding that ``undo_decision`` can reverse from their recorded effects.
FACT_DECISIONS = frozenset(DECIDED_WORDS) | {"box"}
_WORDS = {"approve": "approval", "reject": "rejection", "correct": "correction", "keep": "decision to keep it with "
          "its document", "keep-chart": "decision to keep the chart's value", "acknowledge": "acknowledgement",
          "box": "drawn box"}


def undo_decision(wb: Workbench, decision_id: int, *, by: str, reason: str | None = None) -> dict[str, Any]:
    """Undo review decision ``decision_id`` (the id the Audit tab and the review JSON
    show). Returns the restored item: ``decision_id`` (the undo's own row),
    ``undone_decision_id``, the item, what left the chart (``removed``) and what is
    current again (``restored``), each with its label and documents, and ``summary``,
    a plain sentence of both."""
    by = authorize_decision(wb, by)  # undoing is a decision too: the same role
    with wb.db.cursor() as cur:
        row = audit_repo.review_decision_by_id(cur, decision_id)
        if row is None:
            raise NotFound(f"No review decision with id {decision_id}.", code="unknown_decision")
        _refuse_repeat(cur, row)
    if row["item_type"] == "identity_check":
        return _undo_identity(wb, row, by=by, reason=reason)
    if row["item_type"] != "fact" or row["decision"] not in FACT_DECISIONS:
        raise BadInput(f"Decision {decision_id} ({row['decision']} on a {row['item_type'].replace('_', ' ')}) is not "
                       "a review decision on the chart that can be undone here.", code="not_undoable")
    effects = row.get("effects")
    if not effects:
        raise BadInput(f"Decision {decision_id} was recorded before decisions kept what they changed, so the chart "
                       "cannot be restored exactly; decide the finding again instead.", code="not_undoable")
    fact_id = int(row["item_id"])
    with wb.db.transaction() as cur:
        fact = facts_repo.fact_by_id(cur, fact_id)
        document = documents_repo.by_id(cur, fact.document_id) if fact is not None else None
        if fact is None or document is None or document["deleted"] or fact.retracted_at is not None:
            raise BadInput(f"The document{_named(document)} was deleted after this decision; its findings left the "
                           "chart with it and there is nothing to restore.", code="document_deleted")
        _refuse_if_not_current(cur, row)
        if moved := drifted(cur, effects):
            raise BadInput(_overtaken_message(cur, row, moved), code="overtaken")
        retired = _rows_created(effects)
        revived = _rows_revived(effects)
        removed = _describe(cur, retired)
        state = snapshot(cur, fact.patient_id, fact.id)
        restore(cur, effects, retired_note=f"decision {decision_id} undone by {by}", now=utcnow().isoformat(sep=" "))
        restored = _describe(cur, revived)
        fact = facts_repo.fact_by_id(cur, fact_id)
        after = {"undoes": decision_id, "undone_decision": row["decision"], **fact_state(fact)}
        undo_id = audit_repo.add_review_decision(
            cur, item_type="fact", item_id=fact_id, decision="undo", actor=by, reason=reason,
            before={"decision_id": decision_id, "decision": row["decision"], "decided_by": row["actor"],
                    **(row.get("after_state") or {})},
            after=after, effects=changes_since(cur, state))
        refresh_alerts(cur, fact.patient_id)
    # Vectors follow the restored words and activity: out for every finding touched, in again if active.
    remove_vectors(wb, sorted({int(i) for kind, i in touched(effects) if kind == "facts"}))
    index_pending(wb)
    words = _WORDS.get(row["decision"], row["decision"])
    return {"decision_id": undo_id, "undone_decision_id": decision_id, "undone_decision": row["decision"],
            "item_type": "fact", "fact_id": fact_id, "fact_text": fact.fact_text,
            "structured_value": fact.structured_value, **fact_state(fact),
            "removed": removed, "restored": restored,
            "summary": _summary(words, removed, restored, _in_queue(fact), document["filename"])}


def _refuse_repeat(cur, row: dict[str, Any]) -> None:
    if row["decision"] == "undo":
        raise BadInput(f"Decision {row['id']} is itself an undo; decide the item again instead of undoing the undo.",
                       code="not_undoable")
    for later in audit_repo.review_decisions(cur, row["item_type"], int(row["item_id"])):
        if later["decision"] == "undo" and later["id"] > row["id"] and (
                undone_id(later) == row["id"] or (undone_id(later) is None and row["item_type"] == "identity_check")):
            raise BadInput(f"Decision {row['id']} was already undone by {later['actor']} "
                           f"(decision {later['id']}).", code="already_undone")


def _refuse_if_not_current(cur, row: dict[str, Any]) -> None:
    """A closing decision is undone only while it still closes its item: a later
    decision on the same finding must be undone first."""
    if row["decision"] not in DECIDED_WORDS:
        return
    closing = closing_decision(audit_repo.review_decisions(cur, "fact", int(row["item_id"])))
    if closing is None or closing["id"] != row["id"]:
        later = f" (decision {closing['id']}, {closing['decision']} by {closing['actor']})" if closing else ""
        raise BadInput(f"The finding was decided again after decision {row['id']}{later}; undo that decision "
                       "first.", code="overtaken")


def _undo_identity(wb: Workbench, row: dict[str, Any], *, by: str, reason: str | None) -> dict[str, Any]:
    check_id = int(row["item_id"])
    with wb.db.cursor() as cur:
        closing = closing_decision(audit_repo.review_decisions(cur, "identity_check", check_id))
    if closing is None or closing["id"] != row["id"]:
        raise BadInput(f"Decision {row['id']} no longer decides this patient match (it was undone or decided "
                       "again since); nothing to undo.", code="overtaken")
    result = undo_identity_decision(wb, check_id, by=by, reason=reason or "", undoes=int(row["id"]))
    return {**result, "undone_decision_id": row["id"], "item_type": "identity_check",
            "summary": f"The patient match decision ({row['decision']}) was undone; the document's match is asked "
                       "again of the identity check."}


def _overtaken_message(cur, row: dict[str, Any], moved: list[tuple[str, str]]) -> str:
    """Why the decision cannot be undone, naming what changed its rows later."""
    moved_set = set(moved)
    after = audit_repo.review_decisions_after(cur, int(row["id"]))
    undone = {undone_id(d) for d in after if d["decision"] == "undo"}
    wrote = {i: set((row["effects"]["facts"][i]["before"] or {})) for kind, i in moved if kind == "facts"}

    def overtook(later: dict[str, Any]) -> bool:
        effects = later.get("effects") or {}
        if not moved_set & touched(effects):
            return False
        # On a finding: the later decision wrote a column this one wrote (not only the same row).
        return any(kind != "facts" or wrote.get(i, set()) & set(effects["facts"][i]["before"] or
                                                                 effects["facts"][i]["after"])
                   for kind, i in moved_set & touched(effects))

    for later in reversed(after):  # the newest first: it is the one to undo first
        if later["decision"] == "undo" or later["id"] in undone:
            continue  # undone since: it no longer holds the rows
        if overtook(later):
            what = "finding" if later["item_type"] == "fact" else "patient match"
            return (f"Decision {row['id']} cannot be undone exactly: decision {later['id']} ({later['decision']} of a "
                    f"{what} by {later['actor']}) changed the same chart values afterwards. Undo that decision "
                    "first; nothing was changed.")
    for kind, row_id in moved:
        if kind == "facts":
            fact = facts_repo.fact_by_id(cur, int(row_id))
            if fact is not None and fact.retracted_at is not None:
                document = documents_repo.by_id(cur, fact.document_id)
                return (f"Decision {row['id']} cannot be undone exactly: the document{_named(document)} behind a "
                        "chart value it changed was deleted afterwards; nothing was changed.")
    promotions = snapshot(cur, int(row["effects"]["patient_id"]))["promotions"]
    for kind, row_id in moved:
        if kind == "promotions" and row_id not in row["effects"].get("promotions", {}) and row_id in promotions:
            document = documents_repo.by_id(cur, int(promotions[row_id]["document_id"]))
            if promotions[row_id]["outcome"] == "conflict_needs_review":
                return (f"Decision {row['id']} cannot be undone exactly: a finding of{_named(document)}, read "
                        "afterwards, differs from the chart value it set and waits in the review queue; decide that "
                        "finding first. Nothing was changed.")
            return (f"Decision {row['id']} cannot be undone exactly: a document read afterwards"
                    f"{_named(document)} stands on the same chart value; nothing was changed.")
    return (f"Decision {row['id']} cannot be undone exactly: chart values it changed were changed afterwards (a "
            "document read again, or a decision recorded before undo existed); nothing was changed.")


def _named(document: dict[str, Any] | None) -> str:
    return f" {document['filename']}" if document else ""


def _rows_created(effects: dict[str, Any]) -> list[tuple[str, int]]:
    """Chart rows the decision added that were active after it (they leave the chart)."""
    return [(t, int(i)) for t, rows in effects.get("chart", {}).items() for i, c in rows.items()
            if c["before"] is None and c["after"].get("active")]


def _rows_revived(effects: dict[str, Any]) -> list[tuple[str, int]]:
    """Chart rows the decision took out of the chart (they come back)."""
    return [(t, int(i)) for t, rows in effects.get("chart", {}).items() for i, c in rows.items()
            if c["before"] is not None and c["before"].get("active") and not c["after"].get("active", True)]


def chart_row_label(table: str, row: dict[str, Any]) -> str:
    """A chart row in a clinician's words: "Sodium 131 mmol/L", "penicillin"."""
    fact_type = FACT_TYPE_OF_TABLE.get(table)
    if fact_type == "vital_sign":
        return vital_summary(str(row.get("kind")), str(row.get("value")), str(row.get("unit") or ""))
    keys = {"lab_result": ("test_name", "value", "unit"), "allergy": ("substance",),
            "medication": ("name", "dose", "frequency"), "problem": ("description",)}.get(fact_type or "", ())
    return " ".join(str(row[k]) for k in keys if row.get(k) not in (None, "")) or f"a chart entry ({row.get('id')})"


def _describe(cur, rows: list[tuple[str, int]]) -> list[dict[str, Any]]:
    out = []
    for table, row_id in rows:
        row = facts_repo.chart_row_for_comparison(cur, table, row_id) or {"id": row_id}
        support = promotions_repo.live_supporters(cur, table, [row_id]).get(row_id, [])
        names = [d["filename"] for d in (documents_repo.by_id(cur, p.document_id)
                                         for p in {p.document_id: p for p in support}.values()) if d]
        out.append({"table": table, "row_id": row_id, "label": chart_row_label(table, row), "documents": names})
    return out


def _in_queue(fact) -> bool:
    return fact.certainty == "needs_review" or fact.promotion_status in ("needs_review", "conflict_needs_review",
                                                                        "promotion_failed")


def _summary(words: str, removed: list[dict], restored: list[dict], in_queue: bool, filename: str) -> str:
    """'Sodium 131 mmol/L removed from the chart; Sodium 139 mmol/L from first.pdf is current again'."""
    parts = [f"{r['label']} removed from the chart" for r in removed]
    parts += [f"{r['label']}{' from ' + ', '.join(r['documents']) if r['documents'] else ''} is current again"
              for r in restored]
    if not parts:
        parts.append("the chart is as it was")
    back = "; the finding is back in the review queue" if in_queue else ""
    return f"The {words} on {filename} was undone: " + "; ".join(parts) + back + "."


def undo_offers(wb: Workbench, patient_id: int, rows: list[dict[str, Any]]) -> set[int]:
    """Of the audit's ``rows`` (``audit_log.decisions``), the ids of the decisions a
    reviewer may try to undo: a finding's decision that recorded its effects, on a live
    document, not undone, still in force; an identity decision of a check in force. A
    decision that a later change overtook is still offered: the undo says why it is
    refused (reading every row's state for every offer would slow the page)."""
    with wb.db.cursor() as cur:
        live = {d["id"] for d in documents_repo.for_patient(cur, patient_id) if not d["deleted"]}
    in_force = {c["identity_check_id"] for c in undoable_decisions(wb, patient_id)}
    by_item: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: r["decision_id"]):
        by_item.setdefault((r["item_type"], r["item_id"]), []).append(
            {"id": r["decision_id"], "decision": r["decision"], "after_state": r["after"]})
    undone = {undone_id(d) for trail in by_item.values() for d in trail if d["decision"] == "undo"}
    offers: set[int] = set()
    for r in rows:
        if r["decision"] == "undo" or r["decision_id"] in undone or r["document_id"] not in live:
            continue
        closing = closing_decision(by_item[(r["item_type"], r["item_id"])])
        current = closing is not None and closing["id"] == r["decision_id"]
        if r["item_type"] == "identity_check" and current and r["item_id"] in in_force:
            offers.add(r["decision_id"])
        elif r["item_type"] == "fact" and r.get("recorded_effects") and r["decision"] in FACT_DECISIONS and (
                current or r["decision"] not in DECIDED_WORDS):
            offers.add(r["decision_id"])
    return offers
