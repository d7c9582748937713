"""Lab values told in sentences of a letter (pure): "Her HbA1c was 8.1% in March,
potassium 5.9 mmol/L and INR 3.4 last week".

The rule is the lab reader's for running text (``extract.lab.prose``), on a
sentence's characters rather than a page's words: a test name the analyte
vocabulary knows (longest phrase first), at most two linking words ("was", "of",
"is now"), a plain number, then perhaps its unit (glued, "8.1%", or the next word).
Not a result: a target or threshold ("target HbA1c below 53", "if her potassium
rises above 6"), a number that starts a range ("5 to 7") or a unit the analyte is
never measured in (a dose, "potassium chloride 600 mg"). When the sentence tells
when ("in March", "last week", "on 12/03/2024") the words are kept as printed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.policy.facts.analytes import analyte, canonical_analyte, known_name, normalize_unit, specimen_named, with_specimen
from extract.values import numbers as V
from extract.values.prose_text import Span

# --------------------------------------------------------------------------- vocabulary (data)

LINK_WORDS = frozenset({"of", "is", "was", "were", "at", "currently", "now", "level", "levels", "value", "result",
                        "measured", "came", "back", "today", "recently", "checked", "=", ":", "has", "been",
                        "rose", "risen", "fell", "fallen", "to", "remains", "remained", "reading"})
MAX_LINKS = 3
# Verbs of change before "from A to B" ("her eGFR has fallen from 41 to 28"): the result is B.
CHANGE_WORDS = frozenset({"rose", "risen", "fell", "fallen", "dropped", "increased", "decreased", "gone",
                          "climbed", "declined", "changed", "improved", "worsened", "moved"})
MAX_NAME_WORDS = 4
# A word before the name that makes the number a target or a threshold, not a result.
NOT_A_RESULT_BEFORE = frozenset({"goal", "target", "targets", "desired", "ideal", "optimal", "keep", "maintain",
                                 "below", "above", "under", "over", "than", "threshold", "aim", "aiming"})
# A word after the number that makes it a range or a threshold.
RANGE_AFTER = frozenset({"to", "-", "\u2013", "and/or"})
# When a sentence says a value was measured.
WHEN = re.compile(
    r"\b(?:(?:in|on|from|dated)\s+(?:(?:early|mid|late)\s+)?(?:\d{1,2}(?:st|nd|rd|th)?\s+)?"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?(?:\s+\d{4})?"
    r"|(?:on|dated)\s+\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}|last (?:week|month|year)|yesterday|today|this morning|"
    r"(?:\d+|two|three|four|a few) (?:days|weeks|months) ago|recently)\b", re.I)

# A sentence that says first when its results were taken: "Labs 11/25/2026: A1c 9.1%, Cr 1.3",
# "Bloods (02/11/2026): ...", "On 11/25/2026 her A1c was 9.1%". Each result it tells, whose
# own words say no other time, was taken then (the date as printed).
_DAY = r"\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}"
OPENING_WHEN = re.compile(
    rf"^\s*(?:(?:(?:recent|latest|last)\s+)?(?:labs?|bloods?|blood tests?|results?|investigations?)\s*"
    rf"\(?\s*(?:from\s+|dated\s+|on\s+)?(?P<a>{_DAY})\s*\)?\s*[:\-\u2013]|on\s+(?P<b>{_DAY})\b)", re.I)

_TOKEN = re.compile(r"[^\s,;()]+")
_NUMBER_GLUED = re.compile(rf"^(?P<n>{V.NUMBER})(?P<u>%|[a-zA-Z\u00b5/][\w/\u00b5^.]*)?$")


@dataclass(frozen=True, slots=True)
class LabMention:
    """One result told in a sentence: the name through the value (and unit) as printed."""

    mention: Span
    test_name: str
    value: str
    unit: str
    analyte: str | None
    when: Span | None = None


def bare(text: str) -> str:
    """A token as a word: quotes, a closing point or colon and case off."""
    return text.strip().strip("\"'").rstrip(".:").lower()


def _name_at(tokens: list[re.Match], i: int, sentence: str) -> int:
    """How many tokens from ``i`` make a known test name (longest first), or 0. A name
    starts with a letter or digit: "(24/11/2026): HbA1c" names "HbA1c", not ": HbA1c"."""
    if not tokens[i].group(0)[:1].isalnum():
        return 0
    for n in range(min(MAX_NAME_WORDS, len(tokens) - i), 0, -1):
        span = tokens[i: i + n]
        gap = sentence[span[0].start(): span[-1].end()]
        if re.search(r"[,;.]\s", gap):
            continue
        printed = gap.rstrip(":=")
        letters = [c for c in printed if c.isalpha()]
        if len(letters) <= 3 and not any(c.isupper() for c in letters):
            continue  # "pt", "na", "ca" in lower case are words, not test names
        if known_name(printed):
            return n
    return 0


def _unit_fits(analyte_id: str | None, unit: str) -> bool:
    if not unit or analyte_id is None:
        return True
    entry = analyte(analyte_id)
    return normalize_unit(unit) in ({normalize_unit(u) for u in entry.units} if entry else set())


def _trend_at(tokens: list[re.Match], j: int, sentence: str) -> bool:
    """Whether tokens from ``j`` tell a change, "from 41 to 28", after a verb of change
    among the links ("has fallen", "rose"): the earlier number opens no range."""
    if j + 3 >= len(tokens) or bare(tokens[j].group(0)) != "from" or bare(tokens[j + 2].group(0)) != "to":
        return False
    before = sentence[:tokens[j].start()].lower().split()[-3:]
    return bool(set(before) & CHANGE_WORDS) and all(
        re.fullmatch(V.NUMBER, tokens[k].group(0).rstrip(".")) or k == j + 3 and _NUMBER_GLUED.match(
            tokens[k].group(0).rstrip(".")) for k in (j + 1, j + 3))


def _split_number(tokens: list[re.Match], j: int, sentence: str) -> bool:
    """Whether the number at ``tokens[j]`` is followed, a space apart, by one or two lone
    digits and then a unit ("5 9 mmol/L", "14 8 mmol/L"): one number whose decimal point
    a scan or fax lost, not a result of the first part."""
    if j + 2 >= len(tokens) or not re.fullmatch(r"\d{1,2}", tokens[j + 1].group(0)):
        return False
    after = tokens[j + 2]
    return not sentence[tokens[j + 1].end(): after.start()].strip() and V.looks_like_unit(after.group(0).rstrip("."))


def value_at(tokens: list[re.Match], start: int, sentence: str) -> int | None:
    """Where the value of a name that ends before ``tokens[start]`` stands: past at most
    ``MAX_LINKS`` linking words ("was", "of", "is now"); None when a comma, a clause's
    end or a target word ("below") comes first. Shared with ``prose_vitals``."""
    j, links = start, 0
    while j < len(tokens) and links < MAX_LINKS and bare(tokens[j].group(0)) in LINK_WORDS \
            and not re.match(r"[,;.]", sentence[tokens[j - 1].end():tokens[j].start()].strip() or " "):
        j += 1
        links += 1
    if j >= len(tokens) or re.search(r"[,;]", sentence[tokens[j - 1].end(): tokens[j].start()]) \
            or bare(tokens[j - 1].group(0)) in NOT_A_RESULT_BEFORE:
        return None
    return j


def lab_values_in(sentence: str) -> list[LabMention]:
    """Every result the sentence tells, in order (see the module docstring)."""
    tokens = list(_TOKEN.finditer(sentence))
    out: list[LabMention] = []
    opening = OPENING_WHEN.match(sentence)
    told = None
    if opening:
        group = "a" if opening.group("a") else "b"
        told = Span(opening.group(group), opening.start(group), opening.end(group))
    i = 0
    while i < len(tokens):
        n = _name_at(tokens, i, sentence)
        if n == 0 or (i > 0 and bare(tokens[i - 1].group(0)) in NOT_A_RESULT_BEFORE):
            i += max(n, 1)
            continue
        j = value_at(tokens, i + n, sentence)
        if j is None:
            i += n
            continue
        if _trend_at(tokens, j, sentence):
            j += 3  # "has fallen from 41 to 28 mL/min": the result now is the second number
        raw = tokens[j].group(0).rstrip(".")
        m = _NUMBER_GLUED.match(raw)
        if not m or (m.group("u") and not V.looks_like_unit(m.group("u"))):
            i += n
            continue
        value, unit, end = m.group("n"), m.group("u") or "", tokens[j].start() + len(raw)
        nxt = tokens[j + 1] if j + 1 < len(tokens) else None
        joined = nxt is not None and not sentence[tokens[j].end(): nxt.start()].strip()
        if nxt is not None and joined and bare(nxt.group(0)) in RANGE_AFTER:
            i = j + 1
            continue  # "5 to 7": a range, not a result
        if not unit and nxt is not None and joined and _split_number(tokens, j, sentence):
            i = j + 2
            continue  # "5 9 mmol/L": a scan lost the point of 5.9; which number it is, a person reads
        if not unit and nxt is not None and joined and not raw != tokens[j].group(0) \
                and V.looks_like_unit(cand := nxt.group(0).rstrip(".")):
            unit, end = cand, nxt.start() + len(cand)
        name = sentence[tokens[i].start(): tokens[i + n - 1].end()].rstrip(":=")
        analyte_id = canonical_analyte(name, unit=unit or None)
        if not _unit_fits(analyte_id, unit):
            i = j + 1  # a dose or another measure ("potassium chloride 600 mg")
            continue
        start = tokens[i].start()
        if (specimen := specimen_said_before(sentence[:start])) is not None:
            # "Urinalysis showed protein 1.2 g/L": the urine's protein, not the blood's
            name = with_specimen(name, specimen)
            analyte_id = canonical_analyte(name, unit=unit or None)
        clause = re.search(r"[,;]|\sand\s|$", sentence[end:])
        when = WHEN.search(sentence, end, end + clause.start()) if clause else None
        out.append(LabMention(Span(sentence[start:end], start, end), name, value, unit, analyte_id,
                              Span(when.group(0), when.start(), when.end()) if when else told))
        out += _later_values(sentence, start, end, name, unit, analyte_id)
        i = j + 1
        while i < len(tokens) and tokens[i].start() < out[-1].mention.end:
            i += 1
    return out


# A specimen's finding: "urinalysis on March 26th, which showed ..."; not past a new
# subject ("urine culture showed no growth and her creatinine was 120").
_SHOWED = re.compile(r"[^.;]{0,40}?\b(?:showed|shows|revealed|demonstrated|found)\b", re.I)
_NEW_SUBJECT = re.compile(r"\b(?:and|but|while|whereas)\s+(?:her|his|their|the patient'?s?)\b", re.I)


def specimen_said_before(before: str) -> str | None:
    """The specimen other than blood a sentence says a result is of, from the text before
    the result's test name (``before``), within
    its clause (not past a semicolon): a specimen word right before the test's name
    ("urine protein 0.8 g/L") or opening the clause ("CSF protein 0.9 g/L, glucose 2.1
    mmol/L"), a label it opens with ("Urine dipstick: protein ...",
    "Pleural tap: protein 42 g/L") or a specimen that "showed" it ("her urine showed
    protein 0.8 g/L"). A specimen said elsewhere in the sentence is about something else
    ("She was fluid overloaded and her sodium was 128"; "sputum was sent and her CRP ...")."""
    clause = re.split(r"[;.]\s", before)[-1]
    words = clause.split()
    if words and (specimen := specimen_named(words[-1])) is not None:
        return specimen  # right before the name
    if len(words) > 1 and (specimen := specimen_named(words[0])) is not None and \
            any(known_name(" ".join(words[1:1 + n]).strip(",:")) for n in (1, 2, 3)):
        return specimen  # opening the clause's list, before its first test ("CSF protein 0.9 g/L, glucose 2.1")
    label = re.match(r"\s*([^:,]{1,40}):", clause)
    if label and (specimen := specimen_named(label.group(1))) is not None:
        return specimen
    for word in re.finditer(r"[A-Za-z]+", clause):
        if (specimen := specimen_named(word.group(0))) is not None and \
                (showed := _SHOWED.match(clause, word.end())) and not _NEW_SUBJECT.search(clause, showed.end()):
            return specimen
    return None


# The same test's next value after a comma, in the same unit ("CRP 212 mg/L on admission,
# 38 mg/L on 02/12/2026"); between them only words or when the first was measured.
_LATER_VALUE = re.compile(rf"(?P<gap>[^,;.]{{0,40}}?),\s*(?:and\s+|then\s+|and then\s+|now\s+)?"
                          rf"(?P<n>{V.NUMBER})\s*(?P<u>[^\s,;()]+)(?!\s+(?:of|in|for|per)\b)")


def _later_values(sentence: str, start: int, end: int, name: str, unit: str, analyte_id: str | None
                  ) -> list[LabMention]:
    """Values told after a result of the same test, each in the result's unit: one
    mention each, quoted from the test's name so the quote says what was measured."""
    out: list[LabMention] = []
    while unit and (m := _LATER_VALUE.match(sentence, end)):
        gap = m.group("gap").strip()
        later_unit = m.group("u").rstrip(".")
        if (re.search(r"\d", gap) and not WHEN.fullmatch(gap)) or later_unit.lower() != unit.lower():
            break
        end = m.start("u") + len(later_unit)
        clause = re.search(r"[,;]|\sand\s|$", sentence[end:])
        when = WHEN.search(sentence, end, end + clause.start()) if clause else None
        out.append(LabMention(Span(sentence[start:end], start, end), name, m.group("n"), later_unit, analyte_id,
                              Span(when.group(0), when.start(), when.end()) if when else None))
    return out
