"""Which rows of a lab report are results, and how each is read (the row rules of
``extract.lab.extractor``).

A dotted line is a result anywhere; inside a results table a row is read by its
columns; outside one, a dotted line whose leader OCR read as junk, or a whole line
"WBC 11.8 x10E3/uL (3.4-10.8) H", is one too, and a line of a known test whose value
cannot be read is kept, unread, for review. Comments, notes, label rows, page numbers
and header/footer rows repeated on every page are not results. How a cell's words read
as a value, unit, range and flag is ``extract.lab.table``'s.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from domain.content import Word
from domain.policy.facts.analytes import known_name, listed_unit
from domain.policy.facts.lab_vocabulary import BLOOD_GROUP_DOUBT, blood_group_result
from domain.policy.facts.ocr_readings import ocr_name_reading
from extract.values import text_rules as tr
from extract.values import numbers as V
from extract.lab.table import (
    EMPHASIS, VALUE_ROLES, Cells, Column, Reading, TableLayout, assign_columns, is_flag, is_label_word, read_result,
    split_dotted, split_ocr_leader, value_starts,
)
from extract.layout import OCR_TRUSTED_CONF, Row, ocr_char_width, segments
from extract.values.flags import FlagKey
from extract.values.ranges import parse_reference_range, repair_ocr_range
from extract.values.result_parts import NAME_LABELS, PART_LABEL_FIRSTS, PART_LABELS, PART_MEANINGS, RESULT_LABELS

_NOTE_WORDS = frozenset({"comment", "comments", "note", "notes", "interpretation", "interpretive",
                         "footnote", "disclaimer", "please", "reviewed", "performed", "methodology"})
_PAGE_NUMBER = re.compile(r"^page\s*\d+\s*((of|/)\s*\d+)?$", re.I)
_EDGE_BAND = 0.15
_NOT_MEASURED = re.compile(r"^[-\u2013\u2014_.]+$")  # a dash in a value cell: no result on that date  # share of page height treated as header/footer band for repeats


@dataclass(slots=True)
class RowResult:
    """One row read as a lab result, with what the facts need to judge it."""

    row: Row
    words: list[Word]  # the row's words cited as the quote
    test_name: str
    reading: Reading
    flag_text: str | None  # printed flag (column, inline or in a dotted line)
    position_flag: str | None  # "normal"/"abnormal" from an In/Out of Range column
    unit_clean: bool
    range_clean: bool
    alignment: float
    unreadable: bool = False
    status: str | None = None  # printed result status ("Final", "Corrected")
    leader: list[Word] = field(default_factory=list)  # OCR junk read in a dot leader
    doubts: list[str] = field(default_factory=list)  # why a person must check the reading
    range_expected: bool = False  # the table has a reference range column
    critical_text: str = ""  # printed critical (panic) limits, from their own column
    column_date: str | None = None  # a cumulative report's date of this result's column, as printed

    @property
    def ocr(self) -> bool:
        return any(w.conf is not None for w in self.words)


# --------------------------------------------------------------------------- row rules


def without_page_number(words: list[Word]) -> list[Word]:
    """Drop a "Page 2 of 3" segment (footers often share a row with other text)."""
    out: list[Word] = []
    for seg in segments(words):
        if not _PAGE_NUMBER.match(" ".join(w.text for w in seg)):
            out.extend(seg)
    return out


def is_comment(words: list[Word]) -> bool:
    """A comment or footnote line ("Comment: ...", "* Performed at ..."): it restates or
    qualifies the results above, it does not report new ones."""
    first = words[0].text.lower().strip("*:#-")
    return first in _NOTE_WORDS or not any(c.isalnum() for c in words[0].text)


def is_note(words: list[Word]) -> bool:
    """Comment/note lines and label rows ("Comment: ...", "Interpretive note: ...")."""
    first = words[0].text.lower().strip("*:#-")
    if first in _NOTE_WORDS or not any(c.isalnum() for c in words[0].text):
        return True
    return any(is_label_word(w.text) for w in words[:3])


def repeated_edge_rows(rows_by_page: list[list[Row]]) -> set[int]:
    """Rows in the header/footer bands whose text (digits aside) repeats on another page."""
    if len(rows_by_page) < 2:
        return set()
    seen: dict[str, list[tuple[int, Row]]] = {}
    for p, rows in enumerate(rows_by_page):
        for row in rows:
            h = row.page.height
            if _EDGE_BAND * h < row.y0 and row.y1 < (1 - _EDGE_BAND) * h:
                continue
            key = re.sub(r"\d+", "#", " ".join(row.text.lower().split()))
            seen.setdefault(key, []).append((p, row))
    return {id(row) for hits in seen.values() if len({p for p, _ in hits}) > 1 for _, row in hits}


def dotted_result(row: Row, words: list[Word], key: FlagKey | None = None) -> RowResult | None:
    split = split_dotted(words)
    if split is None:
        return None
    name_words, name, rest = split
    ocr = any(w.conf is not None for w in words)
    reading = read_result(rest, allow_garbled=ocr, key=key)
    if reading is None:
        return None
    if not (reading.unit or reading.reference_range or reading.flag or reading.inline_flag):
        return None  # "Patient....... Jane Doe" or a leader to a page number
    if reading.garbled:
        return RowResult(
            row=row, words=words, test_name=name, reading=reading, flag_text=None, position_flag=None,
            unit_clean=False, range_clean=bool(reading.reference_range), alignment=0.5, unreadable=True,
            leader=words[len(name_words) : len(words) - len(rest)],
        )
    return RowResult(
        row=row, words=words, test_name=name, reading=reading,
        flag_text=reading.flag or reading.inline_flag, position_flag=None,
        unit_clean=bool(reading.unit), range_clean=bool(reading.reference_range),
        alignment=1.0 if reading.leftovers == 0 else 0.5,
        leader=words[len(name_words) : len(words) - len(rest)],  # an OCR'd leader word cut from the name
    )


def unreadable_dotted(row: Row, words: list[Word]) -> RowResult | None:
    """A dotted line of a known test whose value no rule could read: kept for review."""
    split = split_dotted(words)
    return _unreadable_line(row, words, split[1], split[2]) if split else None


def ocr_leader_result(row: Row, words: list[Word], key: FlagKey | None = None) -> RowResult | None:
    """A dotted line whose leader OCR read as junk words (see ``split_ocr_leader``)."""
    split = split_ocr_leader(words, known_name=known_name)
    if split is None:
        return None
    reading = read_result(split.rest, allow_garbled=True, key=key)
    if reading is None or not (reading.unit or reading.reference_range or reading.flag or reading.inline_flag):
        return None
    return RowResult(
        row=row, words=words, test_name=split.name, reading=reading,
        flag_text=reading.flag or reading.inline_flag, position_flag=None,
        unit_clean=bool(reading.unit), range_clean=bool(reading.reference_range),
        alignment=1.0 if reading.leftovers == 0 else 0.5, unreadable=reading.garbled,
        leader=split.leader, doubts=[split.doubt] if split.doubt else [],
    )


# A line result outside a table: at most this many words of test name before the value.
_LINE_NAME_WORDS = 6


def line_result(row: Row, words: list[Word], key: FlagKey | None = None) -> RowResult | None:
    """"WBC 11.8 x10E3/uL (3.4-10.8) H" outside a table, without a leader (OCR at low
    resolution loses the dots; some reports print none).

    The line must read whole: a short test name, then the value with its reference
    range (and unit, flag) and nothing left over, so running text ("LDL 107 and HDL
    22 mg/dL") is never taken for one; a test name the analyte vocabulary does not
    know sends the result to review. A line whose value cannot be read is kept for
    review when its test name is known and a unit or range follows (``_unreadable_line``).
    """
    if not words[0].text[:1].isalpha():
        return None
    ocr = any(w.conf is not None for w in words)
    k = next((k for k in range(1, min(len(words), _LINE_NAME_WORDS + 1)) if value_starts(words[k:])), None)
    if k is None:
        for j in range(1, min(len(words), _LINE_NAME_WORDS + 1)):
            if any(c.isdigit() for c in words[j].text):
                return _unreadable_line(row, words, _name_of(words[:j]), words[j:])
        return None
    name = _name_of(words[:k])
    if sum(c.isalpha() for c in name) < 2:
        return None
    reading = read_result(words[k:], allow_garbled=ocr, key=key)
    if ocr and reading is not None and reading.leftovers and known_name(name_and_unit(name)[0]) \
            and _only_marks_left(reading, words[k:]):
        return _line_read_in_part(row, words, name, reading, words[k:])
    if reading is None or not reading.reference_range or reading.leftovers:
        return None
    if not reading.unit and not reading.range_unit and (split := name_and_unit(name))[1]:
        name, reading.unit = split  # "SODIUM (mmol/L)  131 L  136-145": the unit printed with the name
    return _line_row_result(row, words, name, reading, ocr)


def _only_marks_left(reading: Reading, rest: list[Word]) -> bool:
    """Whether the line after the name holds nothing but the value, its printed flag or
    unit, and numbers (a range OCR broke up): never words ("HDL 22 mg/dL and falling")."""
    said = {reading.flag, reading.inline_flag, reading.unit}
    return bool(reading.flag or reading.inline_flag) and all(
        w.text in said or not any(c.isalpha() for c in w.text) for w in rest)


def _line_read_in_part(row: Row, words: list[Word], name: str, reading: Reading, rest: list[Word]) -> RowResult:
    """An OCR'd line naming a known test whose value (and flag) read but not the rest
    ("POTASSIUM (mmol/L) 6.8 *CRIT* 3 5-5.1", a decimal point lost): the value and its
    printed flag are kept, for a person, with no range (what was read of it may be
    wrong). Left unread, a critical flag had been reported as an unread line and no more."""
    if not reading.unit and (split := name_and_unit(name))[1]:
        name, reading.unit = split
    printed = " ".join(w.text for w in rest)
    reading.reference_range, reading.range_unit = "", ""
    return RowResult(
        row=row, words=words, test_name=name, reading=reading, flag_text=reading.flag or reading.inline_flag,
        position_flag=None, unit_clean=bool(reading.unit), range_clean=False, alignment=0.7, unreadable=reading.garbled,
        doubts=[f"OCR did not read the line whole ({printed!r}): check the range and the flag on the page"])


def _line_row_result(row: Row, words: list[Word], name: str, reading: Reading, ocr: bool) -> RowResult:
    """A result read from a line outside a table: a test name the vocabulary does not know
    sends it to review (a garbled one it can read is taken with its own reason, extractor)."""
    doubts = [] if known_name(name) or (ocr and ocr_name_reading(name)) else [
        f"read from a line outside a results table, and {name!r} is not a test name the vocabulary knows"]
    return RowResult(
        row=row, words=words, test_name=name, reading=reading,
        flag_text=reading.flag or reading.inline_flag, position_flag=None,
        unit_clean=bool(reading.unit), range_clean=True, alignment=1.0, unreadable=reading.garbled,
        doubts=doubts,
    )


# Labels a report prints before the parts of a result written out rather than in
# columns ("Result: 6.2 mmol/L   Reference: 3.5 - 5.3 mmol/L   Flag: H"). A label counts
# with its colon (glued, read apart by OCR, "range :", or misread as ";" or "."); on a row
# that prints a result label or two labels with their colons, also without it (OCR drops
# colons). The labels are data: extract.values.result_parts.


def _colon_ended(word: Word) -> bool:
    """A label's colon, or what OCR made of one (";", ".")."""
    return word.text.endswith(":") or (word.conf is not None and word.text[-1:] in ";.")


def _part_label_at(words: list[Word], i: int, loose: bool = False) -> tuple[int, str]:
    """How many words the result-part label at ``words[i]`` takes (0: none), and its last
    word. ``loose``: the colon may be missing."""
    for n in (2, 1):
        if i + n > len(words):
            continue
        texts = [w.text for w in words[i : i + n]]
        last = texts[-1].lower().rstrip(":;.")
        if n == 2 and (texts[0].lower() not in PART_LABEL_FIRSTS or _colon_ended(words[i])):
            continue
        if last not in PART_LABELS:
            continue
        if _colon_ended(words[i + n - 1]):
            return n, last
        if i + n < len(words) and words[i + n].text == ":":
            return n + 1, last
        if loose:
            return n, last
    return 0, ""


def _part_labels(words: list[Word], loose: bool) -> list[tuple[int, int, str]]:
    """(start, length, last word) of each result-part label on the row, left to right."""
    found, i = [], 0
    while i < len(words):
        n, last = _part_label_at(words, i, loose)
        if n:
            found.append((i, n, last))
            i += n
        else:
            i += 1
    return found


def _row_labels(words: list[Word]) -> list[tuple[int, int, str]]:
    """The row's part labels: with their colons, or without on a row that prints a result
    label or two labels with theirs."""
    strict = _part_labels(words, loose=False)
    if len(strict) >= 2 or any(last in RESULT_LABELS for _, _, last in strict):
        return _part_labels(words, loose=True)
    return strict


def has_result_label(words: list[Word]) -> bool:
    """A row that prints "Result:" ("Value:", "Your result:") somewhere: a result written
    out with its labelled parts, whatever other labels ("Reference:") it shares with the
    report's fields."""
    return any(last in RESULT_LABELS for _, _, last in _row_labels(words))


def starts_with_result_label(words: list[Word]) -> bool:
    """A row that opens with "Result:" ("Value:", "Your result:"): the result of the test
    named on the row above it."""
    n, last = _part_label_at(words, 0) if words else (0, "")
    return bool(n) and last in RESULT_LABELS


def is_name_alone(words: list[Word]) -> bool:
    """A row that could be a test's name and nothing else ("MAGNESIUM", "Cortisol (9am)",
    "Vitamin B12"): a few words, the first a word, no value after it."""
    return (0 < len(words) <= _LINE_NAME_WORDS and words[0].text[:1].isalpha()
            and not any(value_starts(words[k:]) for k in range(1, len(words))))


def _ocr_debris(words: list[Word]) -> bool:
    """A row of specks OCR read on its own ("*e **"): a few short words, each read with
    low confidence, none with a digit."""
    return (0 < len(words) <= 3 and all(w.conf is not None and w.conf < OCR_TRUSTED_CONF and len(w.text) <= 3
                                        and not any(c.isdigit() for c in w.text) for w in words))


def stacked_parts(rows: list[Row], n: int) -> tuple[list[Word], int, list[Word]]:
    """The labelled parts printed under a test's name on ``rows[n]``: the row below it that
    opens with "Result:", and each row after that opening with another part label
    ("Normal range: 0.4 - 4.0 mU/L", "Flag: H"). Their words in order, how many rows, and
    the words of a row of OCR specks between the name and its parts (cited, never read)."""
    at = n + 1
    debris: list[Word] = []
    if at + 1 < len(rows) and _ocr_debris(rows[at].words):
        debris, at = list(rows[at].words), at + 1  # stars OCR set on a row of their own ("** **")
    first = without_page_number(rows[at].words) if at < len(rows) else []
    if not first or not starts_with_result_label(first):
        return [], 0, []
    words, used = list(first), at - n
    for row in rows[at + 1:]:
        more = without_page_number(row.words)
        if not more or not _part_label_at(more, 0)[0] or starts_with_result_label(more):
            break
        words += more
        used += 1
    return words, used, debris


def labelled_result(row: Row, words: list[Word], key: FlagKey | None = None,
                    name_words: list[Word] | None = None, between: list[Word] | None = None) -> RowResult | None:
    """A result whose parts are labelled: "Folate  Value: 2.1  Units: ug/L  Normal range:
    3.9-26.8  Flag: L" on one line, or the test's name alone on the line above
    (``name_words``, the rows before ``words``) and "Result: 6.2 mmol/L  Reference: 3.5 -
    5.3 mmol/L  ** HIGH **" under it. Each part is read as what its label says: the value
    (with its unit) after "Result:", the range (a qualitative one too: "Negative") after
    "Reference:", the unit after "Units:", the flag after "Flag:" or after the range. A
    value and a range are required, and the value's part must read whole; a word after
    the range that is no flag is counted unread (the fact goes to review), never
    dropped. The quote is every word of the rows, labels included (and ``between``, specks
    OCR read on a row of their own between the name and its parts)."""
    labels = _row_labels(words)
    cited = [*(name_words or []), *(between or []), *words]
    if not any(PART_MEANINGS[last] == "result" for _, _, last in labels):
        return None
    parts: dict[str, list[Word]] = {}
    for k, (i, n, last) in enumerate(labels):
        end = labels[k + 1][0] if k + 1 < len(labels) else len(words)
        parts.setdefault(PART_MEANINGS[last], words[i + n : end])
    name = _name_of(_without_name_label([*(name_words or []), *words[: labels[0][0]]]))
    if sum(c.isalpha() for c in name) < 2:
        return None
    ocr = any(w.conf is not None for w in words)
    value_part = parts.get("result", [])
    reading = read_result(value_part, allow_garbled=ocr, key=key)
    reference = _reference_part(parts.get("reference", []), key)
    if reading is None and reference is not None and known_name(name) \
            and any(c.isdigit() for w in value_part for c in w.text):
        # A known test whose labelled value cannot be read ("Result: { .71 mmol/L"): kept
        # for review with what was printed, never guessed, never lost.
        reading = Reading(value=" ".join(w.text for w in value_part), value_words=value_part)
        reading.reference_range, reading.range_unit = reference[0], reference[1]
        return RowResult(row=row, words=cited, test_name=name, reading=reading,
                         flag_text=None, position_flag=None, unit_clean=False, range_clean=True, alignment=1.0,
                         unreadable=True)
    if reading is None or reading.leftovers or reference is None:
        return None
    reading.reference_range, reading.range_unit, flag, reading.leftovers = reference
    unit = " ".join(w.text for w in parts.get("units", []))
    if unit and not reading.unit and V.looks_like_unit(unit):
        reading.unit = unit
    elif unit and unit != reading.unit:
        reading.leftovers += len(parts["units"])
    flag_words = _unemphasised(parts.get("flag", []))
    if flag_words:
        flag_text = " ".join(w.text for w in flag_words)
        if is_flag(flag_text, key):
            flag = flag or flag_text
        else:
            reading.leftovers += len(flag_words)
    if flag and reading.flag is None and reading.inline_flag is None:
        reading.flag = flag
    return _line_row_result(row, cited, name, reading, ocr)


def _without_name_label(words: list[Word]) -> list[Word]:
    """The test's name without the label printed before it ("Test: Sodium" -> "Sodium")."""
    for n in (2, 1):
        if len(words) > n and words[n - 1].text.endswith(":") and \
                " ".join(w.text for w in words[:n]).lower().rstrip(":") in NAME_LABELS:
            return words[n:]
    return words


def _unemphasised(words: list[Word]) -> list[Word]:
    """The words without the stars printed round a flag for emphasis ("** HIGH **", or
    glued to it by OCR: "H**"); a star alone is the flag itself ("Flag: *")."""
    kept = []
    for w in words:
        if EMPHASIS.match(w.text):
            continue
        bare = w.text.strip("*")
        kept.append(w if bare == w.text or not bare else dataclasses.replace(w, text=bare))
    return kept or words


def _reference_part(words: list[Word], key: FlagKey | None) -> tuple[str, str, str | None, int] | None:
    """The words after a range label: the range (the longest run of them that reads as
    one, with its unit), then a flag the report printed after it ("** H **", "Crit H").
    (range, range unit, flag or None, words left unread); None without a range."""
    texts = [w.text for w in words]
    for n in range(len(texts), 0, -1):
        parsed = parse_reference_range(" ".join(texts[:n]))
        if parsed is None:
            continue
        rest = words[n:]
        unit = parsed[1]
        if rest and not unit and V.looks_like_unit(rest[0].text):
            unit, rest = rest[0].text, rest[1:]
        rest = _unemphasised(rest)
        if not rest:
            return parsed[0], unit, None, 0
        flag = " ".join(w.text for w in rest)
        return (parsed[0], unit, flag, 0) if is_flag(flag, key) else (parsed[0], unit, None, len(rest))
    return None


def _name_of(words: list[Word]) -> str:
    """A test name from its words, without a trailing colon or leader debris."""
    return re.sub(r"[\s.:;,_\-]+$", "", " ".join(w.text for w in words))


def _unreadable_line(row: Row, words: list[Word], name: str, rest: list[Word]) -> RowResult | None:
    """A line that names a known test and prints a unit or range after it, but whose
    value cannot be read ("Hemoglobin 131° g/dL (111-15. 9)"): kept for review, never
    guessed. An unknown name, or nothing result-like after it, is not a result."""
    if not rest or not known_name(name) or not any(c.isdigit() for w in rest for c in w.text):
        return None
    texts = [w.text for w in rest]
    unit_or_range = any(V.looks_like_unit(tr.repair_ocr_unit(t)) for t in texts[1:]) or any(
        parse_reference_range(t) for t in texts[1:]) or any(
        parse_reference_range(" ".join(texts[i:i + 2])) for i in range(1, len(texts) - 1))
    if not unit_or_range:
        return None
    reading = Reading(value=texts[0], value_words=rest[:1])
    return RowResult(row=row, words=words, test_name=name, reading=reading, flag_text=None, position_flag=None,
                   unit_clean=False, range_clean=False, alignment=0.5, unreadable=True)


def table_results(row: Row, words: list[Word], layout: TableLayout, key: FlagKey | None = None) -> list[RowResult]:
    """The results one table row prints: one, or in a cumulative table one per dated
    value column that holds a value (each with its column's date).

    The words are those of this table's panel only. Each result cites the test name
    and the words up to the end of its own cell, so its quote is a run of the page's
    words (a verifiable citation) and its box is its own."""
    cells = assign_columns(words, layout)
    test = _test_text(cells, words)
    if sum(c.isalpha() for c in test) < 2 or test.endswith(":"):
        return []
    if not layout.cumulative:
        role, value_words = _value_cell(cells)
        found = _cell_result(row, words, cells, layout, role, value_words, None, key)
        share = _percent_result(row, words, cells, test) if found and layout.has("percent") else None
        return [r for r in (found, share) if r]
    out: list[RowResult] = []
    order = {id(w): i for i, w in enumerate(words)}
    for i, col in enumerate(layout.columns):
        value_words = cells.by_column[i]
        if col.role not in VALUE_ROLES or not value_words:
            continue
        last = max(order[id(w)] for w in value_words)
        first = min(order[id(w)] for w in cells.words("test"))
        # Quote the test name and this cell: the name's words through the cell's last word.
        cited = words[first : last + 1]
        found = _cell_result(row, cited, cells, layout, col.role, value_words, col, key)
        if found:
            out.append(found)
    if out and layout.has("percent") and (share := _percent_result(row, words, cells, test)) is not None:
        out.append(share)  # "% | Previous 01/10/2026": the share is today's, beside its count
    return out


# A speck OCR read as a word of its own after the name ("Sodium :", "BUN ."): a typed
# label ends in a colon glued to its word ("Comment:"), a scan's debris stands apart.
_OCR_NAME_DEBRIS = re.compile(r"(?:\s+[.:;,'`_\-]+)+$")


# A unit printed in brackets after the test's name ("Sodium (mmol/L)", under "Analyte (units)").
_NAME_UNIT = re.compile(r"^(?P<name>.*\S)\s*\((?P<unit>[^()]+)\)$")


def name_and_unit(test: str) -> tuple[str, str]:
    """("Sodium", "mmol/L") for "Sodium (mmol/L)", and for "Sodium mmol/L" (a cumulative
    table's row label) when what is left is a test the vocabulary knows; the name as it
    is, and no unit, when the bracket holds anything but a unit ("HbA1c (IFCC)",
    "Cortisol (9am)"). A bare "%" stays with the name: "Neutrophils %" names the
    percentage, a test of its own."""
    m = _NAME_UNIT.match(test)
    if m and V.looks_like_unit(m["unit"].strip()):
        return m["name"], m["unit"].strip()
    name, _, last = test.rpartition(" ")
    if name and any(ch.isalpha() for ch in last) and V.looks_like_unit(last) and known_name(name):
        return name, last
    return test, ""


def _test_text(cells: Cells, words: list[Word]) -> str:
    test = cells.text("test").strip()
    return _OCR_NAME_DEBRIS.sub("", test) if any(w.conf is not None for w in words) else test


def table_result(row: Row, words: list[Word], layout: TableLayout, key: FlagKey | None = None) -> RowResult | None:
    """The first result a table row prints (``table_results``)."""
    found = table_results(row, words, layout, key)
    return found[0] if found else None


def _range_from_ends(cells: Cells) -> str:
    """A range printed as its two ends in columns of their own ("Ref Low | Ref High"):
    "12.0-15.5"; one end alone is a bound (">=150", "<=40"); "" when neither is printed."""
    low, high = cells.text("range_low").strip(), cells.text("range_high").strip()
    if low and high:
        return f"{low}-{high}"
    if low:
        return f">={low}"
    return f"<={high}" if high else ""


def _cell_result(row: Row, words: list[Word], cells: Cells, layout: TableLayout, role: str, value_words: list[Word],
                 column: Column | None, key: FlagKey | None) -> RowResult | None:
    test = _test_text(cells, words)
    if not value_words or all(_NOT_MEASURED.match(w.text) for w in value_words):
        return None  # a panel heading, or a test without a value ("---": not measured that date)
    if column is None and role:
        column = layout.columns[layout.first[role]]
    date = column.date if column is not None else None
    reading = read_result(value_words, key=key)
    ocr = any(w.conf is not None for w in words)
    # A flag printed in a column without a header of its own lands beside the unit
    # or the range ("H mg/dL"); take it out of the cell it fell into.
    unit_text, stray_flag = _pop_flag(cells.text("units"))
    if ocr and V.looks_like_unit(whole := re.sub(r"\s+(?=/)", "", unit_text)):
        unit_text = whole  # OCR split the unit at its slash ("x10E3 /uL")
    range_text, stray_range_flag = _pop_flag(cells.text("range") or _range_from_ends(cells))
    if not range_text and (glued := _GLUED_BOUND.fullmatch(unit_text)) and V.looks_like_unit(glued["unit"]):
        # A fixed-width report's long unit runs into its range ("mL/min/1.73m2>60"): no
        # unit holds "<" or ">", so the bound is the range.
        unit_text, range_text = glued["unit"], glued["bound"]
    parsed_range = parse_reference_range(range_text) if range_text else None
    range_doubts = []
    if range_text and ocr and (repaired := repair_ocr_range(range_text)):
        parsed_range = parse_reference_range(repaired)
        range_doubts = [f"reference range read by OCR as {range_text!r}, taken as {repaired!r}: "
                        "check the printed range"]
    grouped = reading is None and blood_group_result(test, text := " ".join(w.text for w in value_words))
    if grouped:
        reading = Reading(value=text, value_words=value_words)  # "ABO group | O": a result, never a letter lost
    if reading is None:
        # A row that has a test and a range or unit is clearly a result; its value
        # could not be read, so a reviewer must look rather than lose it.
        if parsed_range or (unit_text and V.looks_like_unit(unit_text)):
            reading = Reading(value=" ".join(w.text for w in value_words), value_words=value_words)
            return RowResult(row=row, words=words, test_name=test, reading=reading, flag_text=None,
                             position_flag=None, unit_clean=False, range_clean=bool(parsed_range),
                             alignment=cells.alignment, unreadable=True, column_date=date, doubts=range_doubts)
        return None
    if parsed_range:
        reading.reference_range, reading.range_unit = parsed_range
    elif range_text:
        reading.reference_range = range_text  # printed but not a range we understand
    if unit_text:
        reading.unit = unit_text
    elif not reading.unit and column is not None and column.unit:
        reading.unit = column.unit  # printed once, in the header row under the column
    elif not reading.unit and not reading.range_unit and (split := name_and_unit(test))[1]:
        test, reading.unit = split  # "Sodium (mmol/L)": the unit printed with the name
    flag_words = cells.words("flag")
    flag_text = (cells.text("flag").strip() or reading.flag or reading.inline_flag
                 or stray_flag or stray_range_flag)
    doubts = range_doubts + (_ocr_flag_doubts(words, flag_words, layout, reading) if ocr else [])
    if grouped:  # letters alone, and a transfusion decision rests on them: a person reads them first
        doubts.append(BLOOD_GROUP_DOUBT)
    unit_read = not unit_text or V.looks_like_unit(unit_text) or listed_unit(test, unit_text)
    if not unit_read and not ocr:
        # "Total | 5.1 | cholesterol (mmol/L)": words of another column under the unit's
        # header; the columns were not read as printed (OCR's own misreads have their reasons).
        doubts.append(f"the unit column holds {unit_text!r}, which is no unit: the columns may not have "
                      "been read as printed")
    position_flag = {"in_range": "normal", "out_range": "abnormal"}.get(role)
    return RowResult(
        row=row, words=words, test_name=test, reading=reading, flag_text=flag_text or None,
        position_flag=position_flag,
        unit_clean=bool(reading.unit or reading.range_unit) and unit_read,
        range_clean=bool(parsed_range) or (not range_text and bool(reading.reference_range)),
        alignment=cells.alignment * (1.0 if reading.leftovers == 0 else 0.7),
        status=cells.text("status").strip() or None,
        range_expected=layout.has("range") or layout.has("range_low") or layout.has("range_high"),
        critical_text=cells.text("critical").strip(), doubts=doubts, column_date=date,
    )


_GLUED_BOUND = re.compile(r"(?P<unit>[^<>\s]+?)(?P<bound>[<>\u2264\u2265]=?\s*\d[\d.,]*)")


# A doubtful OCR flag word whose box is this many times wider than its letters
# printed would be holds more ink than was read ("HH" read as "H").
_FLAG_INK = 1.6


def _ocr_flag_doubts(words: list[Word], flag_words: list[Word], layout: TableLayout, reading: Reading) -> list[str]:
    """Why an OCR'd flag cell must be checked by a person, so that a critical flag OCR
    misread never passes as a plain one: a doubtful flag word whose box holds more ink
    than its letters (a letter lost: "HH" read as "H"), or one read without any print
    size to measure it by."""
    cw = ocr_char_width(words)
    doubts = []
    for w in flag_words:
        if w.conf is None or w.conf >= OCR_TRUSTED_CONF:
            continue
        if cw is None or w.x1 - w.x0 > _FLAG_INK * len(w.text) * cw:
            doubts.append(f"flag {w.text!r} read by OCR with low confidence ({w.conf:.2f}) and its print holds "
                          f"more than it reads: check the printed flag")
    return doubts  # an empty flag cell beside a value outside its range: extractor._lost_flag_doubts


def _pop_flag(cell: str) -> tuple[str, str | None]:
    """Split a trailing or leading flag word off a cell: "H mg/dL" -> ("mg/dL", "H")."""
    tokens = cell.split()
    for i in (0, -1):
        if len(tokens) > 1 and tr.is_flag_word(tokens[i]) and len(tokens[i]) <= 2:
            flag = tokens.pop(i)
            return " ".join(tokens), flag
    return " ".join(tokens), None


def _percent_result(row: Row, words: list[Word], cells: Cells, test: str) -> RowResult | None:
    """The share printed in a "%" column beside a count ("Neutrophils | 11.1 | 81.6 |
    x10^9/L"): a result of its own, "Neutrophils %", cited from the name through its cell.
    The row's unit and range are the count's, so it has none of its own."""
    share = cells.words("percent")
    if not share or not V.is_numeric_result(text := " ".join(w.text for w in share).removesuffix("%").strip()):
        return None
    order = {id(w): i for i, w in enumerate(words)}
    cited = words[min(order[id(w)] for w in cells.words("test")): max(order[id(w)] for w in share) + 1]
    name, _ = name_and_unit(test)
    return RowResult(row=row, words=cited, test_name=f"{name} %", reading=Reading(value=text, value_words=share, unit="%"),
                     flag_text=None, position_flag=None, unit_clean=True, range_clean=True,
                     alignment=cells.alignment)


def _value_cell(cells: Cells) -> tuple[str, list[Word]]:
    for role in VALUE_ROLES:
        words = cells.words(role)
        if words:
            return role, words
    return "", []
