"""The evidence retriever: one boundary that returns everything an answer may cite.

- chart facts: active chart rows, each cited to the document promotion behind it
  (or to the chart row itself when it was entered by hand);
- document facts: active facts of identity-verified or approved documents;
- needs-review findings: visible, cited, never used as verified evidence;
- guideline chunks, only when the supervisor asked for them;
- for a declined request, the record's safety findings (critical results, red flags)
  whatever it asked about;
- a missing signal for every requested topic with no patient evidence, and for
  every attention finding that no guideline passage cleared the threshold for.
Deleted, retracted, quarantined and other patients' content never comes back:
the queries in ``storage.evidence_repo`` enforce it, and vector hits are re-checked
against them.

What is relevant, what a finding is about and how lab results line up as series
are policy (``domain.policy.questions.topics``, ``domain.policy.answers.relevance``, ``lab_series``); this module
reads the data, applies those rules and runs the searches. Loading the candidates and
the bundle they fill is ``evidence_items``; the guideline searches, ``guideline_evidence``.
"""

from __future__ import annotations

import dataclasses
import re
import time
from typing import Any

from domain.models import EvidenceItem
from domain.policy.facts.analytes import result_is_of
from domain.policy.facts.lab_vocabulary import antibiotic_of
from domain.policy.facts.medication_status import status_reading
from domain.policy.answers.lab_series import ABNORMAL, attention_order, build_series, lookup_order
from domain.policy.questions.intent import Intent, ParsedQuestion
from domain.policy.answers.relevance import (THERAPY_CONTEXT_SAID_MISSING, context_tags, direct, meant_as_asked,
                                             relevant, review_bears_on, therapy_context)
from domain.policy.answers.supervisor import REFUSE, RoutePlan
from domain.policy.questions.topics import (TOPIC_BY_NAME, analyte_label, conditions_named, mentions_term,
                                 term_fact_types)
from core.services.answer.alert_lines import alert_evidence
from core.services.answer.absence import check_absences
from core.services.answer.evidence_items import (Candidate, EvidenceBundle, answer_candidates, is_safety_finding,
                                                 merge_key_of)
from core.services.answer.guideline_evidence import add_guideline_evidence
from core.services.workbench import Workbench

PER_TOPIC_LIMIT = 12  # look-ups: findings shown per topic, newest first


# ------------------------------------------------------------------ retrieval
def retrieve_evidence(wb: Workbench, patient_id: int, question: ParsedQuestion, plan: RoutePlan,
                      *, request_id: str | None = None) -> EvidenceBundle:
    bundle = EvidenceBundle()
    start = time.perf_counter()
    if plan.need_patient_evidence:
        _patient_evidence(wb, patient_id, question, plan, bundle)
    if plan.need_guidelines:
        add_guideline_evidence(wb, question, plan, bundle, request_id)
    bundle.timings_ms["total"] = round((time.perf_counter() - start) * 1000, 2)
    return bundle


def _reading_order(c: Candidate) -> tuple:
    """Newest document first, then where the document wrote the entry ("results[3]")."""
    cit = c.item.citations[0]
    doc = re.search(r"(\d+)\s*$", cit.source_id or "")
    place = re.match(r"^(.*?)\[(\d+)\]", cit.field_or_chunk_id or "")
    return (-int(doc.group(1)) if doc else 0, place.group(1) if place else (cit.field_or_chunk_id or ""),
            int(place.group(2)) if place else 0, c.item.evidence_id)


def _patient_evidence(wb: Workbench, patient_id: int, question: ParsedQuestion, plan: RoutePlan,
                      bundle: EvidenceBundle) -> None:
    start = time.perf_counter()
    candidates, reviews, usable = answer_candidates(wb, patient_id)  # shared: read-only here
    bundle.timings_ms["database"] = round((time.perf_counter() - start) * 1000, 2)

    vector_reviews: set[str] = set()
    if plan.disposition == REFUSE or (plan.refused and not question.topics and not question.clinical_subject):
        selected = []  # nothing named to narrow to: only the safety (and therapy) findings below
    elif question.topics:
        selected = [c for c in candidates if relevant(c.topics, question.topics)]
    elif plan.intent is Intent.ATTENTION:
        selected = [c for c in candidates
                    if c.item.abnormal or c.item.fact_type in ("allergy", "medication", "problem")]
    else:
        selected, vector_reviews = _vector_selection(wb, patient_id, question, candidates, reviews, usable, bundle)
    selected, found_terms, term_reviews = _narrow_to_terms(question, selected, candidates, reviews, bundle)
    selected, named_found, named_reviews = _narrow_to_named_tests(question, selected, candidates, reviews, bundle)
    selected = _narrow_to_date(question, selected)
    term_reviews |= named_reviews
    found_terms |= named_found
    # Shown after what was asked: a declined decision still shows what bears on any
    # decision (critical results, red flags), and a declined therapy request what bears
    # on any therapy (allergies, medications, pregnancy).
    safety: set[str] = set()
    if plan.refused:
        chosen = {c.item.evidence_id for c in selected}
        extra = [c for c in candidates if c.item.evidence_id not in chosen
                 and (is_safety_finding(c) or therapy_context(c.topics, question))]
        safety = {c.item.evidence_id for c in extra}
        selected += extra

    selected, merged = _merge_duplicates(selected)
    if merged:  # later steps see the merged line in place of its first statement, as the selection does
        candidates = [merged.get(c.item.evidence_id, c) for c in candidates]
    labs = [c for c in selected if c.item.fact_type == "lab_result"]
    # Newest first; within a date, the newest document first and each document's entries
    # in the order it wrote them (a report's lines read as the report does).
    others = sorted((c for c in selected if c.item.fact_type != "lab_result"), key=_reading_order)
    others.sort(key=lambda c: c.item.date or "", reverse=True)
    if plan.intent is Intent.ATTENTION and not plan.refused:
        series = build_series([c.item for c in labs])
        bundle.attention = attention_order([s for s in series if s.severity <= ABNORMAL])
        bundle.in_range = lookup_order([s for s in series if s.severity > ABNORMAL])
        # A question that names its tests gets them listed; "her labs" gets the normal ones counted.
        bundle.list_in_range = bool(question.terms or question.analytes) or \
            (bool(question.topics) and "labs" not in question.topics)
        bundle.patient = _limited([c.item for c in others], bundle)
        bundle.alerts = alert_evidence(wb, patient_id, [c.item for c in candidates])  # the chart checks' alerts
    else:
        bundle.patient = _lookup_order(question, labs, others, safety, bundle)

    shown = {i.evidence_id for i in bundle.all_items()}
    covered: set[str] = found_terms.union(*(c.topics for c in selected if c.item.evidence_id in shown))
    _condition_mentions(question, candidates, covered, bundle)
    matched = {c.item.evidence_id for c in selected} | vector_reviews | term_reviews
    reviewed: set[str] = set()
    for c in reviews:
        if review_bears_on(c.item, c.topics, question, source_text=c.source_text, context=c.context) or \
                c.item.evidence_id in matched or (plan.refused and is_safety_finding(c)):
            bundle.review.append(c.item)
            reviewed |= c.topics
    # Newest first, as the findings are: "what is her blood pressure?" leads with the last
    # reading held for review, not the first (a stable sort: undated items keep their order).
    bundle.review.sort(key=lambda i: i.date or "", reverse=True)
    if question.therapy and plan.refused:
        _missing_therapy_context(covered, reviewed, bundle)
    _missing_topics(question, plan, covered, reviewed, bundle)
    check_absences(wb, patient_id, bundle, candidates, reviews)
    _narrow_to_named_antibiotics(question, bundle)  # after the absence check, which shows what is related


def _merge_duplicates(selected: list[Candidate]) -> tuple[list[Candidate], dict[str, Candidate]]:
    """The same finding stated by two documents (or a chart row and a document) is one
    line citing both (``evidence_items.merge_key``).
    Returns the selection and the merged lines by evidence id: copies, as the candidates
    are shared by later questions (``evidence_items.answer_candidates``)."""
    kept: dict[tuple, int] = {}
    out: list[Candidate] = []
    merged: dict[str, Candidate] = {}
    for c in selected:
        item = c.item
        key = merge_key_of(c)
        at = kept.get(key)
        if at is None:
            kept[key] = len(out)
            out.append(c)
            continue
        first = out[at]
        item_id = first.item.evidence_id
        extra = [x for x in item.citations if x not in first.item.citations]
        if extra:  # a merged copy: the candidates are shared by later questions
            out[at] = merged[item_id] = dataclasses.replace(first, item=first.item.model_copy(
                update={"citations": [*first.item.citations, *extra]}))
    return out, merged


def _missing_therapy_context(covered: set[str], reviewed: set[str], bundle: EvidenceBundle) -> None:
    """Before a therapy decision, an allergy or medication list the record does not hold
    is said to be missing (never inferred to be empty)."""
    noted = {t for t, _ in bundle.missing}
    for topic in THERAPY_CONTEXT_SAID_MISSING:
        if topic in covered or topic in noted:
            continue
        note = " (only unverified mentions; see Needs Human Review)" if topic in reviewed else ""
        bundle.claim(topic, f"No {TOPIC_BY_NAME[topic].label} found in the chart or in this patient's "
                            f"active documents{note}.")


def _lookup_order(question: ParsedQuestion, labs: list[Candidate], others: list[Candidate], safety: set[str],
                  bundle: EvidenceBundle) -> list[EvidenceItem]:
    """What the question names first (a condition's problem entries before its related
    labs), then what it brought along, then the safety findings of a declined request;
    each test's latest result first, then its history."""
    topics_by_id = {c.item.evidence_id: c.topics for c in [*labs, *others]}
    # What the record says is so before what it says was denied, is past, someone else's
    # or uncertain: "her current meds" lists the medicines she takes before one avoided.
    # A medicine whose printed status says it is not taken now ("Held", "STOPPED") is one too.
    qualified = {c.item.evidence_id for c in [*labs, *others] if context_tags(c.context, c.item.fact_type)
                 or status_reading(str((c.item.structured or {}).get("status") or "")) == "not_current"}
    # ... but what the question names comes first, however it was meant: "was she given
    # co-amoxiclav?" is answered by the line saying it was avoided.
    named = {c.item.evidence_id for c in [*labs, *others]
             if any(mentions_term(term, c.source_text) for _, term in question.terms)}
    ordered: list[EvidenceItem] = [c.item for c in others]
    for s in lookup_order(build_series([c.item for c in labs])):
        ordered += s.items
        bundle.earlier |= {i.evidence_id for i in s.history}
    ordered.sort(key=lambda i: (i.evidence_id in safety,
                                bool(question.topics) and not direct(topics_by_id[i.evidence_id], question.topics),
                                bool(named) and i.evidence_id not in named, i.evidence_id in qualified))
    return _limited(ordered, bundle)


def _limited(items: list[EvidenceItem], bundle: EvidenceBundle) -> list[EvidenceItem]:
    """At most PER_TOPIC_LIMIT findings per topic, in the order given; Missing says how
    many more there are, so a long panel is never cut short silently."""
    per_topic: dict[str, int] = {}
    kept = []
    for item in items:
        key = item.topic or "other"
        per_topic[key] = per_topic.get(key, 0) + 1
        if per_topic[key] <= PER_TOPIC_LIMIT:
            kept.append(item)
    for key, count in per_topic.items():
        if count > PER_TOPIC_LIMIT:
            label = TOPIC_BY_NAME[key].label if key in TOPIC_BY_NAME else "other findings"
            bundle.missing.append((None, f"{count - PER_TOPIC_LIMIT} more {label} entries are on record and not "
                                         f"listed here (the first {PER_TOPIC_LIMIT} are); ask about a test or item "
                                         "by name to see it."))
    return kept


def _narrow_to_terms(question: ParsedQuestion, selected: list[Candidate], candidates: list[Candidate],
                     reviews: list[Candidate], bundle: EvidenceBundle) -> tuple[list[Candidate], set[str], set[str]]:
    """A look-up that names something outside the vocabulary ("is she on apixaban?",
    "does he have gout?", "was there a pneumothorax?") keeps the entries of that kind
    that mention it, wherever the record wrote it, and shows the review findings that
    mention it; when nothing verified does, it says so (a term held only for review is
    never reported as not found) and lists what the record holds of that kind. A denied
    or a relative's mention is reported, never a finding. The term is repeated only when
    it is clinical and no name (``ParsedQuestion.quotable``); else in general words.
    Returns the selection, the record topics whose term was found, and the review
    findings that mention a term."""
    found: set[str] = set()
    held: set[str] = set()
    for topic, term in question.terms:
        fact_types = term_fact_types(topic)
        said = f"“{term}”" if term in question.quotable else None
        in_review = [c for c in reviews if c.item.fact_type in fact_types and mentions_term(term, c.source_text)
                     and meant_as_asked(topic, c.item.fact_type, c.context)]
        held |= {c.item.evidence_id for c in in_review}
        mentioning = [c for c in candidates if c.item.fact_type in fact_types and mentions_term(term, c.source_text)]
        hits = [c for c in mentioning if meant_as_asked(topic, c.item.fact_type, c.context)]
        if hits:
            selected = [c for c in selected if c.item.fact_type not in fact_types] + hits
            found.add(topic)
            continue
        label = TOPIC_BY_NAME[topic].label
        listed = "; the ones on record are listed" if any(c.item.fact_type in fact_types for c in selected) else ""
        if in_review:
            what = said or "What you asked about"
            bundle.claim(topic, f"{what} is written only in findings held for review (see Needs Human "
                                "Review): nothing verified in the chart or active documents records it yet.",
                         terms=(term,))
        elif said:
            bundle.claim(topic, f"No {said} found among this patient's {label} in the chart or "
                                f"active documents{listed}.", terms=(term,))
        else:
            bundle.claim(topic, f"No entry matching what you asked about was found among this patient's "
                                f"{label} in the chart or active documents{listed}.", terms=(term,))
        bundle.mentions += [(said or "what you asked about", c.item) for c in mentioning]
    return selected, found, held


def _narrow_to_named_antibiotics(question: ParsedQuestion, bundle: EvidenceBundle) -> None:
    """"Is the E. coli resistant to trimethoprim?" gets the trimethoprim results, not the
    whole antibiogram, when the record holds one; other evidence stays as selected."""
    if "susceptibility" not in question.topics:
        return
    asked = question.text.lower()

    def drug(item: EvidenceItem) -> str | None:
        return antibiotic_of(str(item.structured.get("test_name") or "")) if item.fact_type == "lab_result" else None

    def named(item: EvidenceItem) -> bool:
        return (d := drug(item)) is not None and re.search(rf"(?<!\w){re.escape(d)}(?!\w)", asked) is not None

    if any(named(i) for i in (*bundle.patient, *bundle.review, *(i for _, i in bundle.related))):
        bundle.patient = [i for i in bundle.patient if drug(i) is None or named(i)]
        bundle.review = [i for i in bundle.review if drug(i) is None or named(i)]
        bundle.related = [(why, i) for why, i in bundle.related if drug(i) is None or named(i)]


def _narrow_to_named_tests(question: ParsedQuestion, selected: list[Candidate], candidates: list[Candidate],
                           reviews: list[Candidate], bundle: EvidenceBundle) -> tuple[list[Candidate], set[str], set[str]]:
    """A question that names tests ("what was his hemoglobin?", "his eGFR and
    creatinine") gets those tests' results, however the report named them (by LOINC
    code or synonym), not the whole panel they belong to; a named test the record does
    not hold is said to be missing. Returns the selection and the lab topics it answered
    (the named tests' lines speak for them) and the review findings that hold a named
    test the record has no verified result of (shown, and never called missing)."""
    named = question.analytes
    if not named:
        return selected, set(), set()
    hits = [c for c in candidates if _result_of(named, c)]
    # A name may stand for two analytes ("eosinophils": the count and the percent).
    found = {analyte_label(a) for a in named if any(_result_of((a,), c) for c in hits)}
    absent = [label for label in dict.fromkeys(map(analyte_label, named)) if label not in found]
    held = [c for c in reviews if _result_of(named, c)]
    held_labels = {analyte_label(a) for a in named if any(_result_of((a,), c) for c in held)}
    unseen = [label for label in absent if label not in held_labels]
    in_review = [label for label in absent if label in held_labels]
    if in_review:
        bundle.claim(None, f"{', '.join(in_review)}: only a result held for review was found (see Needs "
                           "Human Review); nothing verified in the chart or active documents yet.",
                     analytes=tuple(a for a in named if analyte_label(a) in in_review))
    if unseen:
        bundle.claim(None, f"No {', '.join(unseen)} result found in the chart or in this patient's "
                           "active documents.", analytes=tuple(a for a in named if analyte_label(a) in unseen))
    answered = {t for t in question.topics if "lab_result" in TOPIC_BY_NAME[t].fact_types}
    # What else stays is what the question's own topics bring, not the catch-all "labs"
    # a named test stands for: "what was her potassium?" is not about every lab-like
    # finding (a blood pressure reading is one), only "her potassium and blood pressure" is.
    specific = tuple(t for t in question.topics if t != "labs")
    others = [c for c in selected if c.item.fact_type != "lab_result" and specific and relevant(c.topics, specific)]
    return others + hits, answered, {c.item.evidence_id for c in held}


def _narrow_to_date(question: ParsedQuestion, selected: list[Candidate]) -> list[Candidate]:
    """A question about one day ("her sodium on 2 Dec") gets that day's results and
    readings, not the latest first; when none is of that day, every date is shown (each
    line says its date)."""
    if question.on_date is None:
        return selected
    dated = [c for c in selected if c.item.fact_type in ("lab_result", "vital_sign")]
    on_day = [c for c in dated if question.on_date.matches(c.item.date)]
    if not on_day:
        return selected
    return [c for c in selected if c not in dated] + on_day


def _result_of(named: tuple[str, ...], c: Candidate) -> bool:
    v = c.item.structured
    return c.item.fact_type == "lab_result" and result_is_of(
        named, str(v.get("test_name") or ""), loinc=v.get("loinc") or None, unit=v.get("unit") or None)


def _condition_mentions(question: ParsedQuestion, candidates: list[Candidate], covered: set[str],
                        bundle: EvidenceBundle) -> None:
    """A condition named only as denied, a relative's or hypothetical is not the
    patient's: when the record holds no mention of her own, those mentions are shown
    beside the missing line, never as findings."""
    for condition in question.conditions:
        if condition in covered:
            continue
        label = TOPIC_BY_NAME[condition].label
        for c in candidates:
            if condition not in c.topics and condition in conditions_named(c.source_text):
                bundle.mentions.append((label, c.item))


def _missing_topics(question: ParsedQuestion, plan: RoutePlan, covered: set[str], reviewed: set[str],
                    bundle: EvidenceBundle) -> None:
    has_labs = any(i.fact_type == "lab_result" for i in bundle.all_items() if i.kind != "needs_review")
    noted = {t for t, _ in bundle.missing}
    for topic in question.topics:
        if topic in covered or topic in noted or (topic == "screening" and plan.need_guidelines):
            continue
        if topic == "labs" and has_labs:
            continue
        t = TOPIC_BY_NAME[topic]
        note = " (only unverified mentions; see Needs Human Review)" if topic in reviewed else ""
        if t.is_condition:
            text = f"No {t.label} is recorded for this patient in the chart or in active documents{note}."
        else:
            text = f"No {t.label} found in the chart or in this patient's active documents{note}."
        bundle.claim(topic, text)
    if not question.topics and not bundle.all_items() and not bundle.missing and plan.disposition != REFUSE:
        bundle.claim(None, "No patient evidence matching this question was found.")


def _vector_selection(wb: Workbench, patient_id: int, question: ParsedQuestion, candidates: list[Candidate],
                      reviews: list[Candidate], usable: dict[int, dict[str, Any]],
                      bundle: EvidenceBundle) -> tuple[list[Candidate], set[str]]:
    """No recognised topic: ask the patient-fact vectors, then keep only hits that are
    among this request's usable facts (a stale vector can never surface a retracted fact).
    Returns the findings and the review findings the vectors matched (shown for review)."""
    if wb.fact_index is None:
        return [], set()
    start = time.perf_counter()
    hits = wb.fact_index.search(patient_id, question.text, k=8)
    bundle.timings_ms["vectors"] = round((time.perf_counter() - start) * 1000, 2)
    live = [usable[h.fact_id] for h in hits if h.score >= 0.35 and h.fact_id in usable]
    wanted = {f"fact:{f['id']}" for f in live}
    # A promoted fact is represented by its chart row, which cites the same source location.
    locations = {(f["citation"]["source_id"], f["citation"]["field_or_chunk_id"]) for f in live}
    found = [c for c in candidates if c.item.evidence_id in wanted or (
        c.item.kind == "chart" and (c.item.citations[0].source_id, c.item.citations[0].field_or_chunk_id)
        in locations)]
    return found, {c.item.evidence_id for c in reviews if c.item.evidence_id in wanted}
