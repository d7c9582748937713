"""Allergies a workbook prints on a labelled row ("Allergies | Sulfa drugs - hives;
penicillin (rash)", or "Allergies: NKDA" in one cell), wherever the row stands: above
the tables, between them, or under a medicines table, whose reader would otherwise take
the label for a medicine's name.

Each item becomes an ``allergy`` fact cited by the row and quoting the item. A workbook
is not a form: nothing says whether the row is current, checked or copied forward, so
every allergy read here goes to a person before the chart. "No known allergies" is a
document fact (an explicit statement, never a chart allergy).
"""

from __future__ import annotations

import re

from domain.content import Section
from domain.models import FactProposal
from extract.section_facts import SectionFacts
from extract.values import numbers as V
from extract.values.labels import read_label, reads_as_label
from extract.values.lists import ALLERGY_COLUMNS, allergy_fact_text, allergy_items, parse_allergy

REVIEW_REASON = "allergy read from a labelled row of a workbook: check it is current before it enters the chart"
# Header words of an allergy table: a row "Allergies | Reaction | Severity" is its header, not an answer.
_COLUMN_WORDS = frozenset(w for words in ALLERGY_COLUMNS.values() for w in words) | {
    "type", "status", "onset", "date", "comment", "comments", "note", "notes"}
_INLINE = re.compile(r"^\s*([^:]{2,40}?)\s*:\s*(\S.*)$")


def _label_and_answer(cells: list[dict]) -> tuple[str, str] | None:
    """(label, answer) of a row whose first cell is an allergy label: the label cell with
    the cells after it, or one cell "Allergies: ..."."""
    texts = [V.normalize_ws(c["text"]) for c in sorted(cells, key=lambda c: c["col"]) if V.normalize_ws(c["text"])]
    if not texts:
        return None
    first = texts[0]
    inline = _INLINE.match(first) if len(texts) == 1 else None
    label, answer = (inline.group(1), inline.group(2)) if inline else (first, "; ".join(texts[1:]))
    if not answer or not reads_as_label(label):
        return None
    if len(texts) > 1 and any(t.lower().rstrip(":# ") in _COLUMN_WORDS for t in texts[1:]):
        return None  # the header of an allergy table ("Allergy | Reaction | Severity"), not an answer
    meaning = read_label(label)
    return (label, answer) if meaning.kind == "allergies" and meaning.owner is None else None


def allergy_row(ctx: SectionFacts, section: Section, cells: list[dict], has_identity: bool) -> bool:
    """Read ``section`` as an allergy row; whether it was one."""
    found = _label_and_answer(cells)
    if found is None:
        return False
    _answer_facts(ctx, section, found[1], has_identity)
    return True


def _answer_facts(ctx: SectionFacts, section: Section, answer: str, has_identity: bool) -> None:
    for item in allergy_items(answer):
        _add(ctx, section, item, parse_allergy(item), has_identity)


def _add(ctx: SectionFacts, section: Section, quote: str, parsed: dict, has_identity: bool) -> None:
    """An allergy fact, held for a person; "no known allergies" a document statement."""
    text, none_known = allergy_fact_text(parsed)
    reasons = [] if none_known else [REVIEW_REASON]
    if not has_identity:
        reasons.append("the workbook does not identify the patient")
    ctx.facts.append(FactProposal(
        fact_type="allergy", fact_text=text, structured_value=parsed,
        citation=ctx.cite(section, quote, ctx.path("allergies")), confidence=V.confidence(0.85, [0.9] * len(reasons)),
        wants_review=bool(reasons), review_reason="; ".join(reasons) or None, document_fact_only=none_known,
    ))


def allergy_header(cells: list[dict]) -> dict[str, int] | None:
    """The columns of an allergy table's header row ("Allergen | Reaction | Severity"):
    a substance column beside a reaction column, or None."""
    columns: dict[str, int] = {}
    for c in cells:
        t = V.normalize_ws(c["text"]).lower().rstrip(":# ")
        for role, words in ALLERGY_COLUMNS.items():
            if t in words and role not in columns:
                columns[role] = c["col"]
    return columns if {"substance", "reaction"} <= columns.keys() else None


def allergy_table_row(ctx: SectionFacts, section: Section, by_col: dict[int, dict], columns: dict[str, int],
                      has_identity: bool) -> None:
    """One row of an allergy table: an allergy with its reaction and severity."""
    substance_cell = by_col.get(columns["substance"])
    if substance_cell is None or not V.normalize_ws(substance_cell["text"]):
        return
    substance = V.normalize_ws(substance_cell["text"])
    parsed = parse_allergy(substance)
    if not parsed.get("no_known_allergies"):  # "NKDA" under the allergen column is the statement
        reaction = V.normalize_ws(by_col[columns["reaction"]]["text"]) if columns["reaction"] in by_col else ""
        severity = V.normalize_ws(by_col[columns["severity"]]["text"]) if columns.get("severity") in by_col else ""
        parsed = {"substance": substance, "reaction": reaction or None, "severity": severity.lower() or None,
                  "no_known_allergies": False}
    _add(ctx, section, substance, parsed, has_identity)
