"""Plain words for what a clinician reads, by kind of code. Internal codes stay in the
data and are shown only on hover or in the "Details for support" expander
(``code_hint``, ``ui.glossary.details_for_support``); pages call these instead of
printing enum values. The words for the workbench's own vocabulary (verified, promoted,
held, superseded, ...) come from the one glossary, ``ui.glossary``. Wording only: no
rules live here."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from domain.policy.facts.vital_signs import VITAL_SIGNS
from ui import glossary
from ui.glossary import TERMS

JOB_STATUS = {
    "pending": "waiting to be read", "running": "being read now", "succeeded": "read",
    "failed": "could not be read", "retracted": "deleted", None: "stored only (not read)",
}
IDENTITY_STATUS = {
    "identity_verified": "matches this patient",
    "identity_review_approved": "approved for this patient by a reviewer",
    "identity_ambiguous_needs_review": "patient match unclear: needs review",
    "identity_mismatch_quarantined": TERMS["identity_mismatch_quarantined"],
    "identity_review_rejected": "rejected: not this patient",
    "identity_unchecked": "patient not checked yet",
    None: "patient not checked yet",
}
CERTAINTY = {c: TERMS[c] for c in ("verified", "document_fact", "needs_review")}
# The viewer's four colour classes, named as the legend reads them.
BOX_CLASS = {
    "verified": TERMS["verified"], "document_fact": "kept with the document", "needs_review": "needs review",
    "held": "on hold (patient not confirmed)",
}
PROMOTION = {
    "promoted": TERMS["promoted"], "already_exists": TERMS["already_exists"],
    "duplicate_skipped": "duplicate, not added again", "conflict_needs_review": TERMS["conflict_needs_review"],
    "not_promotable": "kept with the document (not a chart item)", "needs_review": "waiting for review",
    "rejected": "rejected", "promotion_failed": "could not be added to the chart",
    "retracted": "taken out of the chart", "superseded": TERMS["superseded"], "acknowledged": TERMS["acknowledged"],
    "awaiting_identity": "waiting for the patient match", "approved_awaiting_identity":
        "approved, waiting for the patient match",
    None: "—",
}
DOC_TYPE = {
    "lab_pdf": "lab report", "intake_form": "intake form", "referral_docx": "referral letter",
    "clinical_workbook": "workbook", "fax_packet": "fax packet", "hl7v2_message": "HL7 result message",
    "fhir_bundle": "FHIR bundle",
}
FACT_TYPE = {
    "lab_result": "lab result", "medication": "medication", "allergy": "allergy", "problem": "problem",
    "demographic": "demographic", "identifier": "identifier", "unread_content": "results not read",
}
INTENT = {"lookup": "looking up what the record says", "attention": "what deserves attention",
          "guideline": "what the guidelines say"}
IDENTIFIER_KIND = {"name": "Name", "dob": "Date of birth", "mrn": "MRN"}


def _plain(table: dict, code: Any) -> str:
    """``table``'s words for ``code``, else the code with underscores as spaces; "—" for none.
    Each kind of code in this module is this with its own table (``job_status(code)``, ...)."""
    if code in table:
        return table[code]
    return str(code).replace("_", " ") if code is not None else "—"


job_status = partial(_plain, JOB_STATUS)
identity_status = partial(_plain, IDENTITY_STATUS)
certainty = partial(_plain, CERTAINTY)
promotion = partial(_plain, PROMOTION)
doc_type = partial(_plain, DOC_TYPE)
fact_type = partial(_plain, FACT_TYPE)
intent = partial(_plain, INTENT)
# An error code as words ("encrypted_pdf" -> "encrypted pdf"); the message beside it
# carries the explanation.
error_code = partial(_plain, {})


def failure_sentence(message: str | None, code: str | None) -> str:
    """Why a document could not be read, ending with the fact that its original is kept,
    said once: most messages (limits, damaged files) say it themselves. Plain text: the
    caller makes it inert."""
    text = (message or (error_code(code) if code else "") or "the reader gave no reason").strip()
    text = text[:1].upper() + text[1:]
    if not text.endswith((".", "!", "?")):
        text += "."
    return text if "original is kept" in text or "original file is kept" in text else f"{text} The original file is kept."


def review_reason(reason: str | None) -> str:
    """Why an item waits in the review queue: a patient-match status or a promotion
    outcome in words; an extractor's reason is already a sentence."""
    if reason in IDENTITY_STATUS:
        return identity_status(reason)
    if reason in ("conflict_needs_review", "needs_review"):
        return promotion(reason)
    if reason and glossary.reason(reason) == "low confidence":
        # The certainty policy's bar for entering the chart by itself (85 % for a problem)
        # lies above what the queue calls a high confidence (80 %): "low" beside "high 80 %"
        # contradicted itself on the page.
        return "not sure enough to enter the chart without a person's check"
    return glossary.reason(reason) if reason else "—"


def code_hint(*codes: Any) -> str:
    """The internal codes behind a plain label, for a ``help=`` tooltip or an expander."""
    return "internal: " + ", ".join(str(c) for c in codes if c not in (None, ""))


# An HL7 segment or field, as extract/hl7 names them: "OBX[3]-5", "message 2 PID[1]-7".
_HL7 = re.compile(r"^(?:message (?P<msg>\d+) )?(?P<seg>[A-Z][A-Z0-9]{2})\[(?P<n>\d+)\](?:-(?P<field>\d+))?$")
_SHEET = re.compile(r"^(?P<sheet>.+)!(?P<c1>[A-Z]+)(?P<r1>\d+)(?::(?P<c2>[A-Z]+)(?P<r2>\d+))?$")


_FHIR = re.compile(r"^(?:Bundle\.entry\[\d+\]\.resource|[A-Z][A-Za-z]+\.[a-z])")


def location(citation: dict[str, Any], fact: dict[str, Any] | None = None) -> str:
    """Where a citation points, as a person would say it: "page 1, row 'LDL Cholesterol'",
    "result 3 (Glucose)", "message 2, patient details 1, birth date", "sheet Lab trend, row 5",
    "paragraph 7". The HL7 segment and field codes go to the support details."""
    where = str(citation.get("page_or_section") or "")
    label = _row_label(fact)
    seg = _HL7.match(where)
    if seg:
        text = f"message {seg['msg']}, " if seg["msg"] else ""
        return text + glossary.hl7_place(seg["seg"], seg["n"], seg["field"], label or None)
    sheet = _SHEET.match(where)
    if sheet:
        rows = sheet["r1"] if not sheet["r2"] or sheet["r2"] == sheet["r1"] else f"{sheet['r1']}–{sheet['r2']}"
        name = sheet["sheet"]
        if len(name) > 1 and name[0] == name[-1] == "'":  # Excel's quoting: 'Sheet 1'!B3, 'O''Hara'!B3
            name = name[1:-1].replace("''", "'")
        text = f"sheet {name}, row{'s' if '–' in rows else ''} {rows}"
        if not sheet["c2"]:  # one cell: a table with a column per date cites a value per cell of its row
            text += f", column {sheet['c1']}"
        return f"{text} ({label})" if label else text
    if where.startswith("page ") and label:
        return f"{where}, row ‘{label}’"
    if _FHIR.match(where) and label:  # a FHIR element's JSON path
        return f"{where} ({label})"
    return where or "—"


def _row_label(fact: dict[str, Any] | None) -> str:
    if not fact:
        return ""
    value = fact.get("structured_value") or {}
    for key in ("test_name", "substance", "name", "description", "observation"):
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
                 "problems": "Problems", "vital_signs": "Vital signs"}
CHART_SOURCE = {"manual": "entered by hand", "promoted": "from a document"}
WORKER_STATE = {"idle": "idle, waiting for work", "busy": "reading a document", "stopped": "stopped",
                None: "never seen"}
NOTHING_FOUND = "read, nothing found"


abnormal_flag = partial(_plain, FLAG)
sex = partial(_plain, SEX)
chart_section = partial(_plain, CHART_SECTION)


def vital_sign(kind: str | None) -> str:
    """A vital sign's name in words ("blood pressure" for ``blood_pressure``)."""
    return _plain({k: s.display for k, s in VITAL_SIGNS.items()}, kind)
chart_source = partial(_plain, CHART_SOURCE)
worker_state = partial(_plain, WORKER_STATE)


def document_status(job_status_code: str | None, found_nothing: bool = False, unread: int = 0) -> str:
    """A document's reading status; a job that succeeded without keeping one fact, or
    that left printed results unread (the coverage guard), reads as a warning, not as a
    success."""
    if job_status_code == "succeeded" and unread:
        return unread_results(unread)
    return NOTHING_FOUND if found_nothing else job_status(job_status_code)


def unread_results(n: int) -> str:
    """"read, but 3 results were not read — see review"."""
    return f"read, but {n} result{' was' if n == 1 else 's were'} not read — see review"


def found_summary(counts: dict[str, Any] | None) -> str:
    """A job's counts as they were when it was read: "10 checked against the page · 2 need
    review". What happened since (held, added, conflicts) is ``glossary.outcome_words``."""
    counts = counts or {}
    parts = [(counts.get("verified"), TERMS["verified"]), (counts.get("document_fact"), "kept with the document"),
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


def full_name(patient: dict[str, Any]) -> str:
    middle = f" {patient['middle_name']}" if patient.get("middle_name") else ""
    return f"{patient['first_name']}{middle} {patient['last_name']}"


def birth_date(dob: Any) -> str:
    """"14 Mar 1961"."""
    return dob.strftime("%d %b %Y") if hasattr(dob, "strftime") else str(dob)


def patient_line(patient: dict[str, Any]) -> str:
    """Full name, MRN, date of birth and sex on one line."""
    return (f"{full_name(patient)} · MRN {patient['mrn']} · born {birth_date(patient.get('dob'))} · "
            f"{sex(patient.get('sex'))}")


# --- accounts and the access audit ---------------------------------------------------------
ACCESS_EVENT = {
    "sign_in": "signed in", "sign_in_failed": "failed sign-in", "sign_in_locked": "tried to sign in while locked",
    "sign_in_throttled": "refused: too many failed sign-ins from that address",
    "account_locked": "account locked (too many failed sign-ins)", "sign_out": "signed out",
    "idle_timeout": "signed out after inactivity", "password_changed": "changed their password",
    "session_refused": "their open session was refused to a client without their sign-in cookie",
    "user_added": "added an account", "user_disabled": "disabled an account", "user_enabled": "enabled an account",
    "password_reset": "reset a password", "view_chart": "viewed a chart", "view_document": "viewed a document",
    "view_answer": "viewed a chat answer", "view_message": "viewed a message waiting for a chart",
}
ROLE = {"viewer": "viewer (reads)", "reviewer": "reviewer (reads, uploads, decides)",
        "admin": "admin (also users, operations, eval gate)"}
CHANNEL = {"ui": "app", "cli": "command line", "oidc": "app (organisation sign-in)"}

access_event = partial(_plain, ACCESS_EVENT)
role = partial(_plain, ROLE)
channel = partial(_plain, CHANNEL)


# --- HL7 messages held for review (core/services/interfaces/mllp.py) -------------------------------
HOLD_REASON = {
    "unknown_patient": "The MRN in the message is on no chart here.",
    "ambiguous_patient": "The message's patient numbers do not point to one single chart (several charts, "
                         "or several patients in one message).",
    "no_patient_id": "The message gives no patient number (MRN), so it cannot be matched to a chart.",
    "control_id_reused": "The sender used this message number before for different content: check whether it "
                         "is a correction or a repeat before putting it on a chart.",
    "no_category": "No document category is set to read HL7 messages (an admin sets one on Operations), so "
                   "it was not filed.",
}
MESSAGE_KIND = {
    "ORU": "Lab results", "OUL": "Lab results", "ORF": "Lab results", "OUR": "Lab results",
    "ADT": "Admission or registration", "ORM": "Order", "OML": "Order", "MDM": "Clinical document",
    "VXU": "Vaccination record", "batch": "Batch of messages",
}
STATED_FIELD = {"name": "name", "dob": "birth date", "mrn": "MRN"}


def hold_reason(code: str | None) -> str:
    return HOLD_REASON.get(code or "", "Held for a person to check before it goes on a chart.")


def message_kind(message_type: str | None) -> str:
    """"ORU^R01" -> "Lab results" (the code itself goes in a tooltip)."""
    return MESSAGE_KIND.get(str(message_type or "").partition("^")[0].upper(), "HL7 message")


def message_sender(sender: str | None) -> str:
    """MSH-3^MSH-4 ("LAB^WESTFIELD LAB") as "WESTFIELD LAB (system LAB)"."""
    application, _, facility = str(sender or "").partition("^")
    if facility and application:
        return f"{facility} (system {application})"
    return facility or application or "an unnamed sender"


def _fields_verb(fields: list[str], verb: str) -> str:
    words = [STATED_FIELD.get(f, f) for f in fields]
    if not words:
        return ""
    joined = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
    return f"{joined} {verb}{'s' if len(words) == 1 else ''}"


def agreeing(fields: list[str]) -> str:
    """["name", "dob"] -> "name and birth date agree"; ["mrn"] -> "MRN agrees"."""
    return _fields_verb(fields, "agree")


def differing(fields: list[str]) -> str:
    """["mrn"] -> "MRN differs"."""
    return _fields_verb(fields, "differ")
