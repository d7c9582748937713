"""The brief's lines, read from the chart the way answers read it
(``core.services.answer.evidence_items.load_candidates``: one patient, live documents,
unretracted facts, trusted identity), each citing the facts it rests on.

Trusted content (chart rows and cited document facts) fills the topical sections;
items waiting for a person carry their sentinel (pending, conflict, unclear) in the
section of their kind or under review; what the record does not hold is written as
missing. Every list is sorted, so the same record gives the same lines.
"""

from __future__ import annotations

from typing import Any

from domain.models import Citation, EvidenceItem
from domain.policy.answers.brief_budget import (CONFLICT, MISSING, PENDING, UNCLEAR, BriefLine, field_or_missing,
                                                review_sentinel, states_no_known_allergies)
from domain.policy.answers.lab_series import ABNORMAL, CRITICAL, attention_order, build_series, trend_text
from domain.policy.facts.chart_rules import is_critical
from core.services.admin.patients import chart_documents
from core.services.answer.evidence_items import load_candidates
from core.services.brief.alerts import alert_lines
from core.services.review.facts import patient_facts
from core.services.workbench import Workbench
from storage import facts_repo, promotions_repo
from domain.policy.facts.no_known_allergies import NO_KNOWN_WORDS, no_known_kind

_QUARANTINED = "identity_mismatch_quarantined"
# Documents that name another patient: their file name may carry that patient's name.
_NOT_THIS_PATIENTS = (_QUARANTINED, "identity_review_rejected")
_TOPICAL = {"allergy": "allergies", "medication": "medications", "problem": "problems"}
_SEX = {"F": "female", "M": "male"}


def _lab_text(v: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """"Potassium 6.8 mmol/L (critical high; ref 3.5-5.1), collected 2026-10-20"; a
    collection date the record does not hold is written as missing."""
    value = f"{field_or_missing(v.get('test_name'))} {v.get('value')}" + (f" {v['unit']}" if v.get("unit") else "")
    details = []
    flag = v.get("abnormal_flag")
    if flag and flag not in ("unknown", "normal"):
        details.append(str(flag).replace("_", " "))
    if v.get("reference_range"):
        details.append(f"ref {v['reference_range']}")
    text = value + (f" ({'; '.join(details)})" if details else "")
    date = v.get("collection_date")
    return f"{text}, collected {field_or_missing(date)}", () if date and v.get("test_name") else (MISSING,)


def _line(section: str, text: str, items: list[EvidenceItem], sentinels: tuple[str, ...] = ()) -> BriefLine:
    sentinels = tuple(dict.fromkeys(sentinels))
    for s in sentinels:
        if s not in text:
            text = f"{text} {s}"
    return BriefLine(section, text, tuple(c for i in items for c in i.citations), sentinels)


def _short_reason(reason: str | None) -> str:
    """The first of a review item's reasons: the queue holds the rest."""
    return (reason or "").split(";")[0].strip()


class _Chart:
    """What the brief reads of one patient's record, loaded once."""

    def __init__(self, wb: Workbench, patient_id: int):
        candidates, reviews, usable = load_candidates(wb, patient_id)
        self.trusted = sorted((c.item for c in candidates), key=lambda i: i.evidence_id)
        self.reviews = sorted((c.item for c in reviews), key=lambda i: _fact_id(i.evidence_id))
        self.usable = usable
        self.by_id = {i.evidence_id: i for i in self.trusted}
        self.documents = chart_documents(wb, patient_id)
        held: dict[int, int] = {}
        for fact in patient_facts(wb, patient_id)["held"]:
            held[fact["document_id"]] = held.get(fact["document_id"], 0) + 1
        self.held = held
        with wb.db.cursor() as cur:
            self.checks = {d["id"]: facts_repo.identity_checks_for_document(cur, d["id"]) for d in self.documents}
            # Chart rows an open conflict stands against: "chart_lab_results:11".
            self.conflicted: dict[str, list[str]] = {}
            for item in self.reviews:
                if self.fact(item)["promotion_status"] != "conflict_needs_review":
                    continue
                for p in promotions_repo.promotions_for_fact(cur, _fact_id(item.evidence_id)):
                    if p.active and p.outcome == "conflict_needs_review" and p.promoted_table:
                        self.conflicted.setdefault(f"{p.promoted_table}:{p.promoted_record_id}", []).append(
                            item.evidence_id)

    def fact(self, item: EvidenceItem) -> dict[str, Any]:
        return self.usable[_fact_id(item.evidence_id)]

    def sentinel(self, item: EvidenceItem) -> str:
        f = self.fact(item)
        return review_sentinel(f["fact_type"], f["promotion_status"], f.get("review_reason"))

    def marks(self, item: EvidenceItem) -> tuple[str, ...]:
        return (CONFLICT,) if item.evidence_id in self.conflicted else ()


def _fact_id(evidence_id: str) -> int:
    return int(evidence_id.split(":")[1]) if evidence_id.startswith("fact:") else -1


def _identity(patient: dict[str, Any]) -> list[BriefLine]:
    def cite(field: str, value: Any) -> Citation:
        return Citation(source_type="chart", source_id=f"patients:{patient['id']}", page_or_section="patients",
                        field_or_chunk_id=f"patients.{field}", quote_or_value=str(value), verified=True)

    name = f"{patient.get('last_name') or ''}, {patient.get('first_name') or ''}".strip(", ")
    dob = patient.get("dob")
    sex = _SEX.get(str(patient.get("sex") or ""))
    parts = [field_or_missing(name), f"MRN {patient['mrn']}", f"born {field_or_missing(dob)}",
             f"sex {field_or_missing(sex)}"]
    cites = [cite("mrn", patient["mrn"])] + [cite(k, v) for k, v in (("name", name), ("dob", dob), ("sex", sex)) if v]
    missing = (MISSING,) if not (name and dob and sex) else ()
    return [BriefLine("identity", " · ".join(parts), tuple(cites), missing)]


def _labs(chart: _Chart) -> list[BriefLine]:
    series = build_series([i for i in chart.trusted if i.fact_type == "lab_result"])
    critical: list[tuple[tuple, BriefLine]] = []
    for s in series:
        for item in s.items:
            if not is_critical(item.structured.get("abnormal_flag")):
                continue
            text, missing = _lab_text(item.structured)
            used = [item]
            if item is s.latest:
                trend = trend_text(s)
                if trend:
                    text += f"; {trend}"
                    used.append(s.previous)
            else:
                later, _ = _lab_text(s.latest.structured)
                text += f"; later result: {later}"
                used.append(s.latest)
            line = _line("critical", text, used, missing + chart.marks(item))
            critical.append(((_neg(item.date), s.key, item.evidence_id), line))
    for item in chart.reviews:  # a critical value waiting for a person is still shown first
        if item.fact_type == "lab_result" and is_critical(item.structured.get("abnormal_flag")):
            text, missing = _lab_text(item.structured)
            critical.append(((_neg(item.date), "~", item.evidence_id),
                             _line("critical", text, [item], (chart.sentinel(item),) + missing)))
    lines = [line for _, line in sorted(critical, key=lambda pair: pair[0])]
    for s in attention_order([s for s in series if s.severity == ABNORMAL]):
        text, missing = _lab_text(s.latest.structured)
        trend = trend_text(s)
        lines.append(_line("abnormal", text + (f"; {trend}" if trend else ""),
                           [s.latest, *([s.previous] if trend else [])], missing + chart.marks(s.latest)))
    if not series:
        lines.append(BriefLine("abnormal", f"Lab results: {MISSING}", sentinels=(MISSING,)))
    elif not any(s.severity == ABNORMAL for s in series):
        others = [s for s in series if s.severity != CRITICAL]
        lines.append(BriefLine("abnormal", "No abnormal result: the latest result of every other test is in range "
                                           "or unflagged", tuple(c for s in others for c in s.latest.citations))
                     if others else BriefLine("abnormal", "No other lab result", notice=True))
    return lines


def _neg(date: str | None) -> tuple:
    return (date is None, tuple(-ord(ch) for ch in (date or "")))


def _allergy_text(v: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    reaction = v.get("reaction")
    return (f"{v.get('substance')} — reaction: {field_or_missing(reaction)}", () if reaction else (MISSING,))


def _topic_lines(chart: _Chart, fact_type: str) -> list[BriefLine]:
    section = _TOPICAL[fact_type]
    items = [i for i in chart.trusted if i.fact_type == fact_type]
    lines: list[tuple[tuple, BriefLine]] = []
    statements = []
    for item in items:
        v = item.structured
        if fact_type == "allergy" and states_no_known_allergies(v):
            statements.append(item)
            continue
        if fact_type == "allergy":
            text, missing = _allergy_text(v)
        elif fact_type == "medication":
            text = str(v.get("name") or item.text)
            absent = [k for k in ("dose", "frequency") if not v.get(k)]
            text += "".join(f" {v[k]}" for k in ("dose", "frequency") if v.get(k))
            text += f" — {' and '.join(absent)} {MISSING}" if absent else ""
            missing = (MISSING,) if absent else ()
        else:
            text = str(v.get("description") or item.text) + (f" ({v['code']})" if v.get("code") else "")
            missing = ()
        if item.kind != "chart":
            text += " (in a document, not charted)"
        lines.append(((0, text.lower(), item.evidence_id), _line(section, text, [item], missing + chart.marks(item))))
    for item in statements:
        quote = item.citations[0].quote_or_value
        said = NO_KNOWN_WORDS[no_known_kind(item.structured) or "all"]  # NKDA stays about drugs
        if lines:  # the record says none, and documents one: a contradiction for a person to settle
            text = f"The record also states {said} (“{quote}”)"
            lines.append(((1, "", item.evidence_id), _line(section, text, [item], (CONFLICT,))))
        else:
            lines.append(((1, "", item.evidence_id),
                          _line(section, f"{said.capitalize()}, as documented (“{quote}”)", [item])))
    for item in chart.reviews:
        if item.fact_type == fact_type:
            lines.append(((2, "", item.evidence_id), _review_line(chart, item, section)))
    if not lines:
        return [BriefLine(section, f"{MISSING}", sentinels=(MISSING,))]
    return [line for _, line in sorted(lines, key=lambda pair: pair[0])]


def _review_line(chart: _Chart, item: EvidenceItem, section: str = "review") -> BriefLine:
    f = chart.fact(item)
    sentinel = chart.sentinel(item)
    base, missing = _lab_text(item.structured) if item.fact_type == "lab_result" else (
        item.text.split(" — needs review:")[0], ())
    used = [item]
    if sentinel == CONFLICT:
        against = [chart.by_id[k] for k, ids in chart.conflicted.items() if item.evidence_id in ids and k in chart.by_id]
        text = base + ("; the chart holds " + "; ".join(_lab_text(a.structured)[0] if a.fact_type == "lab_result"
                                                        else a.text for a in against) if against else "")
        used += against
    else:
        reason = _short_reason(f.get("review_reason"))
        text = base + (f" — {reason}" if reason else "")
    return _line(section, text, used, (sentinel, *missing))


def document_label(doc: dict[str, Any]) -> str:
    """How the brief names a document: its file name, unless the document as a whole
    names another patient (a file name such as "Surname_First_MRN.pdf" would quote them)."""
    if doc.get("identity_status") in _NOT_THIS_PATIENTS:
        return f"document {doc['id']} (file name withheld)"
    return str(doc["filename"])


def _document_citation(doc: dict[str, Any], scope: str | None, quote: str) -> Citation:
    return Citation(source_type=str(doc.get("doc_type") or "document"), source_id=f"documents:{doc['id']}",
                    page_or_section=scope or "document", field_or_chunk_id="identity", quote_or_value=quote)


def _identity_citations(doc: dict[str, Any], check) -> tuple[Citation, ...]:
    """Where the document prints who it is about, with another patient's identifiers
    withheld: the brief of this patient never quotes someone else's name."""
    out = []
    for ident in check.extracted_identifiers or []:
        c = ident.get("citation")
        if c:
            out.append(Citation.model_validate(c | {"quote_or_value": f"{ident.get('kind') or 'identifier'} printed "
                                                                      "(withheld: not this chart's)"}))
    return tuple(out) or (_document_citation(doc, check.scope, f"{document_label(doc)} (identity as read)"),)


def _review_and_quarantine(chart: _Chart) -> list[BriefLine]:
    lines: list[tuple[tuple, BriefLine]] = []
    order = {CONFLICT: 0, UNCLEAR: 1, PENDING: 2}
    for item in chart.reviews:
        if item.fact_type in _TOPICAL or (item.fact_type == "lab_result"
                                          and is_critical(item.structured.get("abnormal_flag"))):
            continue  # shown in its own section
        lines.append(((order[chart.sentinel(item)], _fact_id(item.evidence_id)), _review_line(chart, item)))
    for doc in sorted(chart.documents, key=lambda d: d["id"]):
        if doc.get("job_status") == "failed":
            why = doc.get("error_message") or doc.get("error_code") or "unreadable"
            lines.append(((1, 10**9 + doc["id"]), BriefLine(
                "review", f"{document_label(doc)} could not be read ({why}) {UNCLEAR}",
                (_document_citation(doc, None, document_label(doc)),), (UNCLEAR,))))
        for check in chart.checks.get(doc["id"], []):
            where = document_label(doc) + (f", {check.scope}" if check.scope else "")
            held = chart.held.get(doc["id"], 0)
            if check.identity_status == _QUARANTINED:
                text = f"{where}: names another patient; its findings are kept out of the chart"
                lines.append(((9, doc["id"], check.scope or ""),
                              BriefLine("quarantined", text, _identity_citations(doc, check))))
            elif check.review_required and not check.review_decision and check.scope is None:
                text = (f"{where}: whether it is this patient's waits for review "
                        f"({check.mismatch_reason or check.identity_status}); {held} finding"
                        f"{'s' if held != 1 else ''} held out of the chart {PENDING}")
                lines.append(((2, 10**9 + doc["id"]), BriefLine("review", text, _identity_citations(doc, check),
                                                                (PENDING,))))
    ordered = [line for _, line in sorted(lines, key=lambda pair: pair[0])]
    if not any(line.section == "review" for line in ordered):
        ordered.insert(0, BriefLine("review", "Nothing waits for review and no conflict is open", notice=True))
    if not any(line.section == "quarantined" for line in ordered):
        ordered.append(BriefLine("quarantined", "No document on this chart names another patient", notice=True))
    return ordered


def _alerts(wb: Workbench, patient_id: int) -> list[BriefLine]:
    lines = alert_lines(wb, patient_id)
    if not any(line.section == "alerts" for line in lines):
        lines.insert(0, BriefLine("alerts", "No open alert from the chart checks", notice=True))
    return lines


def compose(wb: Workbench, patient: dict[str, Any]) -> list[BriefLine]:
    """Every line of the brief before the budget, in display order."""
    chart = _Chart(wb, patient["id"])
    labs = _labs(chart)
    critical = [line for line in labs if line.section == "critical"] or [
        BriefLine("critical", "No result flagged critical in the chart", notice=True)]
    return [*_identity(patient), *critical, *_alerts(wb, patient["id"]),
            *_topic_lines(chart, "allergy"), *_topic_lines(chart, "medication"), *_topic_lines(chart, "problem"),
            *[line for line in labs if line.section == "abnormal"], *_review_and_quarantine(chart)]
