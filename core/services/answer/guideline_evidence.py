"""Guideline evidence for an answer: one search per topic the question names, or per
abnormal finding of an attention question, and a missing line for every finding no
passage cleared the threshold for."""

from __future__ import annotations

import re
import time
from typing import Any

from domain.models import Citation, EvidenceItem
from domain.policy.answers.lab_series import LabSeries, guide_key
from domain.policy.questions.intent import Intent, ParsedQuestion
from domain.policy.answers.relevance import guidance_hint, guidance_key
from domain.policy.answers.supervisor import RoutePlan
from domain.policy.questions.topics import TOPIC_BY_NAME
from core.services.answer.evidence_items import EvidenceBundle
from core.services.workbench import Workbench

MAX_GUIDELINE_SEARCHES = 6  # one search per topic (or per test without a topic vocabulary)


def _guideline_item(hit: dict[str, Any]) -> EvidenceItem:
    sentences = re.split(r"(?<=[.!?])\s+", hit["text"].strip())
    summary = " ".join(sentences[:2])
    return EvidenceItem(
        evidence_id=f"guideline:{hit['chunk_id']}", kind="guideline", text=f"{hit['source_title']} — "
        f"{hit['section']}: {summary}", structured={"chunk_id": hit["chunk_id"], "section": hit["section"],
                                                   "source_title": hit["source_title"]},
        citations=[Citation.model_validate(hit["citation"])], score=hit["score"],
    )


def _guideline_queries(question: ParsedQuestion, plan: RoutePlan,
                       bundle: EvidenceBundle) -> list[tuple[str | None, str]]:
    """One query per topic the question names (its words, label and hint), then, for
    attention questions, one per abnormal finding's topic — or per test when the topic
    has no guideline vocabulary ("Potassium critical high")."""
    queries: dict[str, str] = {}
    for topic in question.topics:
        t = TOPIC_BY_NAME[topic]
        if t.guideline_hint:
            queries[topic] = f"{question.text} {t.label} {t.guideline_hint}"
    if plan.intent is Intent.ATTENTION:
        for s in bundle.attention:
            key = series_guide_key(s)
            if key in queries:
                continue
            base, flag = guide_key(s), s.latest.structured.get("abnormal_flag")
            if base.startswith("test:"):
                queries[key] = f"{s.test_name} {str(flag or 'abnormal').replace('_', ' ')}"
            else:
                queries[key] = f"{TOPIC_BY_NAME[base].label} {guidance_hint(base, flag)}"
        # An attention question with nothing abnormal has nothing to hold against guidance.
        return list(queries.items())
    return list(queries.items()) or [(None, question.text)]


def add_guideline_evidence(wb: Workbench, question: ParsedQuestion, plan: RoutePlan, bundle: EvidenceBundle,
                        request_id: str | None) -> None:
    from core.services.answer.guidelines import search_guidelines

    queries = _guideline_queries(question, plan, bundle)
    if not queries:
        return
    start = time.perf_counter()
    seen: set[str] = set()
    for n, (key, query) in enumerate(queries):
        items = []
        if n < MAX_GUIDELINE_SEARCHES:
            found = search_guidelines(wb, query.strip(), k=3, request_id=request_id)
            items = [_guideline_item(h) for h in found["results"]]
            # The reranker's share is reported as its own answer stage (``rerank``).
            bundle.timings_ms["rerank"] = round(
                bundle.timings_ms.get("rerank", 0.0) + float((found.get("timings_ms") or {}).get("rerank", 0.0)), 3)
        if key:
            bundle.guidelines_by_key[key] = items
        for item in items:
            if item.evidence_id not in seen:
                seen.add(item.evidence_id)
                bundle.guidelines.append(item)
    bundle.guideline_searched = True
    unguided = _unguided(bundle)
    bundle.unguided = list(unguided)
    if unguided:  # one line for all of them, not one per test
        which = []
        for key, names in unguided.items():
            topic = key.split(":")[0]
            label = TOPIC_BY_NAME[topic].label if topic in TOPIC_BY_NAME else names[0]
            which.append(f"{label} ({', '.join(names)})" if [label] != names else label)
        these = "these findings are" if len(which) > 1 else "the finding is"
        bundle.missing.append((None, f"No guideline evidence was retrieved for {'; '.join(which)}: "
                                     f"{these} listed without guidance."))
    bundle.timings_ms["guidelines"] = round((time.perf_counter() - start) * 1000, 2)


def _unguided(bundle: EvidenceBundle) -> dict[str, list[str]]:
    """Attention findings whose topic (or test) got no guideline passage past the threshold."""
    out: dict[str, list[str]] = {}
    for s in bundle.attention:
        key = series_guide_key(s)
        if not bundle.guidelines_by_key.get(key):
            out.setdefault(key, []).append(s.test_name)
    return out


def series_guide_key(series: LabSeries) -> str:
    """The guidance an attention line shares: per topic (or test), and a low result of a
    topic whose low results have their own guidance apart (``relevance.guidance_key``)."""
    return guidance_key(guide_key(series), series.latest.structured.get("abnormal_flag"))
