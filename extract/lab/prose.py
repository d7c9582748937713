"""Lab results stated in running text of a lab report, not in a results table.

A discharge summary uploaded as a lab report says "fasting blood lipids, which showed
cholesterol of 165, triglycerides 180, HDL cholesterol 22, LDL cholesterol 107". Such
a sentence carries results, but no reference range, no collection date it vouches for
and often no unit, and prose can state a target ("goal LDL less than 70"), a dose
("docusate sodium 100 mg") or a past value as easily as a result. So a mention found
here is only ever a visible, cited review item (``extract.lab.extractor`` marks it so); it never
reaches the chart without a person.

The rule, for any text: a test name the analyte vocabulary knows (longest phrase
first, across line breaks), then at most two linking words ("of", "is", "was",
"currently is", ":"), then a plain number, then optionally the unit. It is not a
result when a target word stands before the name ("goal", "target", "below"), when
the number starts a range ("100 to 129") or carries a comparator, when the word after
the number is a unit the analyte is never measured in (a dose: "sodium 100 mg"), or
when the name follows a number directly (a unit: "20 mg"). The same analyte with the
same value and unit is reported once per document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.content import PageContent, Word
from domain.policy.facts.analytes import analyte, canonical_analyte, known_name, normalize_unit, with_specimen
from extract.values import numbers as V
from extract.layout import OCR_TRUSTED_CONF, Row
from extract.values.prose_labs import WHEN, specimen_said_before

# Words that may stand between a test name and its value in a sentence.
_LINK_WORDS = frozenset({"of", "is", "was", "were", "at", "currently", "now", "level", "levels", "value",
                         "result", "measured", "=", ":", "today"})
_MAX_LINKS = 2
_MAX_NAME_WORDS = 5
# A word before the name that makes the number a target or a threshold, not a result.
_NOT_A_RESULT_BEFORE = frozenset({"goal", "target", "targets", "desired", "ideal", "optimal", "keep", "maintain",
                                  "below", "above", "under", "over", "than", "if", "threshold", "<", ">"})
# After the number: a range or a threshold, not a result.
_RANGE_AFTER = frozenset({"to", "-", "\u2013", "or", "and/or"})
_NUMBER = re.compile(rf"(?:{V.NUMBER})")
_SENTENCE_END = ",.;)"
# Letters OCR reads where a digit of a test name was printed ("HbAIc" for "HbA1c").
_OCR_DIGIT_LOOKALIKES = str.maketrans({"I": "1", "l": "1", "|": "1", "O": "0"})


@dataclass(slots=True)
class ProseResult:
    """One lab result stated in running text."""

    page: PageContent
    words: list[Word]  # cited: the name through the value (and unit)
    test_name: str
    value: str
    unit: str
    analyte: str | None
    when: str | None = None  # when the text says it was measured, as printed ("on 21/11/2026")


def _bare(text: str) -> str:
    return text.strip().strip("\"'()[]").rstrip(_SENTENCE_END + ":").lower()


def _number(text: str) -> tuple[str, bool] | None:
    """(the number, whether punctuation ended the clause after it) for a word that is
    a plain number, perhaps followed by sentence punctuation ("107.", "22,")."""
    t = text.strip()
    stripped = t.rstrip(_SENTENCE_END)
    if stripped and _NUMBER.fullmatch(stripped) and stripped[-1].isdigit():
        return stripped, stripped != t
    return None


_GLUED_UNIT = re.compile(rf"^(?P<n>{V.NUMBER})(?P<unit>%|[a-zA-Z\u00b5/][\w/\u00b5.^]*)$")


def _number_unit(text: str) -> tuple[str, bool, str] | None:
    """A number, or a number with its unit glued on ("7.9%", "8.4mmol/L"):
    (number, clause ended, glued unit or "")."""
    read = _number(text)
    if read is not None:
        return read[0], read[1], ""
    t = text.strip()
    stripped = t.rstrip(_SENTENCE_END)
    m = _GLUED_UNIT.match(stripped)
    if m and V.looks_like_unit(m["unit"]):
        return m["n"], stripped != t, m["unit"]
    return None


def _name_at(words: list[Word], i: int) -> int:
    """How many words starting at ``i`` make a known test name (longest first), or 0."""
    for n in range(min(_MAX_NAME_WORDS, len(words) - i), 0, -1):
        span = words[i:i + n]
        if any(w.text.rstrip()[-1:] in _SENTENCE_END + ":" for w in span[:-1]):
            continue  # a name does not run across a comma or a full stop
        last = span[-1].text.rstrip()
        if last[-1:] in _SENTENCE_END and last[-1:] != ":":
            continue  # "... HDL cholesterol, LDL": the value does not follow the name
        printed = " ".join(w.text for w in span).rstrip(":=")
        letters = [c for c in printed if c.isalpha()]
        if len(letters) <= 3 and not any(c.isupper() for c in letters):
            continue  # "pt", "na", "ca" in lower case are words, not test names
        if known_name(printed):
            return n
        if any(w.conf is not None and w.conf < OCR_TRUSTED_CONF for w in span) and known_name(
                printed.translate(_OCR_DIGIT_LOOKALIKES)):
            return n  # "HbAIc" read doubtfully by OCR: HbA1c (a review item in any case, kept as read)
    return 0


def _mention(words: list[Word], i: int, n: int) -> tuple[int, str, str] | None:
    """(index past the cited words, value, unit) when the name at ``i`` (``n`` words)
    is followed by a result, else None."""
    j = i + n
    links = 0
    while j < len(words) and links < _MAX_LINKS and _bare(words[j].text) in _LINK_WORDS:
        if words[j].text.rstrip()[-1:] in ",.;":
            return None
        j += 1
        links += 1
    if j >= len(words):
        return None
    read = _number_unit(words[j].text)
    if read is None:
        return None
    value, clause_ended, unit = read
    end = j + 1
    if not clause_ended and not unit and end < len(words):
        after = words[end].text.strip()
        if _bare(after) in _RANGE_AFTER or after[:1] in "-\u2013/":
            return None  # "100 to 129", "4-5/5"
        candidate = after.rstrip(_SENTENCE_END)
        if V.looks_like_unit(candidate):
            unit = candidate
            end += 1
    return end, value, unit


def _unit_fits(analyte_id: str | None, unit: str) -> bool:
    """A unit printed after the value is one the analyte is measured in; an unknown
    analyte or no unit says nothing against it."""
    if not unit or analyte_id is None:
        return True
    entry = analyte(analyte_id)
    units = {normalize_unit(u) for u in entry.units} if entry else set()
    return normalize_unit(unit) in units


def prose_results(rows: list[tuple[Row, list[Word]]]) -> list[ProseResult]:
    """Results stated in running text on ``rows`` (rows outside tables that no row rule
    read, with their words), in reading order; consecutive rows of a page are read as
    one text so a name at the end of a line finds its value on the next."""
    found: list[ProseResult] = []
    seen: set[tuple[str, str, str]] = set()
    for page, words in _runs(rows):
        i = 0
        while i < len(words):
            n = _name_at(words, i)
            if n == 0:
                i += 1
                continue
            before = _bare(words[i - 1].text) if i > 0 else ""
            previous = _number(words[i - 1].text) if i > 0 else None
            after_number = previous is not None and not previous[1]  # "20 mg", not "165, triglycerides"
            mention = None if before in _NOT_A_RESULT_BEFORE or after_number else _mention(words, i, n)
            if mention is None:
                i += n
                continue
            end, value, unit = mention
            name = " ".join(w.text for w in words[i:i + n]).rstrip(":=").strip()
            analyte_id = canonical_analyte(name, unit=unit or None)
            if not _unit_fits(analyte_id, unit):
                i = end  # a dose or another measure ("docusate sodium 100 mg")
                continue
            specimen = _other_specimen(words, i)
            if specimen:  # "urinalysis ... red blood cells 34": not the blood count
                name, analyte_id = with_specimen(name, specimen), None
            key = (analyte_id or name.lower(), value, normalize_unit(unit))
            if key not in seen:
                seen.add(key)
                found.append(ProseResult(page, words[i:end], name, value, unit, analyte_id, _when_after(words, end)))
            # "HbA1c 7.9% on 03/02 and 8.4% on 06/01": more values of the same test.
            while (more := _another_value(words, end, unit)) is not None:
                end, value2, unit2 = more
                key = (analyte_id or name.lower(), value2, normalize_unit(unit2))
                if key not in seen:
                    seen.add(key)
                    found.append(ProseResult(page, words[i:end], name, value2, unit2, analyte_id,
                                             _when_after(words, end)))
            i = end
    return found


def _when_after(words: list[Word], end: int) -> str | None:
    """When the words right after a value say it was measured ("Previous potassium 5.4
    mmol/L on 21/11/2026."), as printed; the words of the sentence-reading rule
    (``prose_labs.WHEN``), up to the clause's end."""
    clause: list[str] = []
    for w in words[end:end + 6]:
        if w.text.lower() in ("and", "then", "but"):
            break
        clause.append(w.text)
        if w.text[-1:] in ",;":
            break
    m = WHEN.match(" ".join(clause).rstrip(",;."))
    return m.group(0) if m else None


# Between two values of one test: when the first was measured, then "and", "then", ",".
_WHEN_WORDS = frozenset({"on", "in", "at", "from", "dated", "of"})
_JOIN_WORDS = frozenset({"and", "then", "and then", "vs", "versus", "previously", "earlier", "later", "now",
                         "compared", "with"})
_DATE_TOKEN = re.compile(r"^\(?\d{1,4}[/.-]\d{1,2}(?:[/.-]\d{2,4})?\)?[,;]?$")
_MAX_BETWEEN = 6


def _another_value(words: list[Word], j: int, unit: str) -> tuple[int, str, str] | None:
    """(index past it, value, unit) of a further value of the same test after ``j``:
    only dates, "on/in" and joining words ("and", "then", ",") in between, at least
    one joining word, and the same unit (or none where the first had none)."""
    before = words[j - 1].text.rstrip()
    if before[-1:] in ".;" and not _DATE_TOKEN.match(before.strip()):
        return None  # the sentence ended with the first value
    joined = before.endswith(",")
    k = j
    while k < len(words) and k - j < _MAX_BETWEEN:
        t = words[k].text.strip()
        bare = _bare(t)
        if _DATE_TOKEN.match(t) or bare in _WHEN_WORDS:
            k += 1
            continue
        if bare in _JOIN_WORDS or t in (",", ";"):
            joined = True
            k += 1
            continue
        break
    if not joined or k >= len(words):
        return None
    read = _number_unit(words[k].text)
    if read is None:
        return None
    value, clause_ended, unit2 = read
    end = k + 1
    if not clause_ended and not unit2 and end < len(words):
        candidate = words[end].text.strip().rstrip(_SENTENCE_END)
        if V.looks_like_unit(candidate):
            unit2, end = candidate, end + 1
    if normalize_unit(unit2) != normalize_unit(unit):
        return None  # another measure, not another value of this test
    return end, value, unit2


def _other_specimen(words: list[Word], i: int) -> str | None:
    """The specimen other than blood that the sentence holding ``words[i]`` says its
    result is of, as a letter's sentence is read (``prose_labs.specimen_said_before``:
    "urinalysis showed ...", "CSF protein ...", not "sputum was sent and her CRP ...")."""
    k = i
    while k > 0 and not words[k - 1].text.rstrip().endswith((".", ";")):
        k -= 1
    return specimen_said_before(" ".join(w.text for w in words[k:i]))


def _runs(rows: list[tuple[Row, list[Word]]]) -> list[tuple[PageContent, list[Word]]]:
    """Consecutive rows of one page joined into one run of words."""
    runs: list[tuple[PageContent, list[Word]]] = []
    last: Row | None = None
    for row, words in rows:
        if last is not None and row.page is last.page and row.index == last.index + 1:
            runs[-1][1].extend(words)
        else:
            runs.append((row.page, list(words)))
        last = row
    return runs
