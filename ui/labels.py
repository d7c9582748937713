"""Plain words for what a clinician reads. Internal codes stay in the data and are
shown only on hover or in an expander (``code_hint``); pages call these instead of
printing enum values. Wording only: no rules live here."""

from __future__ import annotations

import re
from typing import Any

JOB_STATUS = {
    "pending": "waiting to be read", "running": "being read now", "succeeded": "read",
    "failed": "could not be read", "retracted": "deleted", None: "stored only (not read)",
}
IDENTITY_STATUS = {
    "identity_verified": "matches this patient",
    "identity_review_approved": "approved for this patient by a reviewer",
    "identity_ambiguous_needs_review": "patient match unclear: needs review",
    "identity_mismatch_quarantined": "names another patient: held back",
    "identity_review_rejected": "rejected: not this patient",
    "identity_unchecked": "patient not checked yet",
    None: "patient not checked yet",
}
CERTAINTY = {
    "verified": "verified", "document_fact": "document fact (not chart truth)", "needs_review": "needs review",
}
# The viewer's four colour classes, named as the legend reads them.
BOX_CLASS = {
    "verified": "verified", "document_fact": "document fact", "needs_review": "needs review",
    "held": "held (patient not confirmed)",
}
PROMOTION = {
    "promoted": "added to the chart", "already_exists": "already in the chart",
    "duplicate_skipped": "duplicate, not added again", "conflict_needs_review": "differs from the chart: needs review",
    "not_promotable": "kept with the document (not a chart item)", "needs_review": "waiting for review",
    "rejected": "rejected", "promotion_failed": "could not be added to the chart", "retracted": "retracted",
    "awaiting_identity": "waiting for the patient match", "approved_awaiting_identity":
        "approved, waiting for the patient match",
    None: "—",
}
DOC_TYPE = {
    "lab_pdf": "lab report", "intake_form": "intake form", "referral_docx": "referral letter",
    "clinical_workbook": "workbook", "fax_packet": "fax packet", "hl7v2_message": "HL7 result message",
}
FACT_TYPE = {
    "lab_result": "lab result", "medication": "medication", "allergy": "allergy", "problem": "problem",
    "demographic": "demographic", "identifier": "identifier",
}
INTENT = {"lookup": "looking up what the record says", "attention": "what deserves attention",
          "guideline": "what the guidelines say"}
IDENTIFIER_KIND = {"name": "Name", "dob": "Date of birth", "mrn": "MRN"}


def _plain(table: dict, code: Any) -> str:
    if code in table:
        return table[code]
    return str(code).replace("_", " ") if code is not None else "—"


def job_status(code: str | None) -> str:
    return _plain(JOB_STATUS, code)


def identity_status(code: str | None) -> str:
    return _plain(IDENTITY_STATUS, code)


def certainty(code: str | None) -> str:
    return _plain(CERTAINTY, code)


def promotion(code: str | None) -> str:
    return _plain(PROMOTION, code)


def doc_type(code: str | None) -> str:
    return _plain(DOC_TYPE, code)


def fact_type(code: str | None) -> str:
    return _plain(FACT_TYPE, code)


def intent(code: str | None) -> str:
    return _plain(INTENT, code)


def error_code(code: str | None) -> str:
    """An error code as words ("encrypted_pdf" -> "encrypted pdf"); the message beside
    it carries the explanation."""
    return _plain({}, code)


def code_hint(*codes: Any) -> str:
    """The internal codes behind a plain label, for a ``help=`` tooltip or an expander."""
    return "internal: " + ", ".join(str(c) for c in codes if c not in (None, ""))


_INDEXED = re.compile(r"^(?P<field>[a-z_.]+)\[(?P<i>\d+)\]$")
_OBX = re.compile(r"^(?P<seg>[A-Z][A-Z0-9]{2})\[(?P<n>\d+)\](?:-(?P<field>\d+))?")
_SHEET = re.compile(r"^(?P<sheet>.+)!(?P<c1>[A-Z]+)(?P<r1>\d+)(?::(?P<c2>[A-Z]+)(?P<r2>\d+))?$")


def location(citation: dict[str, Any], fact: dict[str, Any] | None = None) -> str:
    """Where a citation points, as a person would say it: "page 1, row 'LDL Cholesterol'",
    "OBX 3 (Glucose)", "sheet Lab trend, row 5", "paragraph 7"."""
    where = str(citation.get("page_or_section") or "")
    label = _row_label(fact)
    seg = _OBX.match(where)
    if seg:
        text = f"{seg['seg']} {seg['n']}"
        return f"{text} ({label})" if label else text
    sheet = _SHEET.match(where)
    if sheet:
        rows = sheet["r1"] if not sheet["r2"] or sheet["r2"] == sheet["r1"] else f"{sheet['r1']}–{sheet['r2']}"
        text = f"sheet {sheet['sheet']}, row{'s' if '–' in rows else ''} {rows}"
        return f"{text} ({label})" if label else text
    if where.startswith("page ") and label:
        return f"{where}, row ‘{label}’"
    return where or "—"


def _row_label(fact: dict[str, Any] | None) -> str:
    if not fact:
        return ""
    value = fact.get("structured_value") or {}
    for key in ("test_name", "substance", "name", "description"):
        if value.get(key):
            return str(value[key])
    return ""


# --- whole app: documents list, sidebar, chart rows, Operations ----------------------------
FLAG = {
    "normal": "normal", "high": "high", "low": "low", "critical_high": "critically high",
    "critical_low": "critically low", "abnormal": "abnormal", "unknown": "not stated", None: "—",
}
SEX = {"F": "female", "M": "male", "U": "sex not recorded", None: "sex not recorded"}
CHART_SECTION = {"labs": "Lab results", "allergies": "Allergies", "medications": "Medications",
                 "problems": "Problems"}
CHART_SOURCE = {"manual": "entered by hand", "promoted": "from a document"}
WORKER_STATE = {"idle": "idle, waiting for work", "busy": "reading a document", "stopped": "stopped",
                None: "never seen"}
NOTHING_FOUND = "read, nothing found"


def abnormal_flag(code: str | None) -> str:
    return _plain(FLAG, code)


def sex(code: str | None) -> str:
    return _plain(SEX, code)


def chart_section(code: str) -> str:
    return _plain(CHART_SECTION, code)


def chart_source(code: str | None) -> str:
    return _plain(CHART_SOURCE, code)


def worker_state(code: str | None) -> str:
    return _plain(WORKER_STATE, code)


def document_status(job_status_code: str | None, found_nothing: bool = False) -> str:
    """A document's reading status; a job that succeeded without keeping one fact reads
    as a warning, not as a success."""
    return NOTHING_FOUND if found_nothing else job_status(job_status_code)


def found_summary(counts: dict[str, Any] | None) -> str:
    """A job's counts as a reviewer reads them: "10 verified · 2 need review"."""
    counts = counts or {}
    parts = [(counts.get("verified"), "verified"), (counts.get("document_fact"), "document facts"),
             (counts.get("needs_review"), "need review")]
    text = " · ".join(f"{n} {label}" for n, label in parts if n)
    if not text and counts.get("unchanged"):
        return f"{counts['unchanged']} unchanged"
    return text or "nothing found"


def seen_ago(seconds: float | None) -> str:
    """"last seen 3 s ago" / "2 min ago" / "5 h ago"."""
    if seconds is None:
        return "never seen"
    s = max(0, int(round(seconds)))
    if s < 90:
        return f"last seen {s} s ago"
    if s < 90 * 60:
        return f"last seen {round(s / 60)} min ago"
    return f"last seen {round(s / 3600)} h ago"


def patient_line(patient: dict[str, Any]) -> str:
    """Full name, MRN, date of birth and sex on one line."""
    middle = f" {patient['middle_name']}" if patient.get("middle_name") else ""
    dob = patient.get("dob")
    born = dob.strftime("%d %b %Y") if hasattr(dob, "strftime") else str(dob)
    return (f"{patient['first_name']}{middle} {patient['last_name']} · MRN {patient['mrn']} · "
            f"born {born} · {sex(patient.get('sex'))}")
