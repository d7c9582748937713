"""What a question, and a piece of patient evidence, is about (pure).

One vocabulary serves both sides: a question is reduced to topics by its words
(``find_topics``) and every chart row or document fact gets topics from its test
name or its text (``topics_of``), so "what is her A1c?" and a "Hemoglobin A1c"
result meet on the same name.

Three kinds of topic:

- lab topics (A1c, LDL, thyroid…) match a lab result by its canonical analyte
  (``domain.policy.facts.analytes``: "Leukocytes [#/volume] in Blood", "WBC" and LOINC
  6690-2 are one test), and by ``lab_patterns`` on the name only when the analyte
  vocabulary does not know the test;
- record topics (medications, allergies, problems…) match a fact type;
- condition topics (diabetes, hypertension, CKD…) match a problem, history or note
  that names the condition (``condition_patterns``) and bring along the lab topics
  a clinician reads beside it (``related``): "does she have diabetes?" is answered
  with the problem entries that mention diabetes plus her A1c and glucose.

A condition counts for the patient only when the mention is affirmed and about the
patient: "denies diabetes", "mother - type 2 diabetes" and "return if short of
breath" never make the patient a case of the condition (see ``topics_of``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from domain.models import ClinicalContext
from domain.policy.facts.analytes import analyte, canonical_analyte, result_is_of
from domain.policy.facts.certainty import not_the_patients_fact


@dataclass(frozen=True)
class Topic:
    name: str
    label: str  # how the answer names it ("LDL cholesterol")
    synonyms: tuple[str, ...]  # matched in questions as whole words/phrases, case-insensitive
    fact_types: tuple[str, ...] = ("lab_result",)
    # Canonical analyte ids of the topic's tests (an id covers its variants: "neutrophils"
    # the percent and the absolute count), and patterns for test names the analyte
    # vocabulary does not know (searched in the lower-cased name).
    analytes: tuple[str, ...] = ()
    lab_patterns: tuple[str, ...] = ()
    guideline_hint: str = ""  # words added to a guideline query about this topic
    # Words for a low result instead, when low means something else than high does
    # (a low glucose is hypoglycemia, a high one a question of diabetes).
    guideline_hint_low: str = ""
    # Condition topics: how the condition is written in a problem or note, and the
    # lab topics that go with it.
    condition_patterns: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    group: str = ""  # lab topics read together in an answer ("glycemic": A1c and glucose)
    # Vital-sign topics: the kinds of sign they cover (``domain.policy.facts.vital_signs``).
    vitals: tuple[str, ...] = ()

    @property
    def is_condition(self) -> bool:
        return bool(self.condition_patterns)

    @property
    def is_lab(self) -> bool:
        return bool(self.lab_patterns or self.analytes)


def _condition(name: str, label: str, synonyms: tuple[str, ...], patterns: tuple[str, ...],
               related: tuple[str, ...] = (), hint: str = "") -> Topic:
    return Topic(name, label, synonyms, fact_types=("problem",), condition_patterns=patterns, related=related,
                 guideline_hint=hint)


# Order matters: specific topics come before broad ones (``primary_topic``).
TOPICS: tuple[Topic, ...] = (
    # ---- lab topics
    Topic("a1c", "hemoglobin A1c", ("a1c", "hba1c", "hb a1c", "hemoglobin a1c", "haemoglobin a1c",
                                    "glycated hemoglobin", "glycohemoglobin", "glycosylated hemoglobin"),
          analytes=("hba1c",), lab_patterns=(r"\ba1c\b", r"hba1c", r"glyc\w* h\w*globin", r"glycohemoglobin"),
          guideline_hint="A1C glycemic goal diabetes testing frequency", group="glycemic"),
    Topic("glucose", "glucose", ("glucose", "blood sugar", "sugar", "sugars", "fasting glucose"),
          analytes=("glucose",), lab_patterns=(r"glucose",), guideline_hint="diabetes screening fasting glucose",
          guideline_hint_low="hypoglycemia low glucose level classification", group="glycemic"),
    Topic("ldl", "LDL cholesterol", ("ldl", "ldl-c", "ldl cholesterol", "bad cholesterol", "low density lipoprotein"),
          analytes=("ldl",), lab_patterns=(r"\bldl\b", r"low[- ]density"),
          guideline_hint="LDL cholesterol statin follow-up lipid",
          group="cholesterol"),
    Topic("hdl", "HDL cholesterol", ("hdl", "hdl-c", "good cholesterol", "high density lipoprotein"),
          analytes=("hdl",), lab_patterns=(r"\bhdl\b", r"high[- ]density"), guideline_hint="lipid panel HDL",
          group="cholesterol"),
    Topic("cholesterol", "cholesterol", ("cholesterol", "lipids", "lipid", "lipid panel", "triglycerides"),
          analytes=("cholesterol_total", "hdl", "ldl", "triglycerides", "non_hdl", "vldl", "chol_hdl_ratio"),
          lab_patterns=(r"cholesterol", r"\bldl\b", r"\bhdl\b", r"triglycerid", r"lipid"),
          guideline_hint="cholesterol lipid statin primary prevention"),
    Topic("blood_pressure", "blood pressure", ("blood pressure", "bp", "b/p", "systolic", "diastolic",
                                               "blood pressures", "bp readings"),
          fact_types=("lab_result", "problem", "vital_sign"),
          lab_patterns=(r"blood pressure", r"systolic", r"diastolic", r"\bbp\b"), vitals=("blood_pressure",),
          guideline_hint="blood pressure hypertension screening out-of-office confirmation follow-up"),
    Topic("kidney", "kidney function", ("kidney", "kidneys", "renal", "egfr", "gfr", "creatinine", "albumin", "uacr",
                                        "microalbumin", "albuminuria", "kidney function", "renal function"),
          analytes=("creatinine", "egfr", "bun", "urea", "bun_creatinine_ratio", "urine_albumin", "uacr",
                    "urine_creatinine", "urine_protein"),
          lab_patterns=(r"gfr", r"creatinine", r"albumin", r"\buacr\b", r"\bbun\b", r"urea"),
          guideline_hint="kidney disease eGFR albumin monitoring"),
    # Liver tests by their own names; a bare "liver" is not one ("liver disease" is looked up
    # on the problem list).
    Topic("liver", "liver tests", ("liver enzymes", "liver enzyme", "liver function", "liver function tests",
                                   "liver tests", "liver panel", "lfts", "lft", "hepatic panel", "hepatic function",
                                   "hepatic function panel", "transaminases", "ast", "alt", "sgot", "sgpt",
                                   "bilirubin", "alkaline phosphatase", "alk phos", "ggt"),
          analytes=("ast", "alt", "alp", "ggt", "bilirubin_total", "bilirubin_direct", "albumin"),
          lab_patterns=(r"\bast\b", r"\balt\b", r"\bsgot\b", r"\bsgpt\b", r"bilirubin", r"alk\w* phos",
                        r"\bggt\b", r"transaminase")),
    Topic("thyroid", "thyroid tests", ("thyroid", "tsh", "t4", "free t4", "thyrotropin", "thyroid function"),
          analytes=("tsh", "free_t4", "t4_total", "free_t3", "t3_total"),
          lab_patterns=(r"\btsh\b", r"thyro", r"\bt4\b", r"\bt3\b"), guideline_hint="thyroid TSH testing"),
    Topic("cbc", "blood count", ("cbc", "blood count", "wbc", "white blood cells", "white count", "hemoglobin",
                                 "haemoglobin", "hematocrit", "platelets", "rbc"),
          analytes=("wbc", "rbc", "hemoglobin", "hematocrit", "mcv", "mch", "mchc", "rdw", "platelets", "mpv",
                    "neutrophils", "lymphocytes", "monocytes", "eosinophils", "basophils"),
          lab_patterns=(r"\bwbc\b", r"white", r"\brbc\b", r"^hemoglobin$", r"^haemoglobin$", r"hematocrit",
                        r"platelet", r"\bmcv\b", r"\bmchc?\b", r"\brdw\b", r"\bmpv\b", r"\bhgb\b", r"\bhct\b",
                        r"neutrophil", r"lymphocyt", r"monocyt", r"eosinophil", r"basophil")),
    # A urine test of any kind: the dipstick, microscopy and urine chemistry ("Glucose
    # (urine)", as a urinalysis panel's results are named). "Is there blood in her urine?"
    # is about the urine, not the blood count.
    Topic("urine", "urine tests", ("urine", "urinalysis", "urine test", "urine tests", "urine dipstick", "dipstick",
                                   "ua", "msu", "urine sample"),
          analytes=("urine_albumin", "uacr", "urine_creatinine", "urine_specific_gravity", "urine_ph", "urine_protein",
                    "urine_glucose", "urine_ketones", "urine_leukocyte_esterase", "urine_nitrite", "urine_blood",
                    "urine_bilirubin"),
          lab_patterns=(r"\burine\b", r"urinalysis", r"dipstick", r"\bua\b")),
    # What a culture's organism is sensitive or resistant to ("Ampicillin [Susceptibility]
    # >=32 ug/mL R"). Not "culture" or "organism": what a culture grew is named by the
    # organism ("Salmonella: Isolated"), which no pattern of a test's name can list.
    Topic("susceptibility", "susceptibility results",
          ("susceptibility", "susceptibilities", "susceptible", "sensitive to", "sensitivity to", "resistant",
           "resistance", "antibiogram", "mic"),
          lab_patterns=(r"susceptib", r"sensitivit", r"\bmic\b", r"antibiogram")),
    # ---- vital-sign topics (the blood pressure is above, beside the lab tests it once was)
    # Not "hr" or "rr" alone: "24 hr urine" and "RR interval" are no questions about a sign.
    Topic("pulse", "pulse", ("pulse", "pulse rate", "heart rate", "heartbeat", "heart beat"),
          fact_types=("vital_sign",), vitals=("heart_rate",)),
    Topic("temperature", "temperature", ("temperature", "temp", "temps", "body temperature"),
          fact_types=("vital_sign",), vitals=("temperature",)),
    Topic("respiratory_rate", "respiratory rate", ("respiratory rate", "resp rate", "respirations",
                                                   "breathing rate"),
          fact_types=("vital_sign",), vitals=("respiratory_rate",)),
    Topic("oxygen_saturation", "oxygen saturation", ("oxygen saturation", "o2 sat", "o2 sats", "sats", "spo2",
                                                     "sao2", "oxygen level", "oxygen levels", "saturation",
                                                     "saturations", "pulse ox", "pulse oximetry"),
          fact_types=("vital_sign",), vitals=("spo2",)),
    Topic("weight", "weight", ("weight", "weigh", "weighs", "body weight"), fact_types=("vital_sign",),
          vitals=("weight",)),
    Topic("height", "height", ("height", "how tall", "tall"), fact_types=("vital_sign",), vitals=("height",)),
    Topic("bmi", "body mass index", ("bmi", "body mass index"), fact_types=("vital_sign",), vitals=("bmi",)),
    # ---- condition topics (a problem entry or note that names the condition)
    _condition("diabetes", "diabetes",
               ("diabetes", "diabetic", "dm", "t2dm", "t1dm", "type 2 diabetes", "type 1 diabetes", "diabetes mellitus",
                "prediabetes", "pre-diabetes", "prediabetic"),
               (r"diabet", r"\bt[12]dm\b", r"\bdm\s?(?:1|2|i|ii)?\b", r"\bniddm\b", r"\biddm\b", r"\be1[013]\b"),
               related=("a1c", "glucose"), hint="diabetes diagnosis A1C glucose monitoring"),
    _condition("hypertension", "hypertension",
               ("hypertension", "htn", "high blood pressure", "hypertensive", "elevated blood pressure"),
               (r"hypertens", r"\bhtn\b", r"high blood pressure", r"\bi1[0-6]\b"),
               related=("blood_pressure",), hint="hypertension blood pressure follow-up"),
    _condition("ckd", "chronic kidney disease",
               ("ckd", "chronic kidney disease", "kidney disease", "renal disease", "renal insufficiency",
                "kidney failure", "renal failure", "nephropathy"),
               (r"\bckd\b", r"kidney disease", r"renal (?:disease|insufficiency|failure)", r"kidney failure",
                r"nephropath", r"\bn18\b"),
               related=("kidney",), hint="chronic kidney disease eGFR albumin evaluation"),
    _condition("hypothyroidism", "hypothyroidism",
               ("hypothyroidism", "hypothyroid", "underactive thyroid", "hashimoto", "hashimoto's"),
               (r"hypothyro", r"underactive thyroid", r"hashimoto", r"\be0[23]\b"),
               related=("thyroid",), hint="hypothyroidism TSH thyroid"),
    _condition("hyperthyroidism", "hyperthyroidism",
               ("hyperthyroidism", "hyperthyroid", "overactive thyroid", "graves", "graves'", "thyrotoxicosis"),
               (r"hyperthyro", r"overactive thyroid", r"\bgraves", r"thyrotoxic", r"\be05\b"),
               related=("thyroid",), hint="thyroid TSH testing"),
    _condition("hyperlipidemia", "hyperlipidemia",
               ("hyperlipidemia", "hyperlipidaemia", "dyslipidemia", "dyslipidaemia", "high cholesterol",
                "hypercholesterolemia", "hld"),
               (r"lip(?:a|i)?d(?:a)?emia", r"hypercholesterol", r"high cholesterol", r"\bhld\b", r"\be78\b"),
               related=("cholesterol",), hint="cholesterol lipid statin primary prevention"),
    _condition("anemia", "anemia", ("anemia", "anaemia", "anemic", "anaemic"),
               (r"\ban(?:a)?emi", r"\bd5\d\b", r"\bd6[0-4]\b"), related=("cbc",)),
    _condition("heart_disease", "heart disease",
               ("heart disease", "coronary artery disease", "coronary disease", "cad", "heart attack",
                "myocardial infarction", "cardiovascular disease", "ascvd", "heart failure", "chf"),
               (r"heart (?:disease|attack|failure)", r"coronary", r"\bcad\b", r"myocardial infarction", r"\bascvd\b",
                r"\bchf\b", r"cardiovascular disease", r"\bi2[0-5]\b"),
               related=("cholesterol",), hint="cardiovascular risk statin prevention"),
    _condition("lung_disease", "asthma or COPD", ("asthma", "asthmatic", "copd", "emphysema", "chronic bronchitis"),
               (r"asthma", r"\bcopd\b", r"emphysema", r"chronic bronchitis", r"\bj4[4-5]\b")),
    _condition("cancer", "cancer", ("cancer", "malignancy", "tumor", "tumour", "carcinoma", "neoplasm", "lymphoma",
                                    "leukemia", "melanoma"),
               (r"cancer", r"carcinom", r"malignan", r"tumou?r", r"neoplas", r"lymphoma", r"leuka?emia", r"melanoma")),
    # ---- broad lab topic (every lab result)
    Topic("labs", "lab results", ("labs", "lab results", "lab", "results", "bloodwork", "blood work", "tests",
                                  "test results", "laboratory", "bloods", "blood tests", "blood test",
                                  "blood results"), lab_patterns=(r".",)),
    # ---- broad vital-sign topic (every vital sign)
    Topic("vitals", "vital signs", ("vitals", "vital signs", "vital sign", "observations", "obs", "vital"),
          fact_types=("vital_sign",), vitals=("blood_pressure", "heart_rate", "temperature", "respiratory_rate",
                                              "spo2", "weight", "height", "bmi")),
    # ---- record topics
    Topic("medications", "medications", ("medication", "medications", "meds", "medicines", "medicine", "drugs",
                                         "prescriptions", "taking", "takes", "pills", "metformin", "statin",
                                         "statins", "lisinopril", "insulin"),
          fact_types=("medication",)),
    Topic("allergies", "allergies", ("allergy", "allergies", "allergic", "reaction", "reactions", "nkda",
                                     "intolerance", "intolerances", "intolerant", "adverse reactions",
                                     "adverse drug reactions", "sensitivities", "sulfa", "penicillin"),
          fact_types=("allergy",)),
    Topic("problems", "problems and diagnoses on record",
          ("problem", "problems", "problem list", "diagnosis", "diagnose", "diagnosed", "diagnoses", "dx", "conditions",
           "history", "past medical history", "medical history", "pmh"), fact_types=("problem",)),
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
    # Imaging reports: a line that names the study, and every finding line of a report
    # that does (``report_kinds``: "approximately 20-25% pneumothorax persisting." is a
    # line of a chest film report). A bare "film" is not a question about imaging.
    Topic("imaging", "imaging reports", ("x-ray", "x-rays", "xray", "xrays", "x ray", "cxr", "chest film",
                                         "chest films", "plain film", "plain films", "x-ray film", "radiograph",
                                         "radiographs", "radiology", "radiology report", "imaging", "ct", "ct scan",
                                         "cat scan", "mri", "ultrasound", "sonogram", "scan", "scans",
                                         "echocardiogram"), fact_types=("other",)),
    Topic("demographics", "demographics", ("address", "phone", "demographics", "contact details"),
          fact_types=("demographic",)),
    Topic("preferences", "preferences", ("preference", "preferences", "prefers", "appointment time",
                                         "contact preference", "preferred"), fact_types=("preference",)),
    Topic("screening", "preventive screening", ("screening", "colonoscopy", "colorectal", "mammogram",
                                                "mammography", "breast cancer screening", "cervical", "pap", "hpv",
                                                "cancer screening"), fact_types=(),
          guideline_hint="preventive screening colorectal breast cervical"),
)
TOPIC_BY_NAME = {t.name: t for t in TOPICS}
# Every synonym as one whole-word pattern, compiled once.
_SYNONYMS = tuple((t.name, re.compile(r"(?<![a-z0-9])" + re.escape(phrase) + r"(?![a-z0-9])"))
                  for t in TOPICS for phrase in t.synonyms)
CONDITION_TOPICS = tuple(t for t in TOPICS if t.is_condition)
VITAL_TOPIC_LIST = tuple(t for t in TOPICS if t.vitals)
LAB_TOPIC_LIST = tuple(t for t in TOPICS if t.is_lab)
LAB_TOPICS = frozenset(t.name for t in LAB_TOPIC_LIST)
# Lab topics that are tests, not vital signs (a blood pressure once came as a lab result
# and is still read as one, but "labs" and "results" do not mean it).
LAB_TEST_TOPICS = LAB_TOPICS - frozenset(t.name for t in VITAL_TOPIC_LIST)
_CONDITION_BY_LABEL = {t.label.lower(): t for t in CONDITION_TOPICS}
_TOPIC_ORDER = {t.name: n for n, t in enumerate(TOPICS)}

# The record topic a fact type belongs to, whatever its text says.
PRIMARY_TOPIC = {"allergy": "allergies", "medication": "medications", "problem": "problems",
                 "chief_concern": "chief_concern", "family_history": "family_history", "referral": "referral",
                 "demographic": "demographics", "preference": "preferences"}
# Free-text fact types whose words also say what they are about ("History: hypertension").
_TEXT_FACT_TYPES = ("problem", "other", "chief_concern", "referral")
# Referral fields that say who, where or when, not what about: a specialty's name is no topic.
_WHO_WHERE_WHEN = frozenset({"referring_provider", "referring_clinic", "receiving_provider", "receiving_clinic",
                             "letter_date", "appointment", "urgency"})
# Broad topics give way to a more specific one named in the same question.
_BROAD = {"labs": LAB_TOPICS - {"labs"},
          "vitals": frozenset(t.name for t in VITAL_TOPIC_LIST) - {"vitals"},
          "problems": frozenset(t.name for t in CONDITION_TOPICS) | (LAB_TOPICS - {"labs"})}  # "A1c history"


def find_topics(text: str) -> tuple[str, ...]:
    """Topics named in the text. A phrase inside a longer matched phrase does not
    count on its own: "hemoglobin A1c" is about A1c, not the blood count, and
    "LDL cholesterol" is about LDL, not cholesterol in general. A broad topic
    ("labs", "problems") gives way to a specific one: "is CKD on his problem list?"
    is about CKD, "his A1c history" about A1c."""
    low = text.lower()
    matches = [(m.start(), m.end(), name) for name, rx in _SYNONYMS for m in rx.finditer(low)]
    found: list[str] = []
    for start, end, name in sorted(matches, key=lambda m: (m[0], -(m[1] - m[0]))):
        inside_longer = any(s <= start and end <= e and (e - s) > (end - start) and n != name
                            for s, e, n in matches)
        if not inside_longer and name not in found:
            found.append(name)
    for broad, specific in _BROAD.items():
        if broad in found and any(t in specific for t in found):
            found.remove(broad)
    if "labs" in found and len(found) > 1:
        found.remove("labs")
    return tuple(found)


def conditions_named(text: str) -> set[str]:
    """Condition topics a problem, history entry or note names (however it was meant)."""
    low = (text or "").lower()
    return {t.name for t in CONDITION_TOPICS if any(re.search(p, low) for p in t.condition_patterns)}


def mentions_term(term: str, text: str) -> bool:
    """Whether a record entry names a look-up's free term; a condition's label matches
    however the condition is written ("hyperlipidemia" finds "high cholesterol")."""
    condition = _CONDITION_BY_LABEL.get(term.lower())
    if condition is not None:
        return condition.name in conditions_named(text)
    return re.search(r"(?<![a-z0-9])" + re.escape(term.lower()), (text or "").lower()) is not None


# Where a look-up's free term is searched, by the record topic its frame names: a
# condition may be written on the problem list, as the reason for the visit or in a note.
_TERM_FACT_TYPES = {"problems": ("problem", "chief_concern", "other", "referral")}


def term_fact_types(topic: str) -> tuple[str, ...]:
    return _TERM_FACT_TYPES.get(topic, TOPIC_BY_NAME[topic].fact_types)


def about_the_patient(fact_type: str, context: ClinicalContext | None) -> bool:
    """An affirmed mention about the patient: not denied, not a relative's, not hypothetical
    (the certainty policy's rule, ``not_the_patients_fact``)."""
    return fact_type != "family_history" and not_the_patients_fact(context) is None


def lab_topics(value: dict[str, Any]) -> set[str]:
    """The lab topics of a result: by its canonical analyte when the vocabulary knows
    the test (however the report printed it, or by its LOINC code), else by its name."""
    name = str(value.get("test_name") or "")
    loinc, unit = value.get("loinc") or None, value.get("unit") or None
    if canonical_analyte(name, loinc=loinc, unit=unit):
        return {t.name for t in LAB_TOPIC_LIST if t.analytes and result_is_of(t.analytes, name, loinc=loinc, unit=unit)
                } | {"labs"}
    low = name.lower()
    return {t.name for t in LAB_TOPIC_LIST if any(re.search(p, low) for p in t.lab_patterns)}


def analyte_label(analyte_id: str) -> str:
    """How an answer names a test a question named: "Lymphocytes" for both the count
    ("Lymphocytes, absolute") and the percent."""
    found = analyte(analyte_id)
    return re.sub(r",\s*(?:absolute|percent)$", "", found.display) if found else analyte_id


def topic_of_analyte(analyte_id: str) -> str:
    """The most specific lab topic a named test belongs to ("labs" when none lists it)."""
    for topic in LAB_TOPIC_LIST:
        if any(analyte_id == a or analyte_id.startswith(a + "_") for a in topic.analytes):
            return topic.name
    return "labs"


def topics_of(fact_type: str, value: dict[str, Any], text: str, context: ClinicalContext | None = None) -> set[str]:
    """The topics a piece of patient evidence is about. Conditions are only the
    patient's own when the mention is affirmed and about the patient."""
    if fact_type == "lab_result":
        return lab_topics(value)
    if fact_type == "vital_sign":
        return {t.name for t in VITAL_TOPIC_LIST if value.get("kind") in t.vitals}
    found: set[str] = set()
    if fact_type in PRIMARY_TOPIC:
        found.add(PRIMARY_TOPIC[fact_type])
    if fact_type == "referral" and value.get("field") in _WHO_WHERE_WHEN:
        return found  # "Receiving provider: Dr Lindqvist, Acute Medicine" is about no medicine
    if fact_type in _TEXT_FACT_TYPES and about_the_patient(fact_type, context):
        found |= set(find_topics(text)) - {"labs", "problems", "family_history", "chief_concern", "referral"}
        found |= conditions_named(text)
    if about_the_patient(fact_type, context) and re.search(r"pregnan|\blmp\b|menstrual", text, re.I):
        found.add("pregnancy")
    return found


# ------------------------------------------------------------------ text reports
# A text report split into lines (an HL7 TX observation, one OBX per line) is read as one
# report: what kind of study it is shows on some lines only ("One film was presented for
# interpretation"), and every finding line shares it. Its furniture (labels, names, ids,
# dates, signatures, file names) is not a finding.
_REPORT_KINDS = {"imaging": re.compile(
    r"\b(?:x-?rays?|radiograph\w*|radiolog\w*|films?|imaging|ct|cat scan|mri|ultrasound|sonogra\w*|"
    r"echocardiogra\w*|fluoroscop\w*|mammogra\w*|cxr|chest,?\s+(?:portable|pa|ap|single view|two views?)|"
    r"(?:pa|ap) and lateral)\b", re.I)}
_LABEL_ONLY = re.compile(r"^\s*[^:]{1,60}:\s*$")  # "DOCTOR:", "IMPRESSION/ASSESSMENT:"
# Labels whose value (on the same line or the next) is administrative, not clinical.
_ADMIN_LABEL = re.compile(r"\b(?:patient|name|acct|account|number|no|mrn|id|date|time|dob|birth|doctor|physician|"
                          r"provider|attending|signature|signed|file|by|location|dictated|transcribed|page|cc)\b",
                          re.I)
_ADMIN_PAIR = re.compile(r"^\s*(?:file|by|location|date|time|signed|dictated|transcribed|electronically signed|page|"
                         r"cc|dob|mrn|account|acct|accession|order|doctor|physician|provider|ordering|referring|"
                         r"attending|read by|reviewed by)\b[^:]{0,20}:\s*\S|"
                         r"^\s*[^:]{1,30}:\s*\S*\d\S*\s*$", re.I)  # … or any label with an id or a date alone
_NO_WORDS = re.compile(r"^[^A-Za-z]*$|^\s*\S*\d\S*\s*$")  # no letters; one token with digits (an id, a date)


def report_kinds(lines: list[str]) -> set[str]:
    """The kinds of report (topics) a text report's lines say it is."""
    text = "\n".join(lines)
    return {kind for kind, rx in _REPORT_KINDS.items() if rx.search(text)}


def report_furniture(lines: list[str]) -> list[bool]:
    """For each line of a report in reading order, whether it is furniture: a label on its
    own ("TYPE OF PROCEDURE:"), the value under an administrative label ("DOCTOR:" then a
    name), an administrative "File: …", "By: …", "Date: …", an id or a date alone, a
    signature."""
    out: list[bool] = []
    after_admin_label = False
    for line in lines:
        label_only = bool(_LABEL_ONLY.match(line))
        out.append(label_only or after_admin_label or bool(_ADMIN_PAIR.match(line)) or bool(_NO_WORDS.match(line))
                   or "signature" in line.lower())
        after_admin_label = label_only and bool(_ADMIN_LABEL.search(line))
    return out


def topic_order(name: str | None) -> int:
    return _TOPIC_ORDER.get(name or "", len(_TOPIC_ORDER))


def group_of(name: str | None) -> str | None:
    """The answer group of a topic (its own name unless it declares one)."""
    topic = TOPIC_BY_NAME.get(name or "")
    return (topic.group or topic.name) if topic else name


def primary_topic(topics: set[str]) -> str | None:
    """The most specific topic of an item: vocabulary order lists specific topics
    (A1c, LDL, thyroid…) before broad ones (cholesterol, labs)."""
    return min(topics, key=topic_order) if topics else None


@lru_cache(maxsize=256)
def expand(topics: tuple[str, ...]) -> frozenset[str]:
    """The topics whose evidence answers a question about ``topics``: a condition
    brings its related labs, and a lab topic that problems bear on (blood pressure)
    brings the conditions that relate to it (hypertension on the problem list).
    Cached: it is asked once per candidate item of a request."""
    wanted = set(topics)
    for name in topics:
        topic = TOPIC_BY_NAME[name]
        wanted |= set(topic.related)
        if "problem" in topic.fact_types and topic.is_lab:
            wanted |= {c.name for c in CONDITION_TOPICS if name in c.related}
    return frozenset(wanted)
