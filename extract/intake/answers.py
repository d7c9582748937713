"""How an intake form's answers are read and judged (the answer rules of ``extract.intake.extractor``).

A list answer is cut into items (a row each, split at ";" and, for lists, at "," outside
brackets) and fragments a comma or a line wrap cut off are re-joined to their item
("..., as needed"; "Latex - itching, swelling"; "Father - heart disease, diabetes"). A
date of birth is the date the answer starts with, read in the order its label states.
An item needs a person when its wording is uncertain, negated by its answer, or holds
red-flag language; how far an answer is trusted is scored here too.
"""

from __future__ import annotations

import re
from dataclasses import replace

from domain.content import Word
from domain.policy.context.mentions import assess, red_flag
from extract.values import written_answers as it
from extract.values.dates import DateMatch, find_date
from extract.values.lists import JOINING_WORDS, is_list_marker, is_qualifier, joins_two_dosed
from extract.intake.layout import Field
from extract.layout import text_of


def split_items(rows: list[list[Word]], *, commas: bool) -> list[list[Word]]:
    """Word runs for list items: one per row, split further at ";" (and "," outside
    parentheses when ``commas``) and at a full stop that ends an item holding a number
    before a capitalised word ("Sumatriptan 50 mg as needed. Propranolol 40 mg": the
    stop a writer put between items, or OCR's reading of their ";"); bullets and
    numbering are dropped."""
    items: list[list[Word]] = []
    for words in rows:
        cur: list[Word] = []
        depth = 0
        for k, w in enumerate(words):
            if not cur and is_list_marker(w.text):
                continue
            if cur and depth <= 0 and w.text.casefold() in JOINING_WORDS \
                    and joins_two_dosed(text_of(cur), _to_item_end(words[k + 1:])):
                items.append(cur)  # "Amlodipine 5 mg daily and aspirin 81 mg": two medicines
                cur = []
                continue
            cur.append(w)
            depth += w.text.count("(") - w.text.count(")")
            if w.text.endswith(";") or (commas and depth <= 0 and w.text.endswith(",")) \
                    or (depth <= 0 and _stop_between_items(cur, words[k + 1: k + 2])):
                items.append(cur)
                cur = []
        if cur:
            items.append(cur)
    return [i for i in items if has_content(it.clean_item(text_of(i)))]


def _to_item_end(words: list[Word]) -> str:
    """The text of ``words`` up to where ``split_items`` would end the item (";" or ",")."""
    out = []
    for w in words:
        out.append(w.text)
        if w.text.endswith((";", ",")):
            break
    return " ".join(out)


def _stop_between_items(item: list[Word], following: list[Word]) -> bool:
    """``item`` ends in a full stop after a word or a whole number (not "2.5" or
    "q.d."'s inner dot; "Mother - breast cancer at 62. Father - ..."), holds a number
    (a dose, a count, an age), and a capitalised word follows."""
    last = item[-1].text
    return (len(item) >= 2 and bool(following) and last.endswith(".")
            and (last[-2:-1].isalpha() or last[:-1].isdigit())
            and "." not in last[:-1] and any(c.isdigit() for w in item for c in w.text)
            and following[0].text[:1].isupper())


def has_content(text: str) -> bool:
    """Words, not just a blank line, a tick box glyph or punctuation."""
    return any(c.isalnum() for c in text)


def merge_items(items: list[list[Word]], belongs_to_previous) -> list[list[Word]]:
    """Re-join fragments a comma or a line wrap cut off their item; ";" is final."""
    out: list[list[Word]] = []
    for item in items:
        prev = text_of(out[-1]) if out else ""
        if out and not prev.endswith(";") and belongs_to_previous(prev, text_of(item)):
            out[-1] = out[-1] + item
        else:
            out.append(item)
    return out


def med_continues(prev: str, item: str) -> bool:
    """"..., as needed" or "..., at bedtime" finish the previous medication."""
    t = it.clean_item(item)
    return not t[:1].isalpha() or it.starts_like_frequency(t)


def allergy_continues(prev: str, item: str) -> bool:
    """"Latex - itching, swelling": a bare reaction adds to the previous one; "Latex,
    severe": so does a word that only qualifies it."""
    return (it.is_reaction(item) and it.parse_allergy(prev)["reaction"] is not None) or is_qualifier(item)


def problem_continues(prev: str, item: str) -> bool:
    """"Asthma, mild" or "Diabetes, diagnosed 2015": a qualifier is part of its problem."""
    return is_qualifier(item)


def family_continues(prev: str, item: str) -> bool:
    """"Father - heart disease, diabetes": conditions after a leading relative."""
    return it.leads_with_relative(prev) and not it.has_relative(item)


# A date-of-birth label that says in which order the day and month are written.
_DAY_FIRST = re.compile(r"\b(?:dd|jj|tt)\s*[/.-]\s*mm\b", re.I)
_MONTH_FIRST = re.compile(r"\bmm\s*[/.-]\s*dd\b", re.I)
# A date's format printed in brackets ("(MM/DD/YYYY)", "(dd.mm.yy)"), and what OCR puts after it.
_FORMAT_HINT = re.compile(r"^\(\s*(?:dd|mm|jj|tt|yyyy|yy)(?:\s*[/.-]\s*(?:dd|mm|jj|tt|yyyy|yy|aaaa|jjjj)){2}\s*\)[.:,;]*"
                          r"(?=\s|$)", re.I)


def leading_date(words: list[Word], label: str) -> tuple[DateMatch | None, list[Word]]:
    """The date an answer starts with, and its words ("07/22/1958 (age 67)"). A label
    that states the order ("DOB (dd/mm/yyyy)") decides it; ``ambiguous`` stays set
    only when nothing did (03/04/1979 under a plain "Date of birth"). The label's
    format hint read by OCR on the answer's side of the colon ("(MM/DD/YYYY). 03/14/1951")
    is the label's, and says the order all the same."""
    text = text_of(words)
    if (hint := _FORMAT_HINT.match(text)) is not None:
        label, words = f"{label} {hint.group(0)}", words[len(hint.group(0).split()):]
        text = text_of(words)
    day_first = bool(_DAY_FIRST.search(label))
    if day_first:  # read the printed day and month the other way round, by the same rule
        text = re.sub(r"^(\d{1,2})([/.-])(\d{1,2})\2", r"\3\2\1\2", text)
    found = find_date(text)
    if found is None or found.start != 0:
        return None, words
    n = len(text[: found.end].split())
    if day_first or _MONTH_FIRST.search(label):
        found = replace(found, ambiguous=False, day_first_iso=None)  # settled by the label: no other reading
    return found, words[:n]


def item_doubt(text: str, answer: str | None = None) -> str | None:
    """Why an item is uncertain: a hedge, a "?" or struck-through text in it, or a
    hedge in its answer whose scope reaches it."""
    cue = it.answer_doubt(text, answer)
    return it.doubt_reason(cue) if cue else None


def _contradicted(item: str, answer: str) -> str | None:
    """Why a list item may not be what it says: it is a "none" beside other items,
    or the answer negates it ("NKDA except penicillin", "no aspirin")."""
    if it.is_none_answer(item) or it.is_no_known_allergies(item):
        return f"{item!r} written beside other items"
    ctx = assess(answer, item)
    if ctx.negated:
        return f"negated wording ({', '.join(ctx.triggers)!r})"
    return None


def review_reason(text: str, clinical: bool, where: str | None = None, answer: str | None = None) -> str | None:
    """Why a clinically relevant item needs a person: uncertain or negated wording
    (of an item of a list ``answer``), red flags, place."""
    reasons = []
    if where:
        reasons.append(where)
    if clinical and (doubt := item_doubt(text, answer)):
        reasons.append(doubt)
    if answer is not None and (contradiction := _contradicted(text, answer)):
        reasons.append(contradiction)
    if flag := red_flag(text):
        reasons.append(f"red-flag language ({flag!r})")
    return "; ".join(reasons) or None


def answer_score(parsed_parts: float, f: Field, uncertain: bool) -> float:
    """0.55 base + label recognised + answer stands alone + item parsed, minus doubt.

    A clean, fully parsed item under a known label scores 0.95; uncertain
    wording costs 0.25, stray text beside the answer 0.07.
    """
    score = 0.55
    score += 0.15 if f.kind != "other" else 0.05
    score += 0.03 if f.crowded else 0.10
    score += 0.15 * parsed_parts
    return score - (0.25 if uncertain else 0.0)
