"""The Review queue's correction form: every field a finding carries (a lab result's
test, value, unit, reference range, date and flag; another finding's subject), the
reason, and for a finding that differs from the chart what the corrected value should
do. The confirmation says in plain words what changed ("unit mg/dL. → mg/dL;
reference range 0.6-1.2 added"). A new test name or unit is checked by the service
as promotion checks it; a refusal is shown and the finding stays in review.

Thin over core.services.review.corrections."""

from __future__ import annotations

import streamlit as st

from domain.errors import WorkbenchError
from domain.policy.facts.review_rules import ABNORMAL_FLAG_VALUES, CONFLICT, CORRECTABLE_FIELDS, KEEP_BOTH, REPLACE
from core.services.review.audit_log import changes_words
from core.services.review.corrections import correct_fact
from core.services.workbench import Workbench
from ui.inert import md_text

LATER = "decide later"
_CHOICES = {LATER: "leave it in the queue to decide", REPLACE: "replace the chart value", KEEP_BOTH: "keep both values"}


def confirmation(done: dict) -> str:
    """"Corrected: unit mg/dL. → mg/dL; reference range 0.6-1.2 added." from the service's answer."""
    after = {k: done["structured_value"].get(k) for k in done["before"]}
    return "Corrected: " + md_text(changes_words(done["before"], after)) + "."


def show(wb: Workbench, fact: dict, *, by: str) -> str | None:
    """Draw the form for ``fact``; on a saved correction, the confirmation to show
    (None while nothing was saved: a refusal is shown here, in words)."""
    value = fact["structured_value"] or {}
    lab = fact["fact_type"] == "lab_result"
    subject = CORRECTABLE_FIELDS.get(fact["fact_type"], {}).get("value", "value")
    fields: dict[str, str | None] = {}
    with st.form(f"correct-{fact['fact_id']}"):
        st.markdown("**Correct the finding** (the quote stays as printed; you are recorded as the corrector)")
        if lab:
            fields["test_name"] = st.text_input("Test", value=str(value.get("test_name") or ""),
                                                help="Checked against the lab vocabulary: an unknown test name "
                                                     "keeps the finding in review.")
        fields["value"] = st.text_input("Value", value=str(value.get(subject) or ""))
        if fact["fact_type"] == "vital_sign":
            fields["unit"] = st.text_input("Unit", value=str(value.get("unit") or ""))
        if lab:
            c1, c2 = st.columns(2)
            fields["unit"] = c1.text_input("Unit", value=str(value.get("unit") or ""))
            fields["reference_range"] = c2.text_input("Reference range", value=str(value.get("reference_range") or ""))
            c3, c4 = st.columns(2)
            fields["collection_date"] = c3.text_input("Collection date (YYYY-MM-DD)",
                                                      value=str(value.get("collection_date") or "")) or None
            current = value.get("abnormal_flag") or "unknown"
            fields["abnormal_flag"] = c4.selectbox(
                "Flag", ABNORMAL_FLAG_VALUES, format_func=lambda f: f.replace("_", " "),
                index=ABNORMAL_FLAG_VALUES.index(current) if current in ABNORMAL_FLAG_VALUES
                else len(ABNORMAL_FLAG_VALUES) - 1)
        why = st.text_input("What was misread")
        resolution = None
        if fact["promotion_status"] == CONFLICT:
            choice = st.radio("If the corrected value still differs from the chart's", list(_CHOICES),
                              format_func=_CHOICES.get)
            resolution = None if choice == LATER else choice
        if not st.form_submit_button("Save correction"):
            return None
    try:
        done = correct_fact(wb, fact["fact_id"], by=by, reason=why, resolution=resolution, **fields)
    except WorkbenchError as exc:
        (st.warning if exc.code == "already_decided" else st.error)(md_text(exc.message))
        return None
    return confirmation(done)
