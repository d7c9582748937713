"""Understanding a clinician's question with rules a reviewer can read.

A question is reduced to *topics* (what it is about, from a vocabulary with
synonyms), an *intent* (look something up, interpret / what deserves attention,
ask for guideline advice) and *unsafe requests* (diagnosis, treatment, dosing,
medication changes), plus whether it leans on the previous turn ("and her LDL?").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum


class Intent(str, Enum):
    LOOKUP = "lookup"  # what is / list / when was
    ATTENTION = "attention"  # interpret, anything abnormal, what deserves attention
    GUIDELINE = "guideline"  # what do the guidelines say, how often, screening due


class Unsafe(str, Enum):
    DIAGNOSIS = "diagnosis"
    TREATMENT = "treatment"
    DOSING = "dosing"
    MEDICATION_CHANGE = "medication_change"


@dataclass(frozen=True)
class Topic:
    name: str
    label: str  # how the answer names it ("LDL cholesterol")
    synonyms: tuple[str, ...]  # matched as whole words/phrases, case-insensitive
    fact_types: tuple[str, ...] = ("lab_result",)
    # Lab test names that belong to the topic (matched against test_name words).
    lab_patterns: tuple[str, ...] = ()
    guideline_hint: str = ""  # words added to a guideline query about this topic


TOPICS: tuple[Topic, ...] = (
    Topic("a1c", "hemoglobin A1c", ("a1c", "hba1c", "hb a1c", "hemoglobin a1c", "haemoglobin a1c", "glycated hemoglobin",
                                    "glycohemoglobin", "glycosylated hemoglobin"),
          lab_patterns=(r"\ba1c\b", r"hba1c", r"glyc\w* h\w*globin", r"glycohemoglobin"),
          guideline_hint="A1C glycemic goal diabetes testing frequency"),
    Topic("glucose", "glucose", ("glucose", "blood sugar", "sugar", "fasting glucose"),
          lab_patterns=(r"glucose",), guideline_hint="diabetes screening fasting glucose"),
    Topic("ldl", "LDL cholesterol", ("ldl", "ldl-c", "ldl cholesterol", "bad cholesterol", "low density lipoprotein"),
          lab_patterns=(r"\bldl\b", r"low[- ]density"), guideline_hint="LDL cholesterol statin follow-up lipid"),
    Topic("hdl", "HDL cholesterol", ("hdl", "hdl-c", "good cholesterol", "high density lipoprotein"),
          lab_patterns=(r"\bhdl\b", r"high[- ]density"), guideline_hint="lipid panel HDL"),
    Topic("cholesterol", "cholesterol", ("cholesterol", "lipids", "lipid", "lipid panel", "triglycerides"),
          lab_patterns=(r"cholesterol", r"\bldl\b", r"\bhdl\b", r"triglycerid", r"lipid"),
          guideline_hint="cholesterol lipid statin primary prevention"),
    Topic("blood_pressure", "blood pressure", ("blood pressure", "bp", "hypertension", "systolic", "diastolic"),
          fact_types=("lab_result", "problem"), lab_patterns=(r"blood pressure", r"systolic", r"diastolic", r"\bbp\b"),
          guideline_hint="blood pressure hypertension screening out-of-office confirmation follow-up"),
    Topic("kidney", "kidney function", ("kidney", "renal", "egfr", "gfr", "creatinine", "albumin", "uacr",
                                        "microalbumin", "albuminuria", "ckd"),
          lab_patterns=(r"gfr", r"creatinine", r"albumin", r"\buacr\b", r"\bbun\b", r"urea"),
          guideline_hint="kidney disease eGFR albumin monitoring"),
    Topic("thyroid", "thyroid tests", ("thyroid", "tsh", "t4", "free t4", "thyrotropin", "hypothyroidism",
                                       "hyperthyroidism"),
          lab_patterns=(r"\btsh\b", r"thyro", r"\bt4\b", r"\bt3\b"), guideline_hint="thyroid TSH testing"),
    Topic("cbc", "blood count", ("cbc", "blood count", "wbc", "white blood cells", "white count", "hemoglobin",
                                 "haemoglobin", "hematocrit", "platelets", "anemia", "anaemia", "rbc"),
          lab_patterns=(r"\bwbc\b", r"white", r"\brbc\b", r"^hemoglobin$", r"^haemoglobin$", r"hematocrit",
                        r"platelet", r"\bmcv\b", r"\bhgb\b", r"\bhct\b"), guideline_hint=""),
    Topic("labs", "lab results", ("labs", "lab results", "lab", "results", "bloodwork", "blood work", "tests",
                                  "test results", "laboratory"), lab_patterns=(r".",), guideline_hint=""),
    Topic("medications", "medications", ("medication", "medications", "meds", "medicines", "medicine", "drugs",
                                         "prescriptions", "taking", "takes", "pills", "metformin", "statin",
                                         "lisinopril", "insulin"),
          fact_types=("medication",)),
    Topic("allergies", "allergies", ("allergy", "allergies", "allergic", "reaction", "reactions", "nkda",
                                     "intolerance", "sulfa", "penicillin"), fact_types=("allergy",)),
    Topic("problems", "problems and diagnoses on record", ("problem", "problems", "problem list", "diagnoses",
                                                          "conditions", "history", "past medical history",
                                                          "medical history"), fact_types=("problem",)),
    Topic("family_history", "family history", ("family history", "family", "mother", "father", "sibling",
                                               "runs in the family"), fact_types=("family_history",)),
    Topic("chief_concern", "reason for the visit", ("chief concern", "chief complaint", "reason for visit",
                                                    "why is she here", "why is he here", "visit reason",
                                                    "presenting", "symptoms", "symptom", "complaint"),
          fact_types=("chief_concern", "problem")),
    Topic("pregnancy", "pregnancy", ("pregnant", "pregnancy", "lmp", "last menstrual period"),
          fact_types=("other", "problem")),
    Topic("referral", "referral", ("referral", "referred", "referring", "specialist", "consult"),
          fact_types=("referral",)),
    Topic("demographics", "demographics", ("address", "phone", "demographics", "contact details"),
          fact_types=("demographic",)),
    Topic("preferences", "preferences", ("preference", "preferences", "prefers", "appointment time",
                                         "contact preference", "preferred"), fact_types=("preference",)),
    Topic("screening", "preventive screening", ("screening", "colonoscopy", "colorectal", "mammogram",
                                                "mammography", "breast cancer", "cervical", "pap", "hpv",
                                                "cancer screening"), fact_types=(),
          guideline_hint="preventive screening colorectal breast cervical"),
)
TOPIC_BY_NAME = {t.name: t for t in TOPICS}

# Clinically relevant review findings bear on every question about these areas.
CLINICAL_REVIEW_FACT_TYPES = ("allergy", "medication", "problem", "lab_result", "other", "chief_concern")
CLINICAL_WORDS = re.compile(r"allerg|pregnan|chest pain|suicid|bleed|faint|syncope|shortness of breath|sulfa|"
                            r"penicillin|medication|mg\b|dose|symptom|pain|fever", re.I)

_UNSAFE_PATTERNS: tuple[tuple[Unsafe, re.Pattern[str]], ...] = (
    (Unsafe.DOSING, re.compile(
        r"\b(what|which|how much|how many)\b.{0,40}\b(dose|dosage|dosing|mg|milligrams?|units?)\b|"
        r"\b(dose|dosage|dosing)\b.{0,30}\b(should|for|of|to)\b|\b(increase|decrease|raise|lower|double|halve|"
        r"titrate|adjust)\b.{0,30}\b(dose|dosage|mg)\b", re.I)),
    (Unsafe.MEDICATION_CHANGE, re.compile(
        r"\b(should|can|could|do|would)\b.{0,25}\b(i|we|she|he|they|the patient)\b.{0,25}"
        r"\b(start|stop|discontinue|switch|change|add|begin|quit|hold|restart|come off|take)\b|"
        r"\b(start|stop|discontinue|switch|begin|hold)\b.{0,20}\b(her|his|their|the|a|on)\b.{0,30}"
        r"\b(medication|medicine|meds|drug|statin|metformin|insulin|lisinopril|pill|therapy)\b", re.I)),
    (Unsafe.TREATMENT, re.compile(
        r"\b(how (should|do|would) (i|we) (treat|manage)|what (treatment|therapy)|best treatment|"
        r"treatment (plan|options?) for|what should (i|we) (prescribe|give|do about)|prescribe|"
        r"should (she|he|they|the patient) be (treated|started|put on))\b", re.I)),
    (Unsafe.DIAGNOSIS, re.compile(
        r"\b(diagnose|diagnosis|what('s| is) wrong with|does (she|he|the patient|they) have|"
        r"is (it|this) (cancer|diabetes|an? \w+ infection)|what (condition|disease) (does|is)|"
        r"differential)\b", re.I)),
)

_ATTENTION = re.compile(
    r"\b(attention|concern(ing|s)?|worr(y|ied|ying)|abnormal|out of range|flag(ged)?|interpret\w*|"
    r"significan\w*|what stands out|anything (important|notable|unusual)|red flags?|is (this|that|it) (normal|high|low|ok)|"
    r"too high|too low|summar\w*|overview|review|what should (i|we) (know|look at|watch))\b", re.I)
_GUIDELINE = re.compile(
    r"\b(guidelines?|recommend\w*|how often|when should|screening|due for|target|goal|threshold|"
    r"standard of care|uspstf|ada|acc|aha|kdigo|evidence)\b", re.I)
_FOLLOW_UP = re.compile(r"^\s*(and|also|what about|how about|plus|same for|and what about|ok,? and)\b|"
                        r"^\s*(her|his|their|its|the)\s+\w+\s*\??\s*$", re.I)
_PRONOUN_ONLY = re.compile(r"\b(it|that|this|those|these|them)\b", re.I)


@dataclass(frozen=True)
class ParsedQuestion:
    text: str
    topics: tuple[str, ...]
    intent: Intent
    unsafe: tuple[Unsafe, ...] = ()
    follow_up: bool = False
    inherited: tuple[str, ...] = field(default=())  # what came from the previous turn


def find_topics(text: str) -> tuple[str, ...]:
    """Topics named in the text. A phrase inside a longer matched phrase does not
    count on its own: "hemoglobin A1c" is about A1c, not the blood count, and
    "LDL cholesterol" is about LDL, not cholesterol in general."""
    low = text.lower()
    matches: list[tuple[int, int, str]] = []
    for topic in TOPICS:
        for phrase in topic.synonyms:
            for m in re.finditer(r"(?<![a-z0-9])" + re.escape(phrase) + r"(?![a-z0-9])", low):
                matches.append((m.start(), m.end(), topic.name))
    found: list[str] = []
    for start, end, name in sorted(matches, key=lambda m: (m[0], -(m[1] - m[0]))):
        inside_longer = any(s <= start and end <= e and (e - s) > (end - start) and n != name
                            for s, e, n in matches)
        if not inside_longer and name not in found:
            found.append(name)
    if "labs" in found and len(found) > 1:
        found.remove("labs")
    return tuple(found)


def parse_question(text: str, previous: ParsedQuestion | None = None) -> ParsedQuestion:
    """Pure: topics, intent, unsafe requests and follow-up grounding of one turn."""
    topics = find_topics(text)
    unsafe = tuple(kind for kind, pattern in _UNSAFE_PATTERNS if pattern.search(text))
    if _ATTENTION.search(text):
        intent = Intent.ATTENTION
    elif _GUIDELINE.search(text):
        intent = Intent.GUIDELINE
    else:
        intent = Intent.LOOKUP
    follow_up = bool(previous) and (bool(_FOLLOW_UP.search(text)) or not topics or
                                   (len(text.split()) <= 4 and bool(_PRONOUN_ONLY.search(text))))
    inherited: list[str] = []
    if follow_up and previous is not None:
        if not topics:
            topics = previous.topics
            inherited.append("topics")
        if intent is Intent.LOOKUP and previous.intent is not Intent.LOOKUP:
            intent = previous.intent
            inherited.append("intent")
    return ParsedQuestion(text=text, topics=topics, intent=intent, unsafe=unsafe, follow_up=follow_up,
                          inherited=tuple(inherited))
