"""Phrases written in prose lists: medications, allergies and problems (pure).

Used by the DOCX and XLSX extractors (and re-exported by ``extract.values.numbers`` under the
same names). Every function is total: text it does not understand comes back as the
item itself with the missing parts ``None``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.policy.facts.medication_schedule import dose_amount_pattern, running_text_pattern
from domain.policy.facts.medication_status import DOSE_CHANGES, status_after, status_before, status_reading
from extract.values.numbers import normalize_ws

# ---------------------------------------------------------------------------- free-text lists

# What numbers or bullets a list's items, never part of an item: a bullet sign, "1." "1)"
# "(1)", a lower-case letter or roman numeral with "." or ")" ("a)", "b.", "iv)"), and
# an upper-case letter only with ")" ("A)"; "E. coli" starts with an initial).
_ROMAN = r"(?:i|ii|iii|iv|v|vi|vii|viii|ix|x)"
LIST_MARKER = (r"(?:[-*\u2013\u2022\u25aa\u25cf\u00b7]|\d{1,2}[.)]|\((?:\d{1,2}|[A-Za-z]|" + _ROMAN + r")\)"
               r"|[a-z][.)]|[A-Z]\)|" + _ROMAN + r"[.)])")
_LIST_MARKER = re.compile(LIST_MARKER)
_LEADING_MARKER = re.compile(rf"^\s*{LIST_MARKER}\s+")


def is_list_marker(token: str) -> bool:
    """Whether a word is a list's bullet or numbering ("-", "2.", "a)", "(iv)")."""
    return _LIST_MARKER.fullmatch(token) is not None


def split_items(text: str, *, commas: bool = True) -> list[str]:
    """Split a list written in prose ("Metformin 500 mg BD; Lisinopril 10 mg daily") into
    items: on new lines, semicolons, bullets and (optionally) commas outside brackets. A
    piece after a comma that only qualifies the item before it ("Asthma, mild",
    "Diabetes, diagnosed 2015") stays with it. Items are returned stripped of bullets
    and trailing punctuation, as substrings."""
    pieces: list[tuple[int, int, str]] = []  # start, end, the separator before it
    depth, start, sep = 0, 0, ""
    for at, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        if ch in "\n;\u2022" or (commas and ch == "," and depth == 0):
            pieces.append((start, at, sep))
            start, sep = at + 1, ch
    pieces.append((start, len(text), sep))
    spans: list[tuple[int, int]] = []
    for start, end, sep in pieces:
        before = text[spans[-1][0]:spans[-1][1]] if spans else ""
        if sep == "," and spans and (is_qualifier(text[start:end]) or _site_of(before, text[start:end])
                                     or _next_site(before, text[start:end])):
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    out = []
    for start, end in spans:
        item = _LEADING_MARKER.sub("", text[start:end]).strip().rstrip(".;,")
        if item:
            out.append(item)
    return out


# Words that say how bad, how settled, how often, where, since when or how treated, not
# what: after a comma they qualify the item before them ("Asthma, mild"; "Knee pain,
# left"; "Type 2 diabetes, diet controlled"; "Hypertension, since 2010"; "Atrial
# fibrillation, on warfarin"). Read as an item of its own, "mild" was a problem in the list.
_QUALIFYING_WORD = (
    r"(?:(?:very|quite|fairly|well|poorly|badly|not|diet|tablet|insulin)[- ]?)?"
    r"(?:mild|moderate|severe|life[- ]threatening|controlled|uncontrolled|stable|unstable|resolved|resolving|"
    r"in remission|active|inactive|chronic|acute|recurrent|intermittent|persistent|ongoing|improving|worsening|"
    r"occasional|frequent|rare|episodic|seasonal|nocturnal|treated|untreated|managed|suspected|possible|probable|"
    r"confirmed|left|right|bilateral|upper|lower|(?:type|grade|stage|class) [0-9ivx]+[ab]?)")
_QUALIFIER = re.compile(
    rf"{_QUALIFYING_WORD}(?:\s+(?:since|from|in)\s+\S+)?"
    # a phrase that opens with when, where or how: "since 2010", "on warfarin", "both knees"
    r"|(?:since|from|diagnosed|dx|onset|as a|last|on|off|treated|managed|with|without|after|following|"
    r"both|each|all)\b(?:[\s-]+[\w/.'-]+){0,4}"
    # what caused it: "AKI, secondary to dehydration"; "Pneumonia, likely due to aspiration"
    r"|(?:(?:likely|probably|possibly|presumed|thought to be)\s+)?"
    r"(?:secondary to|due to|caused by|related to|precipitated by|triggered by|attributed to|complicated by)"
    r"(?:[\s-]+[\w/.'-]+){1,5}"
    r"|in\s+(?:(?:19|20)\d\d|childhood|the (?:past|\d+s|(?:19|20)\d\ds)|[a-z]+\s+(?:19|20)\d\d)"
    r"|(?:19|20)\d\d|\d+\s+(?:years?|months?|yrs?)\s+ago|x\s?\d+|\d+\s+times|once|twice|childhood",
    re.IGNORECASE,
)


# Where on the body a condition is ("Pneumonia, right lower lobe"; "Cellulitis, left
# leg"): a side or position, then a part. After a condition it says where; after another
# site it is the next site of a list ("Left knee, right hip").
_SITE = re.compile(
    r"(?:(?:left|right|bilateral|both)[\s-]+)?"
    r"(?:(?:upper|middle|mid|lower|anterior|posterior|lateral|medial|proximal|distal|inferior|superior)[\s-]+)*"
    r"(?:lobes?|lungs?|bases?|zones?|side|legs?|limbs?|arms?|forearms?|knees?|hips?|ankles?|foot|feet|toes?|hands?|"
    r"fingers?|wrists?|shoulders?|elbows?|eyes?|ears?|kidneys?|breasts?|calf|calves|thighs?|groin|flank|chest|"
    r"heels?|shins?|buttocks?)",
    re.IGNORECASE)
_SIDED = re.compile(r"^(?:left|right|bilateral|both|upper|middle|mid|lower|anterior|posterior|lateral|medial|"
                    r"proximal|distal|inferior|superior)\b", re.IGNORECASE)


def _site_of(before: str, piece: str) -> bool:
    """Whether ``piece`` says where the condition ``before`` it is: a site with its side
    or position, after an item that does not itself end in a site."""
    piece = " ".join(piece.strip(" .,;").split())
    return bool(_SIDED.match(piece) and _SITE.fullmatch(piece)) and not _ends_in_site(before)


def _ends_in_site(text: str) -> bool:
    """Whether an item's last words name a site ("..., both knees")."""
    words = text.split()
    return any(_SITE.fullmatch(" ".join(words[-n:]).strip(" .,;:")) for n in range(1, min(4, len(words)) + 1))


def _next_site(before: str, piece: str) -> bool:
    """Whether ``piece`` is one more site of a condition whose sites a comma already
    joined to it ("Osteoarthritis, both knees, hips"): a site alone, after an item that
    holds a comma and ends in a site."""
    piece = " ".join(piece.strip(" .,;").split())
    return "," in before and bool(_SITE.fullmatch(piece)) and _ends_in_site(before)


def is_qualifier(text: str) -> bool:
    """Whether a list piece only qualifies the item before it ("mild", "well controlled",
    "diagnosed 2015", "left", "2010")."""
    return bool(_QUALIFIER.fullmatch(" ".join(text.strip(" .,;").split())))


def split_qualifier(text: str) -> tuple[str, str | None]:
    """An item and the qualifier a comma adds to it: "Penicillin, severe" ->
    ("Penicillin", "severe"); without one, the item and None."""
    head, comma, tail = text.rpartition(",")
    if comma and head.strip() and is_qualifier(tail):
        return head.strip(), tail.strip(" .,;")
    return text, None


def severity_in(text: str | None) -> str | None:
    """The severity a reaction or qualifier states ("rash, severe" -> "severe";
    anaphylaxis is severe), or None."""
    sev = _SEVERITY_WORDS.search(text or "")
    if not sev:
        return None
    word = sev.group(1).lower()
    return "severe" if word.startswith(("anaphyla", "life")) else word


JOINING_WORDS = frozenset({"and", "&", "plus"})


def joins_two_dosed(before: str, after: str) -> bool:
    """Whether an "and" between ``before`` and ``after`` in a list item joins two dosed
    medicines ("Amlodipine 5 mg daily and aspirin 81 mg" on a form: read as one, the
    aspirin was lost after the first one's frequency): a dose on each side, the second
    opening with its name. "500 mg morning and night", "1 tablet and 2 at bedtime" and
    "10 mg and 5 mg" stay one. (A letter's sentence is split by the drugs it tells:
    ``extract.values.prose_meds.medications_in``.)"""
    return bool(_DOSE.search(before)) and bool(_DOSE.search(after)) and after.lstrip()[:1].isalpha()


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


# A sentence's end in a problem list: after a word or a bracket, never after a number (an
# inline numbered list, "1. Cellulitis of the left leg 2. Gout", is read whole elsewhere).
_PROBLEM_BREAK = re.compile(r"(?<=[a-z)\]%])[.!]\s+(?=[A-Z])")


def problem_items(text: str) -> list[str]:
    """The items of a problem list that may be written as sentences ("Community-acquired
    pneumonia (right lower lobe). Acute kidney injury stage 1."): split at sentence ends,
    then like ``split_items``. A sentence that only qualifies the one before ("Asthma.
    Well controlled.") stays with it. Items are substrings of ``text``."""
    out: list[str] = []
    for sentence in _PROBLEM_BREAK.split(text):
        items = split_items(sentence)
        if out and items and is_qualifier(sentence):
            at = text.find(out[-1])
            end = text.find(items[-1], at + len(out[-1]))
            if at >= 0 and end >= 0:
                out[-1] = text[at:end + len(items[-1])]
                continue
        out += items
    return out


_DOSE = re.compile(rf"({dose_amount_pattern()})", re.IGNORECASE)
# How often and by which route: the wordings of the medication schedule vocabulary
# (``domain.policy.facts.medication_schedule``), the same one the chart compares on.
_FREQUENCY = running_text_pattern("frequencies")
_ROUTE = running_text_pattern("routes")


def parse_medication(text: str) -> dict:
    """Name, dose, frequency and route from one medication line, each as printed
    ("Metformin 500 mg twice daily" -> name "Metformin", dose "500 mg",
    frequency "twice daily"); missing parts are None."""
    t = normalize_ws(text)
    lead = status_before(t)  # "STOPPED: Ramipril 5 mg once daily"
    if lead is not None and lead[1].strip():
        t = lead[1]
    dose = _DOSE.search(t)
    freq = _FREQUENCY.search(t)
    route = _ROUTE.search(t)
    cut = min([m.start() for m in (dose, freq, route) if m] or [len(t)])
    status = status_after(t[cut:])
    if cut == len(t) and (part := _STATUS_SEPARATOR.search(t, 1)) and status_after(t[part.start():]):
        cut, status = part.start(), status_after(t[part.start():])  # "Aspirin (stopped)": no dose or frequency
    if (change := _DOSE_CHANGE.search(t, 0, cut)) is not None:  # "Bisoprolol increased from 2.5 mg to 5 mg"
        cut, status = change.start(), status or change.group(1)
        if dose is not None and change.group(2) and (changed_to := _CHANGED_TO.search(t, dose.end())):
            dose = changed_to  # the dose it was changed to; the quote keeps the one before
    if lead is not None:
        # A status before and after that disagree ("STOPPED: ... (restarted)") is one the
        # policy does not know: a person reads it. When they agree, the one beside the dose
        # says more ("CHANGED: ... increased from").
        if status is None:
            status = lead[0]
        elif status_reading(status) != status_reading(lead[0]):
            status = f"{lead[0]}; {status}"
    name = t[:cut].strip(" ,-:(") or t
    parsed = {
        "name": name,
        "dose": _whole_dose(t, dose) if dose else None,
        "frequency": _whole_frequency(t, freq, name_end=len(name)) if freq else None,
        "route": route.group(1) if route else None,
    }
    if status:  # "- STOPPED (...)", "(unchanged)": the status policy reads it
        parsed["status"] = status
    return parsed


# A change of dose after the name, and "from ..." when the dose before it is printed too.
_CHANGE_WORDS = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in DOSE_CHANGES)
_DOSE_CHANGE = re.compile(rf"\s({_CHANGE_WORDS})\b(\s+from\b)?", re.IGNORECASE)
_CHANGED_TO = re.compile(rf"\bto\s+({dose_amount_pattern()})", re.IGNORECASE)


# Where a medicine's name with no dose or frequency may end and its status start.
_STATUS_SEPARATOR = re.compile(r"\s*(?:[,;:(\[]|\s[-\u2013\u2014]\s)")


# Words that limit a frequency ("up to four times a day") and what may join two
# wordings of one frequency ("four times a day when needed", "q4h, prn").
_FREQUENCY_LIMIT = re.compile(r"(?:up to|not more than|no more than|maximum(?: of)?|max\.?)\s+$", re.IGNORECASE)
_BETWEEN_FREQUENCIES = re.compile(r"[\s,]*(?:(?:and|or|up to)\s+)?", re.IGNORECASE)


def _whole_frequency(text: str, first: re.Match[str], *, name_end: int) -> str:
    """How often as printed from its first wording: "up to four times a day when needed"
    whole, not "four times a day" with the limit and the "when needed" left unsaid (a
    medicine taken as needed is not a regular one). Later wordings count only when
    nothing but a joining word stands between them."""
    start, end = first.start(1), first.end(1)
    if (limit := _FREQUENCY_LIMIT.search(text, name_end, start)) is not None:
        start = limit.start()
    while (nxt := _FREQUENCY.search(text, end)) and _BETWEEN_FREQUENCIES.fullmatch(text[end:nxt.start()]):
        end = nxt.end(1)
    return text[start:end]


# Words that join two amounts of one medicine into one dose ("10 mg and 5 mg on
# alternate days", "1 or 2 tablets", "5 mg then 2.5 mg").
_BETWEEN_DOSES = re.compile(r"\s*(?:,|/|-|\u2013|and|or|to|then|alternating with|alternate with)?\s*", re.I)


def _whole_dose(text: str, first: re.Match[str]) -> str:
    """The dose as printed from its first amount: "10 mg and 5 mg" whole, not "10 mg"
    with the 5 mg left unsaid. A later amount counts only when nothing but a joining
    word stands between them; otherwise the first amount is the dose."""
    end = first.end(1)
    while (nxt := _DOSE.search(text, end)) and _BETWEEN_DOSES.fullmatch(text[end:nxt.start()]):
        end = nxt.end(1)
    return text[first.start(1):end]


_SEVERITY_WORDS = re.compile(r"\b(mild|moderate|severe|life[- ]threatening|anaphyla\w*)\b", re.IGNORECASE)

# ---------------------------------------------------------------------------- "no known ..."
# The one table of "there is no known allergy" wordings, for every reader (lists, form
# answers, sentences). What kind of allergy a wording rules out is kept: "no known drug
# allergies" says nothing about food or latex, so it is never widened to "no known
# allergies". Longest wordings first.
NO_KNOWN_STATUS = {
    "no_known_drug_allergies": (
        "nkda", "nkma", "no known drug allergies", "no known drug allergy", "no known medication allergies",
        "no known medication allergy", "no known medicine allergies", "no drug allergies", "no medication allergies",
        "no known adverse drug reactions", "no known adverse reactions", "no drug allergies known",
        "no drug allergies reported", "no drug allergies recorded", "no known allergies to medications",
        "no known allergies to medicines", "no known allergies to drugs"),
    "no_known_food_allergies": ("nkfa", "no known food allergies", "no known food allergy", "no food allergies"),
    "no_known_allergies": (
        "nka", "no known allergies", "no known allergy", "no allergies", "none known", "nil known",
        "no allergies known", "no allergies reported", "no allergies recorded", "none that i know of",
        "not that i know of",
        # An allergy field that answers only "None" or "Nil" says the same; before, such a
        # field became an allergy to a substance called "None".
        "none reported", "none documented", "none recorded", "none on file", "nil reported", "none", "nil"),
}
NO_KNOWN_TEXT = {"no_known_drug_allergies": "no known drug allergies",
                 "no_known_food_allergies": "no known food allergies", "no_known_allergies": "no known allergies"}
# The columns of an allergy table, by what they hold (a letter's, a workbook's, a form's).
ALLERGY_COLUMNS: dict[str, tuple[str, ...]] = {
    "substance": ("allergen", "allergy", "allergies", "substance", "agent", "drug", "trigger", "allergic to"),
    "reaction": ("reaction", "reactions", "reaction type", "response", "effect", "manifestation", "what happened",
                 "what happens", "what happened to you"),
    "severity": ("severity", "how severe"),
}
# The columns of a medicines table (a letter's, a form's): what each holds. "purpose"
# says what a medicine is for; it is part of the row as printed, no part of the dose.
MEDICATION_COLUMNS: dict[str, tuple[str, ...]] = {
    "name": ("medication", "medications", "drug", "medicine", "medicines", "name", "medication name", "drug name"),
    "dose": ("dose", "strength", "dosage", "amount"),
    "frequency": ("frequency", "directions", "sig", "how often", "schedule", "instructions", "when taken",
                  "how often taken", "when"),
    "route": ("route",),
    "purpose": ("what for", "what it is for", "reason", "indication", "purpose", "used for", "condition"),
    # whether it is taken now ("Active", "Withheld"), and when it was stopped: read by the
    # medication status policy (domain.policy.facts.medication_status)
    "status": ("status", "current status", "medication status", "still taking", "taking now", "current?",
               "taking?", "active?"),
    "stop": ("stopped", "date stopped", "stop date", "end date", "date ended", "ceased", "date ceased",
             "discontinued", "date discontinued"),
    # whether it is taken only when needed ("PRN? | Yes"): part of how often it is taken
    "prn": ("prn", "prn?", "as needed", "as needed?", "as required", "when required"),
    # a free note beside it, which may say it was stopped ("Stopped 01/11/2026 - hyponatraemia")
    "notes": ("comments", "comment", "notes", "note", "remarks", "remark"),
}


def allergy_fact_text(parsed: dict) -> tuple[str, bool]:
    """(fact text, whether it says no allergies are known) for a ``parse_allergy``
    result. A "no known allergies" item is made the statement it is (no substance, its
    status kept): a document fact, never a chart allergy."""
    if parsed.get("no_known_allergies"):
        status = parsed.get("status") or "no_known_allergies"
        parsed.update(substance="", status=status)
        return f"Allergies: {NO_KNOWN_TEXT[status]}", True
    reaction = f" - reaction: {parsed['reaction']}" if parsed.get("reaction") else ""
    return f"Allergy: {parsed['substance']}{reaction}", False


_NO_KNOWN_WORDING = sorted(((w, status) for status, words in NO_KNOWN_STATUS.items() for w in words),
                           key=lambda p: len(p[0]), reverse=True)
NO_KNOWN_PATTERN = re.compile(
    r"(?<![\w])(" + "|".join(r"\s+".join(map(re.escape, w.split())) for w, _ in _NO_KNOWN_WORDING) + r")(?![\w])",
    re.IGNORECASE)
# "NKDA except penicillin", "no known allergies other than latex": an allergy, not a none.
_EXCEPTION = re.compile(r"[\s,;:(\-\u2013\u2014]*(?:except(?:\s+for)?|but|other\s+than|apart\s+from|aside\s+from|"
                        r"besides|save\s+for|excluding)\s+(?:to\s+)?(?P<rest>.+?)[\s.]*$", re.IGNORECASE)


_NAMES_ALLERGY = re.compile(r"allerg|reaction|^nk", re.IGNORECASE)


@dataclass(frozen=True)
class NoKnown:
    """A "no known ..." wording found in a text: its status, where it is, and the
    allergy an "except ..." after it names (None when there is none)."""

    status: str
    start: int
    end: int
    exception: str | None = None

    @property
    def text(self) -> str:
        return NO_KNOWN_TEXT[self.status]


def no_known(text: str, *, anywhere: bool = False) -> NoKnown | None:
    """The "no known allergies" wording that opens ``text`` (or, ``anywhere``, the first
    one in it), with the exception written after it ("NKDA except penicillin")."""
    if anywhere:  # in a sentence, only a wording that names allergies ("none known" may be of anything)
        m = next((m for m in NO_KNOWN_PATTERN.finditer(text) if _NAMES_ALLERGY.search(m.group(1))), None)
    else:
        m = NO_KNOWN_PATTERN.match(text.lstrip())
    if not m:
        return None
    offset = 0 if anywhere else len(text) - len(text.lstrip())
    status = next(st for w, st in _NO_KNOWN_WORDING if re.fullmatch(r"\s+".join(map(re.escape, w.split())),
                                                                       m.group(1), re.IGNORECASE))
    rest = _EXCEPTION.match(text, offset + m.end())
    exception = rest.group("rest").strip() if rest else None
    while exception and exception.endswith(")") and exception.count(")") > exception.count("("):
        exception = exception[:-1].rstrip(" .")  # the bracket "(except PCN)" opened before it
    return NoKnown(status, offset + m.start(), offset + m.end(), exception or None)


def is_only_no_known(text: str) -> bool:
    """Whether ``text`` says nothing but "no known allergies" (in some wording)."""
    found = no_known(text)
    return found is not None and not re.search(r"\w", text[found.end:])


# A bracket at the end of an allergy that says only when it happened.
_WHEN_IN_BRACKETS = re.compile(r"\s*\((?:(?:in|since|c\.?|circa|age[d]?)\s+)?"
                               r"(?:\d{4}|\d{1,2}[/.\-]\d{2,4}(?:[/.\-]\d{2,4})?|as a child|in childhood|childhood)\)\s*$",
                               re.IGNORECASE)


# A closing bracket that names the kind of reaction ("(intolerance)", "(side effect)").
_KIND_IN_BRACKETS = re.compile(r"\s*\((?:an?\s+)?(?:intolerance|intolerant|side[- ]effects?|sensitivity|allergy|"
                               r"allergic|adverse (?:drug )?reaction|not (?:an? )?(?:true )?allergy)"
                               # and when, after it: "(sensitivity, 2019)"
                               r"(?:[,;]?\s*(?:in\s+|since\s+)?(?:19|20)\d\d)?\)\s*$",
                               re.IGNORECASE)
# The mark between a substance and its reaction ("Codeine - vomiting", "Morphine: itch").
_REACTION_MARK = re.compile(r"\s[-\u2013\u2014]\s|:|\u2192|->")


def reaction_kind(text: str) -> tuple[str, str | None]:
    """An allergy item without the closing bracket that names the kind of reaction
    ("Codeine - vomiting (intolerance)" -> "Codeine - vomiting", "(intolerance)"), when
    a mark before it says which reaction; else the item and None ("Morphine
    (intolerance)": the bracket is all it says of the reaction)."""
    kind = _KIND_IN_BRACKETS.search(text)
    if kind is None or not _REACTION_MARK.search(text[:kind.start()]):
        return text, None
    return text[:kind.start()], kind.group(0).strip()


def parse_allergy(text: str) -> dict:
    """Substance, reaction and severity from "Penicillin (rash)", "Codeine - nausea",
    "Latex: hives, severe". "NKDA"/"No known allergies" sets ``no_known_allergies``
    and ``status`` (which kind of allergy it rules out: drug, food or any); "NKDA
    except penicillin" is the penicillin allergy, with ``exception_to`` saying what it
    is an exception to."""
    t = normalize_ws(text)
    none = no_known(t)
    if none is not None and none.exception is None:
        return {"substance": None, "reaction": None, "severity": None, "no_known_allergies": True,
                "status": none.status}
    if none is not None:
        return {**parse_allergy(none.exception), "exception_to": none.status}
    t = _WHEN_IN_BRACKETS.sub("", t)  # "Penicillin - anaphylaxis (1998)": when, not the reaction
    t, kind = reaction_kind(t)
    # The reaction follows a mark ("Amoxicillin - rash (mild)": the bracket is more of the
    # reaction) or stands in brackets ("Penicillin (rash - mild)"), whichever comes first.
    mark, bracket = _REACTION_MARK.search(t), t.find("(")
    by_mark = re.match(r"(.+?)\s*(?:\s[-\u2013\u2014]\s|:|\u2192|->)\s*(.+)$", t)
    if mark is not None and 0 <= bracket and mark.start() < bracket:
        m = by_mark
    else:
        m = re.match(r"(.+?)\s*\((.+)\)\s*$", t) or by_mark
    if m:
        substance, reaction = m.group(1).strip(), m.group(2).strip() + (f" {kind}" if kind else "")
        severity = severity_in(reaction)
    else:  # "Latex, severe": a severity without a reaction
        substance, qualifier = split_qualifier(t)
        reaction, severity = None, severity_in(qualifier)
        if qualifier and severity is None:
            substance = t  # "Peanuts, suspected" keeps its word: nothing else holds it
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
