"""The evidence an answer may cite, as loaded: candidates built from chart rows and
document facts, and the bundle the retriever fills.

A chart row is cited to the document promotion behind it (or to the chart row itself
when it was entered by hand); a document fact to its own citation. Lines of one coded
text report share the report's kind of finding. Selecting what a question needs is
``core.services.answer.evidence``; guideline passages, ``guideline_evidence``.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from domain.models import Citation, ClinicalContext, EvidenceItem
from domain.policy.facts.critical_limits import critical_basis_text
from domain.policy.facts.chart_rules import CHART_TABLES, SUPPORTING_OUTCOMES, is_abnormal, needs_review
from domain.policy.answers.lab_series import LabSeries
from domain.policy.facts.lab_vocabulary import susceptibility_words
from domain.policy.facts.medication_status import status_words
from domain.policy.facts.vital_signs import VITAL_SIGNS
from domain.policy.answers.relevance import context_of, context_tags, safety_finding, with_context
from domain.policy.facts.fingerprints import clinical_content_fingerprint
from domain.policy.questions.topics import primary_topic, report_furniture, report_kinds
from core.services.answer.absence import AbsenceCheck, AbsenceClaim
from core.services.answer.topic_memo import evidence_topics
from core.services.workbench import Workbench
from storage import evidence_repo, record_version

@dataclass
class Candidate:
    item: EvidenceItem
    topics: set[str]
    context: ClinicalContext | None = None
    source_text: str = ""  # what the document said, for red-flag and mention checks
    # Worked out on first use and kept with the candidate (the candidates of an answer are
    # kept per record version, so once per version, not per question): ``merge_key_of``, ``is_safety_finding``.
    merge_key: tuple | None = None
    safety: bool | None = None


@dataclass
class EvidenceBundle:
    patient: list[EvidenceItem] = field(default_factory=list)  # findings in answer order
    earlier: set[str] = field(default_factory=set)  # look-ups: older results listed after the latest
    attention: list[LabSeries] = field(default_factory=list)  # abnormal / critical series, in answer order
    in_range: list[LabSeries] = field(default_factory=list)  # series whose latest result is in range or unflagged
    list_in_range: bool = False  # the question named these tests: list them instead of counting
    review: list[EvidenceItem] = field(default_factory=list)
    guidelines: list[EvidenceItem] = field(default_factory=list)
    guidelines_by_key: dict[str, list[EvidenceItem]] = field(default_factory=dict)
    missing: list[tuple[str | None, str]] = field(default_factory=list)
    # A condition the record names only as denied, a relative's or hypothetical.
    mentions: list[tuple[str, EvidenceItem]] = field(default_factory=list)
    # Absence lines checked before they are said (``core.services.answer.absence``): the
    # claims, what the searches found that the answer did not show (cited entries with
    # their status; entries held outside the answer, named by place), and the record.
    claims: list[AbsenceClaim] = field(default_factory=list)
    related: list[tuple[str, EvidenceItem]] = field(default_factory=list)
    held_notes: list[str] = field(default_factory=list)
    absence_checks: list[AbsenceCheck] = field(default_factory=list)
    unguided: list[str] = field(default_factory=list)  # attention keys no guideline passage cleared the threshold for
    alerts: list[tuple[dict, list[EvidenceItem]]] = field(default_factory=list)  # chart alerts, with what they cite
    guideline_searched: bool = False
    # database, vectors, guidelines (searches included), rerank (the guideline reranker's
    # share of those searches), total
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def guideline_not_found(self) -> bool:
        return self.guideline_searched and not self.guidelines

    def all_items(self) -> list[EvidenceItem]:
        series = [i for s in [*self.attention, *self.in_range] for i in s.items]
        return [*self.patient, *series, *self.review, *self.guidelines, *(i for _, i in self.mentions),
                *(i for _, cited in self.alerts for i in cited), *(i for _, i in self.related)]

    def claim(self, topic: str | None, text: str, *, terms: tuple[str, ...] = (),
              analytes: tuple[str, ...] = ()) -> None:
        """An absence line, to be checked against the whole record before it is said."""
        self.missing.append((topic, text))
        self.claims.append(AbsenceClaim(topic, text, terms, analytes))


# ------------------------------------------------------------------ item building
def _lab_text(v: dict[str, Any]) -> str:
    parts = [f"{v.get('test_name')} {v.get('value')}" + (f" {v['unit']}" if v.get("unit") else "")]
    details = []
    if v.get("reference_range"):
        details.append(f"reference {v['reference_range']}")
    flag = v.get("abnormal_flag")
    if (fared := susceptibility_words(str(v.get("test_name") or ""), v.get("flags_as_printed"))) is not None:
        if fared != str(v.get("value") or "").lower():  # not "Amoxicillin [Susceptibility] resistant (resistant)"
            details.append(fared)  # "Ampicillin [Susceptibility] >=32 ug/mL (resistant)": not merely abnormal
        if v.get("organism"):
            details.append(f"organism {v['organism']}")  # a table with a column per organism
    elif flag and flag != "unknown":
        basis = critical_basis_text(v)  # a critical result says what made it critical
        details.append(f"flagged {flag.replace('_', ' ')}" + (f" ({basis})" if basis else
                                                              " (derived from the range)" if v.get("flag_derived") else ""))
    if details:
        parts.append("(" + "; ".join(details) + ")")
    parts.append(f"collected {v['collection_date']}" if v.get("collection_date") else "collection date not stated")
    return ", ".join([" ".join(parts[:-1]), parts[-1]]) if len(parts) > 1 else parts[0]


def _vital_text(v: dict[str, Any]) -> str:
    sign = VITAL_SIGNS.get(str(v["kind"]))
    name = sign.display.capitalize() if sign else str(v["kind"])
    unit = f" {v['unit']}" if v.get("unit") else ""
    when = f"measured {v['measured_at']}" if v.get("measured_at") else "date not stated"
    return f"{name} {v['value']}{unit}, {when}"


def describe(fact_type: str, v: dict[str, Any], fallback: str) -> str:
    """A sentence built from stored structured values, exactly as stored."""
    if fact_type == "lab_result" and v.get("test_name"):
        return _lab_text(v)
    if fact_type == "allergy" and v.get("substance"):
        return f"Allergy: {v['substance']}" + (f" (reaction: {v['reaction']})" if v.get("reaction") else "")
    if fact_type == "medication" and v.get("name"):
        extra = " ".join(str(v[k]) for k in ("dose", "frequency") if v.get(k))
        # a status printed with it ("STOPPED", "withheld", "increased") is part of what it says
        status = f" ({status_words(str(v['status']))})" if v.get("status") else ""
        return f"Medication: {v['name']}" + (f" {extra}" if extra else "") + status
    if fact_type == "vital_sign" and v.get("kind") and v.get("value"):
        return _vital_text(v)
    if fact_type == "problem" and v.get("description"):
        return f"Problem: {v['description']}" + (f" ({v['code']})" if v.get("code") else "")
    return fallback


def described(fact_type: str, value: dict[str, Any], fallback: str, context: ClinicalContext | None) -> str:
    """An answer line: the stored values as a sentence (``describe``) and the context
    tags it does not already say."""
    return with_context(describe(fact_type, value, fallback), context, fact_type,
                        status=str(value["status"]) if fact_type == "medication" and value.get("status") else None)


def _date_of(value: dict[str, Any]) -> str | None:
    """The date a finding was taken: a result's collection date, a vital sign's time."""
    return value.get("collection_date") or (str(value["measured_at"]) if value.get("measured_at") else None)


def _chart_candidate(table: str, fact_type: str, row: dict[str, Any],
                     more: list[Citation] | None = None) -> Candidate:
    value = {k: (str(v) if k == "collection_date" and v is not None else v) for k, v in row.items()
             if k not in ("promotion_citation", "fact_context")}
    context = context_of(fact_type, row.get("fact_context"))
    text = described(fact_type, value, str(row.get("note") or ""), context)
    if row.get("promotion_citation"):
        citations = [Citation.model_validate(row["promotion_citation"])]
    else:
        subject = str(value.get({"lab_result": "value", "vital_sign": "value"}.get(fact_type, "id")) or row["id"])
        citations = [Citation(source_type="chart", source_id=f"{table}:{row['id']}", page_or_section=table,
                              field_or_chunk_id=f"{table}.{row['id']}", quote_or_value=text or subject,
                              verified=True)]
    # Every other document that states the same row is cited too: one line, each source.
    citations += [c for c in more or [] if c not in citations]
    item = EvidenceItem(evidence_id=f"{table}:{row['id']}", kind="chart", fact_type=fact_type, text=text,
                        structured=value, citations=citations, abnormal=is_abnormal(value.get("abnormal_flag")),
                        date=_date_of(value))
    source = " ".join([text, *(c.quote_or_value for c in citations)])
    return Candidate(item, evidence_topics(fact_type, value, text, context), context, source)


def _conflict_text(conflict: dict[str, Any] | None, chart_lines: dict[str, str]) -> str:
    """"conflicts with the chart, which holds Medication: metformin 500 mg twice daily
    (from letter.docx, paragraph 4)": the chart row's own answer line (``chart_lines``, by
    evidence id) and the document it came from, not only that there is a conflict; the
    promotion's stored reason only for a row no longer in the chart."""
    if not conflict:
        return "conflicts with the chart"
    holds = chart_lines.get(f"{conflict.get('promoted_table')}:{conflict.get('promoted_record_id')}") \
        or str(conflict.get("conflict_reason") or "").removeprefix("chart already holds ").strip()
    text = "conflicts with the chart" + (f", which holds {holds}" if holds else "")
    source = conflict.get("chart_citation")
    if isinstance(source, dict) and source.get("source_id"):
        page = f", {source['page_or_section']}" if source.get("page_or_section") else ""
        text += f" (from {conflict.get('chart_document') or source['source_id']}{page})"
    elif conflict.get("promoted_table"):
        text += f" (entered in the chart: {conflict['promoted_table']}.{conflict.get('promoted_record_id')})"
    return text


def _fact_candidate(fact: dict[str, Any], evidence_source: str, conflict: dict[str, Any] | None = None,
                    chart_lines: dict[str, str] | None = None) -> Candidate:
    value = fact["structured_value"] or {}
    context = context_of(fact["fact_type"], fact.get("context"))
    text = described(fact["fact_type"], value, fact["fact_text"], context)
    citation = Citation.model_validate(fact["citation"])
    if evidence_source == "needs_review":
        in_conflict = fact.get("promotion_status") == "conflict_needs_review"
        reason = "; ".join(r for r in (fact.get("review_reason"), _conflict_text(conflict, chart_lines or {}) if in_conflict else None)
                           if r) or "uncertain"
        text = f"{text} — needs review: {reason}"
    item = EvidenceItem(evidence_id=f"fact:{fact['id']}", kind=evidence_source, fact_type=fact["fact_type"], text=text,
                        structured=value, citations=[citation], abnormal=is_abnormal(value.get("abnormal_flag")),
                        date=_date_of(value))
    source = f"{fact['fact_text']} {citation.quote_or_value}"
    return Candidate(item, evidence_topics(fact["fact_type"], value, fact["fact_text"], context), context, source)


def load_candidates(wb: Workbench,
                    patient_id: int) -> tuple[list[Candidate], list[Candidate], dict[int, dict[str, Any]]]:
    """The patient's chart rows and usable document facts as candidates: (findings,
    findings held for review, usable facts by id for re-checking vector hits).
    Built once per version of the patient's record (``storage.record_version.kept``) and
    shared: read-only for every caller."""
    return record_version.kept(wb.db, patient_id, "answer.candidates", lambda: _load_candidates(wb, patient_id))


def answer_candidates(wb: Workbench,
                      patient_id: int) -> tuple[list[Candidate], list[Candidate], dict[int, dict[str, Any]]]:
    """``load_candidates`` as an answer uses them: each item carries its primary topic
    (its own copies, so the shared candidates stay as loaded). Kept per record version."""
    def make():
        candidates, reviews, usable = load_candidates(wb, patient_id)
        return _with_topics(candidates), _with_topics(reviews), usable

    return record_version.kept(wb.db, patient_id, "answer.topical_candidates", make)


def _with_topics(candidates: list[Candidate]) -> list[Candidate]:
    out = []
    for c in candidates:
        item = c.item.model_copy(update={"topic": primary_topic(c.topics)})
        out.append(dataclasses.replace(c, item=item, topics=set(c.topics)))
    return out


def merge_key_of(c: Candidate) -> tuple:
    """What makes two statements one finding: same kind, same clinical content
    (``fingerprints``: "BID" and "twice a day" are one regimen) and the same context (a
    denial never merges with a finding). Kept on the candidate (a merged copy keeps it:
    only its citations differ)."""
    if c.merge_key is None:
        item = c.item
        c.merge_key = (item.fact_type, clinical_content_fingerprint(0, item.fact_type or "", item.structured, item.text),
                       tuple(context_tags(c.context, item.fact_type)))
    return c.merge_key


def is_safety_finding(c: Candidate) -> bool:
    """A critical result or a red flag (``relevance.safety_finding``), kept on the candidate."""
    if c.safety is None:
        c.safety = safety_finding(c.item, c.source_text, c.context)
    return c.safety


def _load_candidates(wb: Workbench,
                     patient_id: int) -> tuple[list[Candidate], list[Candidate], dict[int, dict[str, Any]]]:
    with wb.db.cursor() as cur:
        charts = {fact_type: evidence_repo.chart_rows_with_citations(cur, table, patient_id)
                  for fact_type, table in CHART_TABLES.items()}
        facts = evidence_repo.usable_facts(cur, patient_id)
        supporting = evidence_repo.supporting_citations(cur, patient_id)
        conflicts = {c["fact_id"]: c for c in evidence_repo.conflict_details(cur, patient_id)}
    more: dict[tuple[str, int], list[Citation]] = {}
    for s in supporting:
        more.setdefault((s["promoted_table"], s["promoted_record_id"]), []).append(
            Citation.model_validate(s["citation"]))
    candidates = [_chart_candidate(CHART_TABLES[fact_type], fact_type, row, more.get((CHART_TABLES[fact_type], row["id"])))
                  for fact_type, rows in charts.items() for row in rows]
    chart_lines = {c.item.evidence_id: c.item.text for c in candidates}
    reviews: list[Candidate] = []
    for fact in facts:
        if needs_review(fact):
            reviews.append(_fact_candidate(fact, "needs_review", conflicts.get(fact["id"]), chart_lines))
        elif fact["active"] and fact["promotion_status"] not in SUPPORTING_OUTCOMES:
            candidates.append(_fact_candidate(fact, "document_fact"))
    _report_topics([*candidates, *reviews])
    return candidates, reviews, {f["id"]: f for f in facts}


def _report_key(c: Candidate) -> tuple | None:
    """The text report a line belongs to: lines of one coded text observation (HL7 TX/FT
    OBX lines sharing an observation code) of one document."""
    v = c.item.structured
    if c.item.fact_type != "other" or str(v.get("value_type") or "").upper() not in ("TX", "FT") or not v.get("code"):
        return None
    return (c.item.citations[0].source_id, v.get("code"), v.get("observation"), v.get("date"))


def _line_number(c: Candidate) -> tuple[int, str]:
    m = re.search(r"\[(\d+)\]\s*$", c.item.citations[0].field_or_chunk_id or "")
    return (int(m.group(1)) if m else 0, c.item.evidence_id)


def _report_topics(lines: list[Candidate]) -> None:
    """Every finding line of a text report shares the report's kind ("imaging" for a
    chest film report), furniture lines (labels, names, ids, signatures) none of it
    (``domain.policy.questions.topics.report_kinds`` / ``report_furniture``)."""
    reports: dict[tuple, list[Candidate]] = {}
    for c in lines:
        key = _report_key(c)
        if key is not None:
            reports.setdefault(key, []).append(c)
    for report in reports.values():
        report.sort(key=_line_number)
        texts = [str(c.item.structured.get("value") or c.item.text) for c in report]
        report_types = report_kinds(texts)
        if not report_types:
            continue
        for c, furniture in zip(report, report_furniture(texts)):
            if furniture:
                c.topics -= report_types
            else:
                c.topics |= report_types
