"""Phrases written in prose lists: medications, allergies and problems (pure).

Used by the DOCX and XLSX extractors (and re-exported by ``extract.values.numbers`` under the
same names). Every function is total: text it does not understand comes back as the
item itself with the missing parts ``None``.
"""

from __future__ import annotations

import re

from extract.values.numbers import normalize_ws

# ---------------------------------------------------------------------------- free-text lists

def split_items(text: str, *, commas: bool = True) -> list[str]:
    """Split a list written in prose ("Metformin 500 mg BD; Lisinopril 10 mg daily") into
    items: on new lines, semicolons, bullets and (optionally) commas outside brackets.
    Items are returned stripped of bullets and trailing punctuation, as substrings."""
    items: list[str] = []
    depth = 0
    buf: list[str] = []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        if ch in "\n;\u2022" or (commas and ch == "," and depth == 0):
            items.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    items.append("".join(buf))
    out = []
    for item in items:
        item = re.sub(r"^\s*(?:[-*\u2013\u2022\u25aa\u25cf\u00b7]|\d+[.)])\s+", "", item).strip().rstrip(".;,")
        if item:
            out.append(item)
    return out


# A list item that opens with one of these goes on with the clause before it
# ("... gave him a rash after surgery, but this was never confirmed").
_CLAUSE_GOES_ON = re.compile(r"^(?:but|and|or|although|though|however|which|who|as|so|because|when|while|"
                             r"after|since|yet)\b", re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"(?<=[a-z0-9)\]%])[.!]\s+(?=[A-Z])")


def allergy_items(text: str) -> list[str]:
    """The items of an allergy answer that may mix a list with sentences
    ("tramadol - confusion. He wonders whether the chlorhexidine wash gave him a
    rash, but this was never confirmed."): split at sentence ends, then like
    ``split_items``; a piece that opens with "but", "which", "although"... stays
    with the clause before it. Items are substrings of ``text``."""
    out: list[str] = []
    for sentence in _SENTENCE_BREAK.split(text):
        pos, start_of_prev = 0, None
        for item in split_items(sentence):
            at = sentence.find(item, pos)
            if at < 0:  # not a substring (should not happen): keep it as it is
                out.append(item)
                continue
            if out and start_of_prev is not None and _CLAUSE_GOES_ON.match(item):
                out[-1] = sentence[start_of_prev: at + len(item)]
            else:
                out.append(item)
                start_of_prev = at
            pos = at + len(item)
    return out


_DOSE = re.compile(
    r"(\d+(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?)?\s*"
    r"(?:mg/ml|mg/kg|mg|mcg|\u00b5g|\u03bcg|micrograms?|g|ml|mL|units?|iu|IU|%|puffs?|tablets?|tabs?"
    r"|capsules?|caps?|drops?|mmol|meq|sprays?|patch(?:es)?)\b)",
    re.IGNORECASE,
)
_FREQUENCY = re.compile(
    r"\b(once daily|twice daily|three times (?:a day|daily)|four times (?:a day|daily)|once a day|twice a day"
    r"|every other day|alternate days|every \d+(?:-\d+)? ?(?:hours|hrs|h)\b|q\d+h|once weekly|weekly|monthly"
    r"|daily|nightly|at night|at bedtime|in the morning|with meals|as needed|as required|when required"
    r"|od|bd|bid|tds|tid|qds|qid|qhs|qam|qpm|nocte|mane|prn|stat)\b",
    re.IGNORECASE,
)
_ROUTE = re.compile(
    r"\b(oral(?:ly)?|by mouth|po|subcutaneous(?:ly)?|subcut|sc|intramuscular|im|intravenous|iv|inhaled|inh"
    r"|topical(?:ly)?|sublingual|sl|pr|nasal|transdermal|ophthalmic|eye drops)\b",
    re.IGNORECASE,
)


def parse_medication(text: str) -> dict:
    """Name, dose, frequency and route from one medication line, each as printed
    ("Metformin 500 mg twice daily" -> name "Metformin", dose "500 mg",
    frequency "twice daily"); missing parts are None."""
    t = normalize_ws(text)
    dose = _DOSE.search(t)
    freq = _FREQUENCY.search(t)
    route = _ROUTE.search(t)
    cut = min([m.start() for m in (dose, freq, route) if m] or [len(t)])
    name = t[:cut].strip(" ,-:(") or t
    return {
        "name": name,
        "dose": dose.group(1) if dose else None,
        "frequency": freq.group(1) if freq else None,
        "route": route.group(1) if route else None,
    }


_SEVERITY_WORDS = re.compile(r"\b(mild|moderate|severe|life[- ]threatening|anaphyla\w*)\b", re.IGNORECASE)
_NO_KNOWN = re.compile(r"^\s*(?:nkda|nka|nkfa|no known (?:drug |food )?allerg(?:y|ies)|none known|nil known)\b", re.IGNORECASE)


def parse_allergy(text: str) -> dict:
    """Substance, reaction and severity from "Penicillin (rash)", "Codeine - nausea",
    "Latex: hives, severe". "NKDA"/"No known allergies" sets ``no_known_allergies``."""
    t = normalize_ws(text)
    if _NO_KNOWN.match(t):
        return {"substance": None, "reaction": None, "severity": None, "no_known_allergies": True}
    m = re.match(r"(.+?)\s*\((.+)\)\s*$", t) or re.match(r"(.+?)\s*(?:\s[-\u2013\u2014]\s|:|\u2192|->)\s*(.+)$", t)
    substance, reaction = (m.group(1).strip(), m.group(2).strip()) if m else (t, None)
    sev = _SEVERITY_WORDS.search(reaction or "")
    severity = None
    if sev:
        word = sev.group(1).lower()
        severity = "severe" if word.startswith(("anaphyla", "life")) else word
    return {"substance": substance, "reaction": reaction, "severity": severity, "no_known_allergies": False}


_ICD10_CODE = r"[A-TV-Z][0-9][0-9AB](?:\.[0-9A-Z]{1,4})?"
_ICD10_IN_BRACKETS = re.compile(rf"[\[(]\s*(?:ICD-?10(?:-CM)?:?\s*)?({_ICD10_CODE})\s*[\])]")
_ICD10_LABELLED = re.compile(rf"(?:ICD-?10(?:-CM)?:?\s*)({_ICD10_CODE})\b")


def parse_problem(text: str) -> dict:
    """Description plus an ICD code when one is printed ("Hypertension (I10)")."""
    t = normalize_ws(text)
    code = system = None
    m = _ICD10_IN_BRACKETS.search(t) or _ICD10_LABELLED.search(t)
    if m:
        code, system = m.group(1), "ICD-10"
        description = (t[: m.start()] + t[m.end():]).strip(" -,:;")
    else:
        description = t
    return {"code": code, "description": description or t, "coding_system": system}
