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
