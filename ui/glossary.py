"""The one glossary: each internal word or code the workbench keeps, and the plain words a
clinician reads instead. Every page takes its wording from here (directly or through
``ui.labels``); the internal words stay available in a "Details for support" expander.

Wording only, no rules: the services return codes and counts (e.g. a document's
outcome, core/services/review/outcome.py) and this module says them. No service needs
these words, so they live in the UI layer.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

import streamlit as st

# Internal word -> what a clinician reads. Keys are the words the code, the database and
# the logs use; a page never prints a key.
TERMS: dict[str, str] = {
    # how a finding stands
    "verified": "checked against the page",
    "document_fact": "kept with the document (not added to the chart)",
    "needs_review": "needs review",
    "held": "on hold until the patient is confirmed",
    "promoted": "added to the chart",
    "already_exists": "already in the chart",
    "duplicate_skipped": "already in the chart",
    "conflict_needs_review": "differs from the chart: needs review",
    "superseded": "replaced by a value a reviewer chose",
    "retracted": "taken out (its document was deleted)",
    "retracts": "takes out",
    "rejected": "rejected by a reviewer",
    "acknowledged": "read and acknowledged",
    # the patient match
    "identity": "patient match",
    "identity_mismatch_quarantined": "names another patient: kept off this chart",
    "quarantined": "kept off this chart (names another patient)",
    "held back": "kept off the chart",
    # decisions and tools
    "keep_as_document_fact": "Keep with the document only",
    "free_box": "a box drawn by hand around other words than the quote",
    "handoffs": "How the answer was made (steps and time)",
    "golden_gate": "the test set of sample documents",
    # fax packet pages
    "page_cover": "cover sheet",
    "page_other": "page not read (neither a lab report nor an intake form)",
    "page_lab": "lab report page",
    "page_intake": "intake form page",
}

# The patient brief's sections whose title uses an internal word (domain/policy/answers/brief_budget.py),
# and the words a section says when it has nothing.
BRIEF_SECTION = {"quarantined": "Documents that name another patient (kept off the chart)"}
BRIEF_NONE = {"quarantined": "No document on this chart names another patient"}

# Pipeline stages (domain/latency.py) as the Operations page names them.
STAGES: dict[str, str] = {
    "normalize": "opening the file", "ocr": "reading scanned text", "extract": "finding results",
    "verify": "checking against the source", "identity": "matching the patient", "persist": "saving",
    "promote": "adding to the chart", "embed": "indexing for chat", "retrieve": "searching the record",
    "rerank": "ranking the evidence", "compose": "writing the answer", "draft": "wording the answer",
    "total": "total",
}
STAGE_KIND = {"document job": "reading a document", "job": "reading a document", "answer": "answering a question"}

# HL7 v2 segments and the fields a reviewer meets, as a person says them.
HL7_SEGMENT = {"OBX": "result", "OBR": "order", "ORC": "order", "PID": "patient details", "MSH": "message header",
               "NTE": "note", "PV1": "visit", "AL1": "allergy", "DG1": "diagnosis", "RXA": "vaccination",
               "SPM": "specimen", "EVN": "event", "NK1": "next of kin", "IN1": "insurance"}
HL7_FIELD = {("OBX", 3): "test", ("OBX", 5): "value", ("OBX", 6): "unit", ("OBX", 7): "reference range",
             ("OBX", 8): "flag", ("OBX", 14): "time", ("PID", 3): "MRN", ("PID", 5): "name",
             ("PID", 7): "birth date", ("PID", 8): "sex", ("PID", 11): "address", ("NTE", 3): "text", ("OBR", 4): "test ordered", ("OBR", 7): "time",
             ("AL1", 3): "substance", ("AL1", 5): "reaction"}

# How sure a reader was, in bands; the lower edges are inclusive. The number itself is
# support detail (the review queue may show it in a colour scale).
CONFIDENCE_BANDS: tuple[tuple[float, str], ...] = (
    (0.85, "read with high confidence"), (0.7, "read with fair confidence"),
    (0.35, "read with low confidence"), (0.0, "read with very low confidence"),
)


def plain(term: Any) -> str:
    """The plain words for an internal word or code; an unknown code with underscores as
    spaces (never the raw code); "—" for none."""
    if term is None or term == "":
        return "—"
    if term in TERMS:
        return TERMS[term]
    return str(term).replace("_", " ")


# A reader's confidence written into a reason ("low confidence (0.33)"): the number is support detail.
_RAW_CONFIDENCE = re.compile(r"\s*\((?:confidence\s*)?[01]?\.\d+\)")


def reason(code: Any) -> str:
    """Why an item waits or stopped: a status code (identity, promotion, page class) in
    words; a reason the rules wrote as a sentence without its raw confidence number
    ("value read by OCR with low confidence (0.33)" -> "... with low confidence")."""
    if code in TERMS or (isinstance(code, str) and re.fullmatch(r"[a-z_]+", code or "")):
        return plain(code)
    return _RAW_CONFIDENCE.sub("", str(code)) if code not in (None, "") else "—"


def patient_match_title(scope: str | None) -> str:
    """A review item on a patient match: "Is page 3 this patient's?" / "Is this document this patient's?"."""
    return f"Is {scope} this patient's?" if scope else "Is this document this patient's?"


def confidence_words(x: float | None) -> str:
    """0.93 -> "read with high confidence"; None -> "confidence not stated"."""
    if x is None:
        return "confidence not stated"
    for floor, words in CONFIDENCE_BANDS:
        if float(x) >= floor:
            return words
    return CONFIDENCE_BANDS[-1][1]


def document_names(ids: Iterable[Any], names: Mapping[Any, str]) -> str:
    """Document ids as their file names ("lab.pdf, fax.pdf"); an id whose name is not
    known reads as "a deleted document", never as a bare number."""
    out: list[str] = []
    for i in ids:
        name = names.get(i)
        text = name if name else "a deleted document"
        if text not in out:
            out.append(text)
    return ", ".join(out) if out else "—"


def stage(name: str | None, kind: str | None = None) -> str:
    """A pipeline stage in words: ("normalize", "document job") -> "opening the file (reading a document)"."""
    words = STAGES.get(name or "", plain(name))
    return f"{words} ({STAGE_KIND.get(kind or '', plain(kind))})" if kind else words


def hl7_place(segment: str, number: str | int, field: str | int | None = None, label: str | None = None) -> str:
    """("OBX", 1, 5) -> "result 1, value"; with a label -> "result 1 (Potassium)"."""
    words = f"{HL7_SEGMENT.get(segment, 'segment ' + segment)} {number}"
    if label:
        return f"{words} ({label})"
    if field:
        return f"{words}, {HL7_FIELD.get((segment, int(field)), f'item {field}')}"
    return words


def details_for_support(rows: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
    """The internal words behind what the page says, folded away for those who need them."""
    items = list(rows.items()) if isinstance(rows, Mapping) else list(rows)
    items = [(k, v) for k, v in items if v not in (None, "", [], {})]
    if not items:
        return
    with st.expander("Details for support", icon=":material/info:"):
        # Code spans show their text literally: document text cannot turn into Markdown.
        st.markdown("  \n".join(f"{k}: `{str(v).replace('`', '')}`" for k, v in items))


# --- a document's outcome (core/services/review/outcome.py) --------------------------------
OUTCOME_STATE = {
    "waiting": "waiting to be read", "reading": "being read now", "failed": "could not be read",
    "stored_only": "stored only (not read)", "deleted": "deleted",
    "other_patient": "held: names another patient", "match_unclear": "held: patient match needs review",
    "not_this_patient": "rejected: not this patient",
}
# How loud each outcome is said: an error box, a warning, a success.
OUTCOME_LEVEL = {"failed": "error", "other_patient": "error", "not_this_patient": "warning",
                 "match_unclear": "warning", "waiting": "info", "reading": "info", "stored_only": "info",
                 "deleted": "info"}


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _outcome(o: Any) -> dict[str, Any]:
    return o.to_dict() if hasattr(o, "to_dict") else dict(o)


def outcome_problems(o: Any) -> list[str]:
    """What in a read document waits for a person, most pressing first."""
    o = _outcome(o)
    out = [f"{p} names another patient" for p in o.get("other_patient_parts") or ()]
    if o.get("conflicts"):
        out.append(_count(o["conflicts"], "conflict with the chart", "conflicts with the chart"))
    if o.get("need_review"):
        out.append(_count(o["need_review"], "needs review", "need review"))
    if o.get("unread"):
        out.append(_unread(o["unread"]))
    return out


def _unread(n: int) -> str:
    return _count(n, "result was not read", "results were not read")


def outcome_words(o: Any) -> str:
    """"held: names another patient", "4 conflicts with the chart · 3 need review · 10
    added to the chart", "read, 10 added to the chart", "read, nothing found"."""
    o = _outcome(o)
    if o["state"] in OUTCOME_STATE:  # held, failed, waiting: said first; unread results said too
        return OUTCOME_STATE[o["state"]] + (f" · {_unread(o['unread'])}" if o.get("unread") else "")
    done = []
    if o.get("added"):
        done.append(f"{o['added']} added to the chart")
    if o.get("kept_with_document"):
        done.append(f"{o['kept_with_document']} kept with the document")
    if o.get("held"):
        done.append(f"{o['held']} on hold")
    problems = outcome_problems(o)
    if problems:
        return " · ".join(problems + done)
    return "read, " + (" · ".join(done) if done else "nothing found")


def outcome_level(o: Any) -> str:
    """"error", "warning", "success" or "info": how loud the outcome is said."""
    o = _outcome(o)
    if o["state"] in OUTCOME_LEVEL:
        return OUTCOME_LEVEL[o["state"]]
    if o.get("other_patient_parts"):
        return "error"
    if outcome_problems(o) or not (o.get("added") or o.get("kept_with_document") or o.get("held")):
        return "warning"
    return "success"
