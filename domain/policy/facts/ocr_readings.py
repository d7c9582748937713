"""What an OCR-garbled test name or unit stands for, read against the analyte vocabulary
(pure). Used only on words OCR read, and only as a proposal: every result it touches
goes to a person with the printed reading beside the one taken.

A scanned or faxed page loses a letter here and there ("Cholestorol Total",
"Triglycorides", "Platolets"; units "mye/dl", "g/d.", "mmol/L."). The vocabulary knows
the printed names and each analyte's units, so a reading one or two letters away from
exactly one of them can be proposed. The bounds keep the clinically close pairs apart:

* a word of three letters or fewer must match exactly (or by ``analytes.lookalike``:
  a digit read as a letter, "Alc" for "A1c"), so "LOL", "IDL" or "ADL" never becomes
  LDL or HDL, nor "Pi" PT;
* a longer word may differ by one edit per five letters (at least one), and by at most
  one letter in length ("Creatine" is another substance, not a garbled "Creatinine");
* the closest reading must belong to one analyte and be strictly closer than any other
  analyte's, so a garble halfway between two tests settles nothing;
* a unit is read only against the units of the result's own analyte, and a garble as
  close to two of them ("mg/d": mg/dL or mg/L?) is not read at all.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from domain.policy.facts.analytes import (
    analyte,
    known_name,
    lookalike,
    normalize_name,
    normalize_unit,
    vocabulary_names,
)

# Words this short are abbreviations whose single letters carry the meaning (LDL/HDL).
_EXACT_UP_TO = 3
# Edits allowed per this many letters of a longer word.
_LETTERS_PER_EDIT = 5


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance: insertions, deletions and substitutions, one each."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def one_edit_apart(a: str, b: str) -> bool:
    """``edit_distance(a, b) == 1``, told in one pass over the two words."""
    if len(a) < len(b):
        a, b = b, a
    if len(a) - len(b) > 1 or a == b:
        return False
    i = next((k for k, (ca, cb) in enumerate(zip(a, b)) if ca != cb), len(b))
    # Past the first difference, the rest agrees after one substitution or one deletion.
    return a[i + 1:] == b[i + 1:] if len(a) == len(b) else a[i + 1:] == b[i:]


# Letters a low-resolution scan or fax prints alike (the bowl of an e closes into an o
# or opens into a c; a thin l, i, t or f loses its crossbar or dot).
_ALIKE = (frozenset("eoca"), frozenset("iltf1"))
# How many such letters a long word may have misread and still be taken for a label word.
MAX_ALIKE_LETTERS = 2
_ALIKE_MIN_LETTERS = 8


def alike_letters_apart(a: str, b: str) -> bool:
    """Whether two words of the same length, eight letters or more, differ only in up to
    ``MAX_ALIKE_LETTERS`` letters OCR misreads for each other ("Roforence" for
    "Reference", "Collectod" for "Collected"): a garble more than one edit away that is
    still no other word's."""
    if len(a) != len(b) or len(a) < _ALIKE_MIN_LETTERS or a == b:
        return False
    differ = [(x, y) for x, y in zip(a, b) if x != y]
    return len(differ) <= MAX_ALIKE_LETTERS and all(any(x in g and y in g for g in _ALIKE) for x, y in differ)


def alike_spellings(word: str) -> str:
    """A regular expression for ``word`` as a scan may print it: each letter of a group
    OCR prints alike (``_ALIKE``) may be any letter of its group ("allergio", "a1lergic"
    for "allergic"). For words no text layer spells otherwise."""
    out = []
    for ch in word.lower():
        group = next((g for g in _ALIKE if ch in g), None)
        out.append(f"[{''.join(sorted(group))}]" if group else re.escape(ch))
    return "".join(out)


def speck_accents(text: str) -> str:
    """The accented letters of an OCR'd name ("é" of "Albutérol"), or "": OCR reads a
    speck of a fax or scan over a letter as its accent, and the name then reads as a
    word nobody wrote. A name read by OCR with one is held for a person, who sees the
    page (a name that really carries one, "Ácido", costs a review, not a wrong chart)."""
    marked = (c for c in text if any(unicodedata.combining(m) for m in unicodedata.normalize("NFKD", c)))
    return "".join(dict.fromkeys(marked))


def _fold(text: str) -> str:
    """Accents off ("Triglycérides" is OCR's e with a speck), as the vocabulary is ASCII."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


_PARTS = re.compile(r"[\s\-/]+")


def _words(name: str) -> list[str]:
    """A name's comparable words: normalised, accents off, a word's trailing dot dropped,
    and split at hyphens and slashes, so the "HDL" of "HDL-Cholesterol" is a short word
    held to an exact match like the one of "HDL Cholesterol"."""
    parts = _PARTS.split(normalize_name(_fold(name)))
    return [p.strip(".") for p in parts if p.strip(".")]


def _word_distance(printed: str, known: str) -> int | None:
    """Edits from a printed word to a vocabulary word, or None when too far to stand for it."""
    if printed == known or lookalike(printed, known):
        return 0
    if len(known) <= _EXACT_UP_TO or len(printed) <= _EXACT_UP_TO or abs(len(known) - len(printed)) > 1:
        return None  # OCR swaps letters and drops or adds one: "Creatine" is not "Creatinine"
    d = edit_distance(printed, known)
    return d if d <= max(1, len(known) // _LETTERS_PER_EDIT) else None


@lru_cache(maxsize=1)
def _names_by_length() -> dict[int, list[tuple[tuple[str, ...], str]]]:
    """Vocabulary names as word tuples, grouped by their number of words."""
    out: dict[int, list[tuple[tuple[str, ...], str]]] = {}
    for name in vocabulary_names():
        words = tuple(_words(name))
        out.setdefault(len(words), []).append((words, name))
    return out


@lru_cache(maxsize=2048)
def ocr_name_reading(printed: str) -> str | None:
    """The name a garbled printed test name stands for, written with the printed words'
    case ("Cholestorol Total" -> "Cholesterol Total"), or None when it is not close to
    exactly one analyte's names (see the module's bounds). Callers use it only on a
    name the vocabulary does not know as printed."""
    words = _words(printed)
    if not words or known_name(printed):
        return None
    best: dict[str, tuple[int, tuple[str, ...]]] = {}  # analyte id -> (edits, vocabulary words)
    names = vocabulary_names()
    for known, name in _names_by_length().get(len(words), ()):
        total = 0
        for p, k in zip(words, known):
            d = _word_distance(p, k)
            if d is None:
                break
            total += d
        else:
            for analyte_id in names[name]:
                if analyte_id not in best or total < best[analyte_id][0]:
                    best[analyte_id] = (total, known)
    if not best:
        return None
    ranked = sorted(best.items(), key=lambda item: item[1][0])
    if len(ranked) > 1 and ranked[1][1][0] <= ranked[0][1][0]:
        return None  # as close to two analytes: the garble settles nothing
    reading = _in_printed_case(printed, ranked[0][1][1])
    return None if reading == printed else reading


def lookalike_known_name(printed: str) -> str | None:
    """The vocabulary name, in the printed case, that an OCR'd name the vocabulary does
    not know is close to, or None: one letter off in one word, short words included
    ("LOL Cholesterol": LDL Cholesterol), or up to ``_NEAR_EDITS`` edits in longer words, one per
    ``_NEAR_LETTERS_PER_EDIT`` letters and at most one letter longer or shorter
    ("Potassiuin": Potassium).

    Too close to read it as that test (a short word's letters carry the meaning: "IDL"
    is a test of its own; two edits may be two tests), too close to chart it as printed:
    a confident misread charts a value under a name no test has, or under a test that
    was never ordered."""
    words = _words(printed)
    if not words or known_name(printed):
        return None
    for known, _ in _names_by_length().get(len(words), ()):
        diffs = [(p, k) for p, k in zip(words, known) if p != k and not lookalike(p, k)]
        one_letter = len(diffs) == 1 and len(diffs[0][0]) == len(diffs[0][1]) \
            and edit_distance(*diffs[0]) == 1 and any(ch.isalpha() for ch in diffs[0][1])
        if one_letter or (diffs and _near_words(diffs)):
            return _in_printed_case(printed, known)
    return None


# A longer garble still close to a known name: at most this many edits in all, one per
# this many letters of the known word, in words longer than ``_EXACT_UP_TO``.
_NEAR_EDITS = 2
_NEAR_LETTERS_PER_EDIT = 4


def _near_words(diffs: list[tuple[str, str]]) -> bool:
    total = 0
    for p, k in diffs:
        if min(len(p), len(k)) <= _EXACT_UP_TO or abs(len(p) - len(k)) > 1 or not k.isalpha():
            return False
        d = edit_distance(p, k)
        if d > max(1, len(k) // _NEAR_LETTERS_PER_EDIT):
            return False
        total += d
    return total <= _NEAR_EDITS


def _in_printed_case(printed: str, known: tuple[str, ...]) -> str:
    """The vocabulary words in the case the page printed them: "CHOLESTOROL" stays
    upper case, "Platolets" capitalised; a short word keeps its printed letters but
    for the digits OCR read as letters ("Alc" -> "A1c")."""
    tokens = [t for t in (re.sub(r"^[^\w]+|[^\w]+$", "", tok) for tok in _PARTS.split(_fold(printed))) if t]
    if len(tokens) != len(known):
        return " ".join(known).title()
    out = []
    for token, word in zip(tokens, known):
        if token.lower() == word:
            out.append(token)
        elif len(token) == len(word) and lookalike(token.lower(), word):
            out.append("".join(k if k.isdigit() else t for t, k in zip(token, word)))
        elif _mostly_upper(token):
            out.append(word.upper())
        elif len(token) == len(word):
            out.append("".join(k.upper() if t.isupper() else k for t, k in zip(token, word)))  # "oGFR" -> "eGFR"
        elif token[:1].isupper():
            out.append(word[:1].upper() + word[1:])
        else:
            out.append(word)
    return " ".join(out)


def _mostly_upper(token: str) -> bool:
    letters = [c for c in token if c.isalpha()]
    return len(letters) > 1 and sum(c.isupper() for c in letters) * 2 > len(letters)


# Punctuation OCR leaves on a unit's edges: "mg/dl," "mmol/L." "(mg/dL".
_UNIT_EDGES = re.compile(r"^[\s,.;:'\"()]+|[\s,.;:'\"()]+$")
# Units this short differ from each other by one letter (mL/mg, U/L vs g/L): never guessed.
_UNIT_EXACT_UP_TO = 2
_UNIT_EDITS = 2


def ocr_unit_reading(printed: str, analyte_id: str | None) -> str | None:
    """The unit of ``analyte_id``'s own list that a garbled printed unit stands for
    ("mye/dl" -> "mg/dL" for creatinine), or None: when the printed unit is already one
    of them up to edge punctuation or case, when the analyte is unknown, or when the
    garble is as close to two of them."""
    entry = analyte(analyte_id or "")
    cleaned = _UNIT_EDGES.sub("", printed or "")
    if entry is None or not cleaned:
        return None
    key = normalize_unit(cleaned)
    units = {normalize_unit(u): u for u in entry.units if u}
    if key in units:
        # Edge punctuation or case only ("mg/dL.", "x10E3/UL"): the same unit; what the
        # page printed stays, for the unit rules and a reviewer to see as printed.
        return None
    if len(key) <= _UNIT_EXACT_UP_TO:
        return None
    scored = sorted((edit_distance(key, k), u) for k, u in units.items() if len(k) > _UNIT_EXACT_UP_TO)
    if not scored or scored[0][0] > _UNIT_EDITS:
        return None
    if len(scored) > 1 and scored[1][0] == scored[0][0]:
        return None
    return scored[0][1]
