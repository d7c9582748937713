"""The two lines an answer opens with, built from the verified answer itself.

Line one says what the answer found: its first finding (the most urgent comes first in
every answer), or its first guideline passage, or its first "not found" line; a
refusal says it is a refusal and why. Line two says what else to look at: flags of
records that disagree, items that need review, guideline passages, what was not found.
Nothing is written that the answer does not hold: each line copies an item's text or
counts items, and cites every item it copies or counts (``summary_problems`` checks it;
a line that fails is dropped).
"""

from __future__ import annotations

import re

from domain.models import AnswerItem, AnswerSections
from domain.policy.answers.verifier import citation_key

REFUSAL_LEAD = "This is a refusal"
MAX_LINE = 240  # characters of an item copied into a line; a longer one is cut at a word
NOTHING_SHOWN = "Nothing from the record is shown for it."


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _first_sentence(text: str) -> str:
    """Up to the first full stop that ends a sentence (not one inside a number: "7.9")."""
    match = re.search(r"[.!?](?=\s+[A-Z(“\"'])", text)
    first = text[:match.end()] if match else text
    return first if len(first) <= MAX_LINE else first[:MAX_LINE].rsplit(" ", 1)[0] + " …"


def _cites(items: list[AnswerItem]) -> dict:
    return {"citations": [c for i in items for c in i.citations],
            "evidence_ids": list(dict.fromkeys(e for i in items for e in i.evidence_ids))}


def _first_line(sections: AnswerSections, refusal: str | None) -> AnswerItem:
    findings, guides = sections.patient_findings, sections.guideline_evidence
    if refusal:  # its first sentence says what is declined; the answer below says the rest
        return AnswerItem(text=f"{REFUSAL_LEAD}: {_first_sentence(refusal)}", kind="summary")
    if findings:
        more = f" (and {_plural(len(findings) - 1, 'more finding', 'more findings')} below)" if len(findings) > 1 else ""
        return AnswerItem(text=_first_sentence(findings[0].text).rstrip(".") + "." + more, kind="summary", **_cites(findings))
    if guides:
        more = f" (and {_plural(len(guides) - 1, 'more passage', 'more passages')} below)" if len(guides) > 1 else ""
        return AnswerItem(text="No patient finding answers this; from the guidelines: " + _first_sentence(guides[0].text).rstrip(".")
                          + "." + more, kind="summary", **_cites(guides))
    if sections.missing:
        return AnswerItem(text=sections.missing[0].text, kind="summary", **_cites(sections.missing[:1]))
    return AnswerItem(text="The record holds nothing that answers this.", kind="summary")


def _second_line(sections: AnswerSections, flags: list[AnswerItem], refusal: str | None) -> AnswerItem:
    if refusal:
        shown = [*sections.patient_findings, *sections.needs_review]
        if not shown:
            return AnswerItem(text=NOTHING_SHOWN, kind="summary")
        counts = [c for c in (_plural(len(sections.patient_findings), "finding", "findings") if sections.patient_findings
                              else None,
                              _plural(len(sections.needs_review), "item to review", "items to review")
                              if sections.needs_review else None) if c]
        parts = ["shown instead, from the record: " + " and ".join(counts)]
        counted = [*shown, *flags]
        if flags:
            parts.insert(0, _plural(len(flags), "disagreement in the record to check",
                                    "disagreements in the record to check"))
        text = "; ".join(parts) + "."
        return AnswerItem(text=text[0].upper() + text[1:], kind="summary", **_cites(counted))
    parts, counted = [], []
    if flags:
        parts.append(_plural(len(flags), "disagreement in the record to check", "disagreements in the record to check"))
        counted += flags
    if sections.needs_review:
        parts.append(_plural(len(sections.needs_review), "item needs review", "items need review"))
        counted += sections.needs_review
    shown_first = sections.patient_findings[:1] or sections.guideline_evidence[:1]
    guides = sections.guideline_evidence if sections.patient_findings else sections.guideline_evidence[1:]
    if guides:
        parts.append(_plural(len(guides), "guideline passage", "guideline passages"))
        counted += guides
    missing = sections.missing if shown_first else sections.missing[1:]
    if missing:
        parts.append(_plural(len(missing), "thing not found", "things not found"))
        counted += missing
    if not parts:
        # Line one may itself be the "not found" line: then nothing *else* was.
        text = "Nothing needs review and nothing else was reported missing." if sections.missing \
            else "Nothing needs review and nothing was reported missing."
        return AnswerItem(text=text, kind="summary")
    return AnswerItem(text="Also: " + "; ".join(parts) + ".", kind="summary", **_cites(counted))


def summary_problems(line: AnswerItem, answer: list[AnswerItem]) -> str | None:
    """Why a summary line may not stand: it cites a source or an entry that no item of
    the verified answer cites."""
    citations = {citation_key(c) for i in answer for c in i.citations}
    evidence = {e for i in answer for e in i.evidence_ids}
    if any(citation_key(c) not in citations for c in line.citations):
        return "cites a source the answer does not cite"
    if any(e not in evidence for e in line.evidence_ids):
        return "names evidence the answer does not show"
    return None


def summarize(sections: AnswerSections, flags: list[AnswerItem], *,
              refusal: str | None = None) -> tuple[list[AnswerItem], int]:
    """Two lines over the verified answer (``sections`` and the verified ``flags``);
    a line that fails ``summary_problems`` is dropped and counted."""
    answer = [*sections.patient_findings, *sections.needs_review, *sections.guideline_evidence, *sections.missing,
              *flags]
    lines = [_first_line(sections, refusal), _second_line(sections, flags, refusal)]
    kept = [line for line in lines if summary_problems(line, answer) is None]
    return kept, len(lines) - len(kept)


def summary_text(lines: list[AnswerItem]) -> str:
    return "\n".join(line.text for line in lines)
