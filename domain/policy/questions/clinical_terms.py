"""Which free words in a question are clinical (pure).

A free term is repeated back in an answer ("No “apixaban” found…") only when it is
recognisably clinical: a test the analyte vocabulary knows, a word ``CLINICAL_SUBJECT``
knows by its ending, a common condition or finding without a telling ending, or a drug
name built on a WHO INN stem. Anything else — a person's name above all — is said in
general words ("nothing matching what you asked about"). ``CLINICAL_SUBJECT`` also puts
a question without a known topic inside the chart (``domain.policy.questions.intent``).
"""

from __future__ import annotations

import re

from domain.policy.facts.analytes import analytes_named

# Symptoms, body, tests and conditions by their endings.
CLINICAL_SUBJECT = re.compile(
    r"\b(?:pain\w*|ache\w*|cough\w*|fever\w*|nause\w*|vomit\w*|diarrh\w*|constipat\w*|rash\w*|itch\w*|dizz\w*|"
    r"headache\w*|migraine\w*|fatigue\w*|tired\w*|swell\w*|swollen|bleed\w*|bruis\w*|breath\w*|wheez\w*|chest|"
    r"heart|lungs?|kidneys?|liver|skin|bones?|joints?|blood|urine|stool|weight|bmi|sleep\w*|mood|anxi\w*|"
    r"depress\w*|pregnan\w*|infect\w*|injur\w*|wound\w*|fractur\w*|sprain\w*|sodium|potassium|calcium|"
    r"magnesium|iron|ferritin|vitamin\w*|protein|lipo\w*|triglycerid\w*|electrolytes?|imaging|x-?rays?|scans?|"
    r"mri|ultrasound|biopsy|vaccin\w*|immuni[sz]\w*|surgery|surgical|procedure|smok\w*|alcohol|"
    r"(?!(?:diagnosis|prognosis|dx)\b)\w+(?:itis|a?emia|osis|pathy|oma|ectomy|algia|uria|thorax|megaly|rrhage|"
    r"rrho?ea|plegia|penia|cardia|otomy|ostomy|plasty|scopy))\b", re.I)
_CLINICAL_NOUNS = re.compile(
    r"\b(?:gout|lupus|stroke|seizures?|epilepsy|hernias?|ulcers?|abscess\w*|cysts?|polyps?|nodules?|lesions?|"
    r"tumou?rs?|cancers?|sepsis|septic|dementia|pneumonia|influenza|flu|covid\w*|angina|edema|oedema|jaundice|"
    r"murmurs?|palpitations?|syncope|effusions?|embol\w*|thromb\w*|clots?|fibrillation|arrhythmi\w*|"
    r"atelecta\w*|consolidation|opacit\w*|shingles|measles|allerg\w*|insulin|aspirin|morphine|codeine|"
    r"steroids?|statins?|vaccin\w*|inhalers?|pacemaker|stents?|implants?|transplant\w*|dialysis|chemo\w*|"
    r"radiotherapy|smok\w*|alcohol|diseases?|disorders?|syndromes?|deficienc\w*|insufficienc\w*|failure|"
    r"sciatica|shellfish|peanuts?|tree nuts?|latex|eggs?|dairy|gluten|soy|bee stings?|iodine|contrast|"
    r"dvt|uti|gerd|ibs|afib|a-fib|tia|hiv|hcv|hbv|osa|bph|pcos|adhd|ptsd)\b", re.I)
DRUG_STEMS = re.compile(
    r"\b[a-z]{2,}(?:xaban|parin|farin|pril|sartan|olol|alol|dipine|statin|formin|gliptin|gliflozin|glutide|"
    r"glinide|azole|prazole|tidine|cillin|mycin|micin|cycline|floxacin|vir|mab|nib|zepam|azolam|oxetine|"
    r"traline|triptan|profen|fenac|coxib|caine|sone|olone|lukast|terol|tropium|afil|setron|dronate|thiazide|"
    r"semide|pentin|tiapine|peridone|codone|morphone|oxine)\b|\bcef[a-z]{3,}\b", re.I)
# A capitalised word inside the question is a name (a person, a place, a brand): never repeated.
_PROPER_NAME = re.compile(r"(?<![A-Za-z])[A-Z][a-z]+(?:[-'][A-Za-z]+)*")


def clinical_term(term: str) -> bool:
    """Whether a free term is recognisably clinical (see above)."""
    return bool(analytes_named(term) or CLINICAL_SUBJECT.search(term) or _CLINICAL_NOUNS.search(term)
                or DRUG_STEMS.search(term))


def quotable(term: str, as_written: str) -> bool:
    """Whether an answer may repeat the term: clinical, and no name as the question wrote it."""
    return clinical_term(term) and not _PROPER_NAME.search(as_written)
