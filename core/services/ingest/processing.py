"""The extraction pipeline one job runs: normalize -> extract -> validate ->
verify citations -> classify -> identity gate -> persist -> promote -> embed.

Reprocessing is idempotent: facts are keyed by a source-scoped fingerprint, a
human identity decision is never overwritten, and promotion outcomes are
recorded once per fact.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from domain.content import NormalizedContent
from domain.errors import ExtractionError, ResponseRejected
from domain.models import VALUE_MODELS, Certainty, Citation, DocType, ExtractionResult, FactProposal, IdentityStatus
from domain.policy.facts.certainty import classify, held_by_warnings, hold_for_review
from domain.policy.facts.chart_rules import CLOSED_PROMOTION_STATES, UNREAD_CONTENT, identity_trusted
from domain.policy.facts.critical_limits import with_critical_limits
from domain.policy.facts.citations import verify_citations
from domain.policy.context.mentions import apply_to as apply_context
from domain.policy.facts.fingerprints import clinical_content_fingerprint, fact_fingerprint
from domain.policy.identity.gate import IdentityOutcome, check_identity, combine_parts
from core.services.review.promotion import promote_facts
from core.services.checks.alerts import refresh_alerts
from core.services.ingest.sandbox import run_isolated
from core.services.workbench import Workbench
from extract.coverage import UnreadRegion, summary_sentence, unread_content
from extract.registry import extractor_for, require_extractor
from extract.values.dates import clinic_date_order
from domain.limits import Limits
from extract.normalize import normalize
from extract.unread_identity import sweep_identity
from storage import documents_repo, facts_repo, patients_repo, promotions_repo
from storage.rows import FactRow, IdentityCheckRow, JobRow


@dataclass
class PipelineResult:
    counts: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    engine: str | None = None
    warnings: list[dict] = field(default_factory=list)
    activated_fact_ids: list[int] = field(default_factory=list)


# Job stage names (ms), shared with the eval runner's latency report; the worker adds
# ``total``. ``ocr`` is time inside OCR engines, ``normalize`` the rest of turning the
# stored bytes into content (loading them included); ``persist`` is classifying and
# storing the facts between the identity gate and promotion.
JOB_STAGES = ("normalize", "ocr", "extract", "verify", "identity", "persist", "promote")

# The coverage guard's review item: why it waits, in the reviewer's words.
UNREAD_REASON = "printed results were not read; read them on the page"

NOTHING_FOUND = "nothing_found"
NOTHING_FOUND_MESSAGE = "The document was read without error, but not one finding was kept from it; check it by eye."


class _Stopwatch:
    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, stage: str) -> float:
        now = time.perf_counter()
        ms = round((now - self._t) * 1000, 2)
        self.timings[stage] = ms
        self._t = now
        return ms


def validate_response(result: ExtractionResult, doc_type: DocType) -> None:
    """Whole-response rejection (DESIGN §5): an answer for another doc_type cannot be
    trusted as a whole, nor one whose clinical values do not fit their fact type's value
    model (domain.models.VALUE_MODELS): checked here, once, so a malformed value is caught
    the same way whichever format it came from. Missing citations, blank quotes, bad
    enums and out-of-page boxes are already refused by the pydantic models the extractor
    must build."""
    if result.doc_type != doc_type:
        raise ResponseRejected(
            f"The extractor answered for {result.doc_type.value}, but the job is {doc_type.value}.",
            code="doc_type_mismatch",
        )
    for proposal in result.facts:
        model = VALUE_MODELS.get(proposal.fact_type)
        if model is None:
            continue
        try:
            model.model_validate(proposal.structured_value)  # checked, not rewritten: the value is stored as given
        except ValidationError as exc:
            fields = ", ".join(sorted({".".join(map(str, e["loc"])) for e in exc.errors()}))
            raise ResponseRejected(f"The extractor gave a malformed {proposal.fact_type} value ({fields}).",
                                   code="malformed_value") from None


def _check_row(job: JobRow, document: dict, patient: dict, scope: str | None, candidates: list,
               outcome: IdentityOutcome, previous: IdentityCheckRow | None) -> dict[str, Any] | None:
    """The identity check to store, or None when the latest one (``previous``) stands:
    a human decision is never overwritten by reprocessing, and an unchanged check is
    not stored twice."""
    if previous is not None and previous.review_decision:
        return None
    identifiers = [c.model_dump(mode="json") for c in candidates]
    unread = [u.model_dump(mode="json") for u in outcome.unread]
    if (previous is not None and previous.identity_status == outcome.status.value
            and previous.extracted_identifiers == identifiers and (previous.unread_identifiers or []) == unread):
        return None
    return dict(patient_id=patient["id"], document_id=document["id"], job_id=job.id, doc_type=job.doc_type,
                scope=scope, status=outcome.status.value, identifiers=identifiers, matched=outcome.matched,
                mismatch_reason=outcome.mismatch_reason, review_required=outcome.review_required, unread=unread)


def _identity_checks(cur, job: JobRow, document: dict, patient: dict, result: ExtractionResult,
                     *, earlier: bool = True) -> dict[str | None, IdentityCheckRow]:
    """One check per part (fax pages, HL7 messages) and one for the document. When
    every identifier belongs to a part, the document's check summarises the parts.
    The latest checks are read once, identifiers grouped once and the new checks
    stored in one statement: a batch has thousands of parts, and a query, a scan or
    an insert per part made this grow faster than the batch. ``earlier``: whether the
    document has stored checks to read (False: none was ever stored)."""
    by_scope: dict[str | None, list] = {}
    for c in result.identifiers:
        by_scope.setdefault(c.scope, []).append(c)
    # Identity values printed but not read keep their part (a fax page) from verifying.
    unread: dict[str | None, list] = {}
    for u in result.unread_identifiers:
        unread.setdefault(u.scope, []).append(u)
    latest = {c.scope: c for c in facts_repo.identity_checks_for_document(cur, document["id"])} if earlier else {}
    scopes = sorted(({f.scope for f in result.facts} | set(by_scope) | set(unread)) - {None})
    statuses: dict[str, IdentityStatus] = {}
    pending: dict[str | None, dict[str, Any]] = {}
    for scope in scopes:
        outcome = check_identity(by_scope.get(scope, []), patient, unread.get(scope, []))
        row = _check_row(job, document, patient, scope, by_scope.get(scope, []), outcome, latest.get(scope))
        if row is None:
            statuses[scope] = IdentityStatus(latest[scope].identity_status)
        else:
            pending[scope] = row
            statuses[scope] = IdentityStatus(row["status"])
    unscoped = by_scope.get(None, [])
    if unscoped or not scopes:
        outcome = check_identity(unscoped, patient, unread.get(None, []))
    else:
        outcome = combine_parts(statuses)
        if unread.get(None) and outcome.status is not IdentityStatus.MISMATCH:
            # Printed outside every part (a cover sheet): the packet as a whole waits for a person.
            outcome = check_identity([], patient, unread[None])
    row = _check_row(job, document, patient, None, unscoped, outcome, latest.get(None))
    if row is not None:
        pending[None] = row
    stored = dict(zip(pending, facts_repo.insert_identity_checks(cur, list(pending.values()))))
    return {scope: stored.get(scope) or latest[scope] for scope in [*scopes, None]}


def judge(proposal: FactProposal, citation: Citation, *, paged: bool, ocr: bool, held: str | None):
    """What a reader's proposal becomes once its citation is checked: its context (a
    negation, someone else) applied, its value judged against the critical limits (every
    format, here), and its certainty decided, a warning's hold included. Returns the
    judged proposal and the decision; ``bench/extraction_accuracy.py`` judges with it too."""
    proposal = with_critical_limits(apply_context(proposal.model_copy(update={"citation": citation})))
    return proposal, hold_for_review(classify(proposal, citation_verified=citation.verified, paged=paged, ocr=ocr),
                                     held)


def _prepare_facts(job: JobRow, document: dict, result: ExtractionResult, citations: list,
                   checks: dict[str | None, IdentityCheckRow],
                   paged: bool, ocr: bool, counts: dict[str, int]) -> list[dict[str, Any]]:
    """Classify each proposal (citations already verified) into a fact row to store."""
    prepared: dict[str, dict[str, Any]] = {}
    held = held_by_warnings(w.code for w in result.warnings)  # e.g. a repaired file: all to review
    for proposal, citation in zip(result.facts, citations):
        # The fingerprint names the source's reading, before the judging.
        read_as = proposal.structured_value
        proposal, decision = judge(proposal, citation, paged=paged, ocr=ocr, held=held)
        if decision.certainty is None:
            counts["rejected"] = counts.get("rejected", 0) + 1
            continue
        check = checks.get(proposal.scope) or checks[None]
        structured = proposal.structured_value
        fp = fact_fingerprint(document["id"], job.doc_type, proposal.fact_type, citation.field_or_chunk_id,
                              read_as)
        trusted = identity_trusted(check.identity_status)
        prepared.setdefault(fp, dict(
            patient_id=document["patient_id"], document_id=document["id"], job_id=job.id,
            identity_check_id=check.id, doc_type=job.doc_type, fact_type=proposal.fact_type,
            certainty=decision.certainty.value, fact_fingerprint=fp,
            clinical_content_fingerprint=clinical_content_fingerprint(
                document["patient_id"], proposal.fact_type, structured, proposal.fact_text),
            fact_text=proposal.fact_text, structured_value=structured, citation=citation.model_dump(mode="json"),
            confidence=round(proposal.confidence, 4),
            promotion_status=None if trusted else "awaiting_identity",
            review_reason=decision.reason if decision.certainty is Certainty.NEEDS_REVIEW else None,
            scope=proposal.scope, active=trusted and decision.certainty is not Certainty.NEEDS_REVIEW,
            context=proposal.context.model_dump(mode="json") if proposal.context else None,
        ))
    return list(prepared.values())


def _coverage_row(job: JobRow, document: dict, regions: list[UnreadRegion],
                  check: IdentityCheckRow) -> dict[str, Any]:
    """The document's one review item for result-like content no fact cites: every
    region listed (place, text, box, why), cited to the first. Its fingerprint is the
    regions themselves, so reading the document again stores it once, and a reader that
    now reads more gives a new item."""
    first = regions[0]
    structured = {"count": len(regions), "summary": summary_sentence(regions),
                  "regions": [r.as_dict() for r in regions]}
    citation = Citation(source_type=job.doc_type, source_id=f"documents:{document['id']}",
                        page_or_section=first.locator, field_or_chunk_id="unread_content[0]",
                        quote_or_value=first.text, page=first.page, bounding_box=first.box, verified=True)
    fp = fact_fingerprint(document["id"], job.doc_type, UNREAD_CONTENT, "unread_content", structured)
    return dict(
        patient_id=document["patient_id"], document_id=document["id"], job_id=job.id, identity_check_id=check.id,
        doc_type=job.doc_type, fact_type=UNREAD_CONTENT, certainty=Certainty.NEEDS_REVIEW.value, fact_fingerprint=fp,
        clinical_content_fingerprint=clinical_content_fingerprint(document["patient_id"], UNREAD_CONTENT, {}, fp),
        fact_text=f"{structured['summary'][:1].upper()}{structured['summary'][1:]}.",
        structured_value=structured, citation=citation.model_dump(mode="json"), confidence=1.0,
        promotion_status=None if identity_trusted(check.identity_status) else "awaiting_identity",
        review_reason=UNREAD_REASON, scope=None, active=False, context=None)


def _retire_earlier_coverage(cur, document_facts: list[FactRow], current: set[str]) -> None:
    """A reading that leaves other content unread (or none) replaces the open coverage
    item an earlier reading of this document left: it is closed as superseded. An item
    a person already decided keeps that decision. ``document_facts``: every fact of the
    document, in id order."""
    for fact in document_facts:
        if (fact.fact_type == UNREAD_CONTENT and fact.fact_fingerprint not in current
                and fact.retracted_at is None and fact.promotion_status not in CLOSED_PROMOTION_STATES):
            promotions_repo.close_pending_reviews(cur, fact.id, "superseded")
            facts_repo.update_fact(cur, fact.id, active=False, promotion_status="superseded")


def _store_facts(cur, prepared: list[dict[str, Any]], counts: dict[str, int],
                 existing: dict[str, FactRow]) -> tuple[list[FactRow], list[FactRow]]:
    """Insert what is new; a fact stored by an earlier run of this job is reused as is.
    ``existing``: the stored facts by fingerprint (the first stored of each), which the
    inserted ones join. Returns (a row per prepared fact, the rows inserted)."""
    new = [f for f in prepared if f["fact_fingerprint"] not in existing]
    for fact in new:
        counts[fact["certainty"]] = counts.get(fact["certainty"], 0) + 1
    counts["unchanged"] = len(prepared) - len(new)
    inserted = facts_repo.insert_facts(cur, new)
    for row in inserted:
        existing.setdefault(row.fact_fingerprint, row)
    return [existing[f["fact_fingerprint"]] for f in prepared], inserted


def read_document(data: bytes, doc_type: DocType, render_dir: Path, ocr_engine: str | None,
                  source_id: str, limits: Limits,
                  date_order: str = "") -> tuple[NormalizedContent, ExtractionResult, float]:
    """The stored bytes to content and proposed facts, with the ms spent extracting. Runs
    in the job's child process (core.services.ingest.sandbox): no database here, and the return
    value goes back to the worker pickled. ``date_order``: the clinic's order for numeric
    dates a document does not settle itself (the setting ``date_order``; "" for none)."""
    extractor = extractor_for(doc_type)
    content = normalize(data, render_dir=render_dir, doc_type=doc_type, ocr_engine=ocr_engine, limits=limits)
    started = time.perf_counter()
    with clinic_date_order(date_order):
        result = extractor(content, source_id)
        validate_response(result, doc_type)
        # HL7 names its patient in PID fields and FHIR in Patient resources, not under printed labels.
        if doc_type not in (DocType.HL7V2_MESSAGE, DocType.FHIR_BUNDLE):
            found = sweep_identity(content, result, source_id)
            result.identifiers += found.other_ids
            result.unread_identifiers += found.unread
    return content, result, round((time.perf_counter() - started) * 1000, 2)


def read_isolated(settings, data: bytes, doc_type: DocType,
                  document: dict) -> tuple[NormalizedContent, ExtractionResult, float]:
    """``read_document`` in a child process under the job's time and memory ceilings."""
    return run_isolated(read_document, reading_args(settings, data, doc_type, document), timeout=settings.job_timeout_seconds,
                        memory_mb=settings.job_memory_mb, method=settings.job_process)


@dataclass
class Reading:
    """What reading a document's stored bytes gave, verified against its own content: a
    pure function of the bytes (no database), so it can be computed anywhere (the job's
    child, a Ray task of the backfill) and persisted later by the one writer."""

    result: ExtractionResult
    citations: list[Citation]  # one per proposed fact, verified against the source
    unread: list[UnreadRegion]  # result-like content no verified citation covers
    pages: int
    ocr: bool
    engine: str | None
    timings: dict[str, float] = field(default_factory=dict)  # normalize, ocr, extract, verify (ms)


def verified_reading(content: NormalizedContent, result: ExtractionResult) -> Reading:
    """Verify the proposals' citations against the content and find what none covers."""
    citations = verify_citations([p.citation for p in result.facts], content)
    # The coverage guard: result-like content no verified citation covers.
    unread = unread_content(content, [p.model_copy(update={"citation": c})
                                      for p, c in zip(result.facts, citations) if c.verified])
    return Reading(result=result, citations=citations, unread=unread, pages=len(content.pages),
                   ocr=content.source_kind == "ocr", engine=content.engine or result.engine)


def _stage_timings(clock: _Stopwatch, content: NormalizedContent, read_ms: float, extract_ms: float) -> None:
    # Starting the reader and the hand-back count as normalizing (turning the stored bytes into content).
    normalize_ms = round(read_ms - extract_ms, 2)
    ocr_ms = round(min(max(float(getattr(content, "ocr_ms", 0.0) or 0.0), 0.0), normalize_ms), 2)
    clock.timings["normalize"] = round(normalize_ms - ocr_ms, 2)
    clock.timings["ocr"] = ocr_ms
    clock.timings["extract"] = extract_ms


def read_verified(data: bytes, doc_type: DocType, render_dir: Path, ocr_engine: str | None,
                  source_id: str, limits: Limits, date_order: str = "") -> Reading:
    """``read_document`` and the verification of what it read: the whole pure part of a
    job, with its stage timings, for a child process anywhere (the backfill's tasks)."""
    clock = _Stopwatch()
    content, result, extract_ms = read_document(data, doc_type, render_dir, ocr_engine, source_id, limits,
                                                date_order)
    _stage_timings(clock, content, clock.lap("normalize"), extract_ms)
    reading = verified_reading(content, result)
    reading.timings = dict(clock.timings, verify=clock.lap("verify"))
    return reading


def reading_args(settings, data: bytes, doc_type: DocType, document: dict) -> tuple:
    """The arguments of ``read_document`` / ``read_verified`` for a stored document."""
    return (data, doc_type, settings.renders_dir / document["sha256"][:16], settings.ocr_preference,
            f"documents:{document['id']}", Limits.from_settings(settings), settings.date_order)


def job_document(wb: Workbench, job: JobRow) -> tuple[dict, dict]:
    """The job's document and patient; a deleted document ends the job."""
    with wb.db.cursor() as cur:
        document = documents_repo.by_id(cur, job.document_id)
        patient = patients_repo.by_id(cur, job.patient_id)
    if document is None or document["deleted"]:
        raise ExtractionError("The document was deleted before it could be processed.", code="document_deleted")
    return document, patient


def run_pipeline(wb: Workbench, job: JobRow) -> PipelineResult:
    """Process one claimed job. Raises ExtractionError for bad documents."""
    clock = _Stopwatch()
    document, patient = job_document(wb, job)
    doc_type = DocType(job.doc_type)
    require_extractor(doc_type)  # fails early with unsupported_doc_type, importing nothing here
    data = wb.blobs.get(document["sha256"])
    content, result, extract_ms = read_isolated(wb.settings, data, doc_type, document)
    _stage_timings(clock, content, clock.lap("normalize"), extract_ms)
    reading = verified_reading(content, result)
    clock.lap("verify")
    return persist_reading(wb, job, document, patient, reading, clock)


def persist_reading(wb: Workbench, job: JobRow, document: dict, patient: dict, reading: Reading,
                    clock: _Stopwatch | None = None) -> PipelineResult:
    """Store one reading through the identity gate, classification and promotion, in one
    transaction: the writer's side of a job (the worker's, and the backfill's one writer)."""
    if clock is None:  # read elsewhere: its stages were timed there
        clock = _Stopwatch()
        clock.timings.update(reading.timings)
    result, citations, unread = reading.result, reading.citations, reading.unread
    out = PipelineResult()
    out.engine = reading.engine
    # Every extractor carries the content's warnings into its result, plus its own.
    out.warnings = [{"code": w.code, "page": w.page, "message": w.message} for w in result.warnings]
    counts: dict[str, int] = {"proposed": len(result.facts), "pages": reading.pages}
    with wb.db.transaction() as cur:
        # Reading took a while: a document deleted meanwhile must add nothing. Deletion
        # takes the same write lock, so this check and the writes below are one step.
        stored_before = documents_repo.reading_state(cur, document["id"])
        if stored_before.gone:
            raise ExtractionError("The document was deleted while it was being read; nothing was kept.",
                                  code="document_deleted")
        checks = _identity_checks(cur, job, document, patient, result, earlier=stored_before.checked)
        clock.lap("identity")
        prepared = _prepare_facts(job, document, result, citations, checks, bool(reading.pages),
                                  reading.ocr, counts)
        coverage = [_coverage_row(job, document, unread, checks[None])] if unread else []
        # One read for what is already stored: the facts these fingerprints name (an
        # earlier run of this job) and the document's facts (its earlier coverage item).
        # A fingerprint names its document, so a document without facts has none to find.
        existing, document_facts = facts_repo.facts_by_fingerprints_or_document(
            cur, [f["fact_fingerprint"] for f in prepared + coverage], document["id"]) \
            if stored_before.has_facts else ({}, [])
        stored, inserted = _store_facts(cur, prepared, counts, existing)
        review, inserted_review = _store_facts(cur, coverage, {}, existing) if coverage else ([], [])
        _retire_earlier_coverage(cur, document_facts + [f for f in inserted + inserted_review
                                                        if f.document_id == document["id"]],
                                 {f.fact_fingerprint for f in review})
        clock.lap("persist")
        trusted = {scope for scope, c in checks.items() if identity_trusted(c.identity_status)}
        # A fact a person closed (rejected, superseded, acknowledged) keeps that decision
        # when its document is read again: it is not decided afresh.
        promotable = [f for f in stored + review if (f.scope if f.scope in checks else None) in trusted
                      and f.promotion_status not in CLOSED_PROMOTION_STATES]
        # A first reading stored every fact just now: none has a promotion to look up.
        outcomes = promote_facts(cur, promotable, document, just_stored=not stored_before.has_facts)
        facts_repo.set_promotion_status(cur, outcomes, patient_ids=[f.patient_id for f in promotable])
        for outcome in outcomes.values():
            counts[f"promotion_{outcome}"] = counts.get(f"promotion_{outcome}", 0) + 1
        refresh_alerts(cur, job.patient_id)  # the chart checks see what this document added
        out.activated_fact_ids = [f.id for f in promotable if f.active]
    clock.lap("promote")  # the transaction's commit included
    counts["stored"] = len(stored)
    counts["identity_trusted"] = int(identity_trusted(checks[None].identity_status))
    if unread:  # a success that left results unread says so, with the review item it made
        counts[UNREAD_CONTENT] = len(unread)
        out.warnings.append({"code": UNREAD_CONTENT, "page": unread[0].page,
                             "message": f"{summary_sentence(unread)}; see the review queue"})
    if counts.get("promotion_promotion_failed"):  # the chart could not hold some findings: say so
        out.warnings.append({"code": "promotion_failed", "page": None,
                             "message": f"{counts['promotion_promotion_failed']} finding(s) could not be added to "
                                        "the chart; see the review queue"})
    if not stored:  # a success that kept nothing must not read as a clean one
        out.warnings.append({"code": NOTHING_FOUND, "page": None, "message": NOTHING_FOUND_MESSAGE})
    out.counts = counts
    out.timings = clock.timings
    return out
