"""The brief as text: sections of lines with numbered citation marks, the list of what was
cut to fit the budget, and the sources (document, place, quote) the marks point to, in
the answers' citation style. The budget is counted on exactly this text."""

from __future__ import annotations

from dataclasses import dataclass

from domain.models import Citation
from domain.policy.answers.brief_budget import SECTIONS, BriefLine

QUOTE_CHARS = 80


@dataclass(frozen=True)
class Footnote:
    number: int
    document: str  # "demo-lab-typed.pdf (documents:1)", "chart entry chart_lab_results:5"
    place: str  # "page 1 · results[0]"
    quote: str

    @property
    def text(self) -> str:
        return f"{self.document} · {self.place} · “{self.quote}”"


def _key(c: Citation) -> tuple:
    return (c.source_id, c.page_or_section, c.field_or_chunk_id, c.quote_or_value)


def source_label(c: Citation, names: dict[str, str]) -> str:
    if c.source_id in names:
        return f"{names[c.source_id]} ({c.source_id})"
    if c.source_id.startswith("patients:"):
        return f"patient record ({c.source_id})"
    return f"chart entry ({c.source_id})" if c.source_type == "chart" else c.source_id


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS - 1].rstrip() + "…"


def footnotes(lines: list[BriefLine], names: dict[str, str]) -> tuple[list[Footnote], list[list[int]]]:
    """Numbered sources in order of first mention, and each line's marks."""
    numbers: dict[tuple, int] = {}
    notes: list[Footnote] = []
    marks: list[list[int]] = []
    for line in lines:
        mine = []
        for c in line.citations:
            key = _key(c)
            if key not in numbers:
                numbers[key] = len(numbers) + 1
                place = " · ".join(p for p in dict.fromkeys((c.page_or_section, c.field_or_chunk_id)) if p)
                notes.append(Footnote(numbers[key], source_label(c, names), place, _quote(c.quote_or_value)))
            if numbers[key] not in mine:
                mine.append(numbers[key])
        marks.append(mine)
    return notes, marks


def section_title(key: str, shown: tuple[int, int] | None) -> str:
    title = SECTIONS[key]
    if shown and shown[0] < shown[1]:
        title += f" ({shown[0]} of {shown[1]} shown)"
    return title


def cut_lines(cut: list[tuple[str, int, int]], budget: int) -> list[str]:
    total = sum(n for _, n, _ in cut)
    if not total:
        return [f"Nothing was cut to fit the budget of {budget:,} tokens."]
    return [f"Cut to fit the budget of {budget:,} tokens: {total} line{'s' if total != 1 else ''}"] + [
        f"- {SECTIONS[s]}: {n} of {of} line{'s' if of != 1 else ''}" for s, n, of in cut]


def render_text(lines: list[BriefLine], cut: list[tuple[str, int, int]], budget: int,
                names: dict[str, str]) -> str:
    notes, marks = footnotes(lines, names)
    totals: dict[str, int] = {}
    for line in lines:
        totals[line.section] = totals.get(line.section, 0) + 1
    cut_by = {s: (n, of) for s, n, of in cut}
    out = ["PATIENT BRIEF"]
    for key in SECTIONS:  # a section cut whole keeps its title, so the reader sees it was there
        mine = [(line, m) for line, m in zip(lines, marks) if line.section == key]
        if not mine and key not in cut_by:
            continue
        shown = (totals.get(key, 0), cut_by[key][1]) if key in cut_by else None
        out += ["", f"## {section_title(key, shown)}"]
        out += [f"- {line.text}" + "".join(f" [{n}]" for n in m) for line, m in mine]
    out += ["", *cut_lines(cut, budget)]
    if notes:
        out += ["", "Sources:", *(f"[{n.number}] {n.text}" for n in notes)]
    return "\n".join(out)
