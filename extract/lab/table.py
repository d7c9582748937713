"""Reading lab result rows: table structure found from the geometry of a header's
words, and the "value [unit] [(range)] [flag]" grammar shared by table cells and
dotted lines.

Why our own column detection over words, not PyMuPDF's ``page.find_tables``: the
extractor receives ``NormalizedContent`` (word boxes from a PDF text layer *or* from
OCR), never a PyMuPDF page, and the content carries no ruling lines; ``find_tables``
would work on typed PDFs only and not on the scans and faxes that most need it. So a
table is found from what every source has, word boxes:

- a header row is a row of column labels (``COLUMN_LABELS``, any order, any subset)
  or dates (a cumulative report's one column per collection date);
- a header row that holds two or more sets of labels (each starting at its own test
  column) starts side-by-side *panels*: each panel gets its own x-extent, and a
  row's words are split between panels by x before its columns are assigned;
- a header may run over two rows: the row just below it whose words all sit under
  its columns and are label words ("Reference" over "Range"), units (a units row
  under "Result": that column's values are in that unit) or dates (a spanning
  "Result" over three dates becomes three dated columns) extends it (``extend_header``);
- each column owns the x-span from its header's left edge (less a quarter of the gap
  before it, for right-aligned numbers) to the next column's; a word belongs where
  its centre lies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from domain.content import Word
from extract.values import text_rules as tr
from extract.values import numbers as V
from extract.values.dates import find_date
from extract.values.flags import FlagKey, flag_meaning
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
    **dict.fromkeys(["flag", "flags", "abn flag", "abnormal flag", "h/l", "indicator", "alert",
                     "abnormal indicator"], "flag"),
    **dict.fromkeys(["units", "unit", "uom", "unit of measure"], "units"),
    **dict.fromkeys(["reference range", "reference interval", "reference intervals", "ref range",
                     "ref. range", "ref interval", "ref", "reference", "normal range", "range",
                     "standard range", "expected range", "expected", "normal values",
                     "reference values", "biological ref interval", "normal", "target"], "range"),
    # The range's two ends in columns of their own ("Ref Low | Ref High"): joined into one range.
    **dict.fromkeys(["ref low", "reference low", "low", "low limit", "lower limit", "lower", "normal low",
                     "range low", "ref range low", "low ref", "low normal"], "range_low"),
    **dict.fromkeys(["ref high", "reference high", "high", "high limit", "upper limit", "upper", "normal high",
                     "range high", "ref range high", "high ref", "high normal"], "range_high"),
    **dict.fromkeys(["critical range", "critical ranges", "critical limits", "critical values", "critical value",
                     "panic values", "panic range", "panic limits", "critical"], "critical"),
    **dict.fromkeys(["status", "result status"], "status"),
    # A differential's share of the white cells beside its count ("Result | % | Units"):
    # the row's second result, "Neutrophils %" (a bare "%" header is matched by its text).
    **dict.fromkeys(["percent", "percentage", "% of wbc", "% of total"], "percent"),
    # Critical limits as two ends in columns of their own: kept apart from the reference
    # range's ends (never read as them), not read as limits (the policy's limits apply).
    **dict.fromkeys(["critical low", "critical high", "crit low", "crit high", "panic low", "panic high",
                     "critical lower", "critical upper"], "other"),
    **dict.fromkeys(["lab", "performing lab", "site", "code", "loinc", "method", "specimen",
                     "prior result", "previous result", "previous", "prior", "prior results", "previous results",
                     "previous value", "last result", "last results", "last value", "date", "comment", "comments",
                     "remark", "remarks", "notes"], "other"),
})
VALUE_ROLES = ("result", "out_range", "in_range")
# Words a second header row may add under a label ("Reference" / "Range", "Test" / "Name").
_HEADER_WORDS = frozenset(
    "interval intervals range ranges name names value values result results units unit limits code description "
    "test flag flags status of measure collected drawn date time specimen current previous latest reference ref "
    "normal".split())
_PRIOR = re.compile(r"(?:previous|prior|last)(?: results?| values?)?")
_TIME = re.compile(r"^\(?\d{1,2}[:h.]\d{2}\)?$")
_MAX_DATE_WORDS = 3
_DOTTED_SHORT_DATE = re.compile(r"\d{1,2}\.\d{1,2}\.\d{2}")
_TRAILING_TIME = re.compile(r"\s+\(?\d{1,2}[:h]\d{2}\)?$")


@dataclass(slots=True)
class Column:
    role: str
    x0: float  # header words' extent
    x1: float
    left: float = float("-inf")  # words whose centre lies right of this belong here
    # A cumulative report's collection date for this value column, as printed ("12/11/26"):
    # the extractor reads it day or month first as the report prints its dates.
    date: str | None = None
    unit: str = ""  # a unit printed in the header for this column's values


@dataclass(slots=True)
class TableLayout:
    """One table (one panel of a multi-panel header): its columns and x-extent."""

    columns: list[Column]  # left to right
    page_width: float
    x_min: float = float("-inf")  # the panel's x-extent: words whose centre lies inside
    x_max: float = float("inf")
    first: dict[str, int] = field(default_factory=dict)  # role -> its first column

    def __post_init__(self) -> None:
        self.reindex()

    def reindex(self) -> None:
        self.first = {}
        for i, col in enumerate(self.columns):
            self.first.setdefault(col.role, i)

    def has(self, role: str) -> bool:
        return role in self.first

    @property
    def cumulative(self) -> bool:
        """One value column per collection date."""
        return any(c.date for c in self.columns if c.role in VALUE_ROLES)

    def holds(self, w: Word) -> bool:
        return self.x_min <= (w.x0 + w.x1) / 2 < self.x_max


def header_date(text: str) -> str | None:
    """The date a header cell prints whole (perhaps with its time of day), as
    ``find_date`` reads it; None when the cell holds anything else. A cell "12.11.26"
    (day, month and a two-digit year between dots, as European cumulative reports head
    their date columns) is read as "12/11/26": alone in a header it is a date, where in
    running text "3.4.10" is not."""
    text = _TRAILING_TIME.sub("", text.strip("()[]"))  # "26/11/26 08:10": the day's column
    if _DOTTED_SHORT_DATE.fullmatch(text):
        text = text.replace(".", "/")
    m = find_date(text)
    return text if m is not None and m.start == 0 and m.end == len(text) else None


def _date_at(seg: list[Word], i: int) -> int:
    """How many words from ``seg[i]`` print a full date and nothing else (0 if none)."""
    for n in range(min(_MAX_DATE_WORDS, len(seg) - i), 0, -1):
        if header_date(" ".join(w.text for w in seg[i : i + n])):
            return n
    return 0


def _header_columns(row: Row) -> tuple[list[Column], int]:
    """Column labels and dates on a row: (columns, how many words they cover)."""
    columns: list[Column] = []
    matched = 0
    for seg in segments(row.words):
        i = 0
        while i < len(seg):
            n = _date_at(seg, i)
            if n:
                words = seg[i : i + n]
                date = header_date(" ".join(w.text for w in words))
                columns.append(Column("result", words[0].x0, words[-1].x1, date=date))
                matched += n
                i += n
                continue
            if seg[i].text.strip() == "%":
                columns.append(Column("percent", seg[i].x0, seg[i].x1))
                matched += 1
                i += 1
                continue
            hit = COLUMN_LABELS.match_at(seg, i)
            if hit is None:
                i += 1
                continue
            words = seg[hit.start : hit.end]
            if hit.key == "other" and _PRIOR.fullmatch(" ".join(w.text for w in words).lower()) \
                    and (n := _date_at(seg, hit.end)):
                # "Previous 12/10/2026": the earlier results' column, dated by the date after its label
                dated = seg[hit.end : hit.end + n]
                columns.append(Column("result", words[0].x0, dated[-1].x1,
                                      date=header_date(" ".join(w.text for w in dated))))
                matched += hit.end - hit.start + n
                i = hit.end + n
                continue
            if hit.key == "units" and words[0].text.startswith("(") and columns and columns[-1].role == "test" \
                    and hit.start > 0 and columns[-1].x1 >= seg[hit.start - 1].x1:
                # "Analyte (units)": a note on the test column (each name prints its unit
                # in brackets, "Sodium (mmol/L)"), not a column of its own.
                matched += hit.end - hit.start
                i = hit.end
                continue
            columns.append(Column(hit.key, words[0].x0, words[-1].x1))
            matched += hit.end - hit.start
            i = hit.end
    columns.sort(key=lambda c: c.x0)
    return columns, matched


def set_bounds(columns: list[Column], height: float) -> None:
    """Where each column of a header begins (``Column.left``), from the gaps between its labels."""
    for prev, col in zip(columns, columns[1:]):
        gap = max(col.x0 - prev.x1, 0.0)
        # Left-aligned text starts at its header; right-aligned numbers may start a
        # little before it. Allow a quarter of the gap, at most one text height.
        col.left = col.x0 - min(0.25 * gap, height)


def detect_tables(row: Row) -> list[TableLayout]:
    """The tables a header row starts, left to right (several for side-by-side
    panels), or ``[]``.

    Each must name a test column and a value column (result, in/out of range or a
    date), and nearly every word on the row must be a column label or a date, so a
    sentence that happens to say "test result" is not a header. A row of two or more
    dates without a test label is a cumulative header whose test names stand left
    of its first date column.
    """
    columns, matched = _header_columns(row)
    if matched < 0.8 * len(row.words) or len(columns) < 2:
        return []
    if not any(c.role == "test" for c in columns) and sum(c.date is not None for c in columns) >= 2:
        # A cumulative header of dates alone: the test names are the column left of them.
        columns.insert(0, Column("test", 0.0, 0.0))
    if any(w.text.rstrip().endswith(":") for w in row.words):
        return []  # "Test: Lipid panel" is a label, not a column header
    # A new panel starts at each test column after the first; columns before the
    # first test column (a flag printed at the far left) belong to the first panel.
    groups: list[list[Column]] = [[]]
    for col in columns:
        if col.role == "test" and any(c.role == "test" for c in groups[-1]):
            groups.append([])
        groups[-1].append(col)
    if any(not ({c.role for c in g} >= {"test"} and {c.role for c in g} & set(VALUE_ROLES)) for g in groups):
        return []
    tables: list[TableLayout] = []
    for k, g in enumerate(groups):
        set_bounds(g, row.height)
        table = TableLayout(g, row.page.width)
        if k > 0:
            prev = groups[k - 1][-1]
            gap = max(g[0].x0 - prev.x1, 0.0)
            table.x_min = g[0].x0 - min(0.25 * gap, row.height)
            tables[-1].x_max = table.x_min
        tables.append(table)
    return tables


def stacked_header(row: Row, below: Row) -> Row | None:
    """Two rows read as one header whose labels are stacked ("Test" over "Name",
    "Unit of" over "Measure", "Reference" over "Range"): each piece of ``row`` with
    the words of ``below`` that sit under it, as one row of merged labels. None
    when ``below`` is not right under ``row``."""
    if below.page is not row.page or below.y0 - row.y1 > 1.6 * row.height:
        return None
    if len(segments(row.words)) < 2 or not all(any(c.isalpha() for c in w.text) for w in row.words):
        return None  # a rule of "=====" or a title is not the top half of a header
    h = row.height
    groups: list[list[Word]] = [list(seg) for seg in segments(row.words)]
    for w in below.words:
        centre = (w.x0 + w.x1) / 2
        home = next((g for g in groups if g[0].x0 - h <= centre <= max(x.x1 for x in g) + h), None)
        if home is None:
            groups.append([w])
        else:
            home.append(w)
    merged: list[Word] = []
    for g in sorted(groups, key=lambda g: min(w.x0 for w in g)):
        x0, x1 = min(w.x0 for w in g), max(w.x1 for w in g)
        top = [w for w in g if w in row.words]
        ordered = top + [w for w in g if w not in top]
        # One box for the whole stack, so its labels read as one phrase.
        merged += [Word(w.text, x0, row.y0, x1, row.y1, conf=w.conf) for w in ordered]
    return Row(row.page, merged, row.index)


def detect_header(row: Row) -> TableLayout | None:
    """The first (often only) table a header row starts, or ``None``."""
    tables = detect_tables(row)
    return tables[0] if tables else None


def _header_piece(seg: list[Word]) -> tuple[str, object] | None:
    """What a piece of a second header row says: ("date", the date as ``header_date``
    reads it), ("unit", text), ("label", None) for label words and times; None when it
    is something else."""
    text = " ".join(w.text for w in seg)
    n = _date_at(seg, 0)
    if n == len(seg):
        date = header_date(text)
        return ("date", date) if date else None
    bare = text.strip("()[]")
    if len(seg) == 1 and (V.looks_like_unit(bare) or V.looks_like_unit(tr.repair_ocr_unit(bare))):
        return "unit", bare
    if all(_TIME.match(w.text) or _ocr_time(w) or norm_token(w.text) in _HEADER_WORDS
           or COLUMN_LABELS.match_at([w], 0) is not None for w in seg):
        return "label", None
    return None


_HHMM = re.compile(r"^(?:[01]\d|2[0-3])[0-5]\d$")


def _ocr_time(word: Word) -> bool:
    """A time whose colon OCR lost ("0810" of "08:10" on a fax), in a scanned row that
    is otherwise a header's: typed text keeps its colon, and "0810" there is a number."""
    return word.conf is not None and _HHMM.match(word.text) is not None


def extend_header(tables: list[TableLayout], row: Row, header: Row) -> bool:
    """Read ``row`` as the second row of ``header``'s tables, when it is one.

    It must lie right under the header and every word must be a label word, a time,
    a unit or a date within one of the tables. A unit under a value column is that
    column's unit; dates replace the table's value columns, each a dated value column
    where it is printed (under its own "Result", or several under one "Results"
    heading that spans them).
    """
    if row.page is not header.page or row.y0 - header.y1 > 1.6 * header.height:
        return False
    pieces: list[tuple[TableLayout, int, str, object, list[Word]]] = []
    for seg in segments(row.words):
        # A date of several words is one piece; other words stand alone under their column.
        parts = [seg] if _date_at(seg, 0) == len(seg) else [[w] for w in seg]
        for part in parts:
            table = next((t for t in tables if t.holds(part[0])), None)
            said = _header_piece(part)
            if table is None or said is None:
                return False
            k = assign_columns(part, table).by_column
            col = next(i for i, ws in enumerate(k) if ws)
            pieces.append((table, col, said[0], said[1], part))
    if not pieces or all(kind == "label" for _, _, kind, _, _ in pieces):
        return bool(pieces)
    for table in tables:
        mine = [p for p in pieces if p[0] is table]
        dated = [(v, ws) for _, _, kind, v, ws in mine if kind == "date"]
        new_columns: list[Column] = []
        for i, col in enumerate(table.columns):
            units = [v for _, c, kind, v, _ in mine if c == i and kind == "unit"]
            if dated and col.role in VALUE_ROLES:
                continue  # replaced by the dated columns printed below it
            if units and col.role in VALUE_ROLES:
                col.unit = str(units[0])
            new_columns.append(col)
        # Each date is a value column where it is printed: under its own "Result", or
        # several under one "Results" heading that spans them (wherever it is centred).
        new_columns += [Column("result", ws[0].x0, ws[-1].x1, date=str(v)) for v, ws in dated]
        new_columns.sort(key=lambda c: c.x0)
        set_bounds(new_columns, header.height)
        table.columns = new_columns
        table.reindex()
    return True


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


def crosses_columns(words: list[Word], layout: TableLayout) -> bool:
    """A run of words printed as one phrase across column starts: a sentence under a
    table ("HbA1c 7.9% on 03/02 and 8.4% on 06/01"), not a row of its cells."""
    starts = [c.left for c in layout.columns[1:]]
    for seg in segments(words):
        if len(seg) < 4:
            continue
        crossed = sum(seg[0].x0 < x < seg[-1].x1 for x in starts)
        # Small words of a sentence ("on", "and") are never cells of a results table.
        small = sum(w.text.isalpha() and w.text.islower() and not V.looks_like_unit(w.text) for w in seg)
        if crossed >= 2 or (crossed and small >= 2):
            return True
    return False


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


# A sign that is not a number, bracket, range or unit punctuation: "▲", "‼",
# "†", "#". Beside a value it is a printed flag, known or not (an unknown one is
# reported by the flag rule, never dropped).
_NOT_SIGN = set("-\u2013\u2014.,:;/()[]{}<>=+_%'\"\u00b0@&$\u00a3\u20ac\u00a7\u00a9\u00ae~`|\\?")
_GLUED_SIGN = re.compile(r"^(?P<pre>[^\w\s]*?)(?P<value>[<>]?=?\d[\d.,]*)(?P<post>[^\w\s]*)$")


# OCR's reading of a star flag glued to its value ("131°L" for "131 *L"); never "37.2°C".
_OCR_STAR_FLAG = re.compile(r"^(?P<value>[<>]?=?\d[\d.,]*)(?P<flag>[\u00b0\u00ba][HLA]{1,2})$")
_GLUED_UNIT = re.compile(r"^(?P<value>[<>]?=?\d[\d.,]*?)(?P<unit>%|[a-zA-Z\u00b5\u03bc][\w/\u00b5\u03bc.^\-]*)$")


# Stars printed round a flag word for emphasis ("** HIGH **"), not a flag of their own.
EMPHASIS = re.compile(r"^\*{1,3}$")


def is_sign(text: str) -> bool:
    t = text.strip()
    return bool(t) and len(t) <= 3 and not any(c.isalnum() or c.isspace() or c in _NOT_SIGN for c in t)


def is_flag(text: str, key: FlagKey | None = None) -> bool:
    """A word that is a flag beside a value: the page's own key, the vocabulary
    (``is_flag_word``) or a sign."""
    if (bool(key) and flag_meaning(text, key=key) is not None) or tr.is_flag_word(text) or is_sign(text):
        return True
    parts = text.split()  # "Crit H": every word a flag
    return len(parts) > 1 and all(tr.is_flag_word(p) or (key and flag_meaning(p, key=key)) for p in parts)


def read_result(words: list[Word], *, allow_garbled: bool = False, key: FlagKey | None = None) -> Reading | None:
    """Read "value [unit] [(range)] [flag]" in any order after the value.

    The value comes first: a number (with comparator or titre), a number with a
    glued flag ("11.8H") or a qualitative word ("Negative", "Not detected").
    ``allow_garbled``: a number OCR put letters in still anchors a reading, marked
    ``garbled`` and kept exactly as read, so its row can go to review. ``key``: the
    document's flag key; a sign or code it explains is a flag here.
    """
    if not words:
        return None
    texts = [w.text for w in words]
    reading = _read_value(words, texts, key)
    if reading is None and allow_garbled and tr.garbled_number(texts[0]):
        reading = Reading(value=texts[0], value_words=words[:1], garbled=True)
    if reading is None:
        return None
    i = len(reading.value_words)
    while i < len(texts):
        t = texts[i]
        if t[:1] in "([":
            j = _bracket_end(texts, i)
            inside = " ".join(texts[i : j + 1])
            code = inside.strip("()[]")
            if (reading.flag is None and reading.inline_flag is None and is_flag(code, key)
                    and not V.is_qualitative(code)):  # "(Normal)" after a value is its range
                reading.flag = code  # "(H)", "(Crit H)", "[‼]"
                i = j + 1
                continue
            parsed = parse_reference_range(inside)
            if parsed and not reading.reference_range:
                reading.reference_range, reading.range_unit = parsed
            else:
                reading.leftovers += j - i + 1
            i = j + 1
            continue
        flag = is_flag(t, key)
        if (t in _TIMES and i + 1 < len(texts) and not reading.unit
                and V.looks_like_unit(tr.repair_ocr_unit(f"x {texts[i + 1]}"))):
            # OCR split "x10E3/uL" at the "x": one unit, kept as read ("x 10E3/uL").
            reading.unit = f"{t} {texts[i + 1]}"
            i += 2
            continue
        if (not reading.unit and i + 1 < len(texts) and texts[i + 1][:1] == "/"
                and V.looks_like_unit(f"{t}{texts[i + 1]}") and not V.looks_like_unit(texts[i + 1])):
            # OCR split a unit at its slash ("x10E3 /uL", "mg /dL"): one unit, written whole.
            reading.unit = f"{t}{texts[i + 1]}"
            i += 2
            continue
        if EMPHASIS.match(t):
            if (reading.flag is None and reading.inline_flag is None and i + 1 < len(texts)
                    and tr.is_flag_word(texts[i + 1])):
                reading.flag = texts[i + 1]  # "** HIGH **": the word is the flag, the stars its emphasis
                i += 3 if i + 2 < len(texts) and EMPHASIS.match(texts[i + 2]) else 2
                continue
            if reading.flag is not None and texts[i - 1] == reading.flag and tr.is_flag_word(reading.flag):
                i += 1  # "LOW **" (a star OCR lost before the word): the closing emphasis
                continue
        if flag and reading.flag is None and reading.inline_flag is None and len(t) <= 8:
            reading.flag = t
        elif V.looks_like_unit(t) and not reading.unit:
            reading.unit = t
        elif V.looks_like_unit(t) and reading.reference_range and not reading.range_unit:
            reading.range_unit = t  # "133 - 146 mmol/L": the unit printed after the range is the range's
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


def _read_value(words: list[Word], texts: list[str], key: FlagKey | None = None) -> Reading | None:
    if len(texts) >= 2 and V.is_qualitative(f"{texts[0]} {texts[1]}"):
        return Reading(value=f"{texts[0]} {texts[1]}", value_words=words[:2])
    if len(texts) >= 2 and texts[0] in ("<", ">", "<=", ">=") and V.parse_number(texts[1]) is not None:
        return Reading(value=f"{texts[0]} {texts[1]}", value_words=words[:2])
    split = tr.split_value_flag(texts[0])
    if split is None and (g := _GLUED_UNIT.match(texts[0])) and V.looks_like_unit(g["unit"]) \
            and tr.is_value(g["value"]):
        # A unit glued to the number: "7.9%", "6.6mmol/L".
        return Reading(value=g["value"], value_words=words[:1], unit=g["unit"])
    if split is None and words[0].conf is not None and (d := _OCR_STAR_FLAG.match(texts[0])):
        # A fax read the "*" of "131 *L" as a degree sign: the value, and its flag as read,
        # which the flag rule reports as unknown (the result goes to a person).
        return Reading(value=d["value"], value_words=words[:1], inline_flag=d["flag"])
    if split is None:
        # A sign glued to the number: "6.6‼", "▲4.9", "7,9*".
        m = _GLUED_SIGN.match(texts[0])
        sign = (m.group("pre") + m.group("post")) if m else ""
        if m is None or not is_sign(sign) or not tr.is_value(m.group("value")):
            return None
        if words[0].conf is not None and not tr.is_flag_word(sign) and not (key and flag_meaning(sign, key=key)):
            return None  # OCR reads specks as signs: only a sign the vocabulary or the page's key knows counts
        return Reading(value=m.group("value"), value_words=words[:1], inline_flag=sign)
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
