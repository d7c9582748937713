"""Reading what patients write on intake forms: labels, list items, uncertainty.

Pure string rules used by ``extract.intake``: which field a label names (the
vocabulary is data in ``extract.intake_labels``, so "Medicines you take now",
"Meds you take" and "Current medications" agree), how a medication or allergy item
splits into parts, and whether an answer is "none". Hedges and red flags are the
context policy's (``core.policy.context``); the wrappers here only name them.
"""

from __future__ import annotations

import re

from core.policy.context import assess, hedge_cue
from core.policy.context import red_flag as context_red_flag
from extract.intake_labels import read_label

DEMOGRAPHIC_KINDS = frozenset({"name", "first_name", "middle_name", "last_name", "dob", "mrn", "sex", "phone",
                               "email", "address"})
CLINICAL_KINDS = frozenset({"allergies", "medications", "symptoms", "problems", "pregnancy", "chief_concern",
                            "family_history"})
# Kinds whose label always speaks about the patient, whoever else the form asked about.
PATIENT_ONLY_KINDS = CLINICAL_KINDS | {"preference", "notes", "ignore"}


def classify_label(label: str) -> str | None:
    """The field a label names, or ``None`` if it names none we know. A label about
    someone else ("Emergency contact name", "Insured's date of birth") is "other":
    it never names a field of the patient's."""
    meaning = read_label(label)
    kind = meaning.kind
    if kind in PATIENT_ONLY_KINDS:
        return kind
    if meaning.owner is not None or kind in ("relationship", "misc"):
        return "other"
    return kind


# --------------------------------------------------------------------------- wording

_ALLERGY_WORDS = re.compile(r"allerg|\bsulfa|penicillin|amoxicillin|latex|codeine|hives|anaphyla|\brash\b|"
                            r"swelling|\bnkda\b|reaction", re.I)
_MEDICATION_WORDS = re.compile(r"\d+\s?(?:mg|mcg|units?)\b|medicat|medicine|\bpills?\b|tablet|inhaler|insulin|"
                               r"\bdose\b|statin|aspirin|ibuprofen|metformin|warfarin", re.I)
_PREGNANCY_WORDS = re.compile(r"pregnan|\blmp\b|last (?:menstrual )?period|missed (?:a )?period", re.I)
_SYMPTOM_WORDS = re.compile(r"\bpain\b|fever|cough|bleed|dizz|nausea|vomit|headache|numb|swollen|"
                            r"breath|palpitation", re.I)


def uncertain_words(text: str) -> str | None:
    """The first hedge in ``text`` ("?", "maybe", "not sure"...): the context policy's."""
    return hedge_cue(text)


def red_flag(text: str) -> str | None:
    """Red-flag language about the patient (chest pain, suicidal...): the context policy's."""
    return context_red_flag(text)


def answer_doubt(item: str, answer: str | None = None) -> str | None:
    """The hedge that makes ``item`` uncertain, as printed: one inside the item
    ("shellfish?", "sulfa - patient not sure", "~~latex~~"), or one in the answer it
    was read from whose scope reaches it (the context policy decides the scope)."""
    cue = hedge_cue(item)
    if cue is None and answer and clean_item(answer) != clean_item(item):
        ctx = assess(answer, clean_item(item))
        if ctx.uncertain:
            cue = ctx.triggers[0]
    return cue


_CLINICIAN_NAME = re.compile(
    r"^(?:dr\.?|doctor|prof\.?|professor)\s+\S"
    r"|,\s*(?:md|m\.d\.|do|d\.o\.|np|pa-c|pa|rn|dnp|aprn|mbbs|mbchb|frcp|mrcgp)\.?$"
    r"|\s(?:md|m\.d\.|mbbs|mbchb|frcp|mrcgp)\.?$",
    re.I,
)


def names_a_clinician(text: str) -> bool:
    """"Dr. Alan Brooks", "Alan Brooks, MD": a clinician's name, never the patient's."""
    return bool(_CLINICIAN_NAME.search(" ".join(text.split())))


def clinical_topic(text: str) -> str | None:
    """What clinically relevant subject free text touches: allergy, medication,
    pregnancy or symptom (``None`` for e.g. scheduling remarks)."""
    if _ALLERGY_WORDS.search(text):
        return "allergy"
    if _PREGNANCY_WORDS.search(text):
        return "pregnancy"
    if _MEDICATION_WORDS.search(text):
        return "medication"
    if red_flag(text) or _SYMPTOM_WORDS.search(text):
        return "symptom"
    return None


# --------------------------------------------------------------------------- list items

_NONE_ANSWERS = frozenset({"none", "no", "n/a", "na", "nil", "none known", "nothing", "no medications",
                           "no meds", "-"})
_NO_ALLERGY = re.compile(r"^(?:nkda|nka|nkma|none|no|n/a|nil|none known|nil known|no known(?: drug| medication| medicine)? "
                         r"allerg(?:y|ies)|no allergies|no drug allergies|none that i know of|not that i know of)$", re.I)


def clean_item(text: str) -> str:
    """Drop list punctuation around an item: "Penicillin (hives);" -> "Penicillin (hives)"."""
    return " ".join(text.split()).strip(" ,;.-•*")


def is_none_answer(text: str) -> bool:
    return clean_item(text).lower() in _NONE_ANSWERS


def is_no_known_allergies(text: str) -> bool:
    """NKDA, "None", "No known allergies" and the like."""
    return bool(_NO_ALLERGY.match(clean_item(text)))


_DOSE = (r"\d+(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?)?\s*(?:mg/ml|mg|mcg|µg|ug|gm|g|ml|units?|iu|%|meq|"
         r"puffs?|tabs?|tablets?|caps?|capsules?|drops?|sprays?|patch(?:es)?)\b")
_MED_WITH_DOSE = re.compile(rf"^(?P<name>.+?)\s+(?P<dose>{_DOSE})(?:\s+(?P<freq>.+))?$", re.I)
_FREQUENCY = re.compile(r"\b(?:daily|once|twice|three times|four times|bid|tid|qid|qd|qhs|prn|as needed|"
                        r"at bedtime|bedtime|nightly|weekly|monthly|every|each|morning|evening|q\d+h)\b", re.I)


_FREQUENCY_START = re.compile(r"^(?:as needed|as directed|at |for |with |before |after |when |by mouth|"
                              r"with meals|daily|once|twice|three times|every|each|prn|bid|tid|qid|qd|qhs|nightly|"
                              r"weekly|morning|evening)", re.I)


def starts_like_frequency(text: str) -> bool:
    """Whether a fragment continues a dose ("as needed", "at bedtime", "twice daily")."""
    return bool(_FREQUENCY_START.match(clean_item(text)))


def parse_medication(text: str) -> dict[str, str | None]:
    """"Metformin 500 mg twice daily" -> name / dose / frequency (missing parts None)."""
    t = clean_item(text)
    m = _MED_WITH_DOSE.match(t)
    if m:
        return {"name": m.group("name").strip(" ,-"), "dose": m.group("dose"),
                "frequency": (m.group("freq") or "").strip(" ,-") or None}
    f = _FREQUENCY.search(t)
    if f and f.start() > 0:
        return {"name": t[: f.start()].strip(" ,-"), "dose": None, "frequency": t[f.start():].strip(" ,-")}
    return {"name": t, "dose": None, "frequency": None}


_REACTION_WORDS = frozenset({"rash", "hives", "itching", "itch", "swelling", "nausea", "vomiting", "anaphylaxis",
                             "wheezing", "diarrhea", "headache", "dizziness", "throat swelling", "shortness of breath"})
_ALLERGY_PAREN = re.compile(r"^(?P<s>[^()]+?)\s*\((?P<r>[^)]*)\)$")
_ALLERGY_SPLIT = re.compile(r"^(?P<s>.+?)\s*(?:\s[-–—]\s|:|->|→|\bcauses\b|\bgives me\b|\bmakes me\b)\s*(?P<r>.+)$", re.I)


def is_reaction(text: str) -> bool:
    return clean_item(text).lower() in _REACTION_WORDS


def parse_allergy(text: str) -> dict[str, str | None]:
    """"Penicillin (hives)" / "Codeine - nausea" -> substance / reaction."""
    t = clean_item(text)
    m = _ALLERGY_PAREN.match(t) or _ALLERGY_SPLIT.match(t)
    if m:
        return {"substance": m.group("s").strip(" ,-"), "reaction": m.group("r").strip(" ,-") or None}
    return {"substance": t, "reaction": None}


_RELATIVE = re.compile(
    r"\b((?:maternal |paternal )?(?:mother|father|mom|dad|sister|brother|grandmother|grandfather|grandma|grandpa|"
    r"aunt|uncle|son|daughter|parents?|siblings?|cousin))\b", re.I)


def has_relative(text: str) -> bool:
    return bool(_RELATIVE.search(text))


def leads_with_relative(text: str) -> bool:
    """"Father - heart disease" (not "heart disease (father)")."""
    m = _RELATIVE.search(clean_item(text))
    return m is not None and m.start() == 0


def parse_family_history(text: str) -> dict[str, str | None]:
    """"Mother - type 2 diabetes" / "heart disease (father)" -> relative / condition."""
    t = clean_item(text)
    m = _RELATIVE.search(t)
    if not m:
        return {"relative": None, "condition": t}
    before, after = t[: m.start()], t[m.end():]
    if before.rstrip().endswith("(") and after.lstrip().startswith(")"):  # "heart disease (father)"
        before, after = before.rstrip()[:-1], after.lstrip()[1:]
    rest = f"{before} {after}".strip()
    rest = re.sub(r"^[\s:\-–—,]+|[\s:\-–—,]+$", "", rest)
    rest = re.sub(r"^(?:had|has|with)\s+", "", rest, flags=re.I)
    return {"relative": m.group(1), "condition": rest or None}
