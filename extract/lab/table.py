"""Reading lab result rows: table columns found from header words, and the
"value [unit] [(range)] [flag]" grammar shared by table cells and dotted lines.

A results table is recognised by its column labels, not by a template: any order,
any subset, split "In Range" / "Out of Range" columns. The header words' x
positions then decide which column each word of a following row belongs to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from domain.content import Word
from extract.values import text_rules as tr
from extract.values import numbers as V
from extract.layout import OCR_TRUSTED_CONF, PhraseBook, Row, norm_token, ocr_char_width, segments
from extract.values.ranges import parse_reference_range

# Column roles. "other" columns (lab site, LOINC code, prior result...) still
# matter: they stop their words from spilling into a neighbouring column.
COLUMN_LABELS = PhraseBook({
    **dict.fromkeys(["test", "tests", "test name", "analyte", "name", "component", "components",
                     "description", "test description", "procedure", "examination", "parameter",
                     "assay", "determination", "investigation"], "test"),
    **dict.fromkeys(["result", "results", "value", "values", "your value", "your result",
                     "result value", "observed value", "observation", "finding"], "result"),
    **dict.fromkeys(["in range", "within range", "normal result", "result in range"], "in_range"),
    **dict.fromkeys(["out of range", "outside range", "abnormal result", "result out of range",
                     "flagged result"], "out_range"),
    **dict.fromkeys(["flag", "flags", "abn flag", "abnormal flag", "h/l", "indicator", "alert"], "flag"),
    **dict.fromkeys(["units", "unit", "uom", "unit of measure"], "units"),
    **dict.fromkeys(["reference range", "reference interval", "reference intervals", "ref range",
                     "ref. range", "ref interval", "ref", "reference", "normal range", "range",
                     "standard range", "expected range", "expected", "normal values",
                     "reference values", "biological ref interval", "normal", "target"], "range"),
    **dict.fromkeys(["critical range", "critical ranges", "critical limits", "critical values", "critical value",
                     "panic values", "panic range", "panic limits", "critical"], "critical"),
    **dict.fromkeys(["status", "result status"], "status"),
    **dict.fromkeys(["lab", "performing lab", "site", "code", "loinc", "method", "specimen",
                     "prior result", "previous result", "previous", "prior", "date", "comments"], "other"),
})
VALUE_ROLES = ("result", "out_range", "in_range")


@dataclass(slots=True)
class Column:
    role: str
    x0: float  # header words' extent
    x1: float
    left: float = float("-inf")  # words whose centre lies right of this belong here


@dataclass(slots=True)
class TableLayout:
    columns: list[Column]  # left to right
    page_width: float
    first: dict[str, int] = field(default_factory=dict)  # role -> its first column

    def __post_init__(self) -> None:
        for i, col in enumerate(self.columns):
            self.first.setdefault(col.role, i)

    def has(self, role: str) -> bool:
        return role in self.first


def detect_header(row: Row) -> TableLayout | None:
    """A results-table header row, or ``None``.

    It must name a test column and a value column (result or in/out of range), and
    nearly every word on the row must be a column label, so a sentence that
    happens to say "test result" is not a header.
    """
    columns: list[Column] = []
    matched = 0
    for seg in segments(row.words):
        i = 0
        while i < len(seg):
            hit = COLUMN_LABELS.match_at(seg, i)
            if hit is None:
                i += 1
                continue
            words = seg[hit.start : hit.end]
            columns.append(Column(hit.key, words[0].x0, words[-1].x1))
            matched += hit.end - hit.start
            i = hit.end
    roles = {c.role for c in columns}
    if "test" not in roles or not roles & set(VALUE_ROLES):
        return None
    if matched < 0.8 * len(row.words) or len(columns) < 2:
        return None
    if any(w.text.rstrip().endswith(":") for w in row.words):
        return None  # "Test: Lipid panel" is a label, not a column header
    columns.sort(key=lambda c: c.x0)
    for prev, col in zip(columns, columns[1:]):
        gap = max(col.x0 - prev.x1, 0.0)
        # Left-aligned text starts at its header; right-aligned numbers may start a
        # little before it. Allow a quarter of the gap, at most one text height.
        col.left = col.x0 - min(0.25 * gap, row.height)
    return TableLayout(columns, row.page.width)


@dataclass(slots=True)
class Cells:
    """A row's words split by column, plus how cleanly they fell into columns."""

    layout: TableLayout
    by_column: list[list[Word]]
    alignment: float  # share of words lying wholly inside one column

    def words(self, role: str) -> list[Word]:
        i = self.layout.first.get(role)
        return self.by_column[i] if i is not None else []

    def text(self, role: str) -> str:
        return " ".join(w.text for w in self.words(role))


def assign_columns(words: list[Word], layout: TableLayout) -> Cells:
    """Put each word in the column whose span holds its centre."""
    cols = layout.columns
    by_column: list[list[Word]] = [[] for _ in cols]
    clean = 0
    for w in words:
        centre = (w.x0 + w.x1) / 2
        k = 0
        while k + 1 < len(cols) and centre >= cols[k + 1].left:
            k += 1
        right = cols[k + 1].left if k + 1 < len(cols) else float("inf")
        if w.x0 >= cols[k].left - 0.5 and w.x1 <= right + 0.5:
            clean += 1
        by_column[k].append(w)
    return Cells(layout, by_column, clean / len(words) if words else 0.0)


# --------------------------------------------------------------------------- result grammar


@dataclass(slots=True)
class Reading:
    """What a run of words says about a result, with what it could not place."""

    value: str
    value_words: list[Word]
    inline_flag: str | None = None
    unit: str = ""
    reference_range: str = ""
    range_unit: str = ""
    flag: str | None = None
    leftovers: int = 0
    garbled: bool = False  # the value is a number OCR put letters in ("1l.8"): not a value


_TIMES = frozenset({"x", "X", "×"})  # the "x" of "x10E3/uL", when OCR splits it off


def read_result(words: list[Word], *, allow_garbled: bool = False) -> Reading | None:
    """Read "value [unit] [(range)] [flag]" in any order after the value.

    The value comes first: a number (with comparator or titre), a number with a
    glued flag ("11.8H") or a qualitative word ("Negative", "Not detected").
    ``allow_garbled``: a number OCR put letters in still anchors a reading, marked
    ``garbled`` and kept exactly as read, so its row can go to review.
    """
    if not words:
        return None
    texts = [w.text for w in words]
    reading = _read_value(words, texts)
    if reading is None and allow_garbled and tr.garbled_number(texts[0]):
        reading = Reading(value=texts[0], value_words=words[:1], garbled=True)
    if reading is None:
        return None
    i = len(reading.value_words)
    while i < len(texts):
        t = texts[i]
        if t[:1] in "([":
            j = _bracket_end(texts, i)
            parsed = parse_reference_range(" ".join(texts[i : j + 1]))
            if parsed and not reading.reference_range:
                reading.reference_range, reading.range_unit = parsed
            else:
                reading.leftovers += j - i + 1
            i = j + 1
            continue
        flag = tr.is_flag_word(t)
        if (t in _TIMES and i + 1 < len(texts) and not reading.unit
                and V.looks_like_unit(tr.repair_ocr_unit(f"x {texts[i + 1]}"))):
            # OCR split "x10E3/uL" at the "x": one unit, kept as read ("x 10E3/uL").
            reading.unit = f"{t} {texts[i + 1]}"
            i += 2
            continue
        if flag and reading.flag is None and reading.inline_flag is None and len(t) <= 8:
            reading.flag = t
        elif V.looks_like_unit(t) and not reading.unit:
            reading.unit = t
        elif not reading.reference_range and (rng := _range_at(texts, i)):
            reading.reference_range, reading.range_unit, used = rng
            i += used
            continue
        else:
            reading.leftovers += 1
        i += 1
    return reading


def _bracket_end(texts: list[str], i: int) -> int:
    """The index of the word that closes the bracket opened at ``texts[i]``, nested
    brackets counted ("(3.5-5.0 (critical <2.5) mmol/L)"); the last word if none does."""
    depth = 0
    for j in range(i, len(texts)):
        depth += sum(c in "([" for c in texts[j]) - sum(c in ")]" for c in texts[j])
        if depth <= 0:
            return j
    return len(texts) - 1


def _read_value(words: list[Word], texts: list[str]) -> Reading | None:
    if len(texts) >= 2 and V.is_qualitative(f"{texts[0]} {texts[1]}"):
        return Reading(value=f"{texts[0]} {texts[1]}", value_words=words[:2])
    if len(texts) >= 2 and texts[0] in ("<", ">", "<=", ">=") and V.parse_number(texts[1]) is not None:
        return Reading(value=f"{texts[0]} {texts[1]}", value_words=words[:2])
    split = tr.split_value_flag(texts[0])
    if split is None:
        return None
    value, flag = split
    return Reading(value=value, value_words=words[:1], inline_flag=flag)


def _range_at(texts: list[str], i: int) -> tuple[str, str, int] | None:
    """A bare range starting at token ``i`` ("65-99", "<100", "3.4 - 10.8")."""
    for n in (3, 2, 1):
        chunk = texts[i : i + n]
        if len(chunk) < n:
            continue
        parsed = parse_reference_range(" ".join(chunk))
        if parsed and not V.is_qualitative(parsed[0]) and not parsed[1]:
            return parsed[0], "", n
    return None


# --------------------------------------------------------------------------- dotted lines

_LEADER = re.compile(r"\.{3,}$")
# A leader printed (or read) with other debris than dots: "-------", "_____", ".,.,.,",
# ":::::", "·····", "'`'`'". Three or more such characters and nothing else.
_DEBRIS_CHARS = ".,:;'`\u2019\u2018\"-_~\u2013\u2014\u00b7\u2022\u2026*=^"
_DEBRIS = re.compile(rf"^[{re.escape(_DEBRIS_CHARS)}]{{3,}}$")


def _leader_word(text: str) -> bool:
    """A word that is (or ends in) a dot leader: "......", "Total........", "-----"."""
    return bool(_LEADER.search(text) or _DEBRIS.match(text))


def split_dotted(words: list[Word]) -> tuple[list[Word], str, list[Word]] | None:
    """Split "WBC ........ 11.8 x10E3/uL (3.4-10.8) H" at its dot leader.

    The leader is a run of dots, or of other leader debris ("-----", "_____",
    ".,.,.,", ":::::"). Returns (name words, test name, words after the leader) or
    ``None`` when the row has no leader after a name.
    """
    for k, w in enumerate(words[:-1]):
        if _leader_word(w.text):
            # OCR reads some of the dots as digits ("2...", "..05"): a doubtful
            # leader word without a letter is all leader, not the end of the name.
            junk = k > 0 and not any(c.isalpha() for c in w.text) and (
                _DEBRIS.match(w.text) or (w.conf is not None and w.conf < OCR_TRUSTED_CONF))
            name_words = words[:k] if junk else words[: k + 1]
            name = " ".join(x.text for x in name_words)
            name = re.sub(rf"[\s{re.escape(_DEBRIS_CHARS)}]+$", "", name)
            name = re.sub(r"\s*:$", "", name)
            if sum(c.isalpha() for c in name) < 2:
                return None
            rest = words[k + 1 :]
            while len(rest) > 1 and _DEBRIS.match(rest[0].text):  # a leader read as several words
                rest = rest[1:]
            return name_words, name, rest
    return None


# An OCR word this many times wider than its letters would print is not a word: it
# is a run of leader dots read as "oe" or "25s" (real words measured 0.6-1.6).
LEADER_STRETCH = 2.5

# What OCR makes of a run of dots when it reads them as letters: small round letters
# without ascenders or descenders ("eee", "oe", "sae", "ies", "oeCave"), with leader
# debris between them. A word of a test name nearly always has a capital, an
# ascender or a descender ("Alc", "Total", "Hemoglobin"), and where it has none the
# split below still asks for a run of such words, not one.
_DOT_SHAPED = re.compile(rf"^[aceimnorsuvwxzCOSVWXZ{re.escape(_DEBRIS_CHARS)}]+$")


@dataclass(slots=True)
class OcrLeader:
    name_words: list[Word]
    name: str
    leader: list[Word]  # the junk words OCR read in the dots
    rest: list[Word]  # value onwards
    doubt: str | None = None  # why the value needs a person, if it does


def split_ocr_leader(words: list[Word], *, known_name=None) -> OcrLeader | None:
    """Split a dotted line whose dot leader OCR read as junk words.

    "WBC ........ 11.8 x10E3/uL (3.4-10.8) H" comes back from OCR as "WBC oe Ss eee
    11.8 ...", the junk read with low confidence, so ``split_dotted`` sees no dots.
    Only for OCR words (``conf`` set):

    - the leader starts at the first doubtful word after the name that has no letter
      ("2...", "200.", ".,:;"), is stretched far wider than its letters ("oe" 110 pt
      wide), or is dot-shaped (only small round letters and debris: "eee", "sae",
      "ies"). A doubtful word that looks like a word ("Alc") stays in the name, so a
      name is never cut short into another test's name ("Hemoglobin" of
      "Hemoglobin A1c"). A dot-shaped word starts a leader only when another doubtful
      word follows it before the value (one doubtful word such as "urine" right
      before the value is part of the name), and never when the name with it is a
      test the vocabulary ``known_name`` knows;
    - the value is the first confidently read word after the leader, and every word
      between name and value must be doubtful; a number read inside the leader
      ("32.8") leaves it open which one is the result, so the split carries a doubt;
    - when no confident value follows, the first doubtful word that reads as a value
      is taken: its low confidence sends the result to review in the lab rules.
    """
    if len(words) < 3 or any(w.conf is None for w in words):
        return None
    char_width = ocr_char_width(words)
    for start in range(1, len(words) - 1):
        kind = _leader_kind(words[start], char_width)
        if kind is None:
            continue
        end = start
        while end < len(words) and (words[end].conf < OCR_TRUSTED_CONF  # type: ignore[operator]
                                    or _leader_word(words[end].text)):
            end += 1
        if kind == "shape":
            if end - start < 2:
                continue  # one doubtful word before the value: part of the name
            if known_name is not None and known_name(" ".join(w.text for w in words[: start + 1])):
                continue  # "Creatinine urine": the word belongs to the name
        break
    else:
        return None
    name_words = words[:start]
    name = re.sub(r"[\s.:]+$", "", " ".join(w.text for w in name_words))
    if sum(c.isalpha() for c in name) < 2:
        return None
    if end < len(words) and _value_at(words, end):
        numbers = [w.text for w in words[start:end] if tr.split_value_flag(w.text) is not None]
        doubt = (f"a number ({numbers[0]!r}) was read inside the dot leader before the value: "
                 "check which is the result") if numbers else None
        return OcrLeader(name_words, name, words[start:end], words[end:], doubt)
    for k in range(start + 1, end):
        if _value_at(words, k):  # doubtful by construction: the lab rules send it to review
            return OcrLeader(name_words, name, words[start:k], words[k:])
    return None


def _leader_kind(w: Word, char_width: float | None) -> str | None:
    """How a doubtful OCR word looks like leader dots: "debris" (no letter),
    "stretched" (far wider than its letters), "shape" (dot-shaped letters), or None.
    Dots read as dots ("......") are a leader however confidently read."""
    if _leader_word(w.text):
        return "debris"
    if (w.conf or 0.0) >= OCR_TRUSTED_CONF:
        return None
    if not any(c.isalpha() for c in w.text):
        return "debris"
    if char_width is not None and w.x1 - w.x0 > LEADER_STRETCH * len(w.text) * char_width:
        return "stretched"
    if _DOT_SHAPED.match(w.text):
        return "shape"
    return None


def value_starts(words: list[Word]) -> bool:
    """A result value (a number, comparator and number, qualitative word) is the first
    thing in ``words``."""
    return bool(words) and _read_value(words, [w.text for w in words]) is not None


def _value_at(words: list[Word], k: int) -> bool:
    """A value (or a number OCR garbled, for review) starts at ``words[k]``."""
    texts = [w.text for w in words[k:]]
    return _read_value(words[k:], texts) is not None or tr.garbled_number(texts[0])


def is_label_word(text: str) -> bool:
    """A word written as a label ("Comment:", "NOTE:")."""
    return text.rstrip().endswith(":") and bool(norm_token(text))
