"""Vital signs told in sentences of a letter (pure): "On examination her blood pressure
was 148/86 mmHg, pulse 92 and irregular, and oxygen saturation 94% on room air".

The rule mirrors ``extract.values.prose_labs``: a sign's printed label
(``domain.policy.facts.vital_signs``: "blood pressure", "BP", "pulse", "SpO2", "sats",
"temperature", "weight"...; longest phrase first), at most a few linking words ("was",
"of", "is now"), then the reading (a blood pressure as two numbers with a slash, any
other sign as one number), perhaps with its unit glued or as the next words. How the
reading is read, and what it could not read (a unit guessed from the number's size), is
``extract.values.vital_readings``. Not a reading: a target or a threshold ("target blood
pressure below 140/90", "if her pulse rises above 120"), a number that opens a range
("pulse 60 to 100") or a change told as "from A to B" (which number a person reads).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.policy.facts.vital_signs import VITAL_SIGNS, canonical_unit, sign_of_label
from extract.values.prose_labs import NOT_A_RESULT_BEFORE, RANGE_AFTER, bare, value_at
from extract.values.prose_text import Span
from extract.values.vital_readings import VitalReading, read_vital

# --------------------------------------------------------------------------- vocabulary (data)

# Labels of the policy's table that are everyday words or letters in running text.
NOT_IN_PROSE = frozenset({"t", "sat", "resp", "resp.", "temp.", "wt.", "ht.", "b.p", "b.p."})
# Of those, labels a clinic note prints among its vitals that count only when their
# reading prints its unit ("T 98.4F", "T 37.2 C"; a bare "T 4" is no temperature).
WITH_UNIT_ONLY = frozenset({"T"})
MAX_LABEL_WORDS = 3
MAX_UNIT_WORDS = 3

_TOKEN = re.compile(r"[^\s,;()]+")
_BP = re.compile(r"^(\d{2,3}/\d{2,3})(.*)$")
_NUMBER = re.compile(r"^(\d{1,3}(?:\.\d+)?)(.*)$")


@dataclass(frozen=True, slots=True)
class VitalMention:
    """One reading told in a sentence: the label through the reading (and its unit) as
    printed, and the reading as ``read_vital`` reads it."""

    mention: Span
    label: str
    reading: VitalReading


def _sign_at(tokens: list[re.Match], i: int, sentence: str) -> tuple[int, str]:
    """(how many tokens from ``i`` name a vital sign, its kind), longest first; (0, "")."""
    for n in range(min(MAX_LABEL_WORDS, len(tokens) - i), 0, -1):
        printed = sentence[tokens[i].start(): tokens[i + n - 1].end()].rstrip(":=")
        if printed in WITH_UNIT_ONLY and (found := sign_of_label(printed)) and found[0] in VITAL_SIGNS:
            return n, found[0]
        if re.search(r"[,;.]\s", printed):
            continue
        if kind := sign_in_prose(printed):
            return n, kind
    return 0, ""


def sign_in_prose(printed: str) -> str | None:
    """The vital sign a label names in running text ("blood pressure", "saturations",
    "HR"), or None: not the everyday words and letters of ``NOT_IN_PROSE``, not a short
    label in lower case ("hr", "wt" are words of a sentence), not a label carrying its
    unit."""
    if printed.lower() in NOT_IN_PROSE:
        return None
    letters = [c for c in printed if c.isalpha()]
    if len(letters) <= 3 and not any(c.isupper() for c in letters):
        return None
    found = sign_of_label(printed)
    return found[0] if found and found[0] in VITAL_SIGNS and not found[1] else None


def _unit_after(kind: str, tokens: list[re.Match], j: int, sentence: str) -> int:
    """How many tokens after ``j`` (one space apart) spell a unit of the sign, longest first."""
    for n in range(min(MAX_UNIT_WORDS, len(tokens) - j - 1), 0, -1):
        first, last = tokens[j + 1], tokens[j + n]
        if sentence[tokens[j].end(): first.start()].strip():
            return 0
        if canonical_unit(kind, sentence[first.start(): last.end()].rstrip(".")):
            return n
    return 0


def vital_values_in(sentence: str) -> list[VitalMention]:
    """Every vital-sign reading the sentence tells, in order (see the module docstring)."""
    tokens = list(_TOKEN.finditer(sentence))
    out: list[VitalMention] = []
    i = 0
    while i < len(tokens):
        n, kind = _sign_at(tokens, i, sentence)
        if n == 0 or (i > 0 and bare(tokens[i - 1].group(0)) in NOT_A_RESULT_BEFORE):
            i += max(n, 1)
            continue
        j = value_at(tokens, i + n, sentence)
        if j is None:
            i += n
            continue
        raw = tokens[j].group(0).rstrip(".")
        m = (_BP if kind == "blood_pressure" else _NUMBER).match(raw)
        glued = m.group(2) if m else ""
        if not m or (glued and not canonical_unit(kind, glued)):
            i += n
            continue
        nxt = tokens[j + 1] if j + 1 < len(tokens) else None
        if nxt is not None and not sentence[tokens[j].end(): nxt.start()].strip(" ") \
                and (bare(nxt.group(0)) in RANGE_AFTER | {"from"}):
            i = j + 1
            continue  # "pulse 60 to 100": a range, not a reading
        end, unit = tokens[j].start() + len(raw), glued
        if not glued and (k := _unit_after(kind, tokens, j, sentence)):
            end = tokens[j + k].start() + len(tokens[j + k].group(0).rstrip("."))
            unit = sentence[tokens[j + 1].start(): end]
        reading = read_vital(kind, f"{m.group(1)} {unit}".strip())
        start = tokens[i].start()
        label = sentence[start: tokens[i + n - 1].end()].rstrip(":=")
        if label in WITH_UNIT_ONLY and not unit:
            reading = None
        if reading is not None:
            out.append(VitalMention(Span(sentence[start:end], start, end), label, reading))
        i = j + 1
    return out
