"""What every rubric family shares: the verdict a rubric returns and the ways the
rubrics read an observation (which facts count, which document a citation points at,
the citations of an answer)."""

from __future__ import annotations

import re
from typing import Any

Verdict = tuple[bool, str]
SUPPORTING = ("promoted", "already_exists", "duplicate_skipped")
TRUSTED = ("identity_verified", "identity_review_approved")
ANSWER_SECTIONS = ("patient_findings", "needs_review", "guideline_evidence", "missing")


def folded_text(text: Any) -> str:
    return " ".join(str(text or "").split()).casefold()


def words_of(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.casefold())


def verdict_from(problems: list[str], ok: str, limit: int = 3) -> Verdict:
    if not problems:
        return True, ok
    more = f" (and {len(problems) - limit} more)" if len(problems) > limit else ""
    return False, "; ".join(problems[:limit]) + more


def is_counted(fact: dict[str, Any]) -> bool:
    """A fact the workbench treats as true: active or supporting a chart row."""
    return bool(fact.get("active")) or fact.get("promotion_status") in SUPPORTING


def cited_document_id(citation: dict[str, Any]) -> int | None:
    sid = str(citation.get("source_id") or "")
    return int(sid.split(":", 1)[1]) if sid.startswith("documents:") and sid.split(":", 1)[1].isdigit() else None


def answer_citations(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for s in ANSWER_SECTIONS for item in payload["sections"].get(s, []) for c in item.get("citations", [])]
