"""The Brief tab of the chart overview: the cited patient brief cut to a token budget,
its sources, what was cut, and the printable PDF (built only when downloaded)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from domain.policy.answers.brief_budget import DEFAULT_BUDGET_TOKENS, SECTIONS
from core.services.brief.brief import MIN_BUDGET, patient_brief
from core.services.brief.pdf import brief_pdf
from core.services.brief.render import cut_lines, footnotes, section_title
from ui import glossary
from ui.inert import md_text
from ui.media import download_button


def _line_text(line) -> str:
    """A brief line as written, but a section's "nothing here" notice in plain words and
    no raw confidence number (the PDF keeps the brief as composed)."""
    if line.notice and line.section in glossary.BRIEF_NONE:
        return glossary.BRIEF_NONE[line.section]
    return glossary.reason(line.text)


def _plain_sections(text: str) -> str:
    """The cut summary names sections by their titles: the plain ones here."""
    for key, words in glossary.BRIEF_SECTION.items():
        text = text.replace(SECTIONS[key], words)
    return text


def brief_tab(wb, patient: dict[str, Any]) -> None:
    (tab,) = st.tabs(["Brief"])
    with tab:
        budget = int(st.number_input("Budget (tokens)", min_value=MIN_BUDGET, max_value=20000,
                                     value=DEFAULT_BUDGET_TOKENS, step=100, key=f"brief_budget_{patient['id']}",
                                     help="Counted with the embedder's own tokenizer. Identity, critical results "
                                          "and alerts are never cut; what is cut is listed at the end."))
        brief = patient_brief(wb, patient_id=patient["id"], budget_tokens=budget)
        notes, marks = footnotes(brief.lines, brief.names)
        for key in SECTIONS:
            shown = brief.fitted.shown.get(key)
            if not shown:
                continue
            title = section_title(key, shown)
            if key in glossary.BRIEF_SECTION:  # the same count note, in plain words
                title = glossary.BRIEF_SECTION[key] + title[len(SECTIONS[key]):]
            st.markdown(f"**{md_text(title)}**")
            rows = [(line, m) for line, m in zip(brief.lines, marks) if line.section == key]
            if rows:
                st.markdown("\n".join(f"- {md_text(_line_text(line))}" + "".join(f" [{n}]" for n in m)
                                       for line, m in rows))
        st.caption(md_text(_plain_sections(" ".join(cut_lines(brief.fitted.cut, budget))))
                   + f" · {brief.fitted.tokens:,} tokens")
        with st.expander(f"Sources ({len(notes)})"):
            st.markdown("\n".join(f"{n.number}. {md_text(n.text)}" for n in notes) or "None.")
        download_button("Download the brief (PDF)", lambda: brief_pdf(brief), file_name="patient-brief.pdf",
                        mime="application/pdf", key=f"brief_pdf_{patient['id']}")
