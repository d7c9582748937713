"""One vocabulary of lab analytes (pure): which printed test names are the same test.

"HbA1c", "Hemoglobin A1c" and LOINC 4548-4 are one analyte; comparing results by their
canonical analyte (plus the collection date) is what lets the chart notice that two
documents disagree about the same test. The table is data, ``analytes.json`` beside
this module: per analyte a canonical id, LOINC codes, a display name, the names reports
print, the usual units and whether it is a dimensionless number (``unitless``: INR, pH,
specific gravity, ratios), which needs no unit to be complete.

Names are matched exactly after normalisation (case, punctuation, "haem"/"hem", a
trailing specimen such as ", Serum", and LOINC-style names such as "Hemoglobin
[Mass/volume] in Blood"), never by substring: "Hemoglobin" is not "Hemoglobin A1c".
A name listed under two analytes ("Neutrophils": percent or absolute count;
"Troponin": I or T) is ambiguous; the printed unit may settle it, otherwise there is no
canonical analyte and callers fall back to the name itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

VOCABULARY_PATH = Path(__file__).with_name("analytes.json")
_LOINC = re.compile(r"^(\d{1,7})-(\d)$")


@dataclass(frozen=True, slots=True)
class Analyte:
    id: str
    display: str
    loinc: tuple[str, ...]
    synonyms: tuple[str, ...]
    units: tuple[str, ...]
    check_units: bool = False  # a unit outside ``units`` is implausible (HbA1c in mg/dL)
    unit_variants: dict[str, str] = field(default_factory=dict)  # unit -> the analyte it makes
    unitless: bool = False  # a dimensionless number (INR, pH, specific gravity, a ratio): no unit to print


def normalize_unit(unit: str) -> str:
    """Unit spelling for comparison: case, micro signs and spaces do not count."""
    return re.sub(r"\s+", "", (unit or "").lower().replace("\u00b5", "u").replace("\u03bc", "u"))


def normalize_name(name: str) -> str:
    """A test name for comparison: lower case, "haem" as "hem", punctuation as spaces
    (kept: / - % # + . inside words), one space between words."""
    t = (name or "").lower().replace("haem", "hem").replace("\u00b5", "u").replace("&", " and ")
    t = re.sub(r"[,;:*'\"()\[\]{}]", " ", t)
    return re.sub(r"\s+", " ", t).strip(" .-")


_SPECIMEN_TAIL = re.compile(
    r"(?:\s*[,(-]\s*|\s+)(?:serum or plasma|serum/plasma|ser/plas|serpl|serum|plasma|whole blood|blood|venous|bld)"
    r"\)?\s*$|\s*,\s*[sp]\s*$",
    re.I,
)
_SPECIMEN_HEAD = re.compile(r"^(?:serum|plasma|blood|whole blood)\s+", re.I)
_LOINC_PROPERTY = re.compile(r"\s*\[[^\]]*\]")
_LOINC_METHOD = re.compile(r"\s+by\s+.*$", re.I)
_LOINC_SYSTEM = re.compile(r"^(?P<what>.+?)\s+(?:in|of)\s+(?P<system>.+)$", re.I)
_BLOOD_SYSTEMS = {"blood", "serum", "plasma", "serum or plasma", "serum, plasma or blood", "arterial blood",
                  "venous blood", "capillary blood", "bld", "ser/plas"}


def _name_forms(name: str) -> list[str]:
    """The normalised name, then simpler readings of it to try in order."""
    raw = (name or "").strip()
    forms = [normalize_name(raw)]
    without_specimen = _SPECIMEN_HEAD.sub("", _SPECIMEN_TAIL.sub("", raw))
    forms.append(normalize_name(without_specimen))
    loinc_style = _LOINC_METHOD.sub("", _LOINC_PROPERTY.sub("", raw)).strip()
    m = _LOINC_SYSTEM.match(loinc_style)
    if m:
        system = m["system"].strip().lower()
        if system in _BLOOD_SYSTEMS:
            forms.append(normalize_name(m["what"]))
        elif "urine" in system:
            forms.append(normalize_name(f"urine {m['what']}"))
    forms.append(normalize_name(loinc_style))
    out: list[str] = []
    for f in forms:
        if f and f not in out:
            out.append(f)
    return out


@dataclass(frozen=True)
class _Vocabulary:
    by_id: dict[str, Analyte]
    by_name: dict[str, tuple[str, ...]]  # normalised name -> analyte ids (several: ambiguous)
    by_loinc: dict[str, str]
    units: dict[str, frozenset[str]]  # analyte id -> its units, normalised


@lru_cache(maxsize=1)
def _vocabulary() -> _Vocabulary:
    data = json.loads(VOCABULARY_PATH.read_text(encoding="utf-8"))
    by_id: dict[str, Analyte] = {}
    by_name: dict[str, list[str]] = {}
    by_loinc: dict[str, str] = {}
    for entry in data["analytes"]:
        a = Analyte(
            id=entry["id"], display=entry["display"], loinc=tuple(entry.get("loinc", ())),
            synonyms=tuple(entry.get("synonyms", ())), units=tuple(entry.get("units", ())),
            check_units=bool(entry.get("check_units", False)),
            unit_variants={normalize_unit(u): v for u, v in entry.get("unit_variants", {}).items()},
            unitless=bool(entry.get("unitless", False)),
        )
        if a.id in by_id:
            raise ValueError(f"analyte {a.id!r} is listed twice in {VOCABULARY_PATH.name}")
        by_id[a.id] = a
        for name in (a.display, *a.synonyms):
            ids = by_name.setdefault(normalize_name(name), [])
            if a.id not in ids:
                ids.append(a.id)
        for code in a.loinc:
            if code in by_loinc:
                raise ValueError(f"LOINC {code} is listed under {by_loinc[code]!r} and {a.id!r}")
            by_loinc[code] = a.id
    units = {a.id: frozenset(normalize_unit(u) for u in a.units) for a in by_id.values()}
    return _Vocabulary(by_id, {k: tuple(v) for k, v in by_name.items()}, by_loinc, units)


def loinc_code_ok(code: str) -> bool:
    """A well-formed LOINC code whose check digit (LOINC's mod-10 rule) is right."""
    m = _LOINC.match((code or "").strip())
    if not m:
        return False
    digits = m[1][::-1]  # positions counted from the right
    doubled = str(int(digits[0::2]) * 2)
    total = sum(int(c) for c in digits[1::2] + doubled)
    return (10 - total % 10) % 10 == int(m[2])


def analyte(analyte_id: str) -> Analyte | None:
    return _vocabulary().by_id.get(analyte_id)


def all_analytes() -> list[Analyte]:
    return list(_vocabulary().by_id.values())


def _with_unit(analyte_id: str, unit: str | None) -> str:
    variant = _vocabulary().by_id[analyte_id].unit_variants.get(normalize_unit(unit or ""))
    return variant or analyte_id


@lru_cache(maxsize=4096)
def _ids_for_name(test_name: str) -> tuple[str, ...]:
    vocab = _vocabulary()
    for form in _name_forms(test_name):
        ids = vocab.by_name.get(form)
        if ids:
            return ids
    return ()


# OCR and typing read a printed digit as a letter: "A1c" as "Alc", "Aic", "Atc" or
# "AIc", "B12" as "Bl2", "HEMOGLOBIN" as "HEM0GLOBIN"... Where the printed name differs
# from a vocabulary name only by such swaps, it may stand for that name; used only when
# the name itself is unknown, and only when one analyte answers (``_ids_for_ocr_name``).
_OCR_DIGIT_LOOKALIKES = str.maketrans({"l": "1", "i": "1", "|": "1", "!": "1", "t": "1", "o": "0"})


def lookalike(printed: str, name: str) -> bool:
    """Whether ``printed`` differs from ``name`` only where one has a digit or a mark and
    the other a letter it looks like ("alc" / "a1c"). Two letters never stand for each
    other: "IDL" is not "LDL", "Pi" (phosphate) not "PT", "Ig" not "Tg"."""
    return len(printed) == len(name) and all(
        a == b or (not (a.isalpha() and b.isalpha()) and a.translate(_OCR_DIGIT_LOOKALIKES) ==
                   b.translate(_OCR_DIGIT_LOOKALIKES))
        for a, b in zip(printed, name))


@lru_cache(maxsize=1)
def _ocr_index() -> dict[str, tuple[str, ...]]:
    """Vocabulary names by their look-alike fold ("a1c" and "alc" both fold to "a1c")."""
    index: dict[str, list[str]] = {}
    for name in _vocabulary().by_name:
        index.setdefault(name.translate(_OCR_DIGIT_LOOKALIKES), []).append(name)
    return {k: tuple(v) for k, v in index.items()}


@lru_cache(maxsize=4096)
def _ids_for_ocr_name(test_name: str) -> tuple[str, ...]:
    """The analyte a name OCR or a typist garbled stands for ("Hemoglobin Alc",
    "HbAlc", "Aic" -> Hemoglobin A1c), when it is a look-alike (``lookalike``) of
    vocabulary names of exactly one analyte. A reading two analytes share ("Tnl":
    troponin I or T?) settles nothing."""
    by_name = _vocabulary().by_name
    for form in _name_forms(test_name):
        names = [n for n in _ocr_index().get(form.translate(_OCR_DIGIT_LOOKALIKES), ()) if lookalike(form, n)]
        ids = {i for n in names for i in by_name[n]}
        if len(ids) == 1:
            return tuple(ids)
        if ids:
            break
    return ()


@lru_cache(maxsize=4096)
def canonical_analyte(test_name: str | None, loinc: str | None = None, unit: str | None = None) -> str | None:
    """The canonical analyte id of a result, or None when the vocabulary cannot say.

    A known LOINC code decides; otherwise the printed name does, with the printed
    unit settling names that belong to two analytes ("Neutrophils" in % or x10E3/uL)
    and unit variants (HbA1c in mmol/mol is the IFCC measure). Cached: the chart, the
    fingerprints and the answers ask about the same few names again and again.
    """
    vocab = _vocabulary()
    code = (loinc or "").strip()
    if code in vocab.by_loinc:
        return _with_unit(vocab.by_loinc[code], unit)
    ids = _ids_for_name(test_name or "") or _ids_for_ocr_name(test_name or "")
    if len(ids) > 1 and unit is not None:
        key = normalize_unit(unit)
        ids = tuple(i for i in ids if key in vocab.units[i])
    if len(ids) != 1:
        return None
    return _with_unit(ids[0], unit)


def vocabulary_names() -> dict[str, tuple[str, ...]]:
    """Every name the vocabulary knows, normalised, with the analyte ids it names."""
    return _vocabulary().by_name


def known_name(test_name: str) -> bool:
    """Whether the vocabulary knows this printed name (ambiguous names included)."""
    return bool(_ids_for_name(test_name))


def unitless_analyte(test_name: str | None, loinc: str | None = None) -> bool:
    """Whether a result is a dimensionless number that is complete without a unit
    (INR, pH, specific gravity, ratios: ``unitless`` in the vocabulary). A name shared
    by two analytes ("pH": urine or blood) counts when both are unitless. The one rule
    for every format: a numeric lab result without a unit goes to review unless this
    says it needs none."""
    vocab = _vocabulary()
    code = (loinc or "").strip()
    ids = (vocab.by_loinc[code],) if code in vocab.by_loinc else _ids_for_name(test_name or "")
    return bool(ids) and all(vocab.by_id[i].unitless for i in ids)


def listed_unit(test_name: str, unit: str) -> bool:
    """Whether ``unit`` is one the vocabulary lists for the test ``test_name`` names: "s"
    for a prothrombin time, "ng/mL FEU" for a D-dimer, which read as no unit alone."""
    entry = _vocabulary().by_id.get(canonical_analyte(test_name) or "")
    return bool(unit.strip()) and entry is not None and normalize_unit(unit) in {normalize_unit(u) for u in entry.units}


def usual_units_problem(test_name: str, unit: str, loinc: str | None = None) -> str | None:
    """A reason when the printed unit does not fit an analyte whose unit is unambiguous
    (HbA1c is a percent or mmol/mol, never mg/dL); None otherwise."""
    if not unit:
        return None
    analyte_id = canonical_analyte(test_name, loinc)
    entry = _vocabulary().by_id.get(analyte_id or "")
    if entry is None or not entry.check_units:
        return None
    expected = [u for u in entry.units if u]
    if any(normalize_unit(u) in normalize_unit(unit) for u in expected):
        return None
    return f"unit {unit!r} is unusual for {test_name} (expected {' or '.join(expected)})"


# Names too short or too common to mean a test when a person types them in a question
# ("mg" is a dose, "k" a letter); panel words ("cholesterol", "protein") ask about a
# group of tests, which the topic vocabulary answers.
_NOT_A_TEST_IN_QUESTIONS = frozenset({"cholesterol", "protein", "lymph", "troponin", "mono", "iron sat"})
# Short names a question may use as a report prints them ("her latest Hb?", "what is her
# K?"): only in this exact spelling, where "na", "k" or "mg" in lower case stay words.
_SHORT_NAMES_AS_PRINTED = frozenset({"Hb", "HB", "Na", "K", "Cr", "Ca", "Mg", "Cl"})


def analytes_named(text: str) -> tuple[str, ...]:
    """Analyte ids a question names, longest phrase first: "hemoglobin A1c" names A1c,
    not hemoglobin. A name shared by two analytes names both."""
    vocab = _vocabulary()
    words = normalize_name(re.sub(r"[?!]", " ", text or "")).split()
    found: list[str] = []
    used: set[int] = set()
    for n in range(min(6, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            span = range(i, i + n)
            if used.intersection(span):
                continue
            phrase = " ".join(words[i:i + n])
            if len(phrase) < 3 or phrase in _NOT_A_TEST_IN_QUESTIONS:
                continue
            ids = vocab.by_name.get(phrase)
            if ids:
                found += ids
                used.update(span)
    for token in re.findall(r"[A-Za-z]+", text or ""):
        if token in _SHORT_NAMES_AS_PRINTED:
            found += vocab.by_name.get(token.lower(), ())
    return tuple(dict.fromkeys(found))


def result_is_of(named: tuple[str, ...] | set[str], test_name: str, loinc: str | None = None,
                 unit: str | None = None) -> bool:
    """Whether a result is one of the named analytes or a variant of one ("glucose"
    covers fasting glucose, "HbA1c" the IFCC measure)."""
    found = canonical_analyte(test_name, loinc=loinc, unit=unit)
    return bool(found) and any(found == n or found.startswith(n + "_") for n in named)


# Specimens other than blood that a report's heading or a sentence names before its
# results ("URINALYSIS (dipstick)", "CSF", "urinalysis showed ..."), by the word printed:
# a result under them is of that specimen, never the blood test of the same name (a
# dipstick's "Glucose Negative" is no blood glucose).
OTHER_SPECIMENS: dict[str, str] = {
    # not "UA": a fax's OCR reads a units row's "U/L" so, and "AST (urine)" followed
    **dict.fromkeys(["urine", "urinalysis", "dipstick", "msu", "csu"], "urine"),
    "csf": "CSF", "stool": "stool", "faeces": "stool", "feces": "stool", "sputum": "sputum",
    "pleural": "pleural fluid", "ascitic": "ascitic fluid", "peritoneal": "peritoneal fluid",
    "synovial": "synovial fluid", "semen": "semen",
}


def other_specimen(word: str) -> str | None:
    """The specimen a word names when it is not blood ("URINALYSIS" -> "urine")."""
    return OTHER_SPECIMENS.get(re.sub(r"[^a-z]", "", word.lower()))


def specimen_named(text: str) -> str | None:
    """The first specimen other than blood that any word of ``text`` names ("Urine,
    midstream" -> "urine"; "CSF^Cerebrospinal fluid" -> "CSF"), or None."""
    return next((s for w in re.split(r"[^A-Za-z]+", text or "") if w and (s := other_specimen(w))), None)


# A heading is a short line without a number ("URINALYSIS (dipstick)", "RENAL", a sheet
# named "Urine dipstick").
MAX_HEADING_WORDS = 5


def heading_specimen(text: str) -> tuple[bool, str | None]:
    """(whether ``text`` reads as a heading, the one specimen other than blood it names):
    "URINALYSIS (dipstick)" -> (True, "urine"); "RENAL" -> (True, None), which ends the
    reach of a heading above; a sentence or a line with a number -> (False, None)."""
    words = text.split()
    if not words or len(words) > MAX_HEADING_WORDS or any(c.isdigit() for c in text):
        return False, None
    specimens = {s for w in re.split(r"[^A-Za-z]+", text) if w and (s := other_specimen(w))}
    return True, specimens.pop() if len(specimens) == 1 else None


def with_specimen(test_name: str, specimen: str | None) -> str:
    """A test's name as a result of ``specimen`` (None: blood, the name as printed):
    "Glucose" under a urinalysis heading is
    "Glucose (urine)", which the vocabulary reads as urine glucose. Only a name the
    vocabulary would otherwise file as a (blood) test changes: one that already names a
    specimen ("Urine creatinine", "Blood glucose"), a urine test ("ACR", "Nitrite") or
    no test the vocabulary knows ("Clarity", an organism) stays as printed."""
    if not specimen:
        return test_name
    words = {re.sub(r"[^a-z]", "", w.lower()) for w in re.split(r"[\s,()/:-]+", test_name)}
    if words & set(OTHER_SPECIMENS) or _SPECIMEN_HEAD.match(test_name) or _SPECIMEN_TAIL.search(test_name):
        return test_name  # "Urine creatinine", "Serum glucose", "Glucose, plasma"
    named = f"{test_name} ({specimen})"
    if not known_name(test_name) and canonical_analyte(named) is None:
        return test_name  # "Blood" alone is no test; "Blood (urine)" is
    known = canonical_analyte(test_name)
    if known is not None and (known.startswith("urine_") or known == "uacr") and specimen == "urine":
        return test_name
    return named
