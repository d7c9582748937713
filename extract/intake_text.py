"""Reading what patients write on intake forms: labels, list items, uncertainty.

Pure string rules used by ``extract.intake``: which field a label names (by
keywords, so "Medicines you take now" and "Current medications" agree), how a
medication or allergy item splits into parts, and which wording is uncertain or a
clinical red flag.
"""

from __future__ import annotations

import re

# (field kind, pattern) in priority order: the first match names the field.
# "Drug allergies" is about allergies, not medications; "best time to reach you"
# is a preference, not a phone number.
_FIELD_PATTERNS: list[tuple[str, re.Pattern]] = [(k, re.compile(p, re.I)) for k, p in [
    ("ignore", r"\bsignature\b|office use|^date$|^today'?s date$"),
    ("other", r"\bemergency\b|\binsurance\b|\bpharmacy\b|\bphysician\b|\bdoctor\b|\bemployer\b"),
    ("allergies", r"allerg"),
    ("medications", r"medicat|medicine|prescription|drugs? (?:you|do you) take|pills"),
    ("family_history", r"\bfamily\b"),
    ("chief_concern", r"brings? you|reason for|chief|concern|complaint|main problem|why are you|visit today"),
    ("pregnancy", r"pregnan"),
    ("symptoms", r"symptom"),
    ("problems", r"medical history|past history|health history|conditions?\b|diagnos|health problems|surgical"),
    ("preference", r"prefer|best time|contact method|how (?:should|may|can) we contact|appointment time|language"),
    ("dob", r"birth|\bdob\b|d\.o\.b"),
    ("mrn", r"medical record|\bmrn\b|\bchart\b|patient id|account|\bmr ?#"),
    ("name", r"\bname\b"),
    ("sex", r"\bsex\b|gender"),
    ("phone", r"phone|telephone|mobile|\bcell\b"),
    ("email", r"e-?mail"),
    ("address", r"address|street|city|zip"),
    ("notes", r"\bnotes?\b|comments?|anything else|additional information|other information"),
]]

DEMOGRAPHIC_KINDS = frozenset({"name", "dob", "mrn", "sex", "phone", "email", "address"})
CLINICAL_KINDS = frozenset({"allergies", "medications", "symptoms", "problems", "pregnancy", "chief_concern",
                            "family_history"})


def classify_label(label: str) -> str | None:
    """The field a label names, or ``None`` if it names none we know."""
    text = " ".join(label.lower().replace("_", " ").split()).rstrip(":?")
    for kind, pattern in _FIELD_PATTERNS:
        if pattern.search(text):
            return kind
    return None


# --------------------------------------------------------------------------- wording

_UNCERTAIN = re.compile(
    r"(?<!\w)\?|\b(maybe|possibly|possible|unclear|not sure|unsure|might|may be|i think|"
    r"probably|uncertain|questionable|perhaps|don'?t know|do not know)\b",
    re.I,
)
_RED_FLAGS = re.compile(
    r"chest (?:pain|tightness|pressure)|short(?:ness)? of breath|can'?t breathe|cannot breathe|"
    r"difficulty breathing|suicid|kill (?:myself|themselves)|self[- ]harm|harm(?:ing)? myself|overdose|"
    r"faint(?:ed|ing)?\b|passed out|syncope|worst headache|vision loss|slurred speech|"
    r"weakness on one side|one[- ]sided weakness|seizure|coughing (?:up )?blood|vomiting blood|"
    r"blood in (?:my )?stool|black stool|severe bleeding",
    re.I,
)
_ALLERGY_WORDS = re.compile(r"allerg|\bsulfa|penicillin|amoxicillin|latex|codeine|hives|anaphyla|\brash\b|"
                            r"swelling|\bnkda\b|reaction", re.I)
_MEDICATION_WORDS = re.compile(r"\d+\s?(?:mg|mcg|units?)\b|medicat|medicine|\bpills?\b|tablet|inhaler|insulin|"
                               r"\bdose\b|statin|aspirin|ibuprofen|metformin|warfarin", re.I)
_PREGNANCY_WORDS = re.compile(r"pregnan|\blmp\b|last (?:menstrual )?period|missed (?:a )?period", re.I)
_SYMPTOM_WORDS = re.compile(r"\bpain\b|fever|cough|bleed|dizz|nausea|vomit|headache|numb|swollen|"
                            r"breath|palpitation", re.I)


def uncertain_words(text: str) -> str | None:
    """The first uncertain expression in ``text`` ("?", "maybe", "not sure"...)."""
    m = _UNCERTAIN.search(text)
    return m.group(0) if m else None


def red_flag(text: str) -> str | None:
    """Red-flag language that needs a clinician's eyes (chest pain, suicidal...)."""
    m = _RED_FLAGS.search(text)
    return m.group(0).lower() if m else None


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
_NO_ALLERGY = re.compile(r"^(?:nkda|nka|nkma|none|no|n/a|nil|none known|no known(?: drug| medication)? "
                         r"allergies|no allergies|no drug allergies)$", re.I)


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
