"""What an intake form label means: the field vocabulary (data) and its reader.

Forms word their labels every way ("Date of Birth", "Birthday", "Date you were
born", "DOB"; "Chart #", "Patient No.", "Medical record number"), so a label is
read by the words it uses, not by one form's spelling:

* ``FIELD_PHRASES`` - per field, the phrases that name it, in priority order
  ("Family name" is a surname before it is family history; "Drug allergies" is
  about allergies, not medications);
* ``OTHER_PERSON_PHRASES`` - words that make a label about someone other than the
  patient (emergency contact, next of kin, guardian, the insured, a clinician,
  the fax sender): a name or date under such a label is never the patient's;
* ``LABEL_WORDS`` - the neutral words labels are made of ("your", "what", "list",
  "number"). A phrase written without a colon ("Meds you take", "Birthday") counts
  as a label only if *every* word of it is label vocabulary, so an answer such as
  "No known allergies" or "Allergic to penicillin" is never taken for one. A
  bilingual label ("Contacto de emergencia / Emergency contact") counts when one of
  its " / " alternatives does: the other is its translation.

Phrases are lower-case words; a trailing ``*`` matches any ending ("allerg*" for
allergy, allergies, allergic). Matching ignores case and the punctuation around
words; "#" and "no." are words of their own ("Chart #", "Patient No.").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from extract.values.identity_labels import VOCABULARY as IDENTITY_VOCABULARY

# --------------------------------------------------------------------------- vocabulary (data)

# Identity labels come from the vocabulary every reader shares: its phrases of several
# words are matched inside a label like the phrases here; a one-word abbreviation
# ("Pt", "UR", "Given", "HCN") only as the whole label (``WHOLE_LABELS``), since inside
# a longer label it may mean anything.
_IDENTITY_KIND = {"name": "name", "first_name": "first_name", "last_name": "last_name",
                  "middle_name": "middle_name", "dob": "dob", "record_number": "mrn",
                  "other_identifier": "other_id"}


def _multiword(meaning: str) -> tuple[str, ...]:
    return tuple(p for p in IDENTITY_VOCABULARY[meaning] if len(p.split()) > 1 and "(" not in p)


FIELD_PHRASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ignore", ("signature", "signed", "office use", "staff use", "initials", "for office")),
    ("relationship", ("relationship", "relation to patient", "relation to you")),
    ("allergies", ("allerg*", "bad reaction*", "reactions to", "reacted badly", "react badly", "reacted to",
                   "sensitivit*", "hypersensitiv*", "intoleran*",
                   "adverse reaction*", "adverse drug reaction*", "drug reaction*", "adr", "adrs")),
    ("medications", ("medication*", "medicine*", "meds", "prescription*", "pills", "inhaler*", "drugs you take",
                     "drugs do you take", "tablets you take", "supplements")),
    ("pregnancy", ("pregnan*", "expecting a baby")),
    ("first_name", ("first name", "given name*", "forename*", "christian name")),
    ("middle_name", ("middle name", "middle initial")),
    ("last_name", ("last name", "surname", "family name")),
    ("clinician", ("family doctor", "family physician", "family practitioner", "family gp", "family provider")),
    ("family_history", ("family", "relatives", "run in")),
    ("chief_concern", ("brings you", "bring you", "brought you", "reason for visit", "reason for your visit",
                       "reason for today*", "reason for coming", "reason for appointment", "reason for attend*", "chief", "concern*",
                       "complaint*", "main problem", "why are you", "visit today", "today's visit",
                       "how can we help", "what is wrong", "what's wrong", "troubling you", "bothering you",
                       "why have you come", "come in today", "coming in today", "what has brought you")),
    ("symptoms", ("symptom*",)),
    ("problems", ("medical history", "past history", "health history", "condition*", "diagnos*",
                  "health problems", "surger*", "surgical", "illness*", "operations",
                  "been told you have", "been told that you have", "told you had")),
    ("preference", ("prefer*", "best time", "contact method", "how should we contact", "how may we contact",
                    "how can we contact", "appointment time", "language", "interpreter")),
    # About a birth, not its date ("Place of birth", "Infant birth weight"): before "dob".
    ("misc", ("place of birth", "birthplace", "birth place", "country of birth", "city of birth", "state of birth",
              "born in", "birth weight", "birth record", "birth certificate",
              # a child's birth told, not dated ("Birth history: born at 34 weeks")
              "birth history", "birth hx", "birth details", "birth order", "gestation at birth")),
    ("dob", ("date of birth", "birth*", "born", "dob", "d.o.b", *_multiword("dob"))),
    # Identifiers that are not the chart's record number (account, visit, NHS, health
    # card): before "mrn", so "NHS number" is never compared with the MRN.
    ("other_id", ("account*", "acct*", "nhs", *_multiword("other_identifier"))),
    ("mrn", ("medical record*", "mrn", "mr #", "mr no.", "mr no", "mr number", "chart*", "patient id",
             "patient no.", "patient no", "patient number", "patient #", "record number",
             "record no.", "hospital number", "hospital no.", "hospital #", "hosp #", "hosp no.", "hosp number",
             "file number", "file no.", "unit number", "unit no.", "case number",
             "registration number", "clinic id", "clinic number", "clinic no.", "hospital id", "unit id",
             "health record number", "id number", "id no.", *_multiword("record_number"))),
    ("name", ("name", "names")),
    ("sex", ("sex", "gender")),
    ("phone", ("phone*", "telephone", "mobile", "cell", "tel")),
    ("email", ("e-mail", "email")),
    ("address", ("address", "street", "city", "town", "state", "zip*", "postcode", "postal code", "county")),
    # Vital signs a form's staff section records ("Height: 164 cm   BP: 128/82"); an answer
    # that is no reading ("Recent weight loss? No") is kept as written, as before.
    ("vital_sign", ("height", "weight", "blood pressure", "bp", "pulse", "pulse rate", "heart rate",
                    "temperature", "temp", "respiratory rate", "resp rate", "spo2", "oxygen saturation",
                    "o2 sat*", "sats", "bmi", "body mass index")),
    ("misc", ("marital*", "occupation", "race", "ethnicity", "religion", "social security", "ssn", "age",
              "employment", "driver's licen*", "driving licen*")),
    ("notes", ("note*", "comment*", "anything else", "additional information", "other information")),
)

# A label that is exactly one of these (after normalising) names this field.
WHOLE_LABELS: dict[str, str] = {"date": "ignore", "today's date": "ignore", "todays date": "ignore",
                                "date signed": "ignore"}

OTHER_PERSON_PHRASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("emergency contact", ("emergency", "in case of emergency", "person to call", "person to contact",
                           "contact person", "who should we contact", "who can we contact", "who to contact",
                           "whom should we contact", "who should we call")),
    ("next of kin", ("next of kin", "nok")),
    ("guardian", ("guardian*", "parent*", "legal representative", "responsible party", "guarantor", "carer",
                  "caregiver", "power of attorney", "mother's", "father's", "spouse*", "partner's")),
    ("insured", ("insured", "subscriber*", "policy holder*", "policyholder*", "cardholder*", "insurance",
                 "member", "policy")),
    ("clinician", ("referring", "referred by", "referrer", "physician*", "provider*", "doctor*", "dr", "pcp",
                   "gp", "clinician*", "practitioner*", "consultant*", "specialist*", "nurse", "therapist",
                   "prescriber", "obstetrician*", "midwife", "surgeon*", "dentist*", "paediatrician*",
                   "pediatrician*", "psychiatrist*", "psychologist*", "optometrist*", "counsel*")),
    ("fax sender or recipient", ("sender*", "recipient*", "attention", "attn", "sent by", "fax")),
    ("employer", ("employer*", "pharmacy", "pharmacist", "school")),
)
OTHER_PERSON_WHOLE: dict[str, str] = {"to": "fax sender or recipient", "from": "fax sender or recipient"}

# A label that names the patient in the third person ("Patient name", "Client DOB")
# ends any block about another person; one that speaks to the reader ("Your phone",
# "Date you were born") ends only a block opened by another person's answer: under
# an "Emergency contact" heading, "you" may well be the contact.
PATIENT_WORDS = frozenset({"patient", "patient's", "patients", "client", "client's", "pt's",
                           # a paediatric form's patient ("Child's name", "Child's date of birth")
                           "child's", "baby's", "infant's"})
READER_WORDS = frozenset({"your", "you", "you're", "yourself"})

LABEL_WORDS = frozenset("""
a an the of to in on at for with by and or if any anything all what which who whom when where why how do does did
are is was were be been have has had you your you're yours yourself we us our can could may should would please list
now currently current today take taking regularly regular known number no. # date patient patient's client
client's full legal home work cell primary secondary main other details information info type id here print
write please kind them their this that these those ever past present new old daily usual usually time times care
drug drugs food foods adverse significant relevant reported documented recorded
""".split())

# Answers, never labels: a phrase with one of these words is not read as a label
# unless written with a colon ("No known allergies", "Yes", "N/A").
ANSWER_WORDS = frozenset({"no", "none", "nil", "yes", "n/a", "na", "nkda", "nka", "unknown", "not", "denies",
                          "never", "nothing"})

# --------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class LabelMeaning:
    kind: str | None  # a field of FIELD_PHRASES / WHOLE_LABELS, or None
    owner: str | None  # who the field is about when not the patient ("emergency contact"...)
    names_patient: bool  # the label says it is about the patient ("Patient name", "Client DOB")
    speaks_to_reader: bool = False  # "your", "you" ("Date you were born")


_PAREN = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_EDGE = re.compile(r"^[^\w#'’.]+|[^\w#'’.]+$")


def tokens(text: str, *, drop_parentheses: bool = True) -> list[str]:
    """Lower-case label words: punctuation around words dropped, "#" and "no."
    kept as words, bracketed hints ("(MM/DD/YYYY)", "(if known)") left out."""
    t = text.lower().replace("’", "'").replace("_", " ")
    if drop_parentheses:
        t = _PAREN.sub(" ", t)
    t = t.replace("#", " # ")
    out = []
    for raw in re.split(r"[\s/,;:?()]+", t):
        w = _EDGE.sub("", raw).strip("'")  # a quote OCR set at a word's edge ("history'"); "child's" stays
        if w == "no.":
            out.append(w)
            continue
        w = w.rstrip(".")
        if w:
            out.append(w)
    return out


for _meaning, _kind in _IDENTITY_KIND.items():
    for _phrase in IDENTITY_VOCABULARY[_meaning]:
        WHOLE_LABELS.setdefault(" ".join(tokens(_phrase)), _kind)


def _compile(phrase: str) -> list[str]:
    return [w + "*" if raw.endswith("*") else w
            for raw, w in zip(phrase.split(), (tokens(r, drop_parentheses=False)[0] for r in phrase.split()))]


_FIELDS = [(kind, [_compile(p) for p in phrases]) for kind, phrases in FIELD_PHRASES]
_OWNERS = [(owner, [_compile(p) for p in phrases]) for owner, phrases in OTHER_PERSON_PHRASES]


def _word_matches(pattern: str, word: str) -> bool:
    if pattern.endswith("*"):
        return word.startswith(pattern[:-1])
    if word.endswith("'s") and not pattern.endswith("'s"):
        word = word[:-2]  # "Insured's date of birth"
    return word == pattern or (pattern.endswith(".") and word == pattern[:-1])


def _contains(words: list[str], phrase: list[str]) -> bool:
    n = len(phrase)
    return any(all(_word_matches(p, w) for p, w in zip(phrase, words[i:i + n]))
               for i in range(len(words) - n + 1))


def _first(table, words: list[str]) -> str | None:
    for key, phrases in table:
        if any(_contains(words, p) for p in phrases):
            return key
    return None


def read_label(text: str) -> LabelMeaning:
    """Field, owner and patient mention of a label such as "Emergency contact phone:"."""
    words = tokens(text)
    whole = " ".join(words)
    kind = WHOLE_LABELS.get(whole) or _first(_FIELDS, words)
    owner = OTHER_PERSON_WHOLE.get(whole) or _first(_OWNERS, words)
    if kind == "relationship":
        owner = owner or "another person"
    elif kind == "clinician":  # "Family doctor" names the doctor, not a family history
        kind, owner = None, "clinician"
    return LabelMeaning(kind, owner, any(w in PATIENT_WORDS for w in words),
                        any(w in READER_WORDS for w in words))


# What an allergy question asks about, when not about allergies in general: a "No"
# under "Allergies to medicines?" rules out drug allergies only, under "Allergic to any
# foods?" food allergies only, and under "Allergic to latex?" that one substance, which
# is no "no known allergies" of any kind.
ALLERGY_SCOPE_PHRASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("substance", ("latex", "rubber", "insect*", "bee", "bees", "wasp*", "sting*", "pollen*", "hay fever",
                   "environment*", "seasonal", "animal*", "pet", "pets", "dust", "mould*", "mold*", "contrast",
                   "dye*", "iodine", "tape", "plaster*", "adhesive*", "dressing*", "metal*", "nickel", "shellfish",
                   "peanut*", "nuts", "tree nut*", "egg*", "milk", "dairy", "gluten", "penicillin*", "sulfa*",
                   "sulpha*", "anaesthe*", "anesthe*")),
    ("drug", ("medicine*", "medication*", "drug*", "meds", "prescription*", "antibiotic*", "tablets", "pills")),
    ("food", ("food*",)),
)
_ALLERGY_SCOPES = [(scope, [_compile(p) for p in phrases]) for scope, phrases in ALLERGY_SCOPE_PHRASES]


def allergy_scope(label: str) -> str | None:
    """What an allergy label asks about: "drug", "food", "substance" (only named
    substances or classes: latex, insects, contrast dye), or None for allergies in
    general - also when it names both drugs and foods ("Allergies (medicines, foods,
    latex)"). Drugs or foods named beside a substance decide: "Allergic to penicillin
    or other medicines?" asks about drugs."""
    words = tokens(label)
    found = {scope for scope, phrases in _ALLERGY_SCOPES if any(_contains(words, p) for p in phrases)}
    classes = found - {"substance"}
    if len(classes) == 1:
        return classes.pop()
    return "substance" if found == {"substance"} else None


_VOCABULARY = frozenset(w for _, phrases in _FIELDS + _OWNERS for p in phrases for w in p if not w.endswith("*"))
_PREFIXES = tuple(w[:-1] for _, phrases in _FIELDS + _OWNERS for p in phrases for w in p if w.endswith("*"))
MAX_BARE_LABEL_WORDS = 8


def _label_word(word: str) -> bool:
    if word.endswith("'s"):
        word = word[:-2]
    return (word in LABEL_WORDS or word in _VOCABULARY or word.startswith(_PREFIXES)
            or word.rstrip(".") in _VOCABULARY or (word.isdigit() and len(word) <= 2))


def reads_as_label(text: str) -> bool:
    """Whether every word of ``text`` is label vocabulary and none an answer word
    ("First Name", "Relation to Case"): on a blank or header row, a label, never a
    value of the field before it."""
    words = tokens(text)
    return bool(words) and all(_label_word(w) and w not in ANSWER_WORDS for w in words)


_ALTERNATIVES = re.compile(r"\s+/\s+")


def is_bare_label(text: str, *, bilingual: bool = True) -> bool:
    """Whether a phrase written without a colon reads as a label: short, made only
    of label vocabulary, naming a field or another person, and no answer word in it
    ("Patient No" is a label; "No known allergies" is an answer). Of a bilingual
    phrase ("Contacto de emergencia / Emergency contact") one alternative must be,
    unless ``bilingual`` is off (inside an answer, where the words before a "/" may
    be the answer's)."""
    alternatives = _ALTERNATIVES.split(text)
    if len(alternatives) > 1 and bilingual:
        return not any(w in ANSWER_WORDS for w in tokens(text)) and any(map(_is_bare_label, alternatives))
    return _is_bare_label(text)


def _is_bare_label(text: str) -> bool:
    words = tokens(text)
    if not words or len(words) > MAX_BARE_LABEL_WORDS:
        return False
    for i, w in enumerate(words):
        if w in ANSWER_WORDS and not (w == "no" and i == len(words) - 1 and i > 0):
            return False
    if not all(_label_word(w) for w in words):
        return False
    meaning = read_label(text)
    return meaning.kind is not None or meaning.owner is not None
