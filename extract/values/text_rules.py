"""Rules for text read off a page (typed PDF or OCR) that the other formats never meet.

On a page, a result arrives as loose words: a flag may be glued to its number
("11.8H"), OCR may put letters into a number ("1l.8") or into the "10" of a unit
("xlOE3/uL"), and a bare "A" or "<" beside a value must be told apart from a unit or a
range. Those questions are answered here; what a date, number, range or flag *means*
is answered once for every format in ``extract.values.numbers`` (and ``extract.values.dates``,
``extract.values.ranges``, ``extract.values.flags`` beside it). Person names, printed on lab reports
and intake forms alike, are read here too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.policy.identity.gate import OCR_NAME_LOOKALIKES
from extract.values import numbers as V
from extract.values.flags import flag_meaning

# --------------------------------------------------------------------------- names

# Any letter, not only ASCII: "José Núñez-Aragón" is a name like any other.
_LETTER = r"[^\W\d_]"
_NAME_PART = rf"{_LETTER}(?:{_LETTER}|['\u2019])*(?:-{_LETTER}(?:{_LETTER}|['\u2019])*)*\.?"
_HONORIFIC = re.compile(r"^(?:mr|mrs|ms|miss|mx|dr)\.?$", re.I)


def is_honorific(word: str) -> bool:
    """"Dr", "Mrs.": a title before a name, its full stop its own."""
    return bool(_HONORIFIC.match(word.strip()))


@dataclass(frozen=True, slots=True)
class PersonName:
    first: str
    last: str
    middle: str = ""

    @property
    def display(self) -> str:
        """First [Middle] Last, capitalised sensibly whatever case it was printed in."""
        parts = [self.first, self.middle, self.last]
        return " ".join(_nice_case(p) for p in parts if p)


def _nice_case(part: str) -> str:
    if part.isupper() or part.islower():
        return "-".join(p[:1].upper() + p[1:].lower() for p in part.split("-"))
    return part


# What OCR puts for a letter of a name ("IKWUEMES!-DALGAARD", "J0HN"): the identity
# gate's list (``OCR_NAME_LOOKALIKES``) judges them, this module only keeps them.
_LOOKALIKE = f"[{re.escape(''.join(OCR_NAME_LOOKALIKES))}]"
_NAME_LOOKALIKES = re.compile(rf"(?<={_LETTER}){_LOOKALIKE}|{_LOOKALIKE}(?={_LETTER})")


def parse_person_name(text: str, *, ocr: bool = False) -> PersonName | None:
    """Read "LAST, FIRST M", "First M. Last" or "First Last" (hyphens kept).

    Returns ``None`` for anything with digits or fewer than two name parts, so a
    label's stray value ("DOB 01/02/1960") is never taken for a name. ``ocr``: the
    text was read by OCR, and a look-alike character beside a letter ("!" or "1" for
    i, "0" for o) is kept as read inside the name, for the identity gate to judge.
    """
    text = " ".join(text.split()).strip(" ;")
    if ocr and text:
        shape = _NAME_LOOKALIKES.sub("a", text)  # same length: validate the shape, keep the text
        if shape != text:
            parsed = parse_person_name(shape)
            if parsed is None:
                return None
            return _same_positions(parsed, shape, text)
    if not text or any(ch.isdigit() for ch in text):
        return None
    if "," in text:
        last, _, rest = text.partition(",")
        given = rest.split()
        family = last.split()
        if not given or not family:
            return None
    else:
        tokens = [t for t in text.split() if not _HONORIFIC.match(t)]
        if len(tokens) < 2:
            return None
        given, family = tokens[:-1], [tokens[-1]]
    tokens = given + family
    if not all(re.fullmatch(_NAME_PART, t) for t in tokens):
        return None
    first = given[0].rstrip(".")
    middle = " ".join(t.rstrip(".") for t in given[1:])
    return PersonName(first=first, last=" ".join(family), middle=middle)


def _same_positions(parsed: PersonName, shape: str, text: str) -> PersonName:
    """``parsed`` (read from ``shape``) with each part taken from ``text`` at the same place."""
    def original(part: str) -> str:
        if not part:
            return part
        at = shape.find(part)
        return text[at:at + len(part)] if at >= 0 else part
    return PersonName(first=original(parsed.first), last=original(parsed.last), middle=original(parsed.middle))


# --------------------------------------------------------------------------- units read by OCR

# OCR reads the "10" of a power-of-ten unit as "lO", "1o", "IO" ... A unit comes from
# a closed vocabulary in which only "10" can stand there, so that one spot is
# repaired; nothing else in a unit (and nothing in a value) is ever rewritten. A "10"
# read with one stroke too many ("1l0", "lI0", "1O0") can only have been "10" as well
# (no power-of-ten unit has another number there), but one character was dropped to
# say so: ``ocr_unit_doubt`` names it and the result goes to review.
_LOOKALIKE_ONE, _LOOKALIKE_ZERO = "1lI|", "0oO"
_POWER_OF_TEN = re.compile(
    rf"^(?P<x>[xX\u00d7]\s?)(?P<ten>[{_LOOKALIKE_ONE}]{{1,2}}[{_LOOKALIKE_ZERO}]{{1,2}})"
    r"(?P<rest>[Ee^*\u00b0\u00ba]\d{1,2}/[A-Za-z\u00b5\u03bc]+)$"
)
# A fax prints the caret of "x10^9/L" as a degree sign: no unit has a degree there.
_CARET_READ_AS = "\u00b0\u00ba"


def _ten(unit: str) -> re.Match | None:
    """The power-of-ten match of ``unit`` when its "10" is OCR's reading of a ten: two
    characters, or three with a look-alike letter among them (printed digits "100" are
    left alone)."""
    m = _POWER_OF_TEN.match(unit.strip())
    if m is None:
        return None
    ten = m.group("ten")
    if len(ten) > 3 or (len(ten) == 3 and ten.isdigit()):
        return None
    return m


def repair_ocr_unit(unit: str) -> str:
    """Undo OCR's letter-for-digit swap in the "10" of "x10E3/uL"; anything else as is.

    "xlOE3/uL" -> "x10E3/uL", "x 1oE6/uL" -> "x 10E6/uL", "x1l0E3/uL" -> "x10E3/uL"
    (a stroke too many: see ``ocr_unit_doubt``), and the caret a fax read as a degree
    sign, "x10°9/L" -> "x10^9/L"; "%o" and "x100E3/uL" stay as read.
    """
    m = _ten(unit)
    if m is None:
        return unit
    rest = m.group("rest")
    if rest[0] in _CARET_READ_AS:
        rest = "^" + rest[1:]
    return f"{m.group('x')}10{rest}"


def ocr_unit_doubt(unit: str) -> str | None:
    """Why a repaired unit needs a person: its "10" was read with a character too many."""
    m = _ten(unit)
    if m is None or len(m.group("ten")) == 2:
        return None
    return (f"unit read as {unit.strip()!r}: a character too many in its '10', "
            f"taken as {repair_ocr_unit(unit)!r}")


# --------------------------------------------------------------------------- values and flags as words on a page

# A flag glued to its number: "11.8H", "139N", "6.8HH", "2.1AA", "7.1CRIT", "6.1PANIC", "6.9!!", "11.2*".
# Capitals and symbols only, and only what ``is_flag_word`` accepts ("10h", "37.0C" are no
# flags); a glued "V" is more likely a unit or OCR noise than a down arrow.
# OCR may read the gap before the flag as a point or comma ("7.9.H", "105,H").
_INLINE_FLAG = re.compile(r"^(?P<value>.*?\d)[.,]?\s*(?P<flag>[A-UW-Z*!\u2191\u2193]{1,8})$")
_VALUE = re.compile(rf"^(?:(?:{V.COMPARATOR})\s?)?(?:{V.NUMBER})(?::\d+)?$")


def is_flag_word(text: str) -> bool:
    """A word that is a flag when it stands beside a value on a page ("H", "HH",
    "Abnormal", "CRIT", "critical high"); codes that only mean a flag in a flag field
    ("<", "S", "POS", "C") are not."""
    return flag_meaning(text, in_text=True) is not None


def is_value(text: str) -> bool:
    """A result value as printed: a number (with comparator or titre) or a qualitative word."""
    t = text.strip()
    return bool(_VALUE.match(t)) or V.is_qualitative(t)


# Letters OCR puts where a digit was printed: l/I/| for 1, O/o for 0.
_DIGIT_LOOKALIKES = str.maketrans({"l": "1", "I": "1", "|": "1", "O": "0", "o": "0"})


def garbled_number(text: str) -> bool:
    """A token that is not a value but would be one with OCR's digit look-alikes
    read as digits ("1l.8", "l3.1", "1O5"). Such a value is never rewritten: "1l.8"
    may be 11.8, or 1.8 with a speck read as "l". The caller sends it to review."""
    t = text.strip()
    if not any(c.isdigit() for c in t) or is_value(t) or split_value_flag(t) is not None:
        return False
    return split_value_flag(t.translate(_DIGIT_LOOKALIKES)) is not None


def split_value_flag(text: str) -> tuple[str, str | None] | None:
    """Separate a printed result from an inline flag: "7.9 H" -> ("7.9", "H"),
    "11.8H" -> ("11.8", "H"), "7.9.H" -> ("7.9", "H"), "<0.5" -> ("<0.5", None), "POS" -> ("POS", None).
    ``None`` when the text is not a result value at all.
    """
    t = " ".join(text.split())
    if is_value(t):
        return t, None
    parts = t.rsplit(" ", 1)
    if len(parts) == 2 and is_value(parts[0]) and is_flag_word(parts[1]):
        return parts[0], parts[1]
    m = _INLINE_FLAG.match(t)
    if m and is_value(m.group("value")) and is_flag_word(m.group("flag")):
        return m.group("value"), m.group("flag")
    return None
