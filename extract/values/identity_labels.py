"""The labels a document prints its patient's identity under, by meaning: one table
for every reader (lab, intake, referral, workbook, fax) and for the sweep that finds
identity values no reader attributed (``extract.unread_identity``).

Phrases are lower-case words as printed, without the label's colon; readers match
them on their own tokens ("Hosp#:" and "HOSP #" are "hosp #"). Each phrase has one
meaning:

* ``name`` / ``first_name`` / ``last_name`` / ``middle_name`` - the patient's name,
  whole or in parts ("Surname" + "Given" are two fields forming one name);
* ``dob`` - the date of birth;
* ``record_number`` - the patient's record number at the facility that keeps the
  chart: compared with the chart MRN, so a different one is a contradiction;
* ``other_identifier`` - a number that identifies the patient (or the visit) but is
  by nature NOT the chart MRN (NHS, Medicare, health card, account, visit,
  encounter): read and shown, never compared, so it can neither confirm the patient
  nor contradict the MRN;
* ``collected`` - when the specimen was taken (a date that is never a birth date);
* ``not_identity`` - labels whose values look like identifiers or dates but are not
  the patient's (accession, CLIA, phone, page, report date...).
"""

from __future__ import annotations

NAME = ("pt", "pt.", "pat", "pat.", "patient", "patient name", "pt name", "pat name", "pat. name", "name",
        "patient's name", "name of patient", "full name", "patient full name", "client name")
FIRST_NAME = ("given", "given name", "given names", "given name(s)", "first name", "forename", "forenames",
              "christian name")
LAST_NAME = ("surname", "last name", "family name")
MIDDLE_NAME = ("middle name", "middle initial")
DOB = ("dob", "d.o.b", "d.o.b.", "date of birth", "birth date", "birthdate", "born", "birth", "pt dob",
       "patient dob", "dob (age)", "dob/age", "date of birth (age)")
RECORD_NUMBER = (
    "mrn", "mrn #", "mrn no", "mrn no.", "mr #", "mr#", "mr no", "mr no.", "mr number", "medical record",
    "medical record #", "medical record no", "medical record no.", "medical record number", "med rec #",
    "med rec no", "hosp no", "hosp no.", "hosp #", "hosp#", "hosp number", "hospital no", "hospital no.",
    "hospital #", "hospital number", "hospital id", "ur", "ur no", "ur no.", "ur #", "ur number", "urn",
    "unit record no", "unit record number", "chart", "chart #", "chart no", "chart no.", "chart number",
    "record", "record #", "record no", "record no.", "record number", "patient id", "patient no",
    "patient no.", "patient #", "patient number", "unit no", "unit no.",
    "unit number", "file no", "file number", "clinic id", "clinic no", "health record number",
)
OTHER_IDENTIFIER = (
    "nhs", "nhs no", "nhs no.", "nhs #", "nhs number", "medicare", "medicare no", "medicare no.", "medicare #",
    "medicare number", "health card", "health card no", "health card no.", "health card #", "health card number",
    "hcn", "ohip", "ohip no", "acct", "acct #", "acct no", "acct no.", "account", "account #", "account no",
    "account no.", "account number", "visit", "visit #", "visit no", "visit no.", "visit number", "visit id",
    "encounter", "encounter #", "encounter no", "encounter no.", "encounter number", "encounter id", "csn", "fin", "fin #",
    "chi", "chi no", "chi number", "ssn", "social security", "social security number", "insurance id",
    "member id", "policy no", "policy number", "nhi", "nhi no", "nhi no.", "nhi #", "nhi number",
)
COLLECTED = (
    "collected", "collection date", "date collected", "specimen collected", "date of service", "collection",
    "collected on", "date/time collected", "collection date/time", "collection time", "drawn", "date drawn",
    "dos", "specimen date", "service date", "specimen drawn", "date/time drawn", "date time drawn",
    "time drawn", "drawn on", "coll. date", "coll date", "coll", "coll.", "coll. date/time", "sample date",
    "sample collected", "sampled", "date sampled",
    # British and Commonwealth reports: "Sample taken: 01-Dec-2026 09:14"
    "taken", "taken on", "date taken", "time taken", "date/time taken", "date time taken", "sample taken",
    "specimen taken", "date sample taken", "date of collection", "time collected", "sample time",
)
NOT_IDENTITY = (
    "received", "reported", "date reported", "report date", "date received", "ordering physician", "physician",
    "provider", "ordered by", "sex", "gender", "age", "phone", "address", "specimen", "accession", "status",
    "fasting", "date", "page", "lab", "location", "tel", "telephone", "fax", "accession #", "accession no",
    "acc #", "acc no", "clia", "clia #", "clia no", "npi", "npi #", "specimen id", "specimen #", "specimen no",
    "sample id", "sample no", "lab no", "lab #", "lab ref", "lab number", "order #", "order no", "order number",
    "requisition", "requisition #", "requisition no", "req #", "req no", "report #", "report no",
    "report number", "printed", "print date", "time", "ref", "reference", "ref #", "doctor", "dr", "copy to",
    "cc", "ward", "bed", "room", "lot", "batch", "version", "rev", "form", "form no", "issued",
    "date issued", "entered", "date entered", "control id", "control #", "control no", "control number",
    "age/sex", "age/gender",  # "Age(y/m/d)": an age, its bracket a note (extract.unread_identity)
    # the labelled parts of a result written out ("Result: 98  Normal range: 115-165")
    "result", "your result", "value", "units", "unit", "flag", "range", "normal range", "reference range",
    "ref range", "ref. range", "reference interval", "interval",
)

# meaning -> phrases (the order settles nothing: every phrase has one meaning).
VOCABULARY: dict[str, tuple[str, ...]] = {
    "name": NAME, "first_name": FIRST_NAME, "last_name": LAST_NAME, "middle_name": MIDDLE_NAME, "dob": DOB,
    "record_number": RECORD_NUMBER, "other_identifier": OTHER_IDENTIFIER, "collected": COLLECTED,
    "not_identity": NOT_IDENTITY,
}

NAME_MEANINGS = frozenset({"name", "first_name", "last_name", "middle_name"})
# Meanings whose value is the patient's and compared with the chart.
COMPARED_MEANINGS = NAME_MEANINGS | {"dob", "record_number"}
IDENTITY_MEANINGS = COMPARED_MEANINGS | {"other_identifier"}


def record_label_words(tokens: list[str]) -> int:
    """How many of ``tokens`` open with a record-number label printed again before the
    number ("Medical record no.: MRN 6620915" -> 1 for ["MRN", "6620915"]); 0 when they
    do not, or when nothing with a digit follows it."""
    for n in range(min(3, len(tokens) - 1), 0, -1):
        phrase = " ".join(t.lower().rstrip(":") for t in tokens[:n])
        if phrase in RECORD_NUMBER and any(c.isdigit() for c in tokens[n]):
            return n
    return 0


def site_coded_number(tokens: list[str]) -> bool:
    """Whether a record number is printed after a facility's letter code ("UR No.: RMH
    0442917"): an upper-case code of two to five letters, then a word with a digit. The
    two words are the number as printed; read as the code alone, the number was lost
    (no digit, no identifier) and the identity check never saw it."""
    return len(tokens) > 1 and 2 <= len(tokens[0]) <= 5 and tokens[0].isalpha() and tokens[0].isupper() \
        and any(c.isdigit() for c in tokens[1])


def phrase_table(meanings: dict[str, str], fold=None) -> dict[str, str]:
    """phrase -> a reader's own key for each meaning it maps (``{"record_number":
    "mrn", ...}``); meanings it leaves out are not in the table. ``fold``: how the
    reader tokenises a phrase, when it cannot tell two phrases apart ("patient #" and
    "patient" when "#" is dropped): the first meaning in ``VOCABULARY`` keeps it."""
    out: dict[str, str] = {}
    folded: set = set()
    for meaning, phrases in VOCABULARY.items():
        key = meanings.get(meaning)
        for phrase in phrases:
            f = fold(phrase) if fold is not None else phrase
            if f in folded:
                continue
            folded.add(f)
            if key is not None:
                out[phrase] = key
    return out


def _validate() -> None:
    seen: dict[str, str] = {}
    for meaning, phrases in VOCABULARY.items():
        for phrase in phrases:
            if phrase != phrase.lower() or phrase.strip() != phrase:
                raise ValueError(f"identity label {phrase!r} must be lower case and trimmed")
            if seen.setdefault(phrase, meaning) != meaning:
                raise ValueError(f"identity label {phrase!r} means both {seen[phrase]} and {meaning}")


_validate()
