"""Small rendering helpers shared by pages (rendering only: no rules, no SQL)."""

from __future__ import annotations

import streamlit as st

from core.policy.chart_rules import is_critical
from core.policy.relevance import context_of, context_tags
from core.services.workbench import Workbench
from ui import labels

# Plain words: the badges must read the same on a machine without an emoji font.
STATUS_BADGE = {
    "pending": "pending", "running": "running", "succeeded": "succeeded", "failed": "FAILED",
    "retracted": "retracted", None: "stored only",
}
IDENTITY_BADGE = {
    "identity_verified": "identity verified", "identity_review_approved": "identity approved by reviewer",
    "identity_ambiguous_needs_review": "identity needs review",
    "identity_mismatch_quarantined": "WRONG PATIENT? quarantined",
    "identity_review_rejected": "identity rejected", "identity_unchecked": "not checked", None: "not checked",
}


def fact_line(fact: dict) -> str:
    cit = fact["citation"]
    where = labels.location(cit, fact)
    flag = (fact.get("structured_value") or {}).get("abnormal_flag")
    critical = "**CRITICAL** " if is_critical(flag) else ""
    # The answer composer's words for how a mention was meant, without its brackets.
    context = ", ".join(t.strip("()") for t in context_tags(context_of(fact["fact_type"], fact.get("context"))))
    return (f"{critical}**{fact['fact_text']}** — {labels.fact_type(fact['fact_type'])}, {where}, "
            f"confidence {fact['confidence']:.2f}" + (f" · {context}" if context else ""))


def show_fact(wb: Workbench, fact: dict, *, key: str, with_source: bool = True) -> None:
    st.markdown(fact_line(fact))
    cit = fact["citation"]
    # Plain words on the line; the internal codes on hover.
    st.caption(f"“{cit['quote_or_value']}”"
               + (f" · review: {fact['review_reason']}" if fact.get("review_reason") else "")
               + (f" · {labels.promotion(fact['promotion_status'])}" if fact.get("promotion_status") else ""),
               help=labels.code_hint(cit.get("source_id"), cit.get("field_or_chunk_id"), fact.get("promotion_status")))
    if with_source:
        show_citation(wb, cit, key=f"src-{key}", label="Show source")


def show_citation(wb: Workbench, cit: dict, *, key: str, label: str | None = None) -> None:
    """A toggle that opens the cited source in the document viewer: the page with every
    box and this one emphasised, the HL7 / XLSX / DOCX view, or the guideline section."""
    from ui.viewer import render_citation

    # Kept as before: tests/test_ui_apptest.py (not this helper's) looks for this label.
    label = label or f"Source: {cit['source_id']} · {cit['page_or_section']}"
    if st.toggle(label, key=key):
        render_citation(wb, cit, key=f"{key}-view")


def draw_box(image: bytes, box: dict | None, *, color: tuple[int, int, int] = (220, 30, 30)) -> bytes:
    """The page image (PNG/JPEG bytes) as PNG with a normalised 0..1 box drawn on it,
    the way the Documents page marks a cited place (red, a little padded)."""
    import io

    from PIL import Image, ImageDraw

    page = Image.open(io.BytesIO(image)).convert("RGB")
    if box:
        w, h = page.size
        pad = 3
        ImageDraw.Draw(page).rectangle(
            [box["x"] * w - pad, box["y"] * h - pad, (box["x"] + box["width"]) * w + pad,
             (box["y"] + box["height"]) * h + pad], outline=color, width=3)
    buf = io.BytesIO()
    page.save(buf, format="PNG")
    return buf.getvalue()
