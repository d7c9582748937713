"""Small rendering helpers shared by pages (rendering only: no rules, no SQL)."""

from __future__ import annotations

import streamlit as st

from core.services.source_review import source_view
from core.services.workbench import Workbench

STATUS_BADGE = {
    "pending": "⏳ pending", "running": "⚙️ running", "succeeded": "✅ succeeded", "failed": "❌ failed",
    "retracted": "↩️ retracted", None: "— stored only",
}
IDENTITY_BADGE = {
    "identity_verified": "🟢 identity verified", "identity_review_approved": "🟢 identity approved",
    "identity_ambiguous_needs_review": "🟠 identity needs review",
    "identity_mismatch_quarantined": "🔴 wrong patient? quarantined",
    "identity_review_rejected": "⛔ identity rejected", "identity_unchecked": "⚪ not checked", None: "⚪ not checked",
}


def fact_line(fact: dict) -> str:
    cit = fact["citation"]
    where = cit.get("page_or_section") or ""
    return (f"**{fact['fact_text']}** — {fact['fact_type'].replace('_', ' ')}, {where}, "
            f"confidence {fact['confidence']:.2f}")


def show_fact(wb: Workbench, fact: dict, *, key: str, with_source: bool = True) -> None:
    st.markdown(fact_line(fact))
    cit = fact["citation"]
    st.caption(f"“{cit['quote_or_value']}” · {cit['source_id']} · {cit['field_or_chunk_id']}"
               + (f" · review: {fact['review_reason']}" if fact.get("review_reason") else "")
               + (f" · promotion: {fact['promotion_status']}" if fact.get("promotion_status") else ""))
    if with_source and st.toggle("Show source", key=f"src-{key}"):
        view = source_view(wb, cit)
        if view.image_png:
            st.image(view.image_png, caption=f"{view.location}: cited box in red")
        else:
            st.info(f"{view.location}: “{cit['quote_or_value']}”" + (f" ({view.note})" if view.note else ""))
