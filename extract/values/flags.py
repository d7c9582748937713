"""The flag rule: what abnormal flag a printed result is stored with (pure).

The central lab rule is :func:`resolve_flag`: printed flags first (the vocabulary below,
HL7 table 0078 plus what reports and spreadsheets print), then an in/out-of-range column,
then the value compared with its reference range (:func:`derive_flag`). A critical
result is never downgraded: a printed critical flag, or a value past printed critical
limits, always ends as ``critical_high`` or ``critical_low``. A flag word or critical
limits the rules cannot read are never dropped in silence: ``FlagReading.doubts`` names
them, and every extractor sends such a result to review. Ranges and limits are read by
``extract.values.ranges``; numbers and words by ``extract.values.numbers``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Iterable, Mapping

from domain.policy.facts.certainty import decimal_separator_doubt
from domain.policy.facts.chart_rules import CRITICAL_FLAGS
from extract.values.ranges import (
    CriticalLimits, critical_direction, labelled_critical_limits, parse_critical_limits, parse_range, range_problem,
)
from extract.values.numbers import RangeBounds, normalize_ws, value_bounds

# A qualitative result and a qualitative range compare by meaning: "Not detected"
# against "Negative" is normal, "Positive" against it abnormal.
_NEGATIVE_LIKE = frozenset({"negative", "neg", "non-reactive", "nonreactive", "non reactive", "not detected",
                            "not-detected", "none detected", "not isolated", "none", "absent", "no growth",
                            "normal", "within normal limits", "nl", "wnl"})
_POSITIVE_LIKE = frozenset({"positive", "pos", "reactive", "detected", "present", "isolated", "abnormal",
                            "presumptive positive"})



def _polarity(text: str) -> str | None:
    t = normalize_ws(text or "").lower().strip("()[]")
    if t in _NEGATIVE_LIKE:
        return "negative"
    if t in _POSITIVE_LIKE:
        return "positive"
    return None


# Printed flag -> meaning. "critical" is a critical flag without a direction (resolved in
# ``resolve_flag``). Keys are upper case with single spaces.
_FLAGS: dict[str, str] = {
    **dict.fromkeys(["N", "NL", "NORMAL", "WNL", "WITHIN NORMAL LIMITS", "IN RANGE", "WITHIN RANGE"], "normal"),
    # Arrows and triangles pointing up or down say the same as H and L.
    **dict.fromkeys(["H", "HI", "HIGH", "^", "\u2191", "\u25b2", "\u25b4"], "high"),
    **dict.fromkeys(["L", "LO", "LOW", "V", "\u2193", "\u25bc", "\u25be"], "low"),
    **dict.fromkeys(["HH", "H*", "*H", "CH", "H!", "!H", "\u2191\u2191", "CRITICAL HIGH", "CRIT HIGH", "PANIC HIGH",
                     "HIGH CRITICAL", "CRITICALLY HIGH", "CRITICAL H"], "critical_high"),
    **dict.fromkeys(["LL", "L*", "*L", "CL", "L!", "!L", "\u2193\u2193", "CRITICAL LOW", "CRIT LOW", "PANIC LOW",
                     "LOW CRITICAL", "CRITICALLY LOW", "CRITICAL L"], "critical_low"),
    **dict.fromkeys(["AA", "CRIT", "CRITICAL", "PANIC", "!!", "CRITICAL VALUE", "PANIC VALUE"], "critical"),
    **dict.fromkeys(["A", "AB", "ABN", "ABNORMAL", "*", "!", "OUT OF RANGE", "OUTSIDE RANGE"], "abnormal"),
}
# Codes that mean a flag only where a flag is expected (an HL7 OBX-8, a flag column): in
# running text beside a value "<", "S", "R", "POS" or "C" (Celsius) mean something else.
_FIELD_ONLY_FLAGS: dict[str, str] = {
    **dict.fromkeys(["NEG", "NEGATIVE", "NR", "ND", "NOT DETECTED", "S"], "normal"),
    **dict.fromkeys(["HU", ">"], "high"),
    **dict.fromkeys(["LU", "<"], "low"),
    "C": "critical",
    **dict.fromkeys(["POS", "POSITIVE", "DET", "DETECTED", "RR", "R", "I", "MS", "W", "TOX"], "abnormal"),
}
_FLAG_RANK = {"normal": 1, "abnormal": 2, "high": 3, "low": 3}


def _flag_key(raw: str) -> str:
    # NFKC: "‼" (one glyph) is the "!!" of the vocabulary, a full-width "Ｈ" an "H".
    return normalize_ws(unicodedata.normalize("NFKC", raw or "")).upper().strip("()[]").rstrip(".:")


FlagKey = Mapping[str, str]  # a page's own flag key: printed symbol (``_flag_key`` form) -> meaning


def fared_flag(code: str | None) -> str:
    """The flag of a susceptibility printed R, I or S (``lab_vocabulary.susceptibility_code``),
    as an OBX-8 of R or S reads: abnormal or normal; "unknown" for any other code or none."""
    meaning = flag_meaning(code) if code else None
    return meaning if meaning in ("normal", "abnormal") else "unknown"


def flag_meaning(raw: str, *, in_text: bool = False, key: FlagKey | None = None) -> str | None:
    """What one printed flag says: an AbnormalFlag value, "critical" (no direction), or
    None when it is not a flag. ``in_text``: the token stands beside a value in running
    text, where only unmistakable flags count. ``key``: the flag key the document
    prints (``read_flag_key``); it overrides the default vocabulary for that document."""
    k = _flag_key(raw)
    if not k:
        return None
    if key and k in key:
        return key[k]
    if key and (marked := _marked_direction(k, key)):
        return marked
    if (starred := _STARRED_WORD.fullmatch(k)) is not None and k not in _FLAGS:
        k = starred.group(1)  # "*CRIT*", "**HIGH**": a flag word set off by asterisks
    return _FLAGS.get(k) or (None if in_text else _FIELD_ONLY_FLAGS.get(k))


# A flag word set off by asterisks on both sides ("*CRIT*", "** PANIC **").
_STARRED_WORD = re.compile(r"\*+\s*([A-Z][A-Z ]{2,}?)\s*\*+")


def _marked_direction(k: str, key: FlagKey) -> str | None:
    """A direction letter with a sign the page's key says only marks a result outside
    its range ("*H" where "* denotes result outside the reference range"): high or low,
    not the critical the sign would add without that key."""
    for sign, meaning in key.items():
        if meaning != "abnormal" or sign.isalnum() or len(k) <= len(sign):
            continue
        rest = k[len(sign):] if k.startswith(sign) else k[:-len(sign)] if k.endswith(sign) else ""
        if rest in ("H", "L"):
            return _FLAGS[rest]
    return None


# --------------------------------------------------------------------------- a page's flag key

# Words that introduce a key line ("Key:", "Flags:", "Legend -").
_KEY_LABELS = frozenset({"KEY", "FLAGS", "FLAG", "LEGEND", "FLAG KEY", "ABNORMAL FLAGS", "RESULT FLAGS", "NOTE"})
# Meaning words a key line may use beyond the flag vocabulary itself.
_KEY_MEANINGS: dict[str, str] = {
    **dict.fromkeys(["ABOVE RANGE", "ABOVE REFERENCE RANGE", "ABOVE NORMAL", "RAISED", "ELEVATED", "INCREASED"],
                    "high"),
    **dict.fromkeys(["BELOW RANGE", "BELOW REFERENCE RANGE", "BELOW NORMAL", "DECREASED", "REDUCED"], "low"),
    **dict.fromkeys(["CRITICAL RESULT", "PANIC RESULT", "ALERT", "CRITICAL/PANIC"], "critical"),
    **dict.fromkeys(["OUTSIDE REFERENCE RANGE", "OUTSIDE REFERENCE INTERVAL", "OUTSIDE NORMAL RANGE",
                     "OUT OF REFERENCE RANGE", "ABNORMAL RESULT", "FLAGGED"], "abnormal"),
}
_KEY_SEPARATORS = frozenset({"=", ":", "-", "\u2013", "\u2014", ",", ";", "|", "\u00b7", "\u2022"})
# A key written as a sentence: "* denotes result outside the reference range".
_KEY_VERBS = frozenset({"DENOTES", "INDICATES", "MEANS", "SIGNIFIES", "MARKS", "IS", "="})
# Words a written-out meaning carries that say nothing of it ("a result outside the range").
_KEY_FILLER = frozenset({"A", "AN", "THE", "RESULT", "RESULTS", "VALUE", "VALUES"})
_KEY_SPLIT = re.compile(r"\s*([=:])\s*|\s+")
_MAX_MEANING_WORDS = 3
_MAX_MEANING_TOKENS = 6  # the meaning's words and its filler


def _key_meaning(tokens: list[str], sentence: bool = False) -> str | None:
    """The meaning ``tokens`` spell, or None. ``sentence``: the key is written as one
    ("* denotes a result outside the reference range"), so its filler words are
    dropped; in a key of pairs ("!! critical a high v low", a fax's "▲" read as "a")
    every word counts."""
    words = [w for w in tokens if w.upper().rstrip(".") not in _KEY_FILLER] if sentence else tokens
    if not words or len(words) > _MAX_MEANING_WORDS:
        return None
    text = " ".join(words)
    if not text or not all(any(c.isalpha() for c in w) for w in words):
        return None
    k = _flag_key(text)
    if k in _KEY_MEANINGS:
        return _KEY_MEANINGS[k]
    # A meaning is a word or phrase of the vocabulary written out ("high", "critical
    # high"), not a one- or two-letter code ("H"), which would be another symbol.
    return _FLAGS.get(k) if len(k) > 2 else None


def _is_symbol(token: str) -> bool:
    """What a key explains: a short code or a sign ("▲", "‼", "*", "H", "HH", "(L)")."""
    t = token.strip("()[]")
    if not t or len(t) > 3:
        return False
    return not any(c.isalnum() for c in t) or (t.isalpha() and t.isupper())


def read_flag_key(text: str) -> dict[str, str] | None:
    """A printed flag key -> {symbol: meaning}, or None when ``text`` is not one.

    "▲ high  ▼ low  ‼ critical", "‼ = critical", "Key: * abnormal",
    "H High L Low HH critical high", "(H) above range": pairs of a symbol or code and
    its meaning (a word or phrase of the flag vocabulary), and nothing else on the line
    apart from a leading "Key:"/"Flags:" label and separators. One pair is enough for a
    sign; letter codes need two pairs (so that "A abnormal" in prose is not a key).
    """
    tokens = [t for t in _KEY_SPLIT.split(normalize_ws(text or "")) if t]
    labelled = False
    while tokens and tokens[0].rstrip(":").upper() in _KEY_LABELS | {"FLAG", "RESULT"}:
        tokens.pop(0)
        labelled = True
    # A dash defined by an "=" after it is a sign of the key ("+ = high, - = low"), no separator.
    tokens = [t for k, t in enumerate(tokens) if t not in _KEY_SEPARATORS
              or t in ("-", "\u2013") and k + 1 < len(tokens) and tokens[k + 1] == "="]
    pairs: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        sym = tokens[i].rstrip(",;")
        if not _is_symbol(sym):
            if pairs and (labelled or len(pairs) >= 2):
                break  # "... ‼ critical — phoned to ward": a remark after the key
            return None
        verb = int(i + 1 < len(tokens) and tokens[i + 1].upper() in _KEY_VERBS)
        longest = _MAX_MEANING_TOKENS if verb else _MAX_MEANING_WORDS
        for n in range(min(longest, len(tokens) - i - 1 - verb), 0, -1):
            words = [w.rstrip(",;") for w in tokens[i + 1 + verb : i + 1 + verb + n]]
            meaning = _key_meaning(words, sentence=bool(verb))
            if meaning is not None:
                pairs[_flag_key(sym)] = meaning
                i += 1 + verb + n
                break
        else:
            return None
    if not pairs:
        return None
    signs = [s for s in pairs if not s.isalpha()]
    return pairs if signs or len(pairs) >= 2 else None


def derive_flag(value: str | None, reference_range: str | None) -> str | None:
    """Compare a printed result with its printed range: "high", "low", "normal",
    "abnormal" or None when the two cannot be compared.

    Numbers are compared as intervals: "<0.1" against "<0.4" is normal, ">90" against
    ">60" normal, "<5" against "15-150" low, "<4" against "0-5" normal (nothing is
    below a range's 0), but "<10" against "5-20" could lie on either side of 5 and
    gives None. Words compare by meaning: "Positive" against a
    "Negative" range is abnormal, "Not detected" against "Negative" normal, a result
    printed as "Abnormal" is abnormal; other words only match themselves ("Yellow"/"Yellow").
    A decimal comma ("7,9" against "12,0-16,0") is read as such; a text that could hold
    both a decimal comma and a thousands separator is not compared.
    """
    v_text, r_text = normalize_ws(value or ""), normalize_ws(reference_range or "")
    if not v_text:
        return None
    if (doubt := decimal_separator_doubt(v_text, r_text)) and doubt.ambiguous:
        return None  # "1,250" against "0,5-1,5": a thousands separator or a decimal comma? not guessed
    v = value_bounds(v_text)
    if v is None:
        if v_text.lower() in ("abnormal", "abn"):
            return "abnormal"
        pv, pr = _polarity(v_text), _polarity(r_text)
        if pv is not None and pr is not None:
            return "normal" if pv == pr else "abnormal"
        if r_text and v_text.lower() == r_text.lower().strip("()[]") and not re.search(r"\d", v_text):
            return "normal"
        return None
    r = parse_range(r_text)
    if r is None:
        return None
    if v.low is None and r.low == 0 and r.low_inclusive:
        # A range that starts at 0 is for what cannot be below it (CRP "0-5"): "<4" is
        # then 0 up to 4, inside the range. Against "-2-2" a "<1" still could be low.
        v = RangeBounds(0.0, v.high, True, v.high_inclusive)
    if r.low is not None and v.high is not None and (
            v.high < r.low or (v.high == r.low and not (v.high_inclusive and r.low_inclusive))):
        return "low"
    if r.high is not None and v.low is not None and (
            v.low > r.high or (v.low == r.high and not (v.low_inclusive and r.high_inclusive))):
        return "high"
    above_low = r.low is None or (v.low is not None and (
        v.low > r.low or (v.low == r.low and (r.low_inclusive or not v.low_inclusive))))
    below_high = r.high is None or (v.high is not None and (
        v.high < r.high or (v.high == r.high and (r.high_inclusive or not v.high_inclusive))))
    return "normal" if above_low and below_high else None


@dataclass(frozen=True, slots=True)
class FlagReading:
    """The abnormal flag a result is stored with, how it was reached, and what in the
    printed flag or limits a person must check before it enters a chart."""

    flag: str  # AbnormalFlag
    derived: bool  # computed from the value (and range or critical limits), not printed
    unrecognised: tuple[str, ...] = ()  # printed flags the vocabulary does not know
    direction_assumed: bool = False  # a critical flag with no direction, stored as critical_high
    disagreement: str | None = None  # the printed flag contradicts the value and range
    critical_range: str = ""  # printed critical (panic) limits, as printed
    critical_unread: bool = False  # critical limits were printed but could not be read
    impossible: str | None = None  # the printed range or limits cannot be right (``range_problem``)
    star_unexplained: str | None = None  # "*H" on a report whose key does not say what its star means

    def doubts(self) -> list[tuple[str, float]]:
        """(reason, confidence factor) for each thing a person must check."""
        out = []
        if self.unrecognised:
            out.append((f"printed flag {' '.join(self.unrecognised)!r} is not one the rules know: "
                        f"the flag was not taken from it", 0.9))
        if self.direction_assumed:
            out.append(("critical flag printed without a direction (the value and range do not tell "
                        "high from low): stored as critical_high", 0.9))
        if self.disagreement:
            out.append((self.disagreement, 0.8))
        if self.critical_unread:
            out.append((f"critical limits {self.critical_range!r} could not be read: "
                        f"the value was not checked against them", 0.8))
        if self.impossible:
            out.append((self.impossible, 0.6))
        if self.star_unexplained:
            out.append((f"printed flag {self.star_unexplained!r}: a star beside H or L means critical on some "
                        "reports and only outside the range on others, and this one prints no key saying "
                        "which (stored as critical)", 0.9))
        return out

    def review_reasons(self) -> list[str]:
        return [reason for reason, _ in self.doubts()]


def _critical_from(meanings: list[str], direction: str | None, past_limits: str | None) -> tuple[str, bool]:
    """(critical flag, direction assumed) for printed flags that include a critical one.

    A printed direction wins (a directed critical flag, or H/L printed beside an
    undirected one: "CRIT L"; the caller checks it against the value); then printed
    critical limits; then the value against the reference range. With none of these the
    flag is still kept critical (fail closed: never downgraded to high or abnormal) and
    stored as critical_high, the reading that prompts the most urgent look, with
    ``direction_assumed`` so the extractor sends it to review."""
    directed = {m for m in meanings if m in CRITICAL_FLAGS}
    if len(directed) == 1:
        return directed.pop(), False
    plain = {m for m in meanings if m in ("high", "low")}
    if not directed and len(plain) == 1:
        return f"critical_{plain.pop()}", False
    if past_limits:
        return past_limits, False
    if direction in ("high", "low"):
        return f"critical_{direction}", False
    return "critical_high", True


_FLAG_SEPARATORS = re.compile(r"[\s,/~;]+")


def _read_printed_flags(printed: Iterable[str], key: FlagKey | None = None) -> tuple[list[str], list[str], tuple[str, ...]]:
    """(flags as printed, their meanings, the parts not understood).

    A printed flag is read whole first ("critical high", "out of range"), else word by
    word ("Crit H", "H, POS"): each word the vocabulary knows counts, and a word it does
    not know is reported, never dropped in silence."""
    shown = [p for p in (normalize_ws(x or "") for x in printed) if p]
    meanings: list[str] = []
    unknown: list[str] = []
    for flag in shown:
        if meaning := flag_meaning(flag, key=key):
            meanings.append(meaning)
            continue
        for word in _FLAG_SEPARATORS.split(flag):
            if not word.strip("-\u2013\u2014"):
                continue
            if meaning := flag_meaning(word, key=key):
                meanings.append(meaning)
            else:
                unknown.append(word)
    return shown, meanings, tuple(unknown)


def _critical_limits(column: str, texts: Iterable[str]) -> tuple[str, CriticalLimits | None]:
    """Printed critical limits: a column (or cell) of their own, where the label is the
    header; else limits labelled inside the range or a note ("critical <2.5 or >6.5").
    A column without a digit ("N/A", "-") states no limits."""
    column = normalize_ws(column or "")
    if any(c.isdigit() for c in column):
        return column, parse_critical_limits(column)
    for text in texts:
        if found := labelled_critical_limits(text or ""):
            return found
    return "", None


def resolve_flag(
    printed: Iterable[str] = (),
    value: str = "",
    reference_range: str = "",
    *,
    critical_column: str = "",
    notes: Iterable[str] = (),
    in_range: bool | None = None,
    key: FlagKey | None = None,
) -> FlagReading:
    """The one flag rule for every format.

    ``printed``: the flags the document prints for the result (an OBX-8 with its
    repeats, a flag column, a flag beside the value). ``critical_column``: printed
    critical limits from a column of their own; without one, limits labelled in the
    reference range or in ``notes`` count. ``in_range``: a layout that says it by
    column ("In Range" / "Out of Range").

    Order: printed flags (the most severe wins; H with L makes "abnormal"; a critical
    one is resolved by ``_critical_from``), else the column, else the value against
    the range; critical limits then raise any non-critical flag to critical when the
    value lies past them. ``key``: the flag key the document prints (``read_flag_key``),
    read before the default vocabulary. What could not be read (a flag word, the limits), and a range
    or limits that cannot be right (low above high: a misread), are in
    ``FlagReading.doubts``: every extractor sends such a result to review.
    """
    shown, known, unrecognised = _read_printed_flags(printed, key)
    critical_printed, limits = _critical_limits(critical_column, (reference_range, *notes))
    derived = derive_flag(value, reference_range)
    direction = derived if derived in ("high", "low") else None
    past_limits = critical_direction(value, limits)
    assumed = False
    if any(m in CRITICAL_FLAGS or m == "critical" for m in known):
        flag, assumed = _critical_from(known, direction, past_limits)
        from_print = True
    elif known:
        plain = set(known)
        flag = "abnormal" if {"high", "low"} <= plain else max(plain, key=_FLAG_RANK.__getitem__)
        from_print = True
    elif in_range is not None:
        flag = "normal" if in_range else (direction or "abnormal")
        from_print = in_range or direction is None
    else:
        flag, from_print = derived or "unknown", False
    disagreement = None
    if CRITICAL_FLAGS <= set(known):
        disagreement = f"printed flags {'~'.join(shown)!r} contradict each other"
    elif known:
        as_direction = {"critical_high": "high", "critical_low": "low"}.get(flag, flag)
        if (as_direction in ("high", "low", "normal") and derived in ("high", "low", "normal")
                and as_direction != derived) or (as_direction == "normal" and derived == "abnormal") \
                or (set(known) == {"abnormal"} and derived == "normal"):
            disagreement = (f"printed flag {'~'.join(shown)!r} disagrees with value {value} "
                            f"and range {reference_range!r}")
    if past_limits and flag not in CRITICAL_FLAGS:
        if known:
            disagreement = (f"printed flag {'~'.join(shown)!r} but value {value} is past the "
                            f"printed critical limits")
        flag, from_print = past_limits, False
    star = next((f for f in shown if _flag_key(f) in _STARRED_DIRECTIONS and not (key and "*" in key)), None)
    return FlagReading(flag, derived=not from_print and flag != "unknown", unrecognised=unrecognised,
                       direction_assumed=assumed, disagreement=disagreement, critical_range=critical_printed,
                       critical_unread=bool(critical_printed) and limits is None,
                       impossible=range_problem(reference_range, limits), star_unexplained=star)


# A star beside a direction letter: critical on some reports ("H*"), only "outside the
# range" on others (an Australian report's "*H", its key saying so). Without the page's
# key the vocabulary keeps the critical (never downgraded), and a person decides.
_STARRED_DIRECTIONS = frozenset({"*H", "H*", "*L", "L*"})
