"""The words a clinical workbook is read by: the header labels of lab and medication
tables (the role of each column), identity labels of the block above a table, and
what marks a test plan or an empty value."""

from __future__ import annotations

import re

from extract.values import numbers as V
from extract.values.identity_labels import VOCABULARY as IDENTITY_VOCABULARY
from extract.values.labels import read_label, reads_as_label
from extract.values.lists import MEDICATION_COLUMNS


def _norm(text: str) -> str:
    t = V.normalize_ws(text).lower()
    t = re.sub(r"[:#*.]+$", "", t).strip()
    return t


LAB_ROLES: dict[str, tuple[str, ...]] = {
    "test": ("test", "test name", "analyte", "component", "investigation", "lab test", "parameter",
             "observation", "assay", "determination", "examination", "lab"),
    "value": ("result", "value", "result value", "observed value", "reading", "level", "results"),
    "unit": ("units", "unit", "uom", "unit of measure"),
    "range": ("reference range", "ref range", "range", "normal range", "reference", "reference interval",
              "ref. range", "normal values", "ref", "reference values", "normal", "target range", "target",
              "therapeutic range", "target interval", "therapeutic interval", "reference ranges", "normal ranges",
              "ref interval", "ref. interval", "biological reference interval", "expected range", "goal range",
              "desired range"),
    "flag": ("flag", "flags", "abnormal flag", "h/l", "abn", "abnormal", "interpretation"),
    "date": ("date", "collected", "collection date", "date collected", "specimen date", "result date",
             "sample date", "date of test", "test date", "drawn", "collection"),
    "critical": ("critical range", "critical limits", "critical values", "critical value", "panic values",
                 "panic range", "panic limits", "critical"),
    "loinc": ("loinc", "loinc code"),
    "notes": MEDICATION_COLUMNS["notes"],  # the lab's comment on a result ("haemolysed")
}
MED_ROLES: dict[str, tuple[str, ...]] = {
    "name": ("medication", "drug", "medicine", "medication name", "drug name", "medications", "drugs"),
    "dose": ("dose", "strength", "dosage", "amount"),
    "frequency": MEDICATION_COLUMNS["frequency"],
    "prn": MEDICATION_COLUMNS["prn"],
    "notes": MEDICATION_COLUMNS["notes"],
    "route": ("route",),
    "start": ("start date", "started", "start", "date started"),
    # Whether it is taken now, and when it was stopped: the columns every reader knows
    # (a row with a stop date is history, not a current medicine), and a sheet's shorter ones.
    "stop": (*MEDICATION_COLUMNS["stop"], "end", "ended", "stop"),
    "status": MEDICATION_COLUMNS["status"],
}
TEST_PLAN = re.compile(r"test case|pass\s*/\s*fail|expected result|expected value", re.IGNORECASE)
# Identity label cells by meaning, from the vocabulary every reader shares; account,
# visit and NHS numbers are not record numbers (the identity sweep reads them).
_ID_MEANINGS = {"name": "name", "first_name": "first_name", "last_name": "last_name", "middle_name": "middle_name",
                "dob": "dob", "record_number": "mrn", "collected": "collected"}
_ID_OF: dict[str, str] = {"client": "name"}
# Label wordings read by meaning (the intake label vocabulary): "Surname", "Forename",
# "Given name", "Clinic ID", "Hospital number", "NHS number", "Chart #", "Unit no."...
_ID_KINDS = {"name": "name", "first_name": "first_name", "middle_name": "middle_name", "last_name": "last_name",
             "dob": "dob", "mrn": "mrn"}
MAX_ID_LABEL_WORDS = 5


def names_other_identifier(text: str) -> bool:
    """Whether a label cell names another identifier of the patient ("NHS number",
    "Medicare no"): read and shown by the identity sweep, never compared."""
    return _norm(text) in _OTHER_IDENTIFIER


def id_kind(text: str) -> str | None:
    """The identity field a label cell names ("name", "first_name", "last_name",
    "middle_name", "dob", "mrn", "collected"), or None. A label about someone else
    ("Next of kin name", "GP name") names none of the patient's."""
    t = _norm(text)
    if t in _ID_OF:
        return _ID_OF[t]
    raw = V.normalize_ws(text).rstrip(": ")  # "Unit no." keeps its dot: "no" alone is an answer
    if not t or len(t.split()) > MAX_ID_LABEL_WORDS or not reads_as_label(raw):
        return None
    meaning = read_label(raw)
    return _ID_KINDS.get(meaning.kind or "") if meaning.owner is None else None


for _meaning, _phrases in IDENTITY_VOCABULARY.items():
    for _phrase in _phrases:
        _ID_OF.setdefault(_norm(_phrase), _ID_MEANINGS.get(_meaning))  # None: a label, of nothing of ours
_ID_OF = {label: kind for label, kind in _ID_OF.items() if kind is not None}

NULL_VALUE = V.NULL_VALUE  # a cell that holds no value


def column_role(text: str, roles: dict[str, tuple[str, ...]]) -> str | None:
    t = _norm(text)
    bare = re.sub(r"\s*\(.*?\)\s*", " ", t).strip()
    for role, names in roles.items():
        if t in names or bare in names:
            return role
    return None


_OTHER_IDENTIFIER = frozenset(_norm(p) for p in IDENTITY_VOCABULARY["other_identifier"])
