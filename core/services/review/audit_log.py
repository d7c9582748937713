"""The review audit as a reviewer reads it: every decision with who, when, the item,
before and after, and a plain sentence of what changed; downloadable as CSV."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from typing import Any

from core.services.workbench import Workbench
from storage import audit_repo

_ITEM_WORDS = {"fact": "finding", "identity_check": "patient match", "inbound_message": "interface message"}
_DECISION_WORDS = {"approve": "approved", "reject": "rejected", "correct": "corrected",
                   "keep": "kept as a document fact", "keep-chart": "chart value kept instead",
                   "box": "box drawn", "undo": "decision undone",
                   "attach": "put on a chart", "dismiss": "set aside: not for this clinic",
                   "acknowledge": "acknowledged: read by a person"}
# The audit's own short words for a patient-match state (sentences, not UI labels).
_IDENTITY_WORDS = {
    "identity_verified": "matches", "identity_review_approved": "approved", "identity_review_rejected": "rejected",
    "identity_ambiguous_needs_review": "unclear", "identity_mismatch_quarantined": "names another patient",
    "identity_unchecked": "not checked",
}
_SENTENCES = {"approve": "{who} approved {item}", "reject": "{who} rejected {item}", "correct": "{who} corrected {item}",
              "keep": "{who} kept {item} as a document fact", "box": "{who} drew the box for {item}",
              "keep-chart": "{who} kept the chart's value over {item}",
              "undo": "{who} undid the decision on {item}", "attach": "{who} put {item} on this chart",
              "dismiss": "{who} set aside {item} as not for this clinic",
              "acknowledge": "{who} read on the page the results of {item}"}
# How an approval of a finding that differed from the chart left the chart.
_RESOLUTION_WORDS = {"replace": "replacing the chart's value", "keep-both": "keeping both values in the chart"}
CSV_COLUMNS = ("decision_id", "when", "who", "item", "item_id", "document", "decision", "summary", "reason",
               "before", "after")


def _item_label(row: dict[str, Any]) -> str:
    if row["item_type"] == "fact":
        value = row.get("structured_value") or {}
        name = next((value[k] for k in ("test_name", "substance", "name", "description") if value.get(k)), None)
        return f"finding “{name or (row.get('fact_text') or '')[:60]}”"
    if row["item_type"] == "inbound_message":
        facility = str(row.get("message_sender") or "").partition("^")[2] or row.get("message_sender") or "a sender"
        return f"message {row.get('message_control_id') or row['item_id']} from {facility}"
    scope = f" ({row['scope']})" if row.get("scope") else ""
    return f"patient match{scope}"


# A finding's fields as a clinician names them.
_FIELD_WORDS = {"test_name": "test", "reference_range": "reference range", "collection_date": "date",
                "abnormal_flag": "flag", "loinc": "LOINC code", "measured_at": "date"}


def changes_words(before: dict[str, Any], after: dict[str, Any]) -> str:
    """A correction in plain words: "value 79 → 7.9; unit mg/dL. → mg/dL; reference
    range 0.6-1.2 added; LOINC code 2951-2 removed"."""
    parts = []
    order = ("test_name", "substance", "name", "description", "value", "unit", "reference_range", "collection_date",
             "abnormal_flag")  # as a result is read, whatever order the stored JSON has
    for key, new in sorted(after.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)):
        name, old = _FIELD_WORDS.get(key, key.replace("_", " ")), before.get(key)
        shown = (lambda v: str(v).replace("_", " ")) if key == "abnormal_flag" else str
        if old in (None, "") and new not in (None, ""):
            parts.append(f"{name} {shown(new)} added")
        elif new in (None, "") and old not in (None, ""):
            parts.append(f"{name} {shown(old)} removed")
        else:
            parts.append(f"{name} {shown(old)} → {shown(new)}")
    return "; ".join(parts)


def _summary(row: dict[str, Any]) -> str:
    """One plain sentence: "dr.alice corrected finding “HbA1c”: value 79 → 7.9"."""
    before, after = row.get("before_state") or {}, row.get("after_state") or {}
    template = _SENTENCES.get(row["decision"], "{who} " + row["decision"] + " {item}")
    text = template.format(who=row["actor"], item=_item_label(row))
    if row["decision"] == "correct":
        text += ": " + changes_words(before.get("structured_value") or {}, after.get("structured_value") or {})
    elif row["decision"] == "approve" and after.get("resolution") in _RESOLUTION_WORDS:
        text += f", {_RESOLUTION_WORDS[after['resolution']]}"
    elif row["decision"] == "undo" and after.get("undoes"):
        text += f" (decision {after['undoes']})"
    elif row["decision"] == "box":
        text += " (free box, quote not inside)" if after.get("free_box") else ""
    elif row["item_type"] == "identity_check" and before.get("identity_status") != after.get("identity_status"):
        text += (f": {_IDENTITY_WORDS.get(before.get('identity_status'), 'unknown')} → "
                 f"{_IDENTITY_WORDS.get(after.get('identity_status'), 'unknown')}")
    return text


def decisions(wb: Workbench, patient_id: int | None = None, *, actor: str | None = None,
              item_type: str | None = None, decision: str | None = None,
              since: datetime | str | None = None) -> list[dict[str, Any]]:
    """Review decisions newest first, filtered; each with ``summary`` in plain words."""
    with wb.db.cursor() as cur:
        found = audit_repo.review_decision_log(cur, patient_id=patient_id, actor=actor or None,
                                               item_type=item_type or None, decision=decision or None, since=since)
    return [{
        "decision_id": r["id"], "when": r["created_at"], "who": r["actor"], "item_type": r["item_type"],
        "item": _ITEM_WORDS.get(r["item_type"], r["item_type"]), "item_id": r["item_id"],
        "document_id": r["document_id"], "filename": r["filename"], "decision": r["decision"],
        "decision_words": _DECISION_WORDS.get(r["decision"], r["decision"]), "reason": r["reason"],
        "before": r["before_state"], "after": r["after_state"], "summary": _summary(r),
        "recorded_effects": bool(r.get("effects")),  # what the decision changed was kept: it can be undone
    } for r in found]


def decisions_csv(rows: list[dict[str, Any]]) -> str:
    """The decisions as CSV (before/after as JSON text), for download."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for r in rows:
        writer.writerow([r["decision_id"], r["when"], r["who"], r["item"], r["item_id"], r.get("filename") or "",
                         r["decision_words"], r["summary"], r["reason"] or "",
                         json.dumps(r["before"], default=str), json.dumps(r["after"], default=str)])
    return out.getvalue()
