"""A golden case's ``expect`` block as rows a reviewer reads: what is expected, of
what, in words (pure).

Every key the case format knows has a heading (``SECTION_LABELS``); a key it does not
know still reads, its name in words. Nothing is dropped: a value the rules below do not
spell out is written compactly as it is.
"""

from __future__ import annotations

import json
from typing import Any

SECTION_LABELS: dict[str, str] = {
    "documents": "Document", "facts": "Fact found", "no_facts": "Fact not found",
    "fact_counts": "Number of facts", "needs_review": "Held for review", "document_facts": "Kept as a document fact",
    "chart": "On the chart", "chart_absent": "Not on the chart", "chart_counts": "Chart rows",
    "promotions": "Chart outcome", "answers": "Answer", "step_errors": "Step ends in an error",
    "alerts": "Chart alert", "no_alerts": "No chart alert", "briefs": "Patient brief", "fhir_exports": "FHIR export",
}
# Keys of an expectation that name what it is about rather than what is expected.
_SUBJECT_KEYS = ("step", "document", "patient", "rule")
_KEY_WORDS: dict[str, str] = {
    "contains": "says", "not_contains": "does not say", "text_contains": "text says", "quote_contains": "quote says",
    "sections_nonempty": "has items under", "sections_empty": "has nothing under", "cites_documents": "cites",
    "not_cites_documents": "does not cite", "missing_contains": "reports missing", "job_status": "job",
    "promotion_status": "chart outcome", "fact_type": "kind", "where": "with", "refused": "refused",
    "disposition": "handled as",
}


def _words(key: str) -> str:
    return _KEY_WORDS.get(key) or key.replace("_", " ")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        # A code ("succeeded", "identity_verified") reads as words; anything else is quoted as written.
        return value.replace("_", " ") if value.isidentifier() and value.islower() else f"“{value}”"
    if isinstance(value, list):
        if len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return f"{value[0]} to {value[1]}"
        return ", ".join(_value(v) for v in value) or "none"
    if isinstance(value, dict):
        return ", ".join(f"{k.replace('_', ' ')} {_value(v)}" for k, v in value.items()) or "nothing"
    if value is None:
        return "none"
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, (int, float)) else str(value)


def _phrase(spec: dict[str, Any]) -> str:
    parts = [f"{_words(k)}: {_value(v)}" for k, v in spec.items() if k not in _SUBJECT_KEYS]
    return "; ".join(parts) or "—"


def _subject(spec: dict[str, Any]) -> str:
    named = [f"step {spec['step']}" if k == "step" else _value(spec[k]) for k in _SUBJECT_KEYS if k in spec]
    return " · ".join(named) or "—"


def expectation_rows(expected: dict[str, Any] | None) -> list[dict[str, str]]:
    """``{"Expected": heading, "Of": subject, "What": in words}`` per expectation."""
    rows: list[dict[str, str]] = []
    for key, value in (expected or {}).items():
        heading = SECTION_LABELS.get(key) or key.replace("_", " ").capitalize()
        if isinstance(value, list):
            for spec in value:
                if isinstance(spec, dict):
                    rows.append({"Expected": heading, "Of": _subject(spec), "What": _phrase(spec)})
                else:
                    rows.append({"Expected": heading, "Of": "—", "What": _value(spec)})
        elif isinstance(value, dict):
            for name, spec in value.items():
                if key == "step_errors":
                    rows.append({"Expected": heading, "Of": f"step {name}", "What": _value(spec)})
                elif isinstance(spec, dict) and key in ("chart", "chart_absent"):
                    for section, entries in spec.items():
                        for entry in entries if isinstance(entries, list) else [entries]:
                            rows.append({"Expected": heading, "Of": f"{name} · {section.replace('_', ' ')}",
                                         "What": _value(entry)})
                else:
                    rows.append({"Expected": heading, "Of": str(name),
                                 "What": _phrase(spec) if isinstance(spec, dict) else _value(spec)})
        else:
            rows.append({"Expected": heading, "Of": "—", "What": _value(value)})
    return rows
