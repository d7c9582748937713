"""Small rendering helpers shared by pages (rendering only: no rules, no SQL)."""

from __future__ import annotations

import streamlit as st

from core.services.review.source_review import source_name
from core.services.workbench import Workbench
from ui import auth, labels
from ui.inert import md_text

# Plain words: the badges must read the same on a machine without an emoji font.
STATUS_BADGE = {
    "pending": "waiting", "running": "being read", "succeeded": "read", "failed": "COULD NOT BE READ",
    "retracted": "deleted", None: "stored only",
}
IDENTITY_BADGE = {
    "identity_verified": "matches this patient", "identity_review_approved": "patient approved by a reviewer",
    "identity_ambiguous_needs_review": "patient match needs review",
    "identity_mismatch_quarantined": "ANOTHER PATIENT? kept off this chart",
    "identity_review_rejected": "not this patient", "identity_unchecked": "patient not checked",
    None: "patient not checked",
}


def citation_label(wb: Workbench, cit: dict) -> str:
    """A cited place in plain words: "Source: lab.pdf, page 1", "Guideline: ADA —
    Glycemic targets", "Chart: Lab results (entered by hand)"; "(deleted)" when it was."""
    source = source_name(wb, cit)
    if cit.get("source_type") == "guideline":
        return f"Guideline: {md_text(source.name)}"
    if not str(cit.get("source_id") or "").startswith("documents:"):
        return f"Chart: {md_text(labels.chart_section(str(cit.get('page_or_section') or '')))} (entered by hand)"
    return f"Source: {md_text(source.name)}, {md_text(labels.location(cit))}" + (" (deleted)" if source.deleted else "")


def show_citation(wb: Workbench, cit: dict, *, key: str, label: str | None = None) -> None:
    """A toggle that opens the cited source in the document viewer: the page with every
    box and this one emphasised, the HL7 / XLSX / DOCX view, or the guideline section.
    A deleted document's source says "deleted on … by …" when opened."""
    from ui.viewer import render_citation

    label = label or citation_label(wb, cit)
    hint = labels.code_hint(cit.get("source_id"), md_text(cit.get("page_or_section")), md_text(cit.get("field_or_chunk_id")))
    if st.toggle(label, key=key, help=hint):
        render_citation(wb, cit, key=f"{key}-view")  # writes the view to the access audit
    else:
        auth.forget_view(f"{key}-view")  # opened again later, it is a new view


# How the chat understood a question, in words (the internal intent stays in the tooltip).
def question_summary(question: dict) -> str:
    """"About: LDL cholesterol, A1c · looking up what the record says"."""
    from domain.policy.questions.topics import TOPIC_BY_NAME

    topics = [TOPIC_BY_NAME[t].label if t in TOPIC_BY_NAME else str(t).replace("_", " ")
              for t in question.get("topics") or []]
    about = f"About: {', '.join(topics)}" if topics else "About: no particular topic"
    return f"{about} · {labels.intent(question.get('intent'))}"
