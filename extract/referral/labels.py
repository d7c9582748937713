"""The words a referral letter is read by: label spellings for each field, the header
columns of list tables, the lines of a letter (salutation, closing, signature) and
identifiers printed inline ("DOB: ...", "MRN: ...")."""

from __future__ import annotations

import re

from extract.values import numbers as V
from extract.values.identity_labels import VOCABULARY as IDENTITY_VOCABULARY
from extract.values.labels import read_label, reads_as_label
from extract.values.lists import ALLERGY_COLUMNS, MEDICATION_COLUMNS


def norm_label(text: str) -> str:
    t = V.normalize_ws(text).lower().rstrip(":\uff1a. ").strip()
    return re.sub(r"\s*/\s*", "/", t)


# Canonical field -> label spellings (lower case, no trailing colon).
_LABELS: dict[str, tuple[str, ...]] = {
    # Identity labels from the shared vocabulary (extract.values.identity_labels), plus a
    # letter's own ways to name its patient ("Re:", "Regarding:"). Account, visit and
    # NHS numbers are not record numbers: the identity sweep reads them as such.
    "patient_name": ("client", "re", "regarding", *IDENTITY_VOCABULARY["name"]),
    "dob": IDENTITY_VOCABULARY["dob"],
    "mrn": IDENTITY_VOCABULARY["record_number"],
    "referring_provider": ("referring provider", "referring physician", "referring doctor", "referring clinician",
                           "referred by", "from", "referrer", "referring gp", "sender", "requested by"),
    "referring_clinic": ("referring practice", "referring clinic", "referring facility", "practice"),
    "receiving_provider": ("to", "referred to", "receiving provider", "consultant", "recipient", "specialist",
                           "attention", "attn", "receiving physician", "refer to"),
    "receiving_clinic": ("clinic", "receiving clinic", "department", "receiving facility", "receiving service",
                         "refer to clinic", "destination"),
    "reason": ("reason for referral", "referral reason", "reason for consultation", "reason for consult",
               "reason", "presenting complaint", "indication", "clinical question", "reason for request"),
    "requested_service": ("requested service", "service requested", "request", "requested", "specialty",
                          "speciality", "service", "requested investigation", "requested procedure",
                          "referral type", "type of referral", "services requested"),
    "letter_date": ("date", "letter date", "date of letter", "date of referral", "referral date"),
    "appointment": ("appointment", "appointment date", "requested appointment", "appointment requested",
                    "next appointment", "requested date", "preferred appointment"),
    "urgency": ("urgency", "priority"),
    "problems": ("diagnosis", "diagnoses", "problem list", "problems", "active problems", "past medical history",
                 "pmh", "medical history", "working diagnosis", "conditions", "active diagnoses",
                 "relevant diagnoses", "relevant medical history"),
    "medications": ("medications", "current medications", "medication list", "medication", "meds",
                    "current meds", "regular medications", "current medication", "medicines",
                    # a British letter's list of the drugs taken now ("DH" in a clerking)
                    "drug history", "drug hx", "dh"),
    "allergies": ("allergies", "allergy", "drug allergies", "allergies and reactions", "known allergies",
                  "allergies/adverse reactions", "adverse reactions", "allergies / intolerances"),
}
_LABEL_OF: dict[str, str] = {}
for _field, _spellings in _LABELS.items():
    for _spelling in _spellings:
        _LABEL_OF.setdefault(norm_label(_spelling), _field)

# A list's heading read by meaning, as a discharge summary words it ("Principal
# diagnosis", "Diagnoses this admission", "Medicines on discharge", "Medications
# stopped during this admission"): a word naming the list, the rest words that only
# say which part of the stay it covers; a stopping word says every item is stopped.
_LIST_HEADS = {
    "medications": frozenset({"medications", "medication", "medicines", "medicine", "meds", "drugs"}),
    "problems": frozenset({"diagnoses", "diagnosis", "problems", "problem", "comorbidities", "co-morbidities",
                           "comorbid", "conditions"}),
}
_HEADING_FILLER = frozenset("""
this that the a an on at during in of for from to by admission discharge discharged hospital stay list current
active regular usual ongoing new changed change changes principal primary secondary final other additional main
working relevant
her his their patient's are is include includes including as follows
""".split())
_STOPPING = frozenset({"stopped", "ceased", "discontinued", "withheld", "suspended"})
MAX_HEADING_WORDS = 6


def _list_by_meaning(text: str) -> tuple[str, str | None] | None:
    """(list field, the status of its items or None) of a list heading read by meaning."""
    said = norm_label(text).replace("/", " ").split()
    if not 0 < len(said) <= MAX_HEADING_WORDS:
        return None
    for field, heads in _LIST_HEADS.items():
        if any(w in heads for w in said) and all(w in heads or w in _HEADING_FILLER or w in _STOPPING
                                                 for w in said):
            stopping = [w for w in said if w in _STOPPING] if field == "medications" else []
            return field, (stopping[0] if stopping else None)
    return None


# Headings of a letter's other sections: under one, the list above has ended. A
# discharge summary sets them alone on a line, without a colon ("Results",
# "Follow-up for the GP").
_OTHER_HEADINGS = re.compile(
    r"^(?:results?|investigations?|blood results|plan|management plan|follow[- ]?up\b.*|recommendations?|"
    r"hospital course|clinical course|course in hospital|progress|summary|clinical summary|impression|assessment|"
    r"examination|on examination|history of presenting complaint|presenting complaint|social history|"
    r"family history|discharge plan|instructions?(?: for .*)?|advice|actions? for .*|information for .*|"
    r"procedures?|operations?|imaging|observations|vital signs)$", re.IGNORECASE)


def is_other_heading(text: str) -> bool:
    """A heading of a section that is no list the letter is read by ("Results")."""
    return len(text) <= 50 and bool(_OTHER_HEADINGS.match(norm_label(text)))


# Words naming a section of a letter that is no list, read by meaning in a label with
# words that only say when ("Results at discharge:", "Bloods on admission:").
_SECTION_WORDS = frozenset({"results", "result", "investigations", "investigation", "bloods", "labs", "plan",
                            "follow-up", "followup", "observations", "obs", "vitals", "examination", "imaging",
                            "progress", "impression", "assessment", "advice", "recommendations"})
_WHEN_FILLER = frozenset({"at", "latest", "recent", "most", "last", "key", "on", "day"})


def names_other_section(label: str) -> bool:
    """Whether an inline label names a section that is no list ("Results at discharge")."""
    said = norm_label(label).replace("/", " ").split()
    return (0 < len(said) <= MAX_HEADING_WORDS and any(w in _SECTION_WORDS for w in said)
            and all(w in _SECTION_WORDS or w in _HEADING_FILLER or w in _WHEN_FILLER for w in said))


# List headings that name one item: its commas are part of it ("Principal diagnosis:
# pneumonia, right lower lobe" is one diagnosis).
_ONE_ITEM = frozenset({"principal diagnosis", "primary diagnosis", "final diagnosis", "main diagnosis",
                       "discharge diagnosis", "working diagnosis"})


def names_one_item(label: str) -> bool:
    return norm_label(label) in _ONE_ITEM


def list_status(label: str) -> str | None:
    """The status every item under a list's label has, as its label words it
    ("stopped" under "Medications stopped during this admission"); None under a list
    of current ones."""
    meaning = _list_by_meaning(label)
    return meaning[1] if meaning else None


LIST_FIELDS = ("problems", "medications", "allergies")
# Fields that identify the patient; under a heading about someone else they are that person's.
IDENTITY_FIELDS = ("patient_name", "dob", "mrn")
INLINE = re.compile(r"^\s*([A-Za-z][A-Za-z .'/()&#-]{0,45}?)\s*[:\uff1a]\s*(.*)$", re.DOTALL)
CLOSING = re.compile(r"^(?:yours (?:sincerely|faithfully|truly)|yours|sincerely|kind regards|best regards|regards"
                      r"|warm regards|with (?:kind |best |warm )?(?:regards|wishes)|best wishes|many thanks"
                      r"|thank you|respectfully)[,.!]?$", re.IGNORECASE)
SALUTATION = re.compile(r"^dear\s+(.+?)[,:]?$", re.IGNORECASE)
# "Dear Colleague" names nobody.
NOBODY = re.compile(r"^(?:colleagues?|sir(?:\s*(?:/|or)\s*madam)?|madam|doctor|team|all|friend|"
                     r"(?:the )?(?:clinic|department|team)(?: team)?)$", re.IGNORECASE)
# Lines of a signature block that are not the signer.
NOT_SIGNER = re.compile(r"^(?:dictated|electronically signed|signed electronically|typed by|pp\.?\s|cc\b|enc)",
                         re.IGNORECASE)
DOB_INLINE = re.compile(r"(?:\bDOB\b|\bD\.O\.B\.?|date of birth|\bborn\b)\s*[:#.]?\s*([0-9A-Za-z][0-9A-Za-z ,./-]{4,20}?\d{2,4})",
                         re.IGNORECASE)
# A record-number label of the shared vocabulary ("MRN", "Hosp#", "UR no."), perhaps
# printed again before the number ("Medical record no.: MRN 6620915"); the number holds
# a digit, so a label word inside a name or a sentence is no label.
_RECORD_LABELS = "|".join(re.escape(p) for p in sorted(IDENTITY_VOCABULARY["record_number"], key=len, reverse=True))
_RECORD_LABEL = rf"(?<![A-Za-z])(?:{_RECORD_LABELS})(?![A-Za-z])\.?\s*[:#]?\s*"
MRN_INLINE = re.compile(rf"{_RECORD_LABEL}(?:{_RECORD_LABEL}(?=\d))?"
                        r"((?=[A-Za-z0-9-]*\d)[A-Za-z0-9][A-Za-z0-9-]{2,20}(?: \d{3,4}){0,2})\b", re.IGNORECASE)
# A number that identifies the patient elsewhere or the visit (extract.values.identity_labels'
# other identifiers), printed inline: read as such, never as the record number.
# Its labels are the shared vocabulary's; the number holds a digit ("Re: Mr Chi Wong" names no "CHI" number).
_OTHER_LABELS = "|".join(re.escape(p) for p in sorted(IDENTITY_VOCABULARY["other_identifier"], key=len, reverse=True))
OTHER_ID_INLINE = re.compile(rf"(?<![A-Za-z])(?:{_OTHER_LABELS})(?![A-Za-z])"
                             r"\s*[:#]?\s*((?=[A-Za-z0-9-]*\d)[A-Za-z0-9][A-Za-z0-9-]{2,20}(?: \d{3,4}){0,2})\b",
                             re.IGNORECASE)
# A printed identifier value: letters/digits with at least one digit ("WB-204118",
# "943 476 5919").
MRN_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*\d[A-Za-z0-9-]*(?: \d{3,4}){0,2}\b")
HEADER_COLUMNS = {
    "medications": {role: MEDICATION_COLUMNS[role] for role in ("name", "dose", "frequency", "route", "status",
                                                                  "stop", "notes")},
    "allergies": ALLERGY_COLUMNS,
    "problems": {
        "description": ("diagnosis", "diagnoses", "problem", "problems", "condition", "conditions", "description"),
        "code": ("code", "icd", "icd-10", "icd10", "icd code", "icd-10 code"),
        "status": ("status",),
        # when it began ("Date | Problem", "Onset | Condition"): a problem list's own column
        "onset": ("date", "onset", "since", "year", "date diagnosed", "diagnosed", "date of onset"),
    },
}


# A note in brackets after a label ("Medications (reconciled 11/20/2026)", "Allergies (drug)").
_BRACKET_NOTE = re.compile(r"\s*\([^()]*\)\s*$")


def label_field(text: str) -> str | None:
    """The canonical field a label names ("Reason for Referral:" -> "reason"). An
    allergy label is also read by meaning, in any of its wordings ("Drug
    sensitivities", "Intolerances", "Allergies/ADRs", "Adverse drug reactions"): a
    short label made only of label words that names allergies (the intake label
    vocabulary, ``extract.values.labels``). Missing one would read as "no allergies"."""
    exact = _LABEL_OF.get(norm_label(text))
    if exact is not None:
        return exact
    label = text.strip().rstrip(":\uff1a")
    if (bare := _BRACKET_NOTE.sub("", label)) and bare != label:
        return label_field(bare)  # "Medications (reconciled 11/20/2026):": the note says when, not what
    if (meaning := _list_by_meaning(text)) is not None:
        return meaning[0]
    if len(text.split()) <= MAX_ALLERGY_LABEL_WORDS and reads_as_label(text):
        meaning = read_label(text)
        if meaning.kind == "allergies" and meaning.owner is None:
            return "allergies"
    return None


MAX_ALLERGY_LABEL_WORDS = 5


def header_kind(cells: list[str]) -> tuple[str, dict[str, int]] | None:
    """(list kind, column name -> index) when a row names the columns of a list table
    ("Medication | Dose | Route | Frequency | Status"): its first column and one more."""
    labels = [norm_label(c) for c in cells]
    best = None
    for kind, columns in HEADER_COLUMNS.items():
        mapping = {}
        for i, label in enumerate(labels):
            for col, names in columns.items():
                if label in names and col not in mapping:
                    mapping[col] = i
                    break
        primary = next(iter(columns))
        if primary in mapping and len(mapping) >= 2 and (best is None or len(mapping) > len(best[1])):
            best = (kind, mapping)
    return best
