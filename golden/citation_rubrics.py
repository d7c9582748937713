"""Rubrics on the shape of what the workbench returns: every fact and answer matches its
schema, carries a citation, and the citation is re-found at its cited place (quote in
the source, box on the words of a paged source). Written here afresh rather than
borrowed from the code they check."""

from __future__ import annotations

import re
from typing import Any

from domain.content import Section
from golden.observation import Observation
from golden.verdicts import Verdict, cited_document_id, folded_text, is_counted, verdict_from, words_of


def schema_valid(obs: Observation) -> Verdict:
    from domain.models import AnswerSections, LabResultValue, StoredFact

    problems = []
    facts = obs.facts()
    for f in facts:
        try:
            StoredFact.model_validate({k: v for k, v in f.items() if k != "document"})
            if f["fact_type"] == "lab_result":
                LabResultValue.model_validate(f["structured_value"])
                date = f["structured_value"].get("collection_date")
                if date is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(date)):
                    problems.append(f"fact {f['fact_id']}: collection date {date!r} is not YYYY-MM-DD")
        except ValueError as exc:
            problems.append(f"fact {f['fact_id']} ({f['fact_type']}): {str(exc).splitlines()[0]}")
    for a in obs.answers:
        p = a["payload"]
        missing = {"request_id", "refused", "refusal_reason", "sections", "text"} - set(p)
        if missing:
            problems.append(f"answer to step {a['step']} lacks {sorted(missing)}")
        try:
            AnswerSections.model_validate(p["sections"])
        except ValueError as exc:
            problems.append(f"answer to step {a['step']}: {str(exc).splitlines()[0]}")
    for key, chart in obs.charts.items():
        if set(chart) != {"labs", "allergies", "medications", "problems", "vital_signs"}:
            problems.append(f"chart of {key} has sections {sorted(chart)}")
    return verdict_from(problems, f"{len(facts)} facts, {len(obs.answers)} answers and the chart match their schemas")


def citation_present(obs: Observation) -> Verdict:
    problems = []
    facts = obs.facts()
    for f in facts:
        c = f.get("citation") or {}
        absent = [k for k in ("source_type", "source_id", "page_or_section", "field_or_chunk_id", "quote_or_value")
                  if not str(c.get(k) or "").strip()]
        if absent:
            problems.append(f"fact {f['fact_id']} citation lacks {', '.join(absent)}")
        elif cited_document_id(c) != obs.uploads[f["document"]].document_id:
            problems.append(f"fact {f['fact_id']} cites {c.get('source_id')}, not its own document")
    for a in obs.answers:
        for section in ("patient_findings", "needs_review", "guideline_evidence"):
            for item in a["payload"]["sections"].get(section, []):
                if not item.get("citations"):
                    problems.append(f"answer to step {a['step']}: {section} item has no citation")
    for b in obs.briefs:  # a brief line cites its facts, or says what stands in for them
        for section in b["payload"]["sections"]:
            for line in section["lines"]:
                if not (line["citations"] or line["notice"] or any(s in line["text"] for s in BRIEF_SENTINELS)):
                    problems.append(f"brief of step {b['step']}: {section['key']} line has no citation or sentinel")
    return verdict_from(problems, f"all {len(facts)} facts and every answer item and brief line carry a citation")


# The brief's sentinels as the issue writes them (written here, not imported from the policy it checks).
BRIEF_SENTINELS = ("[MISSING — not documented in the record]", "[CONFLICT — see review]", "[PENDING REVIEW]",
                   "[UNCLEAR — source illegible]")


def _rows_of(content, locator: str) -> list:
    """A workbook range over several rows ("Obs!A3:D4": a blood pressure joined from a
    systolic and a diastolic row) as one section: its rows' texts joined by " | "."""
    m = re.match(r"^(.+)![A-Z]+(\d+):[A-Z]+(\d+)$", locator or "")
    if not m or int(m[3]) <= int(m[2]):
        return []
    rows = sorted((s for s in content.sections if s.meta.get("sheet") == m[1]
                   and int(m[2]) <= s.meta.get("row", 0) <= int(m[3])
                   and (s.section_type == "row" or s.meta.get("only_cell_in_row"))), key=lambda s: s.meta["row"])
    return [Section(locator, " | ".join(s.text for s in rows), "rows")] if rows else []


def _quote_found(obs: Observation, fact: dict[str, Any]) -> str | None:
    """None when the quote is at its cited place in the content the pipeline read."""
    c = fact["citation"]
    content = obs.contents.get(obs.uploads[fact["document"]].document_id)
    if content is None:
        return f"fact {fact['fact_id']}: the source content was not seen"
    quote = folded_text(c["quote_or_value"])
    if c.get("page") is not None:
        pages = [p for p in content.pages if p.number == c["page"]]
        if not pages:
            return f"fact {fact['fact_id']} cites page {c['page']}, which the document does not have"
        text = folded_text(" ".join(w.text for w in pages[0].words))
        if quote not in text and "".join(words_of(quote)) not in "".join(words_of(text)):
            return f"fact {fact['fact_id']}: quote not found on page {c['page']}"
        return None
    sections = [s for s in content.sections if s.locator == c["page_or_section"]] or _rows_of(content, c["page_or_section"])
    if not sections:
        return f"fact {fact['fact_id']} cites {c['page_or_section']!r}, which the document does not have"
    if not any(quote in folded_text(s.text) for s in sections):
        return f"fact {fact['fact_id']}: quote not found at {c['page_or_section']}"
    return None


def citation_verified(obs: Observation) -> Verdict:
    counted = [f for f in obs.facts() if is_counted(f)]
    problems = [p for f in counted if (p := _quote_found(obs, f))]
    return verdict_from(problems, f"all {len(counted)} counted facts were re-found at their cited place")


def _paged(obs: Observation, fact: dict[str, Any]) -> bool:
    content = obs.contents.get(obs.uploads[fact["document"]].document_id)
    return bool(content is not None and content.pages)


def bounding_box_present(obs: Observation) -> Verdict:
    facts = [f for f in obs.facts() if _paged(obs, f)]
    problems = [f"fact {f['fact_id']} on a paged source has no page and box" for f in facts
                if f["citation"].get("page") is None or not f["citation"].get("bounding_box")]
    return verdict_from(problems, f"all {len(facts)} facts from paged sources carry a page and a box"
                  if facts else "no paged source in this case")


def _box_problem(obs: Observation, fact: dict[str, Any]) -> str | None:
    c = fact["citation"]
    box = c.get("bounding_box") or {}
    content = obs.contents[obs.uploads[fact["document"]].document_id]
    page = next((p for p in content.pages if p.number == c.get("page")), None)
    if page is None or not box:
        return f"fact {fact['fact_id']}: no page or box"
    x0, y0 = box["x"], box["y"]
    x1, y1 = x0 + box["width"], y0 + box["height"]
    if not (0 <= x0 < x1 <= 1.0001 and 0 <= y0 < y1 <= 1.0001):
        return f"fact {fact['fact_id']}: box outside the page"
    inside = []
    for w in page.words:
        cx = (w.x0 + w.x1) / 2 / page.width
        cy = (w.y0 + w.y1) / 2 / page.height
        if x0 - 0.005 <= cx <= x1 + 0.005 and y0 - 0.005 <= cy <= y1 + 0.005:
            inside.append(w.text)
    if not inside:
        return f"fact {fact['fact_id']}: the box covers no words"
    under = "".join(words_of(" ".join(inside)))
    missing = [t for t in words_of(c["quote_or_value"]) if t not in under]
    if missing:
        return f"fact {fact['fact_id']}: the box does not cover {' '.join(missing[:4])!r} of its quote"
    return None


def box_on_words(obs: Observation) -> Verdict:
    facts = [f for f in obs.facts() if is_counted(f) and _paged(obs, f)]
    problems = [p for f in facts if (p := _box_problem(obs, f))]
    return verdict_from(problems, f"every box of {len(facts)} counted paged facts sits on the words it quotes"
                  if facts else "no counted fact from a paged source")
