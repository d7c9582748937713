"""The coverage guard (pure): printed results that no extracted fact cites.

The readers are many and each knows some layouts; none can promise it read every
result a page prints. This module looks at a document the other way round: it finds
every *result-like* piece of content, whatever its layout, and asks whether a fact
cites it. What no fact cites is returned as an ``UnreadRegion`` for a person to read.

A piece of a line is result-like when it prints a value (a number, a ratio such as
152/94) and either

* a test the analyte vocabulary knows (``domain.policy.facts.analytes``), or
* a test-like name and, beside the value, a lab unit, a reference range or a flag
  (a letter flag such as H or LL, a word such as "critical", or a symbol: ▲ ▼ ‼ ↑ ↓ *).

In a table (an XLSX sheet, a DOCX table) a value cell is also judged by its column: the
nearest header row above (labels in two or more columns, no value) names each column,
and a value under a header naming a test or a vital sign is a result ("Date | Na | K",
"Recorded | B/P | HR (bpm)"; a "152/94" only under a blood pressure). A row's label
cell must name a test or a sign whole ("Potassium chloride tablets | 28" is stock), and
a number inside it is part of the name ("Lidocaine 1% ampoules | 12").

Dates, times, phone numbers, page numbers, years, identifiers and dose amounts are
never values; lines whose label is about identity, contact or administration
("Patient ID", "Tel", "Age", "Suite") and addresses are not results; a line that prints
only a reference range has no value. Pieces are cut at column gaps: a row of two panels
side by side is two pieces, a cumulative row (one value per date) one piece with
several values, a sentence one piece.

Covered means: on a page, every value word of the piece lies inside the box of a fact
on that page (geometry, so a two-panel row half read is caught); in a section (an XLSX
row, a DOCX paragraph or table row), a fact cites that section or one inside it and
its quote or value holds each of the piece's numbers (a cell under a result column: a
fact quoting that cell, one fact per cell; a reading joined from two rows, as a blood
pressure's systolic and diastolic rows, covers the row beside the one it cites); in an
HL7 message, an OBX segment with a value (OBX-5) is a result by structure and is
covered when a fact cites that segment; in a FHIR file, an Observation is a result by
structure, valid or not, unless its sender withdrew it (entered-in-error), it only
groups others (a panel's ``hasMember``) or its category is no result's (social history):
covered when a fact cites it or an element inside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from domain.content import NormalizedContent, PageContent, Section
from domain.models import BoundingBox, FactProposal
from domain.policy.facts.analytes import analytes_named, canonical_analyte
from domain.policy.facts.fhir_reading import LAB_CATEGORIES, OTHER_CATEGORIES
from domain.policy.facts.lab_vocabulary import known_unit, susceptibility_code
from domain.policy.facts.medication_schedule import dose_unit_words
from domain.policy.facts.ocr_readings import ocr_name_reading
from domain.policy.facts.vital_signs import sign_of_label
from extract.layout import page_rows, segments
from extract.values.dates import find_date
from extract.values.labels import read_label
from extract.values.numbers import COMPARATOR, NUMBER, is_qualitative, looks_like_unit, not_resulted
from extract.values.prose_vitals import sign_in_prose
from extract.values.result_parts import PART_LABEL_FIRSTS, RESULT_LABELS
from extract.values.text_rules import is_flag_word
from extract.values.wide_results import RANGE_ROW_LABELS

__all__ = ["UnreadRegion", "unread_content", "summary_sentence", "related_locators", "joined_from"]


@dataclass(frozen=True, slots=True)
class UnreadRegion:
    """One result-like piece of a page or section that no fact cites."""

    locator: str  # "page 2", or the section's locator ("Chemistry!A9:F9", "paragraph 7", "OBX[3]")
    text: str  # the piece as printed
    reason: str  # why it looks like a result, in plain words
    page: int | None = None  # 1-based, paged sources only
    box: BoundingBox | None = None  # normalized 0..1, paged sources only

    def as_dict(self) -> dict:
        return {"locator": self.locator, "page": self.page, "text": self.text, "reason": self.reason,
                "box": self.box.model_dump() if self.box else None}


# --------------------------------------------------------------------------- vocabulary (data)

# Flag marks printed beside a value; a key line on the page explains them ("▲ high").
FLAG_SYMBOLS = "▲▼△▽‼↑↓⬆⬇*!"
# Words of a label about identity, contact, the report or the specimen, not a test:
# a number under them is an id, a count of pages, a street number or an age.
ADMIN_WORDS = frozenset("""
page pages age aged yrs years yr old dob born birth mrn id no acct account hosp hospital ur chart record visit
accession requisition order specimen collected received reported printed resulted verified tel telephone phone fax
mobile cell email zip postcode clia npi lab laboratory room bed ward unit ext extension version ver rev copy copies
""".split())
# Words of an address anywhere on the line: the number beside them is a house or suite.
ADDRESS_WORDS = frozenset("""
suite ste floor street avenue ave road rd boulevard blvd parkway pkwy lane ln drive court crescent terrace
highway hwy plaza building bldg
""".split())
# Words of a sentence, not of a test name: "must not exceed 200 records". A test-like name
# written in a sentence counts only with a lab unit ("her fructosamine was 340 umol/L").
SENTENCE_WORDS = frozenset("""
must not is are was were be been will would should may might can could we you he she they it this that these
those please if shall
""".split())
# Words whose number is part of a condition's name, not a result: "type 2 diabetes".
NAME_NUMBER_WORDS = frozenset({"type", "stage", "grade", "class"})
# A number followed by one of these is a span of time ("repeat FBC in 4 weeks"), not a
# result. Seconds, minutes and hours are left out: "PT 13.2 seconds" is one.
DURATION_WORDS = frozenset({"hour", "hours", "hrs", "day", "days", "week", "weeks", "wk", "wks", "month", "months",
                            "mths", "year", "years", "yr", "yrs"})
# A test name is a few words; a longer run before the value is a sentence about something else.
MAX_NAME_WORDS = 6
# Read by the intake label vocabulary: a value under these labels is never a result.
_ADMIN_LABEL_KINDS = frozenset({"dob", "mrn", "name", "first_name", "middle_name", "last_name", "phone", "email",
                                "address", "sex", "ignore", "relationship"})
# Units of vital signs beyond the lab units the analyte vocabulary knows.
VITAL_UNITS = frozenset({"°c", "°f", "degc", "degf", "/min", "breaths/min", "kg/m2", "lb", "lbs"})
# Amounts of a medicine, not results ("Metformin 500 mg", "Vitamin D 1000 units daily"):
# the medication vocabulary's words, less a bare "U", which is also an enzyme's unit.
DOSE_UNITS = dose_unit_words() - {"u"}

_NUM = rf"(?:{NUMBER})"
# A count as a power of ten, as a culture prints it (">10^5", "1x10^6", "10E5" before "CFU/mL").
_POWER_OF_TEN = r"(?:\d+(?:\.\d+)?[x\u00d7*])?10(?:\^|E|\*\*?)[-\u2212]?\d{1,2}"
# A reference range or a bound, also written in words ("below 70", "less than 5.7"):
# a target or a limit, never the patient's value.
_RANGE = re.compile(rf"(?<![\w.]){_NUM}\s*(?:-|\u2013|\u2014|to|\.\.)\s*{_NUM}(?!\w|\.\d)"
                    rf"|\b(?:below|above|under|over|less than|more than|greater than|at least|at most|up to|"
                    rf"target|goal|aim|exceed|exceeds)\s+(?:of\s+)?(?:{_POWER_OF_TEN}|{_NUM}(?:/{_NUM}|\s?%)?)(?!\w|\.\d)",
                    re.I)
_PHONE = re.compile(r"(?<!\w)(?:\+?\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)\s*|\d{3}[\s.-])\d{3}[\s.-]\d{4}(?!\d)")
_TIME = re.compile(r"(?<![\d:])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:\s*[ap]\.?m\.?)?(?![\d:])", re.I)
_PAGE = re.compile(r"\bpage\s+\d+(?:\s*(?:of|/)\s*\d+)?", re.I)
_YEAR = re.compile(r"^(?:19|20)\d\d$")
# A value token: a comparator, a number (decimal comma allowed), then glued flag marks.
_VALUE = re.compile(rf"^(?P<cmp>{COMPARATOR})?(?P<num>{_NUM})(?P<flag>[{re.escape(FLAG_SYMBOLS)}A-Z]{{0,4}})$")
_VALUE_UNIT = re.compile(rf"^(?P<num>{_NUM})(?P<unit>%|[A-Za-z\u00b5\u03bc/][\w\u00b5\u03bc/.^*]*)$")
_RATIO = re.compile(r"^\d{2,3}/\d{2,3}$")  # blood pressure 152/94
_POWER = re.compile(rf"^(?:{COMPARATOR})?{_POWER_OF_TEN}$", re.I)
_WORD = re.compile(r"[^\W\d_]{2,}")
_DAY_MONTH = re.compile(r"(\d{1,2})[/.-](\d{1,2})")
_DATE_WORDS = frozenset({"on", "of", "from", "since", "dated", "until", "by", "to"})
_EDGE = "(),;:.[]"  # punctuation around a printed token
_NUMBERS = re.compile(_NUM)


# --------------------------------------------------------------------------- tokens and pieces

@dataclass(slots=True)
class _Token:
    text: str
    seg: int  # tokens of one segment (a column cell, a run of words) share it
    ref: object = None  # the page Word it came from
    kind: str = "text"  # text | value | qualitative | unit | unitish | flag | range | masked


@dataclass(slots=True)
class _Piece:
    tokens: list[_Token] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(t.text for t in self.tokens)

    def of(self, kind: str) -> list[_Token]:
        return [t for t in self.tokens if t.kind == kind]


def _spans(text: str) -> list[tuple[int, int, str]]:
    """Character spans that are not values: dates, times, phones, page numbers, ranges."""
    out: list[tuple[int, int, str]] = []
    for rx, kind in ((_PHONE, "masked"), (_PAGE, "masked"), (_TIME, "masked")):
        out += [(m.start(), m.end(), kind) for m in rx.finditer(text)]
    at = 0
    while (d := find_date(text[at:])) is not None:
        out.append((at + d.start, at + d.end, "masked"))
        at += d.end
    out += [(m.start(), m.end(), "range") for m in _RANGE.finditer(text)]
    return out


def _classify(tokens: list[_Token]) -> None:
    """Set each token's kind, masking multi-word dates, phones and ranges first."""
    text, starts, pos = "", [], 0
    for t in tokens:
        starts.append(pos)
        text += t.text + " "
        pos += len(t.text) + 1
    spans = _spans(text)
    for t, start in zip(tokens, starts):
        core = t.text.strip(_EDGE)
        start += len(t.text) - len(t.text.lstrip(_EDGE))
        end = start + len(core)
        owner = next((kind for s, e, kind in spans if s <= start and end <= e), None) if core else "masked"
        if owner is not None:
            t.kind = owner
        elif _value_token(t.text):
            t.kind = "value"
        elif _unit(core):
            t.kind = "unit"
        elif looks_like_unit(core):
            t.kind = "unitish"  # a unit we do not know ("g/db" read by OCR): no evidence, no new test
        elif core in FLAG_SYMBOLS or is_flag_word(core):
            t.kind = "flag"
        elif is_qualitative(core):
            t.kind = "qualitative"  # "Positive", "Not detected": a value only beside a known test
    if tokens and tokens[0].kind == "value" and re.fullmatch(r"\(?\d{1,2}[.)]", tokens[0].text):
        tokens[0].kind = "masked"  # a numbered list: "3. On March 27 ..." / "3)"
    for t in tokens:
        if t.kind == "value" and re.fullmatch(r"\d{1,2}\)", t.text):
            t.kind = "masked"  # "...; 3) Mucoparietal thickening"
    for prev, t in zip(tokens, tokens[1:]):
        if t.kind == "value" and prev.text.lower() in NAME_NUMBER_WORDS:
            t.kind = "masked"  # "type 2 diabetes", "stage 3 kidney disease": part of a name
    for i, (prev, t) in enumerate(zip(tokens, tokens[1:]), start=1):
        # A day and month without a year after "on"/"since" ("8.4% on 09/01") is a date;
        # with a unit after it, it is a value ("TSH has risen to 14.2 mU/L").
        m = _DAY_MONTH.fullmatch(t.text.strip(_EDGE))
        if m and prev.text.lower() in _DATE_WORDS and min(map(int, m.groups())) <= 12 \
                and max(map(int, m.groups())) <= 31 and not (i + 1 < len(tokens) and tokens[i + 1].kind == "unit"):
            t.kind = "masked"
    for i, t in enumerate(tokens):
        if t.kind == "unit" and susceptibility_code(t.text) and not any(x.kind == "value" for x in tokens[:i]):
            t.kind = "text"  # "Meropenem  S  <=0.25": how the organism fared, not seconds before any value
    # A bare "<100" is the reference range when the piece prints another value; alone it
    # is the value ("CRP <0.5 mg/L 0-5"), and so is a ratio only beside a unit.
    for i, t in enumerate(tokens):
        if t.kind == "value" and _YEAR.match(t.text.strip(_EDGE)) and not _unit_after(tokens, i):
            t.kind = "masked"  # "checked in 2019"
        if t.kind == "value" and i + 1 < len(tokens) and tokens[i + 1].text.strip(_EDGE).lower() in DURATION_WORDS:
            t.kind = "masked"  # "in 4 weeks", "for 3 days": when, not what was measured
        if t.kind == "value" and _dose_after(tokens, i):
            t.kind = "masked"
            if i + 1 < len(tokens) and tokens[i + 1].kind in ("unit", "unitish"):
                tokens[i + 1].kind = "masked"  # "600 mg": the dose's unit is no lab unit


def _unit(text: str) -> bool:
    return known_unit(text) or text.lower() in VITAL_UNITS


def _value_token(text: str) -> bool:
    t = text.strip(_EDGE)
    if not t or not any(c.isdigit() for c in t):
        return False
    m = _VALUE.match(t)
    if m:
        num = m["num"].lstrip("+-").replace(",", "").replace(".", "")
        flag = m["flag"]
        glued_flag_ok = not flag or all(c in FLAG_SYMBOLS for c in flag) or is_flag_word(flag)
        return len(num) <= 6 and glued_flag_ok  # a longer run of digits is an identifier; "9PL" a postcode
    m = _VALUE_UNIT.match(t)
    if m and _unit(m["unit"]):
        return True
    return bool(_RATIO.match(t) or _POWER.match(t))


def _unit_after(tokens: list[_Token], i: int) -> bool:
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    return nxt is not None and nxt.kind == "unit" or bool(_VALUE_UNIT.match(tokens[i].text.strip("(),;")))


def _dose_after(tokens: list[_Token], i: int) -> bool:
    t = tokens[i].text.strip("(),;").lower()
    m = _VALUE_UNIT.match(t)
    if m and m["unit"].rstrip(".") in DOSE_UNITS:
        return True
    nxt = tokens[i + 1].text.strip("(),;.").lower() if i + 1 < len(tokens) else ""
    if nxt in ("unit", "units") and i + 2 < len(tokens) and looks_like_unit(tokens[i + 2].text.strip(_EDGE)):
        return False  # "402 Units x10^9/L": the label of the unit that follows (its colon lost to OCR)
    return nxt in DOSE_UNITS


def _pieces(tokens: list[_Token]) -> list[_Piece]:
    """Cut a line at column gaps: a new piece starts with a segment that opens with a
    word once the current piece holds a value (the next panel's test name)."""
    pieces: list[_Piece] = [_Piece()]
    seg = None
    for t in tokens:
        opens = t.seg != seg
        seg = t.seg
        if opens and t.kind == "text" and _WORD.search(t.text) and (pieces[-1].of("value") or
                                                                     pieces[-1].of("qualitative")):
            pieces.append(_Piece())
        pieces[-1].tokens.append(t)
    return [p for p in pieces if p.tokens]


def _flag_beside_value(piece: _Piece) -> bool:
    """A flag printed at most two tokens after a value (beyond a unit): a word such as
    "normal" or "high" elsewhere in a sentence is no flag."""
    toks = piece.tokens
    for i, t in enumerate(toks):
        if t.kind == "value" and any(x.kind == "flag" for x in toks[i + 1:i + 3]):
            return True
    return False


def _susceptibility_beside_value(piece: _Piece) -> bool:
    """How an organism fared ("R", "Sensitive") printed just before or after a value."""
    toks = piece.tokens
    return any(t.kind == "value" and any(x.kind != "value" and susceptibility_code(x.text)
                                         for x in toks[max(0, i - 1):i] + toks[i + 1:i + 2])
               for i, t in enumerate(toks))


def _label_words(piece: _Piece, until: _Token | None = None) -> list[str]:
    """The words before the piece's first value (or before ``until``): its label or test name."""
    out = []
    for t in piece.tokens:
        if t is until or until is None and t.kind == "value":
            break
        out += [w.lower() for w in _WORD.findall(t.text)]
    return out


def _test_like(label: list[str], words: str) -> bool:
    """Whether a piece's label words (``_label_words``) can name a test: a few words,
    none about administration, identity or an address."""
    if not label or len(label) > MAX_NAME_WORDS or ADMIN_WORDS.intersection(label) or \
            ADDRESS_WORDS.intersection(w.lower() for w in words.split()):
        return False
    meaning = read_label(" ".join(label))
    return meaning.kind not in _ADMIN_LABEL_KINDS and meaning.owner is None


def _worded_sign(piece: _Piece, worded: _Token) -> str | None:
    """What shows a result printed as a word is one: a flag at most three tokens after
    it (past its reference, "Hazy  Clear  Abnormal"), or a lab unit in the piece."""
    at = piece.tokens.index(worded)
    if any(t.kind == "flag" for t in piece.tokens[at + 1:at + 4]):
        return "a flag"
    return "a unit" if piece.of("unit") else None


def _range_without_dash(piece: _Piece, first_unit: int | None) -> None:
    """Two rising numbers alone after the unit of values printed before it are the
    reference range with its dash lost to OCR ("Sodium 138 135 mmol/L 135 145"), as
    the lab reader repairs it (``extract.values.ranges.repair_ocr_range``)."""
    if first_unit is None or not any(t.kind == "value" for t in piece.tokens[:first_unit]):
        return
    after = piece.tokens[first_unit + 1:]
    if len(after) != 2 or any(t.kind != "value" for t in after):
        return
    low, high = (_NUMBERS.fullmatch(t.text.strip(_EDGE)) for t in after)
    if low and high and float(low[0].replace(",", ".")) < float(high[0].replace(",", ".")):
        for t in after:
            t.kind = "range"


def _result_reason(piece: _Piece, label_cell: str | None = None,
                   read: Callable[[_Token], bool] = lambda t: False) -> str | None:
    """Why the piece reads as a printed result, or None when it does not. In a table row
    ``label_cell`` is the cell the piece opens with: it must name a test or a vital sign
    whole ("Potassium", "BP"), since "Potassium chloride tablets" names a medicine. The
    values shown are those ``read`` says no fact took (a sentence of five results, four of
    them read, names the fifth)."""
    if " ".join(_label_words(piece)) in RANGE_ROW_LABELS:
        return None  # "Ref range  133-146  3.5-5.3  >59": a flowsheet's row of reference ranges
    values = piece.of("value")
    words = " ".join(t.text.strip(_EDGE + "\"'") for t in piece.tokens if t.kind == "text")  # "(HbA1c" -> HbA1c
    named = _names_whole(label_cell) if label_cell is not None else ("a known test" if analytes_named(words)
                                                                     else _ocr_names_a_test(piece)
                                                                     or _sign_before_value(piece))
    if not values:
        # A result printed as a word ("Urine Glucose Positive (Negative)") counts beside a
        # known test; the one in brackets is the reference.
        worded = [t for t in piece.of("qualitative") if not t.text.startswith("(")]
        if worded and named:
            for t in worded:
                t.kind = "value"
            return f"{named} with a result ({', '.join(t.text for t in worded[:4])})"
        # Beside a name the vocabulary does not know ("Clarity Hazy ... Abnormal",
        # "Bacteria Few /hpf"), a flag after the word or a unit in the row makes it one.
        if worded and (sign := _worded_sign(piece, worded[0])) and _test_like(_label_words(piece, worded[0]), words):
            worded[0].kind = "value"
            return f"a test-like name with a result ({worded[0].text}) and {sign}"
        return None
    # A bound printed after the unit is the reference ("eGFR  mL/min/1.73m2  >60" with the
    # result cell empty); before it, the value ("CRP <0.5 mg/L").
    first_unit = next((i for i, t in enumerate(piece.tokens) if t.kind == "unit"), None)
    for i, t in enumerate(piece.tokens):
        if t.kind == "value" and first_unit is not None and i > first_unit and re.match(COMPARATOR, t.text):
            t.kind = "range"
    _range_without_dash(piece, first_unit)
    values = piece.of("value")
    if not values:
        return None
    bare = [v for v in values if not re.match(COMPARATOR, v.text.strip(_EDGE))]
    if bare and len(bare) < len(values):
        for v in values:
            if v not in bare:
                v.kind = "range"  # "<100" beside a plain value is the reference range
        values = bare
    shown = ", ".join(v.text for v in ([v for v in values if not read(v)] or values)[:4])
    if named:
        return f"{named} with a value ({shown})"
    label = _label_words(piece)
    if not _test_like(label, words):
        return None
    signs = []
    if piece.of("unit") or any(_VALUE_UNIT.match(v.text.strip(_EDGE)) for v in values):
        signs.append("a unit")
    if piece.of("range"):
        signs.append("a reference range")
    if _flag_beside_value(piece) or any((m := _VALUE.match(v.text.strip(_EDGE))) and m["flag"] for v in values):
        signs.append("a flag")
    if _susceptibility_beside_value(piece):
        signs.append("a susceptibility")  # "Amoxicillin  R  >32": an antibiotic's MIC
    if not signs or (signs[0] != "a unit" and SENTENCE_WORDS.intersection(label)):
        return None
    return f"a test-like name with a value ({shown}) and {' and '.join(signs)}"


# Words a sentence may set between a vital sign and its reading ("pressure was 148/86").
_SIGN_LINKS = frozenset({"was", "is", "were", "of", "now", "at", "remains", "remained", "today"})


def _sign_before_value(piece: _Piece) -> str | None:
    """"a vital sign (label)" when a vital sign's label stands right before a value, past a
    few linking words ("blood pressure was 148/86", "saturations 96%"): a reading a letter
    tells in a sentence, which no analyte names."""
    toks = piece.tokens
    for i, t in enumerate(toks):
        if t.kind != "value":
            continue
        j = i
        while j > 0 and toks[j - 1].kind == "text" and toks[j - 1].text.strip(_EDGE).lower() in _SIGN_LINKS \
                and i - j < 2:
            j -= 1
        for n in range(min(3, j), 0, -1):
            label = [x.text.strip(_EDGE) for x in toks[j - n:j]]
            if any(x.kind != "text" for x in toks[j - n:j]) or not all(label):
                continue
            if sign_in_prose(said := " ".join(label)):  # the sentence reader's rule for a sign's label
                return f"a vital sign ({said})"
    return None


# --------------------------------------------------------------------------- pages

def _ocr_names_a_test(piece: _Piece) -> str | None:
    """"a known test as OCR read it" when a word a scan or fax read names a test through a
    misread letter ("Previous potasslum 5.4 mmol/t."), the policy's reading of garbled
    names (``ocr_name_reading``); None on a text layer, whose spelling is the print's."""
    for t in piece.tokens:
        word = t.text.strip(_EDGE)
        if t.kind == "text" and getattr(t.ref, "conf", None) is not None and len(word) >= 5 \
                and ocr_name_reading(word):
            return "a known test as OCR read it"
    return None


def _cited(word, page: PageContent, cites: Sequence[tuple[BoundingBox, frozenset[str]]],
           slack: float = 0.002) -> bool:
    """Whether a fact's box holds the word's centre and its quote the word: a quote that
    wraps onto the next line has a box two lines tall and a page wide, which holds words
    the quote does not."""
    cx = (word.x0 + word.x1) / 2 / page.width
    cy = (word.y0 + word.y1) / 2 / page.height
    token = word.text.strip(_EDGE)
    return any(b.x - slack <= cx <= b.x + b.width + slack and b.y - slack <= cy <= b.y + b.height + slack
               and token in quoted for b, quoted in cites)


def _quote_tokens(quote: str) -> frozenset[str]:
    return frozenset(t.strip(_EDGE) for t in quote.split())


# A cumulative report's cell is quoted from the test name through its column
# ("Creatinine 2.1 H 1.8 H" for the 1.8 of the second date): the numbers between the
# name and the reading's own value are other columns' values, which this fact does not
# cover, so a date column no fact reads is still seen. Numbers after the value (a lab
# site code, a range) stay covered as before.
_READING_KEYS = ("value", "systolic", "diastolic")


# Facts that read no result: what their quotes print of numbers is not covered by them.
_NOT_READINGS = frozenset({"allergy", "problem", "family_history"})


def _fact_tokens(fact: FactProposal) -> frozenset[str]:
    words = [t.strip(_EDGE) for t in fact.citation.quote_or_value.split()]
    value = fact.structured_value or {}
    if fact.fact_type in _NOT_READINGS:
        # A problem or an allergy cites its whole sentence, and a sentence may tell a result
        # too ("... potassium was 5.9 mmol/L. She has CKD" run together where a scan lost the
        # stop): its numbers are not read by that fact, so they stay the guard's to report.
        return frozenset(t for t in words if not _NUMBERS.search(t))
    if fact.fact_type not in ("lab_result", "vital_sign") or not value.get("value"):
        return frozenset(words)
    own = set(_NUMBERS.findall(" ".join(str(value.get(k) or "") for k in _READING_KEYS)))
    name = set(str(value.get("test_name") or "").split())
    at = next((i for i, t in enumerate(words) if own and set(_NUMBERS.findall(t)) & own and t not in name), None)
    if at is None:
        return frozenset(words)
    # A range printed before the value ("eGFR >59 >60" under Range | Result) is this fact's.
    own_range = set(_NUMBERS.findall(" ".join(str(value.get(k) or "") for k in ("reference_range", "unit"))))
    return frozenset(t for i, t in enumerate(words) if i >= at or t in name or not _NUMBERS.search(t)
                     or set(_NUMBERS.findall(t)) <= own_range)


def _names_a_test(tokens: list[_Token]) -> bool:
    return bool(analytes_named(" ".join(t.text.strip(_EDGE) for t in tokens)))


def _under_result_label(above: list[_Token], piece: _Piece) -> tuple[_Piece, str] | None:
    """"Result: 22 mL/min/1 73m2" (its unit garbled by a fax): a value after a result label
    is a result whatever else on the line reads. Its test's name printed alone on the line
    above ("eGFR") joins the region, so the reviewer sees what was measured."""
    words = [t.text.lower().rstrip(":;.") for t in piece.tokens[:2]]
    k = 1 if words[0] in RESULT_LABELS else 2 if words[0] in PART_LABEL_FIRSTS and words[1:] and \
        words[1] in RESULT_LABELS else 0  # "Result:", "Your result:"
    if not k or len(piece.tokens) <= k or piece.tokens[k].kind != "value":
        return None
    name = above if above and len(above) <= MAX_NAME_WORDS and all(t.kind == "text" for t in above) else []
    return _Piece(name + piece.tokens), f"a value after a result label ({piece.tokens[k].text})"


def _wrapped_name(above: list[_Token], piece: _Piece) -> tuple[list[_Token], str] | None:
    """A sentence wrapped between a test's name and its value ("... and white blood cells"
    / "41, moderate bacteria"): the words that end the line above, when they name a test
    and the value opens this line at the same margin, ended by a unit, a flag, a range or
    punctuation ("2 weeks ago" after a name is no result). Returns those words and why."""
    first = piece.tokens[0]
    if not above or first.kind != "value" or first.ref is None:
        return None
    nxt = piece.tokens[1] if len(piece.tokens) > 1 else None
    if not (nxt is None or nxt.kind in ("unit", "flag", "range") or first.text[-1] in ",.;"
            or _VALUE_UNIT.match(first.text.strip(_EDGE))):
        return None
    start, line = above[0].ref, above[-1].ref
    height = min(line.y1 - line.y0, first.ref.y1 - first.ref.y0)
    if abs(first.ref.x0 - start.x0) > 2 * height or not 0 <= first.ref.y0 - line.y1 <= height:
        return None
    tail: list[_Token] = []
    for t in reversed(above):
        if t.kind not in ("text", "unitish") or len(tail) == MAX_NAME_WORDS:
            break
        tail.insert(0, t)
    if not _names_a_test(tail):
        return None
    while len(tail) > 1 and _names_a_test(tail[1:]):
        tail = tail[1:]  # from the test's name on
    return tail, f"a known test at the end of the line above with a value ({first.text})"


def _page_regions(page: PageContent, cites: list[tuple[BoundingBox, frozenset[str]]]) -> list[UnreadRegion]:
    found: list[UnreadRegion] = []
    above: list[_Token] = []
    for row in page_rows(page):
        tokens = [_Token(w.text, i, w) for i, seg in enumerate(segments(row.words)) for w in seg]
        _classify(tokens)
        for n, piece in enumerate(_pieces(tokens)):
            reason = _result_reason(piece, read=lambda t: _cited(t.ref, page, cites))
            if n == 0 and (wrapped := _wrapped_name(above, piece)):
                tail, reason = wrapped  # the value's own name, not one later on its line
                piece = _Piece(tail + piece.tokens)
            if n == 0 and (labelled := _under_result_label(above, piece)):
                piece, reason = labelled[0], reason or labelled[1]
            if reason is None:
                continue
            if all(_cited(t.ref, page, cites) for t in piece.of("value")):
                continue
            words = [t.ref for t in piece.tokens]
            x, y, w, h = page.normalize(min(o.x0 for o in words), min(o.y0 for o in words),
                                        max(o.x1 for o in words), max(o.y1 for o in words))
            if w <= 0 or h <= 0:
                continue
            found.append(UnreadRegion(f"page {page.number}", piece.text, reason, page.number,
                                      BoundingBox(x=x, y=y, width=w, height=h)))
        above = tokens
    return found


# --------------------------------------------------------------------------- sections

# The sections read as lines: rows rather than their cells, segments through their fields.
_LINE_TYPES = {"row", "table_row", "paragraph", "header", "footer", "footnote", "text", "line"}
_XLSX_RANGE = re.compile(r"^(?P<sheet>.*)!\$?[A-Z]{1,3}\$?(?P<r0>\d+)(?::\$?[A-Z]{1,3}\$?(?P<r1>\d+))?$")
_OBX = re.compile(r"(?:^|\s)OBX\[\d+\]$")
# A FHIR element's JSON path, by the resource it lies in ("Bundle.entry[3].resource", or a
# lone resource's type): CamelCase, so an HL7 segment ("OBX[3]") never reads as one.
_FHIR_RESOURCE = re.compile(r"^(?:Bundle\.entry\[\d+\]\.resource|[A-Z][a-z][A-Za-z]*)(?=[.\[]|$)")


def _places(locator: str) -> frozenset[str]:
    """The lines a locator names, as keys shared by every locator inside them: an XLSX
    range its rows ("S!7"), an HL7 field its segment ("OBX[3]-5" -> "OBX[3]"), a DOCX
    table cell its row ("table 1 row 2 col 3" -> "table 1 row 2"), a FHIR element its
    resource ("Bundle.entry[3].resource.valueQuantity" -> "Bundle.entry[3].resource")."""
    m = _XLSX_RANGE.match(locator)
    if m:
        r0 = int(m["r0"])
        r1 = min(int(m["r1"] or r0), r0 + 10_000)
        return frozenset(f"{m['sheet']}!{r}" for r in range(r0, r1 + 1))
    fhir = _FHIR_RESOURCE.match(locator)
    if fhir:
        return frozenset({fhir[0]})
    key = re.sub(r"(?:-\d+)+$", "", locator.strip())
    return frozenset({re.sub(r"\s+col(?:umn)?\s+\d+$", "", key)})


def related_locators(a: str, b: str) -> bool:
    """Whether two locators name the same line or one lies inside the other ("OBX[3]"
    and "OBX[3]-5", "table 1 row 2" and "table 1 row 2 col 3", "S!A7:F7" and "S!B7")."""
    return bool(_places(a) & _places(b))


def _numbers(text: str) -> set[str]:
    return {n.replace(",", ".").lstrip("+") for n in _NUMBERS.findall(text)}


def _read_elsewhere(f: FactProposal) -> set[str]:
    """Numbers a fact's reading holds that its quote does not print: a reading joined
    from two lines (a blood pressure's systolic and diastolic rows) cites one of them."""
    value = " ".join(str(f.structured_value.get(k) or "") for k in ("value", "systolic", "diastolic"))
    return _numbers(value) - _numbers(f.citation.quote_or_value)


def joined_from(fact: FactProposal, locator: str) -> frozenset[str]:
    """The numbers a fact read from the line ``locator`` names when that line lies just
    beside the one it cites (a blood pressure joined from two rows), else none."""
    here = _places(locator)
    if not any(near in here for key in _places(fact.citation.page_or_section) for near in _beside(key)):
        return frozenset()
    return frozenset(_read_elsewhere(fact))


def _beside(key: str) -> list[str]:
    """The keys of the lines just above and below a line's key ("S!7" -> "S!6", "S!8")."""
    m = re.match(r"^(?P<head>.*?)(?P<n>\d+)$", key)
    if not m:
        return []
    n = int(m["n"])
    return [f"{m['head']}{n - 1}", f"{m['head']}{n + 1}"]


def _section_regions(content: NormalizedContent, facts: list[FactProposal]) -> list[UnreadRegion]:
    # Facts by the lines they cite: a workbook or a batch has thousands of rows and facts.
    cited: dict[str, list[FactProposal]] = {}
    for f in facts:
        if f.citation.page is None:
            for key in _places(f.citation.page_or_section):
                cited.setdefault(key, []).append(f)
    by_locator = {s.locator: s for s in content.sections}
    headers: dict[str, dict[int, _Column]] = {}  # a table's nearest header row so far
    found: list[UnreadRegion] = []
    for s in content.sections:
        if s.section_type == "resource":
            region = _resource_region(s)
            if region is not None and not any(key in cited for key in _places(s.locator)):
                found.append(region)
            continue
        if _OBX.search(s.locator) and s.section_type == "segment":
            region = _observation_region(s, by_locator)
            if region is not None and not any(key in cited for key in _places(s.locator)):
                found.append(region)
            continue
        if not _line_section(s):
            continue
        cells = _cells(s)
        tokens = [_Token(w, col) for col, cell in cells for w in cell.split()]
        _classify(tokens)
        keys = _places(s.locator)
        readers = list({id(f): f for key in keys for f in cited.get(key, ())}.values())
        table = _table_of(s)
        columns: dict[int, _Column] = {}
        if table is not None:
            header = _header_row(cells, tokens)
            if header is not None:
                headers[table] = header
                continue
            columns = headers.get(table, {})
        read = set().union(*(_numbers(" ".join([f.citation.quote_or_value, f.fact_text,
                                                 *map(str, f.structured_value.values())])) for f in readers))
        read |= set().union(*(_read_elsewhere(f) for key in keys for near in _beside(key)
                              for f in cited.get(near, ())))
        by_column = [t for t in tokens if t.seg in columns]
        rest = [t for t in tokens if t.seg not in columns]
        found += _column_regions(s, cells, by_column, columns, readers)
        text_of = dict(cells)
        for piece in _pieces(rest):
            label_cell = _label_cell(piece, text_of) if table is not None else None
            if label_cell is not None:
                _name_keeps_its_numbers(piece)
            reason = _result_reason(piece, label_cell, lambda t: _numbers(t.text) <= read)
            if reason is None:
                continue
            if read and all(_numbers(t.text) <= read for t in piece.of("value")):
                continue
            found.append(UnreadRegion(s.locator, piece.text, reason))
    return found


# --------------------------------------------------------------------------- tables

@dataclass(frozen=True, slots=True)
class _Column:
    """A column whose header names a test or a vital sign: its cells are results."""

    label: str  # the header as printed
    blood_pressure: bool  # a "152/94" under it is one reading


def _cells(s: Section) -> list[tuple[int, str]]:
    """A table row's non-empty cells as (column, text); any other line is one cell."""
    if s.section_type not in ("row", "table_row"):
        return [(0, s.text)]
    raw = s.meta.get("cells")
    if raw:
        pairs = [(c["col"], c["text"]) if isinstance(c, dict) else (c[0], c[1]) for c in raw]
        return [(int(col), str(text)) for col, text in pairs if str(text).strip()]
    return list(enumerate(s.text.split(" | ")))


def _table_of(s: Section) -> str | None:
    """The table a row belongs to, for its header: a sheet, or a DOCX table."""
    if s.section_type == "row":
        return f"sheet {s.meta.get('sheet') or s.locator.split('!')[0]}"
    if s.section_type == "table_row":
        return re.sub(r"\s+row\s+\d+$", "", s.locator)
    return None


def _names_result(label: str) -> _Column | None:
    """A header naming a test (the analyte vocabulary) or a vital sign (its labels)."""
    text = " ".join(label.split())
    sign = sign_of_label(text)
    if sign is not None:
        return _Column(text, sign[0] == "blood_pressure")
    return _Column(text, False) if canonical_analyte(_bare(text)) else None


def _bare(label: str) -> str:
    """A test name without its bracketed unit or method: "Creatinine (umol/L)" -> "Creatinine"."""
    return re.sub(r"\s*[\(\[][^)\]]*[\)\]]\s*", " ", label).strip()


def _header_row(cells: list[tuple[int, str]], tokens: list[_Token]) -> dict[int, _Column] | None:
    """A header row, as the columns it names results in (perhaps none), or None when the
    row is not a header: one prints labels in two or more columns and no value. A row of
    a date and a comment ("2025-11-03 | sample haemolysed") is no header."""
    if len(cells) < 2 or any(t.kind in ("value", "qualitative") for t in tokens):
        return None
    labels = [col for col, _ in cells if any(t.seg == col and t.kind == "text" and _WORD.search(t.text)
                                              for t in tokens)]
    if len(labels) < 2 or 2 * len(labels) < len(cells):
        return None
    return {col: column for col, text in cells if (column := _names_result(text)) is not None}


def _column_regions(s: Section, cells: list[tuple[int, str]], tokens: list[_Token], columns: dict[int, _Column],
                    readers: list[FactProposal]) -> list[UnreadRegion]:
    """The cells under a result column that print a value no fact citing the row reads.
    A fact covers the cell its quote prints (or whose numbers its value holds), one cell
    each: two cells printing "94" are two results."""
    spans, single = set(), []
    for f in readers:
        parts = [p for p in f.citation.quote_or_value.split(" | ") if p.strip()]
        if len(parts) > 1:
            spans |= {_number_run(p) for p in parts}
        else:
            single.append((_number_run(f.citation.quote_or_value), _number_run(str(f.structured_value.get("value")
                                                                                   or ""))))
    elsewhere = set().union(*(_read_elsewhere(f) for f in readers))
    text_of = dict(cells)
    first_col = cells[0][0] if cells else None
    found = []
    for col, column in columns.items():
        mine = [t for t in tokens if t.seg == col]
        values = [t for t in mine if t.kind == "value" and (column.blood_pressure or not _RATIO.match(t.text))]
        if not values and (column.blood_pressure or not any(t.kind == "qualitative" for t in mine)):
            continue
        run = tuple(n for t in values for n in _number_run(t.text))
        if run and (run in spans or set(run) <= elsewhere):
            continue
        if run:
            hit = next((i for i, (quoted, value) in enumerate(single) if run in (quoted, value)), None)
            if hit is not None:
                single.pop(hit)
                continue
        elif readers and any(text_of[col].strip().lower() in f.citation.quote_or_value.lower() for f in readers):
            continue  # a word result ("Negative") quoted by a fact of the row
        shown = ", ".join(t.text for t in values[:4]) or text_of[col].strip()
        kind = "a vital sign" if sign_of_label(column.label) else "a test"
        where = f"{text_of[first_col].strip()} · " if first_col is not None and first_col not in columns else ""
        found.append(UnreadRegion(s.locator, f"{where}{column.label} {text_of[col].strip()}",
                                  f"a value ({shown}) under the column {column.label!r}, which names {kind}"))
    return found


def _number_run(text: str) -> tuple[str, ...]:
    return tuple(n.replace(",", ".").lstrip("+") for n in _NUMBERS.findall(text))


def _label_seg(piece: _Piece) -> int | None:
    return next((t.seg for t in piece.tokens if t.kind == "text" and _WORD.search(t.text)), None)


def _label_cell(piece: _Piece, text_of: dict[int, str]) -> str:
    """The first cell of a row's piece that prints words (a date before it is no label)."""
    seg = _label_seg(piece)
    return text_of.get(seg, "") if seg is not None else ""


def _name_keeps_its_numbers(piece: _Piece) -> None:
    """In a table row whose values stand in cells of their own, a number inside the label
    cell is part of a name ("Sodium chloride 0.9% flushes | 36", "CA 125 | 41")."""
    seg = _label_seg(piece)
    if seg is None or not any(t.kind == "value" and t.seg != seg for t in piece.tokens):
        return
    for t in piece.tokens:
        if t.seg == seg and t.kind in ("value", "unit", "range"):
            t.kind = "text"


def _names_whole(cell: str) -> str | None:
    """How a table cell names a result, when it is the whole name of a test or a sign."""
    text = " ".join(cell.split())
    if not text:
        return None
    if sign_of_label(text) is not None:
        return f"a vital sign ({text})"
    if canonical_analyte(_bare(text)):
        return "a known test"
    return None


# OBX-2 value types of running text: their lines are judged like a page's lines (a report
# split one line per OBX prints "PATIENT NAME:" and dates); every other type is a result.
_TEXT_VALUE_TYPES = frozenset({"TX", "FT", ""})


def _observation_region(segment: Section, by_locator: dict[str, Section]) -> UnreadRegion | None:
    """An HL7 observation with a value: a result by structure (NM, SN, ST, CE ...), or for
    running text (TX, FT) its name (OBX-3's text), value, unit, range and flag (OBX-5 to
    8) judged by the rule for a page's line: a text report's "PATIENT NAME:" is no result,
    "potassium 6.9 mmol/L" written as text is."""
    def field(n: int) -> str:
        section = by_locator.get(f"{segment.locator}-{n}")
        return section.text.strip() if section is not None else ""

    parts = field(3).split("^")
    name = parts[1] if len(parts) > 1 and parts[1] else parts[0]
    value = "".join(field(5).split("^"))  # a structured number "^>^60" as printed: ">60"
    cells = [name, value, field(6).split("^")[0], field(7), field(8)]
    if value and field(2).upper() not in _TEXT_VALUE_TYPES:
        return UnreadRegion(segment.locator, " ".join(c for c in cells if c),
                            f"an observation with a value ({value[:40]})")
    if value and not_resulted(value) and canonical_analyte(name):
        # "LDL Cholesterol calculated | Unable to calculate: ...": the lab's word on a test it
        # names, which a person must see even though no value goes with it.
        return UnreadRegion(segment.locator, " ".join(c for c in cells if c),
                            f"a known test the report gives no result for ({value[:40]})")
    tokens = [_Token(w, i) for i, cell in enumerate(cells) for w in cell.split()]
    _classify(tokens)
    for piece in _pieces(tokens):
        reason = _result_reason(piece)
        if reason is not None:
            return UnreadRegion(segment.locator, " ".join(c for c in cells if c), reason)
    return None


def _resource_region(s: Section) -> UnreadRegion | None:
    """A FHIR Observation is a result by structure (as an OBX is), valid or not, unless its
    sender withdrew it, it only groups others, or its category says it is no result
    (social history, a survey)."""
    meta = s.meta
    categories = set(meta.get("categories") or ())
    if (meta.get("resource_type") != "Observation" or meta.get("withdrawn") or meta.get("grouping")
            or (categories & OTHER_CATEGORIES and not categories & LAB_CATEGORIES)):
        return None
    reason = ("an observation that failed FHIR R4 validation" if not meta.get("valid")
              else "an observation no finding reads")
    return UnreadRegion(s.locator, str(meta.get("summary") or "Observation")[:200], reason)


def _line_section(s: Section) -> bool:
    return s.section_type in _LINE_TYPES or (s.section_type == "cell" and s.meta.get("only_cell_in_row"))


# --------------------------------------------------------------------------- entry point

def unread_content(content: NormalizedContent, facts: Iterable[FactProposal]) -> list[UnreadRegion]:
    """Every result-like piece of the document that no fact cites, in reading order.
    ``facts`` are the facts kept for the document, their citations verified (a citation
    the verifier could not find again covers nothing)."""
    facts = list(facts)
    regions: list[UnreadRegion] = []
    for page in content.pages:
        cites = [(f.citation.bounding_box, _fact_tokens(f)) for f in facts
                 if f.citation.page == page.number and f.citation.bounding_box is not None]
        regions += _page_regions(page, cites)
    if content.sections:
        regions += _section_regions(content, facts)
    return regions


def summary_sentence(regions: Sequence[UnreadRegion]) -> str:
    """"3 results on page 1 were not read", "1 result in sheet Chemistry was not read"."""
    n = len(regions)
    noun = "result" if n == 1 else "results"
    verb = "was" if n == 1 else "were"
    pages = sorted({r.page for r in regions if r.page is not None})
    places = list(dict.fromkeys(_place(r.locator) for r in regions if r.page is None))
    where = []
    if pages:
        where.append(("on page " if len(pages) == 1 else "on pages ") + _listing([str(p) for p in pages]))
    if places:
        where.append("in " + _listing(places[:3]) + (" and more" if len(places) > 3 else ""))
    return f"{n} {noun} {' and '.join(where)} {verb} not read" if where else f"{n} {noun} {verb} not read"


def _place(locator: str) -> str:
    """A section's place in a reader's words: a sheet, a paragraph, a message's segment."""
    if "!" in locator:
        return "sheet " + locator.split("!")[0].strip("'")
    return locator


def _listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
