"""Readable lexical normalisation shared by the local reranker and the keyword query.

Clinical questions and guideline text name the same thing differently ("HbA1c" / "A1C",
"BP" / "blood pressure", "colon" / "colorectal"). Each synonym group maps its surface
forms to one canonical term; a tiny suffix stripper folds plurals and verb forms. It is
deliberately simple and fully listed here, so a reviewer can see why two words matched.
"""

from __future__ import annotations

import re
from functools import lru_cache

# canonical term -> surface forms (single words or phrases, lowercase)
SYNONYM_GROUPS: dict[str, tuple[str, ...]] = {
    "a1c": ("a1c", "hba1c", "hemoglobin a1c", "haemoglobin a1c", "glycated hemoglobin",
            "glycated haemoglobin", "glycohemoglobin", "glycosylated hemoglobin"),
    "hypertension": ("hypertension", "hypertensive", "htn", "high blood pressure"),
    "bp": ("bp", "blood pressure", "blood pressures"),
    "colorectal": ("colorectal", "colon", "bowel", "rectal"),
    "ckd": ("ckd", "chronic kidney disease"),
    "kidney": ("kidney", "kidneys", "renal", "nephropathy"),
    "egfr": ("egfr", "gfr", "glomerular filtration rate", "estimated glomerular filtration rate"),
    "uacr": ("uacr", "acr", "albumin to creatinine ratio", "albumin creatinine ratio",
             "urine albumin", "microalbumin", "microalbuminuria"),
    "mammography": ("mammography", "mammogram", "mammograms"),
    "cytology": ("cytology", "pap", "pap smear", "pap test", "smear"),
    "hpv": ("hpv", "hrhpv", "human papillomavirus"),
    "tsh": ("tsh", "thyroid stimulating hormone", "thyrotropin"),
    "lipid": ("lipid", "lipids", "lipid panel", "lipid profile", "cholesterol panel"),
    "glucose": ("glucose", "blood sugar", "sugar", "sugars"),
    "diabetes": ("diabetes", "diabetic", "diabetics", "t2d", "t2dm", "t1d"),
    "cardiovascular": ("cardiovascular", "cvd", "ascvd", "heart disease", "atherosclerotic"),
    "ct": ("ct", "ldct", "computed tomography", "cat scan"),
    "goal": ("goal", "goals", "target", "targets"),
    "interval": ("often", "frequency", "frequently", "interval", "intervals", "every", "how frequently"),
    "test": ("test", "tests", "tested", "testing", "check", "checks", "checked", "checking",
             "measure", "measured", "measuring", "measurement", "recheck", "rechecked", "lab", "labs"),
    "age": ("age", "ages", "aged", "old", "older", "years old"),
    "start": ("start", "starting", "started", "begin", "beginning", "initiate", "initiating", "initiation"),
    "stop": ("stop", "stopping", "stopped", "discontinue", "discontinuing", "cease"),
    "year": ("year", "years", "yearly", "annual", "annually"),
    "women": ("women", "woman", "female", "females"),
    "smoking": ("smoking", "smoke", "smoked", "smoker", "smokers", "tobacco", "cigarettes"),
    "refer": ("refer", "referral", "referred", "referring"),
}

# What a BM25 query adds when it mentions a group: the spellings the corpus uses.
# Generic verb groups ("check" / "test") are left out: they would only add noise.
KEYWORD_EXPANSIONS: dict[str, str] = {
    "a1c": "a1c hba1c", "hypertension": "hypertension", "bp": "blood pressure",
    "colorectal": "colorectal colon", "ckd": "chronic kidney disease", "kidney": "kidney renal",
    "egfr": "egfr gfr", "uacr": "albumin creatinine ratio uacr albuminuria",
    "mammography": "mammography mammogram", "cytology": "cytology pap", "hpv": "hpv papillomavirus",
    "tsh": "tsh thyroid stimulating hormone", "lipid": "lipid cholesterol", "glucose": "glucose",
    "diabetes": "diabetes", "cardiovascular": "cardiovascular ascvd", "ct": "ct tomography",
    "goal": "goal target",
}

# Function words, question words and words that every guideline chunk shares.
STOPWORDS = frozenset("""
a an the of in on for to with without and or nor by at from about as into onto per via vs versus
i me my we our you your he she his her they them their it its this that these those there here
is are was were be been being am do does did done doing have has had having can could should
would will shall may might must what which who whom whose how when where why whether than then
so such too very also just only any some all each both either neither not no yes if but
get gets got need needs needed want tell say says said know please according thing things
recommend recommended recommends recommendation recommendations guideline guidelines advice
adult adults patient patients person people someone us
""".split())

_TOKEN_RE = re.compile(r"[a-z0-9]+")
_MAX_PHRASE = max(len(form.split()) for forms in SYNONYM_GROUPS.values() for form in forms)
_SURFACE: dict[tuple[str, ...], str] = {
    tuple(form.split()): canonical for canonical, forms in SYNONYM_GROUPS.items() for form in forms
}


def stem(word: str) -> str:
    """Fold common English endings: screening/screened/screens -> screen.

    Not a full stemmer: it only has to map a query word and a chunk word to the same
    string, because both go through this function.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in (("ies", "y"), ("ingly", ""), ("ing", ""), ("edly", ""), ("ed", ""),
                                ("ly", ""), ("es", "e"), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) + len(replacement) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                break
            word = word[: len(word) - len(suffix)] + replacement
            break
    if len(word) > 4 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]  # stopping -> stopp -> stop
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]  # pressure / pressures -> pressur
    return word


def _canonical_tokens(text: str) -> list[tuple[str, str]]:
    """``(canonical term, surface form)`` pairs, longest synonym phrase first."""
    tokens = _TOKEN_RE.findall(text.lower())
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(tokens):
        for n in range(min(_MAX_PHRASE, len(tokens) - i), 0, -1):
            phrase = tuple(tokens[i : i + n])
            if phrase in _SURFACE:
                out.append((_SURFACE[phrase], " ".join(phrase)))
                i += n
                break
        else:
            token = tokens[i]
            i += 1
            if token in STOPWORDS or (len(token) < 2 and not token.isdigit()):
                continue
            out.append((stem(token), token))
    return out


@lru_cache(maxsize=50_000)
def terms(text: str) -> frozenset[str]:
    """Content terms of ``text`` after synonyms, stopwords and stemming (cached)."""
    return frozenset(term for term, _ in _canonical_tokens(text))


def keyword_query(query: str) -> str:
    """The words to send to BM25: the question's content words plus the corpus spellings
    of any clinical synonym group it mentions (``HbA1c`` also searches ``A1C``)."""
    words: list[str] = []
    for canonical, surface in _canonical_tokens(query):
        words.append(surface)
        words.extend(KEYWORD_EXPANSIONS.get(canonical, "").split())
    return " ".join(dict.fromkeys(words))


def coverage(query_terms: frozenset[str], doc_terms: frozenset[str]) -> float:
    """Share of the query's content terms that the document contains (0 when none)."""
    if not query_terms:
        return 0.0
    return len(query_terms & doc_terms) / len(query_terms)
