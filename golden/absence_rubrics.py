"""The absence rubric: an answer that says something was not found is checked against
the record (issue 24).

Every line of an answer's Missing section that claims an absence ("No “penicillin”
found …", "No allergies found …") must be backed by the search the workbench recorded
for it (the payload's ``absence_checks``), and the record must not contradict it: every
fact of the patient's documents live when the question was asked (any certainty,
promotion or identity state) that names what the search looked for must be shown in
the answer, either cited or named by its document ("document 12, page 1"). The facts
are read from the database as the run left them, and the match is written here afresh
(a word that starts where the searched word starts, case folded), not borrowed from
the code it checks.
"""

from __future__ import annotations

import re
from typing import Any

from golden.observation import Observation
from golden.verdicts import Verdict, answer_citations, cited_document_id, verdict_from

# A line that claims the record holds nothing of something ("No guideline …" is about
# the corpus, not the record).
_CLAIM = re.compile(r"^No (?!guideline)", re.I)
# The record topics whose entries are easy to name: a claim of no such entry at all is
# contradicted by any entry of that kind that names a subject.
_TOPIC_FACT_TYPES = {"allergies": ("allergy", "substance"), "medications": ("medication", "name"),
                     "problems": ("problem", "description")}


def _names(word: str, text: str) -> bool:
    return re.search(r"(?<![a-z0-9])" + re.escape(word.casefold()), text.casefold()) is not None


def _live_facts(obs: Observation, patient: str, step: int) -> list[dict[str, Any]]:
    """The facts of ``patient``'s documents that were live when step ``step`` ran."""
    out = []
    for name, upload in obs.uploads.items():
        if upload.patient != patient or upload.step > step:
            continue
        deleted_at = obs.deleted.get(name)
        if deleted_at is not None and deleted_at < step:
            continue
        for f in obs.raw_facts.get(name, []):
            if f.get("retracted_at") is None or deleted_at is not None:
                out.append(f)
    return out


def _quote(f: dict[str, Any]) -> str:
    c = f.get("citation") or {}
    return str(c.get("quote_or_value") or "") if isinstance(c, dict) else ""


def _matches(check: dict[str, Any], f: dict[str, Any]) -> str | None:
    text = f"{f.get('fact_text') or ''} {_quote(f)}"
    for word in check.get("terms") or []:
        if _names(word, text):
            return word
    if not check.get("terms") and not check.get("analytes") and check.get("topic") in _TOPIC_FACT_TYPES:
        fact_type, subject = _TOPIC_FACT_TYPES[check["topic"]]
        value = f.get("structured_value") or {}
        if f.get("fact_type") == fact_type and str(value.get(subject) or "").strip():
            return check["topic"]
    return None


def _shown(payload: dict[str, Any], f: dict[str, Any]) -> bool:
    """Cited by the answer, or named by its document in the answer's text."""
    field = (f.get("citation") or {}).get("field_or_chunk_id")
    for c in answer_citations(payload):
        if cited_document_id(c) == f["document_id"] and c.get("field_or_chunk_id") == field:
            return True
    return f"document {f['document_id']}" in payload.get("text", "")


def absence_checked(obs: Observation) -> Verdict:
    problems: list[str] = []
    claims = 0
    for a in obs.answers:
        payload = a["payload"]
        checks = payload.get("absence_checks") or []
        for item in payload["sections"].get("missing", []):
            text = item.get("text", "")
            if item.get("citations") or not _CLAIM.match(text):
                continue
            claims += 1
            check = next((c for c in checks if text.startswith(c.get("claim", "\0"))), None)
            if check is None:
                problems.append(f"step {a['step']}: “{text[:60]}” has no recorded search")
                continue
            for f in _live_facts(obs, a["patient"], a["step"]):
                hit = _matches(check, f)
                if hit is not None and not _shown(payload, f):
                    problems.append(f"step {a['step']}: “{text[:60]}” while fact {f['id']} "
                                    f"({f.get('fact_type')}, {f.get('certainty')}) names “{hit}” and is not shown")
    return verdict_from(problems, f"{claims} absence claims, each backed by its search and not contradicted"
                        if claims else "no answer claims an absence")
