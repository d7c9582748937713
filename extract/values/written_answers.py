"""Reading what patients write on intake forms: labels, list items, uncertainty.

Pure string rules used by ``extract.intake.extractor``: which field a label names (the
vocabulary is data in ``extract.values.labels``, so "Medicines you take now",
"Meds you take" and "Current medications" agree), which tick box of an answer is
ticked, how a medication or allergy item splits into parts, and whether an answer
is "none". Hedges and red flags are the context policy's (``domain.policy.context.mentions``);
``answer_doubt`` only asks it about an item inside its answer.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from domain.policy.context.mentions import assess, hedge_cue, red_flag
from domain.policy.facts.medication_schedule import without_leading_preparation
from extract.values.labels import read_label
from extract.values.lists import is_only_no_known, no_known, reaction_kind, severity_in, split_qualifier
from extract.values.lists import parse_medication as list_medication

IDENTITY_KINDS = frozenset({"name", "first_name", "middle_name", "last_name", "dob", "mrn"})
DEMOGRAPHIC_KINDS = IDENTITY_KINDS | {"sex", "phone", "email", "address"}
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

# Allergy-like wording in free text: the word itself, reactions, and the usual
# culprits (drug classes, foods, stings, contact allergens) in a few spellings.
_ALLERGY_WORDS = re.compile(
    # "cephal" only as a drug's stem: "Encephalopathy" on a case report is no allergy
    r"allerg|\bsulf|\bsulph|penicillin|amoxicillin|\bcephal(?:ex|os|ot|or)|\bcef|latex|codeine|hives|"
    r"urticaria|anaphyla|\brash\b|"
    r"swelling|\bnkda\b|reaction|\breact(?:s|ed)?\b|intoleran|sensitiv|epi-?pen|\btingl|\bitch|\bwheal|"
    r"shellfish|seafood|\bprawns?\b|shrimps?|\bcrabs?\b|lobster|mussels?|oysters?|\bclams?\b|scallops?|"
    r"peanut|tree ?nuts?|\bnuts\b|walnut|cashew|almond|hazelnut|pistachio|sesame|"
    r"bee stings?|wasp|hornet|insect stings?|\bstings?\b|contrast (?:dye|media)|iodine|nickel|plasters?\b|"
    r"adhesive|chlorhexidine|\bnsaids?\b|"
    # the same in Spanish (forms are often bilingual), matched without accents
    r"alerg|reacci|ronchas|sarpullido|hinchazon|marisco|camarone?s?|gambas?|cacahuete|\bmani\b|nueces|"
    r"picadura", re.I)
_MEDICATION_WORDS = re.compile(r"\d+\s?(?:mg|mcg|units?)\b|medicat|medicine|\bpills?\b|tablet|inhaler|insulin|"
                               r"\bdose\b|statin|aspirin|ibuprofen|metformin|warfarin", re.I)
# Questions about habits ("Smoking [] Never [X] Former", "Alcohol per week"): their
# answers are never an allergy or a medicine, whatever answer they are printed beside.
_HABIT_QUESTION = re.compile(r"^\W*(?:smok|tobacco|cigar|vap(?:e|ing)|alcohol|drink|exercis|physical activity|"
                             r"caffeine|coffee|recreational|street drugs|diet\b|sleep)", re.I)


def is_habit_question(text: str) -> bool:
    """Whether ``text`` asks about a habit (smoking, alcohol, exercise...)."""
    return bool(_HABIT_QUESTION.match(text))


_PREGNANCY_WORDS = re.compile(r"pregnan|\blmp\b|last (?:menstrual )?period|missed (?:a )?period", re.I)
_SYMPTOM_WORDS = re.compile(r"\bpain\b|fever|cough|bleed|dizz|nausea|vomit|headache|numb|swollen|"
                            r"breath|palpitation", re.I)


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


def doubt_reason(cue: str) -> str:
    """The review reason for a hedge found by ``answer_doubt``."""
    if cue.startswith("~~") or cue.lower().startswith(("<s>", "<del>", "<strike>")):
        return f"struck-through text ({cue!r})"
    return f"uncertain wording ({cue!r})"


_CLINICIAN_NAME = re.compile(
    r"^(?:dr\.?|doctor|prof\.?|professor)\s+\S"
    r"|,\s*(?:md|m\.d\.|do|d\.o\.|np|pa-c|pa|rn|dnp|aprn|mbbs|mbchb|frcp|mrcgp)\.?$"
    r"|\s(?:md|m\.d\.|mbbs|mbchb|frcp|mrcgp)\.?$",
    re.I,
)


def names_a_clinician(text: str) -> bool:
    """"Dr. Alan Brooks", "Alan Brooks, MD": a clinician's name, never the patient's."""
    return bool(_CLINICIAN_NAME.search(" ".join(text.split())))


_TOPICS = (("allergy", _ALLERGY_WORDS), ("pregnancy", _PREGNANCY_WORDS), ("medication", _MEDICATION_WORDS),
           ("symptom", _SYMPTOM_WORDS))


def _unaccented(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFD", text) if not unicodedata.combining(ch))


def clinical_topic(text: str) -> str | None:
    """What clinically relevant subject free text touches: allergy, medication,
    pregnancy or symptom (``None`` for e.g. scheduling remarks); accents do not
    matter ("látex" is "latex")."""
    plain = _unaccented(text)
    topic = next((name for name, words in _TOPICS if words.search(plain)), None)
    return topic or ("symptom" if red_flag(text) else None)


# --------------------------------------------------------------------------- list items

_NONE_ANSWERS = frozenset({"none", "no", "n/a", "na", "nil", "none known", "nothing", "no medications",
                           "no meds", "-", "not applicable"})
# A bare "none"/"no" in an allergy answer; every "no known ..." wording is the one
# table of ``extract.values.lists`` (which keeps "no known drug allergies" drug-specific).
_NO_ALLERGY_WORDS = frozenset({"none", "no", "n/a", "nil", "no allergies"})


def clean_item(text: str) -> str:
    """Drop list punctuation around an item: "Penicillin (hives);" -> "Penicillin (hives)"."""
    return " ".join(text.split()).strip(" ,;.-•*")


def substance_name(text: str) -> str:
    """A substance as named, without the marks of doubt around it ("shellfish?",
    "¿mariscos?", "~~latex~~"): the doubt is kept as the review reason instead."""
    return clean_item(re.sub(r"[?¿]|~~", " ", text)) or text


def _alternatives(text: str) -> list[str]:
    """A bilingual answer's parts ("Ninguna / None"), or the answer itself."""
    return [clean_item(t) for t in re.split(r"\s+/\s+", clean_item(text))]


def is_none_answer(text: str) -> bool:
    return any(t.lower() in _NONE_ANSWERS for t in _alternatives(text))


def no_known_status(text: str) -> str | None:
    """What an answer that says there is no known allergy rules out ("no_known_drug_allergies"
    for "NKDA", "no_known_allergies" for "None"), in one language of a bilingual answer;
    None for any other answer ("NKDA except penicillin" names an allergy)."""
    for t in _alternatives(text):
        if t.lower() in _NO_ALLERGY_WORDS:
            return "no_known_allergies"
        if is_only_no_known(t):
            return no_known(t).status
    return None


def is_no_known_allergies(text: str) -> bool:
    """NKDA, "None", "No known allergies" and the like (in one language of a bilingual answer)."""
    return no_known_status(text) is not None


_YES = frozenset({"yes", "y", "sí", "si", "oui", "ja"})


def is_yes_answer(text: str) -> bool:
    """"Yes", "Sí / Yes - list:": an answer that says yes and lists nothing."""
    words = re.findall(r"[^\W_]+", text.lower())
    return bool(words) and all(w in _YES or w in ("list", "lista", "below", "please", "specify") for w in words)


# --------------------------------------------------------------------------- tick boxes

# A box as printed ("[ ]", "[X]", "☐", "☒") or as a symbol font maps it (Wingdings
# "\uf0a8" empty, "\uf0fe" ticked); a glyph may be glued to its option ("\uf072Home").
_EMPTY = frozenset({"[]", "☐", "□", "❏", "❑", "\uf06f", "\uf0a8", "\uf072", "\uf071"})
_TICKED = frozenset({"[x]", "[✓]", "[✔]", "☒", "☑", "■", "✓", "✔", "\uf0fe", "\uf078", "\uf0fd"})
_TICK_MARKS = frozenset({"x", "✓", "✔"})
# OCR reads a box's brackets as braces, bars or letters: "{X]", "{]", "[X}", "{Xl", "[X|", "(X)".
_OCR_BOX = re.compile(r"[\[{(|][xX✓✔]{1,2}[\]}|lIJ1)]|[\[{][\]}|lIJ1]|\[\)|\(\]")


# How to answer, printed after a question: "(check all that apply)", "(tick one)", "Circle one".
_MARK = (r"(?:check|tick|circle|select|mark|choose|cross)\b[^()]*"
         r"(?:all|any|one|each|that apply|applies|below|box(?:es)?)")
_INSTRUCTION = re.compile(rf"^\(?\s*(?:please\s+)?{_MARK}[^()]*\)?[.:]?$", re.I)
_ASKS_TO_MARK = re.compile(rf"\b{_MARK}\b", re.I)


# A label that asks for more about the answer above it ("If yes, list each and what
# happened:", "If so, please specify:", "Please list:"): no field of its own. A scan's
# "If" may come out as "lf", "1f" or "{f".
_FOLLOW_UP = re.compile(r"^\W*(?:[il1|{]f\s+(?:[\w']+\s+){0,4}?(?:yes|so|any)\b|if\s+you\s+(?:do|did|have)\b"
                        r"|(?:please\s+)?(?:list|specify|describe|give\s+details)\b"
                        r"|which\s+ones?\b|details\b)", re.I)


def is_follow_up(label: str) -> bool:
    """Whether a label asks for more about the answer above it rather than a new field."""
    return bool(_FOLLOW_UP.match(label))


def is_instruction(text: str) -> bool:
    """Whether ``text`` says how to answer ("(check all that apply)"), not an answer."""
    return bool(_INSTRUCTION.match(text.strip()))


def asks_to_mark(label: str) -> bool:
    """Whether a question asks the patient to tick or circle its answers ("Do you have
    any of these? Tick one or more"): then printed options are no answer by themselves."""
    return bool(_ASKS_TO_MARK.search(label))


def starts_with_box(words: list[str]) -> bool:
    """Whether the words open with a tick box, ticked or not ("[X] Diabetes", "☐ Asthma")."""
    return bool(words) and _box(words, 0) is not None


def first_box(words: list[str]) -> int | None:
    """Where the first tick box, ticked or not, stands among ``words``; None if none."""
    return next((k for k in range(len(words)) if _box(words, k) is not None), None)


def question_before_boxes(words: list[str]) -> int:
    """How many words a line of tick boxes prints before its first box when they say
    something ("Smoking" of "Smoking [] Never [X] Former"): the question the boxes
    answer; 0 when the line opens with a box or holds none."""
    first = first_box(words)
    if not first:
        return 0
    return first if any(c.isalpha() for w in words[:first] for c in w) else 0


def strip_box(text: str) -> str:
    """A word without a box glyph glued to its front ("\uf0feYes" -> "Yes")."""
    box = _box([text], 0)
    return box[2] if box is not None and box[2] else text


def box_at(words: list[str], i: int) -> tuple[bool, int] | None:
    """(ticked, how many words it takes) for a bare box at ``words[i]`` ("[X]", "[", "]",
    "☐"), or None; a box with text glued after it ("☒Yes") is no bare box."""
    box = _box(words, i)
    return (box[0], box[1]) if box is not None and not box[2] else None


# Answers a checklist offers beside yes and no.
_NEITHER = frozenset({"unsure", "not sure", "don't know", "dont know", "do not know", "unknown", "maybe", "n/a"})


def option_word(text: str) -> bool:
    """A checklist column's heading that names an answer: "Yes", "No", "Y", "N",
    "Unsure", "Don't know"."""
    t = " ".join(text.strip(" .:?").lower().replace("\u2019", "'").split())
    return _yes_or_no(t) is not None or t in ("y", "n") or t in _NEITHER


def _box(words: list[str], i: int) -> tuple[bool, int, str] | None:
    """(ticked, words the box takes, text glued after it) for a box at ``words[i]``."""
    t = words[i]
    if _OCR_BOX.fullmatch(t):
        return bool(t[1:-1]) and set(t[1:-1].lower()) <= _TICK_MARKS, 1, ""  # "[xX]": one mark read twice
    if t == "[" and i + 1 < len(words):  # "[ ]" and "[ X ]" come out as separate words
        if words[i + 1] == "]":
            return False, 2, ""
        if words[i + 1].lower() in _TICK_MARKS and i + 2 < len(words) and words[i + 2] == "]":
            return True, 3, ""
    for glyphs, ticked in ((_TICKED, True), (_EMPTY, False)):
        for g in glyphs:
            if t.lower().startswith(g):
                return ticked, 1, t[len(g):]
    return None


@dataclass(frozen=True, slots=True)
class Ticks:
    """An answer given by tick boxes: the words that say it, the ticked boxes, and
    why a person must look (two answers that exclude each other, a written answer
    without its box ticked)."""

    answer: frozenset[int]  # positions of the words that are the answer
    boxes: frozenset[int]  # positions of the ticked boxes
    problem: str | None = None


def read_ticks(words: list[str], rows: list[int]) -> Ticks | None:
    """Which option of a tick-box answer is ticked, or ``None`` when the answer has no
    boxes. ``words`` are the answer's words in reading order, ``rows`` the row of each.

    An option is the words from its box to the next box; what it says is what was
    written after its colon or on the rows under it ("[X] Yes: penicillin", "[X] Yes
    - list:" over a list), else its printed words ("[X] F", "[X] None known"). Words
    before the first box stay the answer. Unticked options say nothing - unless
    something was written in them, which like a "none" ticked beside another option
    is a contradiction for a person to settle.
    """
    options: list[tuple[bool, int, int, list[int]]] = []  # ticked, box start, box end, option words
    prefix: list[int] = []
    i = 0
    while i < len(words):
        box = _box(words, i)
        if box is None:
            (options[-1][3] if options else prefix).append(i)
            i += 1
            continue
        ticked, size, glued = box
        options.append((ticked, i, i + size, [i] if glued else []))
        i += size
    if not options:
        return None
    _writing_under_yes(words, rows, options)
    answer: list[int] = list(prefix)
    boxes: list[int] = []
    ticked_texts: list[str] = []
    filled_unticked = False
    unboxed: list[int] = []  # words on a row below a complete option: an option whose box was not read
    for ticked, start, end, said in options:
        if not _invites_writing(words, [k for k in said if rows[k] == rows[start]]):
            # "[X] Diabetes" is whole on its row; what lies below is no writing of its own
            # ("Heart disease" whose box OCR lost must not be taken as Diabetes' answer).
            unboxed += [k for k in said if rows[k] != rows[start] and any(c.isalnum() for c in words[k])]
            said = [k for k in said if rows[k] == rows[start]]
        written = _written(words, rows, rows[start], said)
        filled = any(any(c.isalnum() for c in words[k]) for k in written)
        if ticked:
            boxes += range(start, end)
            answer += written if filled else said
            ticked_texts.append(" ".join(strip_box(words[k]) for k in said))
        elif filled:
            filled_unticked = True
    if _yes_or_no(" ".join(words[k] for k in prefix)):
        # "Yes [X] No" read off a scan: the "Yes" before the first box read is an option
        # whose empty box OCR lost, not words the patient wrote; kept, the answer said
        # yes beside the ticked no.
        answer = [k for k in answer if k not in prefix]
    problem = None
    negative = any(is_none_answer(t) or is_no_known_allergies(t) for t in ticked_texts)
    if negative and (len(ticked_texts) > 1 or filled_unticked):
        problem = "tick boxes contradict each other"
    elif filled_unticked and not ticked_texts:
        problem = "an answer was written but no box was ticked"
    elif unboxed:
        problem = (f"the box of an option could not be read ({' '.join(words[k] for k in unboxed)!r}): "
                   "check which boxes are ticked on the page")
    return Ticks(frozenset(answer), frozenset(boxes), problem)


def _writing_under_yes(words: list[str], rows: list[int],
                       options: list[tuple[bool, int, int, list[int]]]) -> None:
    """Rows written under a row of options that ends in one asking for no writing ("[X]
    Yes  [ ] No" over "Sulfa antibiotics - hives"): the writing answers the row's "Yes",
    not its last option, whose box it lacks. Moved to the Yes option's words in place."""
    last = options[-1]
    own = [k for k in last[3] if rows[k] == rows[last[1]]]
    below = [k for k in last[3] if rows[k] != rows[last[1]]]
    if len(options) < 2 or not below or _invites_writing(words, own):
        return
    for ticked, start, end, said in options[:-1]:
        on_row = [k for k in said if rows[k] == rows[start]]
        if rows[start] == rows[last[1]] and _yes_or_no(" ".join(strip_box(words[k]) for k in on_row)) == "yes":
            said += below
            del last[3][len(own):]
            return


def _yes_or_no(text: str) -> str | None:
    """"yes" or "no" for an option word alone ("Yes", "No", "Sí"), else None."""
    t = text.strip(" .:").lower()
    return "yes" if t in _YES else "no" if t in ("no", "n", "non", "nein") else None


def _printed_yes_and_no(text: str) -> bool:
    """Whether an answer is a question's own options printed side by side ("Yes No",
    "Yes / No"), every box glyph or pen circle on them lost to OCR: no answer at all."""
    said = [_yes_or_no(w) for w in re.split(r"[\s/|]+", text) if w]  # "Yes / No", "Yes /No"
    return len(said) == 2 and set(said) == {"yes", "no"}


def offers_yes_and_no(words: list[str]) -> bool:
    """Whether an answer's words, its box glyphs left out, are one yes and one no
    ("Yes {Xl No", or "Yes" and "No" set apart on the row): a yes/no question, however
    few of its boxes OCR read."""
    said, i = [], 0
    while i < len(words):
        box = _box(words, i)
        said.append(words[i] if box is None else box[2])  # a glyph glued to its option: the option
        i += 1 if box is None else box[1]
    return _printed_yes_and_no(" ".join(said))


# Words that end an option asking the patient to write ("[X] Yes - list:", "[X] Other, specify").
_ASKS = frozenset({"list", "specify", "other", "details", "explain", "describe", "which", "what"})


def _invites_writing(words: list[str], own_row: list[int]) -> bool:
    """Whether an option asks for writing on the rows below its box: nothing after the
    box, a colon, a "Yes", or a word such as "list" or "specify" ending its row."""
    if not own_row:
        return True
    text = " ".join(strip_box(words[k]) for k in own_row).strip()
    last = text.split()[-1].strip(".-:").casefold() if text.split() else ""
    return (text.endswith(":") or last in _ASKS or is_yes_answer(text)
            or _end_of_yes(words, own_row) is not None)


def _written(words: list[str], rows: list[int], box_row: int, said: list[int]) -> list[int]:
    """The words of an option written by the patient: after its colon, or on rows below its box.
    A "Yes" opening the option's row before more words ends where its colon would: OCR
    reads a faxed "[X] Sí / Yes: Amoxicilina" as "Yes. Amoxicilina" or loses the colon
    ("Oui / Yes Codeine"), and the allergen is what follows, not the row below."""
    on_row = [n for n, k in enumerate(said) if rows[k] == box_row]
    colon = next((n for n in on_row if words[said[n]].endswith(":")), None)
    if colon is None and (end := _end_of_yes(words, [said[n] for n in on_row])) is not None:
        colon = on_row[end]
    after = [k for n, k in enumerate(said) if rows[k] == box_row and colon is not None and n > colon]
    below = [k for k in said if rows[k] != box_row]
    return after + below


def _end_of_yes(words: list[str], row: list[int]) -> int | None:
    """Where the "Yes" opening an option's row ends ("Oui / Yes", "Yes."), when more of
    the row follows it; ``None`` otherwise."""
    end = None
    for n in range(len(row)):
        if not is_yes_answer(" ".join(words[k] for k in row[: n + 1])):
            break
        end = n
    return end if end is not None and end + 1 < len(row) else None


_FREQUENCY_START = re.compile(r"^(?:as needed|as directed|at |for |with |before |after |when |by mouth|"
                              r"with meals|daily|once|twice|three times|every|each|prn|bid|tid|qid|qd|qhs|nightly|"
                              r"weekly|morning|evening)", re.I)


def starts_like_frequency(text: str) -> bool:
    """Whether a fragment continues a dose ("as needed", "at bedtime", "twice daily")."""
    return bool(_FREQUENCY_START.match(clean_item(text)))


def parse_medication(text: str) -> dict[str, str | None]:
    """"Metformin 500 mg twice daily" -> name / dose / frequency / route (missing parts
    None), read by the one list parser (``extract.values.lists.parse_medication``, whose
    frequencies and routes are the schedule vocabulary). A form's answer is short: what
    follows the dose when no known frequency is found ("500 mg morning and night") is kept
    as the frequency, as the patient wrote it, less a preparation it opens with ("1% cream")."""
    t = clean_item(text)
    parsed = list_medication(t)
    if parsed["frequency"] is None and parsed["dose"]:
        after = without_leading_preparation(t[t.find(parsed["dose"]) + len(parsed["dose"]):])
        parsed["frequency"] = after.strip(" ,-") or None
    if parsed["route"] is None:  # a form's medication keeps its three fields unless a route is written
        del parsed["route"]
    return parsed


_REACTION_WORDS = frozenset({"rash", "hives", "itching", "itch", "swelling", "nausea", "vomiting", "anaphylaxis",
                             "wheezing", "diarrhea", "headache", "dizziness", "throat swelling", "shortness of breath"})
_ALLERGY_PAREN = re.compile(r"^(?P<s>[^()]+?)\s*\((?P<r>[^)]*)\)$")
_ALLERGY_SPLIT = re.compile(r"^(?P<s>.+?)\s*(?:\s[-–—]\s|:|->|→|\bcauses\b|\bgives me\b|\bmakes me\b)\s*(?P<r>.+)$", re.I)


def is_reaction(text: str) -> bool:
    return clean_item(text).lower() in _REACTION_WORDS


def parse_allergy(text: str) -> dict[str, str | None]:
    """"Penicillin (hives)" / "Codeine - nausea" -> substance / reaction; "NKDA except
    penicillin" is the penicillin allergy, ``exception_to`` the statement it qualifies."""
    t = clean_item(text)
    none = no_known(t)
    if none is not None and none.exception:
        return {**parse_allergy(none.exception), "exception_to": none.status}
    told, kind = reaction_kind(t)  # "Codeine - vomiting (intolerance)"
    m = _ALLERGY_PAREN.match(told) or _ALLERGY_SPLIT.match(told) or _trailing_reaction(told)
    if m:
        reaction = m.group("r").strip(" ,-")
        return {"substance": m.group("s").strip(" ,-"),
                "reaction": (f"{reaction} {kind}" if kind else reaction) or None}
    substance, qualifier = split_qualifier(t)
    if (severity := severity_in(qualifier)) is not None:  # "Latex, mild"
        return {"substance": substance, "reaction": None, "severity": severity}
    return {"substance": t, "reaction": None}


# Where a form's item puts its reaction after the substance with no mark between them
# ("Amoxicillin facial swelling", or OCR lost the dash): a known reaction at the end,
# perhaps after one word that says where or how bad.
_REACTION_MODIFIERS = ("facial", "face", "lip", "tongue", "throat", "skin", "mild", "severe", "bad")
_TRAILING_REACTION = re.compile(
    rf"^(?P<s>\S.*?)\s+(?P<r>(?:(?:{'|'.join(_REACTION_MODIFIERS)})\s+)?"
    rf"(?:{'|'.join(sorted(map(re.escape, _REACTION_WORDS), key=len, reverse=True))}))$", re.I)


def _trailing_reaction(text: str) -> re.Match | None:
    """A substance then a known reaction, unmarked; never a reaction alone or a
    substance that is all reaction words ("rash itching")."""
    m = _TRAILING_REACTION.match(text)
    if m is None or is_reaction(m.group("s")) or m.group("s").lower() in _REACTION_MODIFIERS:
        return None
    return m


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
