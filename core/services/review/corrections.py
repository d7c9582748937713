"""A reviewer fixes what the reader got wrong: a misread value (corrected, then
verified and promoted like an approval) or a missing or wrong box on the page.

The citation is never rewritten to fit the correction: the quote stays as printed
("Hemoglobin Aic 79 %"), so anyone can see what the page said and what a person
decided it means. Both actions leave a ``review_decisions`` row with before/after.
"""

from __future__ import annotations

import re
from typing import Any

from domain.errors import BadInput
from domain.models import BoundingBox
from domain.policy.facts.chart_row_checks import VALUE_PROBLEM
from domain.policy.facts.fingerprints import clinical_content_fingerprint
from domain.policy.facts.critical_limits import after_correction
from domain.policy.facts.review_rules import (KEEP_BOTH, REPLACE, corrected_lab_problem, correction_changes, lab_text,
                                             normalise_box, quote_missing_from_box)
from domain.policy.facts.vital_signs import vital_text
from core.services.review.document_view import is_paged, page_words
from core.services.review.effects import changes_since, snapshot
from core.services.review.fact_vectors import index_pending, remove_vectors
from core.services.review.decisions import (authorize_decision, decidable_fact, fact_state, live_fact, verify_and_promote,
                                  withdraw_from_chart)
from core.services.checks.alerts import refresh_alerts
from core.services.workbench import Workbench
from storage import audit_repo, facts_repo


def correct_fact(wb: Workbench, fact_id: int, *, by: str, value: str | None = None, unit: str | None = None,
                 collection_date: str | None = None, abnormal_flag: str | None = None,
                 test_name: str | None = None, reference_range: str | None = None,
                 reason: str, resolution: str | None = None) -> dict[str, Any]:
    """Correct a finding's test, value, unit, reference range, date or flag (a lab
    result; other chart facts take ``value`` as their subject text). A new test name or
    unit is checked as promotion checks it (the vocabulary must know the test, the unit
    must fit it; a code printed for the old test is dropped): otherwise the correction
    is refused and the finding stays in review. The corrected fact cites the same source, is
    marked as corrected by ``by``, becomes verified and, when its identity is trusted,
    is promoted with the usual duplicate and conflict checks; otherwise it waits for
    the identity decision exactly like an approved finding. A corrected value that still
    differs from the chart's changes it only by ``resolution`` ("replace" or
    "keep-both"); without one it waits in the queue as a conflict."""
    by = authorize_decision(wb, by)
    if resolution not in (None, REPLACE, KEEP_BOTH):
        raise BadInput("A correction may replace the chart's value or keep both; to keep the chart's value, "
                       "keep the finding with its document instead.", code="bad_resolution")
    if not (reason or "").strip():
        raise BadInput("A correction needs a reason (what was misread), kept in the audit.", code="reason_required")
    requested = {"test_name": test_name, "value": value, "unit": unit, "reference_range": reference_range,
                 "collection_date": collection_date, "abnormal_flag": abnormal_flag}
    with wb.db.transaction() as cur:
        fact, document, status = decidable_fact(cur, fact_id, approving=True)
        old = dict(fact.structured_value or {})
        changes, problems = correction_changes(fact.fact_type, old, requested)
        if problems:
            raise BadInput("The correction cannot be saved: " + "; ".join(problems) + ".", code="bad_correction")
        if not changes:
            raise BadInput("The correction changes nothing: give a new test, value, unit, reference range, date or "
                           "flag.", code="nothing_to_correct")
        if "test_name" in changes and old.get("loinc"):
            changes["loinc"] = None  # the code named the old test: the new name is looked up afresh
        new = {**old, **changes}
        if "value" in changes:
            new.pop(VALUE_PROBLEM, None)  # a person gave the value the reader could not
        if fact.fact_type == "lab_result" and (problem := corrected_lab_problem(new, changes)):
            raise BadInput(f"The correction was not saved and the finding stays in review: {problem}.",
                           code="correction_needs_review")
        if "abnormal_flag" in changes:
            new["flag_derived"] = False  # a person stated it
        if fact.fact_type == "lab_result":
            new = after_correction(new, changes)  # the critical limits judge the corrected value
            text = lab_text(new)
        elif fact.fact_type == "vital_sign":
            text = vital_text(new)
        else:
            text = _replace_subject(fact.fact_text, old, changes)
        before = {"structured_value": {k: old.get(k) for k in changes}, "fact_text": fact.fact_text,
                  **fact_state(fact)}
        state = snapshot(cur, fact.patient_id, fact.id)
        # The misread value leaves the chart (and its open review) before the corrected one is promoted.
        withdraw_from_chart(cur, fact_id, closed_as="corrected", by=by, reason=f"value corrected by {by}: {reason}")
        facts_repo.apply_correction(
            cur, fact_id, structured_value=new, fact_text=text,
            clinical_content_fingerprint=clinical_content_fingerprint(fact.patient_id, fact.fact_type, new, text),
            by=by, correction={"before": before["structured_value"], "after": changes, "reason": reason})
        fact = verify_and_promote(cur, fact_id, document, status, resolution)
        after = {"structured_value": changes, "fact_text": fact.fact_text, **fact_state(fact),
                 **({"resolution": resolution} if resolution else {})}
        decision_id = audit_repo.add_review_decision(cur, item_type="fact", item_id=fact_id, decision="correct",
                                                     actor=by, reason=reason, before=before, after=after,
                                                     effects=changes_since(cur, state))
        refresh_alerts(cur, fact.patient_id)
    # The fact's words changed: its vector is rebuilt from the corrected text.
    remove_vectors(wb, [fact_id])
    if fact.active:
        index_pending(wb)
    return {"fact_id": fact_id, "structured_value": fact.structured_value, "fact_text": fact.fact_text,
            "citation": fact.citation, "certainty": fact.certainty, "active": fact.active,
            "promotion_status": fact.promotion_status, "corrected_by": fact.corrected_by,
            "corrected_at": str(fact.corrected_at), "before": before["structured_value"], "decision_id": decision_id}


def _replace_subject(fact_text: str, old: dict[str, Any], changes: dict[str, Any]) -> str:
    for key, new in changes.items():
        previous = str(old.get(key) or "")
        if previous and previous in fact_text:
            fact_text = fact_text.replace(previous, str(new))
        else:
            fact_text = f"{fact_text} (corrected: {new})"
    return fact_text


def page_of(citation: dict[str, Any]) -> int | None:
    if citation.get("page"):
        return int(citation["page"])
    found = re.match(r"page (\d+)", str(citation.get("page_or_section") or ""))
    return int(found.group(1)) if found else None


def set_fact_box(wb: Workbench, fact_id: int, *, box: dict[str, Any], by: str, confirm_free_box: bool = False,
                 page: int | None = None) -> dict[str, Any]:
    """Save the box a reviewer drew for a finding's citation (``page`` defaults to the
    cited page). The quote must lie inside the box (every quote word found among the
    page words whose centre is inside it); otherwise the box is refused with
    ``quote_outside_box`` unless the reviewer confirms a free box, which the audit says."""
    by = authorize_decision(wb, by)
    normal = normalise_box(box)
    if normal is None:
        raise BadInput("The box has no size on the page; draw it again.", code="bad_box")
    with wb.db.transaction() as cur:
        fact, document = live_fact(cur, fact_id)
        if not is_paged(document):
            raise BadInput("This source has no pages to draw on; its citation names a paragraph, cell or segment.",
                           code="not_paged")
        citation = dict(fact.citation)
        page = page or page_of(citation)
        if not page:
            raise BadInput("Say which page the box is on.", code="page_required")
    # The words the pipeline read on that page (text layer or OCR, cached by the viewer).
    missing = quote_missing_from_box(citation["quote_or_value"], page_words(wb, document["id"], page), normal)
    if missing and not confirm_free_box:
        raise BadInput(f"The quote is not inside the box (not found: {' '.join(missing)}). Draw the box around "
                       "the quoted words, or confirm a free box.", code="quote_outside_box")
    BoundingBox.model_validate(normal)
    with wb.db.transaction() as cur:
        before = {"page": citation.get("page"), "bounding_box": citation.get("bounding_box")}
        state = snapshot(cur, fact.patient_id, fact.id)
        citation.update(page=page, bounding_box=normal)
        facts_repo.set_citation(cur, fact_id, citation)
        after = {"page": page, "bounding_box": normal, "free_box": bool(missing)}
        decision_id = audit_repo.add_review_decision(
            cur, item_type="fact", item_id=fact_id, decision="box", actor=by,
            reason="free box confirmed by the reviewer" if missing else None, before=before, after=after,
            effects=changes_since(cur, state))
    return {"fact_id": fact_id, "citation": citation, "free_box": bool(missing), "decision_id": decision_id}
