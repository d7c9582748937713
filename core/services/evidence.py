"""The evidence retriever: one boundary that returns everything an answer may cite.

- chart facts: active chart rows, each cited to the document promotion behind it
  (or to the chart row itself when it was entered by hand);
- document facts: active facts of identity-verified or approved documents;
- needs-review findings: visible, cited, never used as verified evidence;
- guideline chunks, only when the supervisor asked for them;
- a missing signal for every requested topic with no patient evidence.
Deleted, retracted, quarantined and other patients' content never comes back:
the queries in ``storage.evidence_repo`` enforce it, and vector hits are re-checked
against them.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from core.models import Citation, EvidenceItem
from core.policy.questions import CLINICAL_WORDS, TOPIC_BY_NAME, TOPICS, Intent, ParsedQuestion, find_topics
from core.policy.supervisor import RoutePlan
from core.services.workbench import Workbench
from storage import evidence_repo

CHART_TABLES = {"lab_result": "chart_lab_results", "allergy": "chart_allergies", "medication": "chart_medications",
                "problem": "chart_problems"}
_REPRESENTED_IN_CHART = {"promoted", "already_exists", "duplicate_skipped"}
_ABNORMAL = {"high", "low", "critical_high", "critical_low", "abnormal"}
# Which review findings bear on a question about a topic (besides the topic itself).
BEARS_ON = {
    "medications": {"allergies", "medications", "pregnancy"},
    "allergies": {"allergies", "medications"},
    "problems": {"problems", "chief_concern"},
    "chief_concern": {"chief_concern", "problems", "pregnancy"},
    "pregnancy": {"pregnancy", "medications"},
}
_RED_FLAGS = re.compile(r"chest pain|suicid|self-harm|overdose|stroke|faint|syncope|shortness of breath|"
                        r"red-flag", re.I)
PER_TOPIC_LIMIT = 12
PRIMARY_TOPIC = {"allergy": "allergies", "medication": "medications", "problem": "problems",
                 "chief_concern": "chief_concern", "family_history": "family_history", "referral": "referral",
                 "demographic": "demographics", "preference": "preferences"}


@dataclass
class EvidenceBundle:
    patient: list[EvidenceItem] = field(default_factory=list)
    review: list[EvidenceItem] = field(default_factory=list)
    guidelines: list[EvidenceItem] = field(default_factory=list)
    guidelines_by_topic: dict[str, list[EvidenceItem]] = field(default_factory=dict)
    missing: list[tuple[str | None, str]] = field(default_factory=list)
    guideline_searched: bool = False
    guideline_not_found: bool = False
    timings_ms: dict[str, float] = field(default_factory=dict)

    def all_items(self) -> list[EvidenceItem]:
        return [*self.patient, *self.review, *self.guidelines]


# ------------------------------------------------------------------ item building
def _lab_text(v: dict[str, Any]) -> str:
    parts = [f"{v.get('test_name')} {v.get('value')}" + (f" {v['unit']}" if v.get("unit") else "")]
    details = []
    if v.get("reference_range"):
        details.append(f"reference {v['reference_range']}")
    flag = v.get("abnormal_flag")
    if flag and flag != "unknown":
        details.append(f"flagged {flag.replace('_', ' ')}" + (" (derived from the range)" if v.get("flag_derived") else ""))
    if details:
        parts.append("(" + "; ".join(details) + ")")
    parts.append(f"collected {v['collection_date']}" if v.get("collection_date") else "collection date not stated")
    return ", ".join([" ".join(parts[:-1]), parts[-1]]) if len(parts) > 1 else parts[0]


def describe(fact_type: str, v: dict[str, Any], fallback: str) -> str:
    """A sentence built from stored structured values, exactly as stored."""
    if fact_type == "lab_result" and v.get("test_name"):
        return _lab_text(v)
    if fact_type == "allergy" and v.get("substance"):
        return f"Allergy: {v['substance']}" + (f" (reaction: {v['reaction']})" if v.get("reaction") else "")
    if fact_type == "medication" and v.get("name"):
        extra = " ".join(str(v[k]) for k in ("dose", "frequency") if v.get(k))
        return f"Medication: {v['name']}" + (f" {extra}" if extra else "")
    if fact_type == "problem" and v.get("description"):
        return f"Problem: {v['description']}" + (f" ({v['code']})" if v.get("code") else "")
    return fallback


def topics_of(fact_type: str, value: dict[str, Any], text: str) -> set[str]:
    found: set[str] = set()
    if fact_type == "lab_result":
        name = str(value.get("test_name") or "").lower()
        for topic in TOPICS:
            if topic.lab_patterns and any(re.search(p, name) for p in topic.lab_patterns):
                found.add(topic.name)
    else:
        if fact_type in PRIMARY_TOPIC:
            found.add(PRIMARY_TOPIC[fact_type])
        if fact_type in ("problem", "other", "chief_concern", "referral", "family_history"):
            # "History: hypertension" also bears on blood pressure questions.
            found |= set(find_topics(text)) - {"labs", "problems", "family_history", "chief_concern", "referral"}
    if re.search(r"pregnan|\blmp\b|menstrual", text, re.I):
        found.add("pregnancy")
    return found


_TOPIC_ORDER = {t.name: n for n, t in enumerate(TOPICS)}


def primary_topic(topics: set[str]) -> str | None:
    """The most specific topic of an item: vocabulary order lists specific topics
    (A1c, LDL, thyroid…) before broad ones (cholesterol, labs)."""
    return min(topics, key=lambda t: _TOPIC_ORDER.get(t, len(_TOPIC_ORDER))) if topics else None


def _chart_item(table: str, fact_type: str, row: dict[str, Any]) -> EvidenceItem:
    value = {k: (str(v) if k == "collection_date" and v is not None else v) for k, v in row.items()}
    text = describe(fact_type, value, str(row.get("note") or ""))
    if row.get("promotion_citation"):
        citations = [Citation.model_validate(row["promotion_citation"])]
    else:
        subject = str(value.get({"lab_result": "value"}.get(fact_type, "id")) or row["id"])
        citations = [Citation(source_type="chart", source_id=f"{table}:{row['id']}", page_or_section=table,
                              field_or_chunk_id=f"{table}.{row['id']}", quote_or_value=text or subject,
                              verified=True)]
    return EvidenceItem(
        evidence_id=f"{table}:{row['id']}", kind="chart", fact_type=fact_type, text=text, structured=value,
        citations=citations, abnormal=str(value.get("abnormal_flag") or "") in _ABNORMAL,
        date=value.get("collection_date"),
    )


def _fact_item(fact: dict[str, Any], kind: str) -> EvidenceItem:
    value = fact["structured_value"] or {}
    text = describe(fact["fact_type"], value, fact["fact_text"])
    if kind == "needs_review":
        reason = fact.get("review_reason") or (
            "conflicts with the chart" if fact.get("promotion_status") == "conflict_needs_review" else "uncertain")
        text = f"{text} — needs review: {reason}"
    return EvidenceItem(
        evidence_id=f"fact:{fact['id']}", kind=kind, fact_type=fact["fact_type"], text=text, structured=value,
        citations=[Citation.model_validate(fact["citation"])],
        abnormal=str(value.get("abnormal_flag") or "") in _ABNORMAL, date=value.get("collection_date"),
    )


# ------------------------------------------------------------------ selection
def _relevant(item_topics: set[str], question: ParsedQuestion) -> bool:
    if not question.topics:
        return True
    wanted = set(question.topics)
    if "labs" in wanted and item_topics & {t.name for t in TOPICS if t.lab_patterns}:
        return True
    return bool(item_topics & wanted)


def _review_bears_on(item: EvidenceItem, item_topics: set[str], question: ParsedQuestion) -> bool:
    """Clinically relevant review findings appear whenever they bear on the question;
    low-value ones (preferences, demographics) only when asked for."""
    text = item.text + " " + " ".join(c.quote_or_value for c in item.citations)
    if _RED_FLAGS.search(text):
        return True  # safety first: a red flag bears on every answer
    if _relevant(item_topics, question) and question.topics:
        return True
    clinical = item.fact_type in ("allergy", "medication", "problem", "chief_concern") or item.abnormal or \
        bool(CLINICAL_WORDS.search(text)) or "pregnancy" in item_topics
    if not clinical:
        return False
    if question.intent is Intent.ATTENTION:
        return True
    if not question.topics:
        return False  # an unrecognised question: only red flags and vector-matched findings
    bears = set().union(*(BEARS_ON.get(t, {t}) for t in question.topics))
    return bool(item_topics & bears)


def _sort_key(item: EvidenceItem) -> tuple:
    return (item.date or "", item.evidence_id)


def retrieve_evidence(wb: Workbench, patient_id: int, question: ParsedQuestion, plan: RoutePlan,
                      *, request_id: str | None = None) -> EvidenceBundle:
    bundle = EvidenceBundle()
    start = time.perf_counter()
    with wb.db.cursor() as cur:
        charts = {fact_type: evidence_repo.chart_rows(cur, table, patient_id)
                  for fact_type, table in CHART_TABLES.items()}
        facts = evidence_repo.usable_facts(cur, patient_id)
    bundle.timings_ms["database"] = round((time.perf_counter() - start) * 1000, 2)

    candidates: list[tuple[EvidenceItem, set[str]]] = []
    for fact_type, rows in charts.items():
        for row in rows:
            item = _chart_item(CHART_TABLES[fact_type], fact_type, row)
            candidates.append((item, topics_of(fact_type, item.structured, item.text)))
    reviews: list[tuple[EvidenceItem, set[str]]] = []
    for fact in facts:
        needs_review = fact["certainty"] == "needs_review" or fact["promotion_status"] == "conflict_needs_review"
        if needs_review:
            item = _fact_item(fact, "needs_review")
            reviews.append((item, topics_of(fact["fact_type"], item.structured, item.text)))
        elif fact["active"] and fact["promotion_status"] not in _REPRESENTED_IN_CHART:
            item = _fact_item(fact, "document_fact")
            candidates.append((item, topics_of(fact["fact_type"], item.structured, item.text)))

    if question.topics:
        selected = [(i, t) for i, t in candidates if _relevant(t, question)]
    elif plan.intent is Intent.ATTENTION:
        selected = [(i, t) for i, t in candidates if i.abnormal or i.fact_type in ("allergy", "medication", "problem")]
    else:
        selected = _vector_selection(wb, patient_id, question, candidates, {f["id"]: f for f in facts}, bundle)
    per_topic: dict[str, int] = {}
    # Newest first; for attention questions the abnormal findings lead.
    ordered = sorted(selected, key=lambda p: _sort_key(p[0]), reverse=True)
    if plan.intent is Intent.ATTENTION:
        ordered.sort(key=lambda p: not p[0].abnormal)
    covered: set[str] = set()
    for item, item_topics in ordered:
        key = primary_topic(item_topics) or "other"
        per_topic[key] = per_topic.get(key, 0) + 1
        if per_topic[key] <= PER_TOPIC_LIMIT:
            item.topic = key
            bundle.patient.append(item)
            covered |= item_topics
    matched = {i.evidence_id for i, _ in selected}
    reviewed: set[str] = set()
    for item, item_topics in reviews:
        item.topic = primary_topic(item_topics)
        if _review_bears_on(item, item_topics, question) or item.evidence_id in matched:
            bundle.review.append(item)
            reviewed |= item_topics

    for topic in question.topics:
        if topic in covered or topic == "screening" and plan.need_guidelines:
            continue
        if topic == "labs" and any(i.fact_type == "lab_result" for i in bundle.patient):
            continue
        label = TOPIC_BY_NAME[topic].label
        note = " (only unverified mentions; see Needs Human Review)" if topic in reviewed else ""
        bundle.missing.append((topic, f"No {label} found in the chart or in this patient's active documents{note}."))
    if not question.topics and not bundle.patient and not bundle.review:
        bundle.missing.append((None, "No patient evidence matching this question was found."))

    if plan.need_guidelines:
        topics = [t for t in question.topics if TOPIC_BY_NAME[t].guideline_hint]
        if plan.intent is Intent.ATTENTION:
            # What deserves attention is judged against guidance on the abnormal findings.
            topics += sorted({i.topic for i in bundle.patient if i.abnormal and i.topic in TOPIC_BY_NAME
                              and TOPIC_BY_NAME[i.topic].guideline_hint} - set(topics))
        # An attention question with nothing abnormal has nothing to hold against guidance.
        if topics or plan.intent is not Intent.ATTENTION:
            _add_guidelines(wb, question, topics[:4], bundle, request_id)
    bundle.timings_ms["total"] = round((time.perf_counter() - start) * 1000, 2)
    return bundle


def _vector_selection(wb: Workbench, patient_id: int, question: ParsedQuestion,
                      candidates: list[tuple[EvidenceItem, set[str]]], usable: dict[int, dict[str, Any]],
                      bundle: EvidenceBundle):
    """No recognised topic: ask the patient-fact vectors, then keep only hits that are
    among this request's usable facts (a stale vector can never surface a retracted fact)."""
    if wb.fact_index is None:
        return []
    start = time.perf_counter()
    hits = wb.fact_index.search(patient_id, question.text, k=8)
    bundle.timings_ms["vectors"] = round((time.perf_counter() - start) * 1000, 2)
    live = [usable[h.fact_id] for h in hits if h.score >= 0.35 and h.fact_id in usable]
    wanted = {f"fact:{f['id']}" for f in live}
    # A promoted fact is represented by its chart row, which cites the same source location.
    locations = {(f["citation"]["source_id"], f["citation"]["field_or_chunk_id"]) for f in live}
    return [(i, t) for i, t in candidates if i.evidence_id in wanted or (
        i.kind == "chart" and (i.citations[0].source_id, i.citations[0].field_or_chunk_id) in locations)]


def _guideline_item(hit: dict[str, Any]) -> EvidenceItem:
    sentences = re.split(r"(?<=[.!?])\s+", hit["text"].strip())
    summary = " ".join(sentences[:2])
    return EvidenceItem(
        evidence_id=f"guideline:{hit['chunk_id']}", kind="guideline", text=f"{hit['source_title']} — "
        f"{hit['section']}: {summary}", structured={"chunk_id": hit["chunk_id"], "section": hit["section"],
                                                   "source_title": hit["source_title"]},
        citations=[Citation.model_validate(hit["citation"])], score=hit["score"],
    )


def _add_guidelines(wb: Workbench, question: ParsedQuestion, topics: list[str], bundle: EvidenceBundle,
                    request_id: str | None) -> None:
    """One search per topic (its label and hint words), or the question itself when
    no topic has guideline vocabulary."""
    from core.services.guidelines import search_guidelines

    start = time.perf_counter()
    queries: list[tuple[str | None, str]] = []
    for topic in topics:
        t = TOPIC_BY_NAME[topic]
        asked = question.text if topic in question.topics else ""
        queries.append((topic, f"{asked} {t.label} {t.guideline_hint}".strip()))
    if not queries:
        queries.append((None, question.text))
    seen: set[str] = set()
    for topic, query in queries:
        result = search_guidelines(wb, query, k=3, request_id=request_id)
        items = [_guideline_item(h) for h in result["results"]]
        if topic:
            bundle.guidelines_by_topic[topic] = items
        for item in items:
            if item.evidence_id not in seen:
                seen.add(item.evidence_id)
                bundle.guidelines.append(item)
    bundle.guideline_searched = True
    bundle.guideline_not_found = not bundle.guidelines
    bundle.timings_ms["guidelines"] = round((time.perf_counter() - start) * 1000, 2)
