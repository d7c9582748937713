"""Run golden cases, each in its own throwaway data dir, and observe what they leave.

The runner plays the user: it creates the case's chart patients, uploads the fixture
documents through the normal ``attach_and_extract`` path, lets the worker process each
job, takes review decisions, deletes documents and asks questions. Afterwards it reads
back what a user would see (document reports, the chart, the review lists, answers) and
hands that to the rubrics. Cases run in worker processes (each with its own
environment and settings), several at a time where the machine has cores for it.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable

from golden.cases import GOLDEN_REVIEWER, Case, Step, load_case
from golden.observation import Observation, Upload

# Files of a data dir the gate reads for leaked identifiers (the DB and blobs hold PHI by design).
LOG_GLOBS = ("logs/**/*", "worker-heartbeat.json", "*.log", "eval-results/**/*")


# --------------------------------------------------------------------------- template


def build_template(root: Path) -> Path:
    """A data dir with the schema, the indexed guideline corpus and the case steps'
    account, copied per case so no case pays for indexing (or password hashing)."""
    import secrets

    from core.services.admin.accounts import add_user
    from core.services.admin.access_audit import shell_user
    from core.services.answer.corpus import index_guideline_corpus
    from core.services.workbench import open_workbench
    from domain.settings import Settings

    template = root / "template"
    settings = Settings(data_dir=template, app_secret="golden-eval-secret")
    wb = open_workbench(settings)
    try:
        index_guideline_corpus(wb)
        # Steps act as this reviewer (a step's ``by``), like a person would: through the
        # role checks. The operator running the gate creates it, as `user add` would; its
        # random password is never shown, so nobody signs in to a throwaway data dir.
        add_user(wb, username=GOLDEN_REVIEWER, role="reviewer", password=secrets.token_urlsafe(18), by=shell_user())
    finally:
        wb.close()
    return template


# --------------------------------------------------------------------------- one case


class _ContentSpy:
    """Keeps the normalized content each job's pipeline produced, so citations are
    checked against exactly the words the extractor was given (OCR runs once)."""

    def __init__(self, obs: Observation):
        self.obs = obs

    def __enter__(self):
        import core.services.ingest.processing as processing

        self._module = processing
        self._original = processing.read_isolated  # the worker's side: the reading runs in a child
        original = self._original
        obs = self.obs

        def spying_read(*args, **kwargs):
            content, result, extract_ms = original(*args, **kwargs)
            obs.contents[obs.processing] = content
            return content, result, extract_ms

        processing.read_isolated = spying_read
        return self

    def __exit__(self, *exc):
        self._module.read_isolated = self._original


def _execute(obs: Observation, index: int, step: Step) -> None:
    from domain.errors import WorkbenchError
    from domain.policy.questions.intent import parse_question
    from core.services.answer.answering import ask
    from core.services.review.fact_vectors import index_pending
    from core.services.ingest.ingestion import attach_and_extract, reread_document
    from core.services.review.retraction import delete_document
    from core.services.review.decisions import check_for_document, review
    from core.services.evals.sources import keep_document
    from core.services.ingest.worker import Worker
    from golden.documents import build_spec

    wb, case = obs.wb, obs.case
    try:
        if step.upload or step.reprocess:
            if step.upload:
                name = step.name or step.upload
                patient_key = step.patient or case.default_patient
                data, filename = build_spec(case.documents[step.upload], case.patients, key=step.upload)
                if obs.keep_dir is not None:  # the very bytes uploaded, for the Evals page's cited source
                    obs.kept_documents[name] = keep_document(obs.keep_dir, data, filename)
                attached = attach_and_extract(wb, patient_id=obs.patient_ids[patient_key], source=filename,
                                              data=data, filename=filename, doc_type=step.doc_type,
                                              category=step.category, by=step.by)
                obs.uploads[name] = Upload(name, step.upload, patient_key, attached.document["id"],
                                           attached.job["doc_type"] if attached.job else step.doc_type, index)
            else:
                upload = obs.uploads[step.reprocess]
                attached = reread_document(wb, patient_id=obs.patient_ids[upload.patient],
                                           document_id=upload.document_id, doc_type=upload.doc_type, by=step.by)
            if attached.jobs:  # one job, or one per part of a batch read in parts
                obs.processing = attached.document["id"]
                for queued in attached.jobs:
                    Worker(wb, worker_id="intake-extractor:golden").run_specific(queued["id"])
                obs.processing = None
                index_pending(wb)
        elif step.delete:
            upload = obs.uploads[step.delete]
            delete_document(wb, upload.document_id, by=step.by, reason="golden case deletion")
            obs.deleted[step.delete] = index
        elif step.review:
            upload = obs.uploads[step.document]
            if step.review in ("approve-identity", "reject-identity"):
                check_id = _check_id(obs, upload, step.scope) if step.scope else check_for_document(
                    wb, upload.document_id)
                review(wb, step.review, check_id=check_id, by=step.by, reason=step.reason)
            else:
                fact = _pick_fact(obs, upload, step.fact or {})
                review(wb, step.review, fact_id=fact["id"], by=step.by, reason=step.reason)
        elif step.ask:
            patient_key = step.patient or case.default_patient
            previous = None
            if step.follow_up:
                earlier = [a for a in obs.answers if a["patient"] == patient_key]
                for a in earlier:
                    previous = parse_question(a["question"], previous)
            payload = ask(wb, obs.patient_ids[patient_key], step.ask, previous=previous).payload
            obs.answers.append({"step": index, "patient": patient_key, "question": step.ask, "payload": payload,
                                "after_deletions": dict(obs.deleted)})
        elif step.brief:
            from core.services.brief.brief import patient_brief

            patient_key = step.patient or case.default_patient
            brief = patient_brief(wb, patient_id=obs.patient_ids[patient_key], budget_tokens=step.brief)
            obs.briefs.append({"step": index, "patient": patient_key, "payload": brief.payload()})
        elif step.export_fhir:
            from core.services.exchange.fhir_export import export_fhir

            mrn = case.patients[step.patient or case.default_patient]["mrn"]
            obs.fhir_exports[index] = export_fhir(wb, mrn=mrn, include_review=step.include_review,
                                                  bundle_id=step.bundle_id).bundle
    except WorkbenchError as exc:
        obs.step_errors[index] = exc.code


def _check_id(obs: Observation, upload: Upload, scope: str) -> int:
    from storage import facts_repo

    with obs.wb.db.cursor() as cur:
        check = facts_repo.latest_identity(cur, upload.document_id, scope)
    if check is None:
        raise LookupError(f"document {upload.name!r} has no identity check for part {scope!r}")
    return check.id


def _pick_fact(obs: Observation, upload: Upload, matcher: dict[str, Any]) -> dict[str, Any]:
    from golden.matching import fact_matches
    from storage import facts_repo

    with obs.wb.db.cursor() as cur:
        rows = [r.to_dict() for r in facts_repo.facts_for_document(cur, upload.document_id)]
    found = [r for r in rows if fact_matches(r, matcher)]
    if not found:
        raise LookupError(f"no fact of {upload.name!r} matches {matcher}")
    return found[0]


def _observe(obs: Observation) -> None:
    from core.services.review.facts import chart_view, document_report, patient_facts
    from storage import documents_repo, facts_repo

    wb = obs.wb
    for name, upload in obs.uploads.items():
        obs.reports[name] = document_report(wb, upload.document_id)
        with wb.db.cursor() as cur:
            obs.raw_facts[name] = [f.to_dict() for f in facts_repo.facts_for_document(cur, upload.document_id)]
            obs.checks[name] = [c.to_dict() for c in facts_repo.identity_checks_for_document(cur, upload.document_id)]
            doc = documents_repo.by_id(cur, upload.document_id)
        obs.reports[name]["deleted"] = bool(doc["deleted"])
        obs.document_owner[upload.document_id] = doc["patient_id"]
    from core.services.checks.alerts import patient_alerts

    for key, pid in obs.patient_ids.items():
        obs.charts[key] = chart_view(wb, pid)
        obs.review_lists[key] = patient_facts(wb, pid)
        obs.alerts[key] = patient_alerts(wb, pid, include_withdrawn=True)


def observe_case(case: Case, data_dir: Path, keep_dir: Path | None = None) -> Observation:
    """Run a case's steps in ``data_dir`` (already holding the template) and read back
    the result. The process's settings point at ``data_dir`` while it runs. With
    ``keep_dir`` (an eval-results dir) every uploaded document is kept there too."""
    from core.services.admin.patients import add_patient
    from core.services.workbench import open_workbench
    from domain.settings import reload_settings

    os.environ["WORKBENCH_DATA_DIR"] = str(data_dir)
    os.environ["WORKBENCH_APP_SECRET"] = "golden-eval-secret"
    settings = reload_settings()
    wb = open_workbench(settings)
    obs = Observation(case=case, wb=wb, data_dir=data_dir, keep_dir=keep_dir)
    for key, p in case.patients.items():
        obs.patient_ids[key] = add_patient(wb, mrn=p["mrn"], first=p["first"], last=p["last"], dob=p["dob"],
                                           sex=p.get("sex", "U"), by=GOLDEN_REVIEWER)["id"]
    with _ContentSpy(obs):
        for index, step in enumerate(case.steps):
            _execute(obs, index, step)
    _observe(obs)
    return obs


def _telemetry(data_dir: Path) -> list[dict[str, Any]]:
    """The case's own telemetry events (PHI-free by construction, scanned anyway)."""
    import json

    events = []
    for path in sorted((data_dir / "logs").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
    return events


def _stage_samples(events: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Per-stage milliseconds."""
    from domain.latency import stages_of_event

    samples: dict[str, list[float]] = {}
    for event in events:
        for stage, ms in stages_of_event(event).items():
            samples.setdefault(stage, []).append(ms)
    return samples


def _usage(events: list[dict[str, Any]]) -> dict[str, float]:
    """Tokens and cost a paid provider reported (empty offline)."""
    totals: dict[str, float] = {}
    for event in events:
        for k, v in (event.get("tokens") or {}).items():
            totals[k] = totals.get(k, 0) + v
        if isinstance(event.get("cost"), int | float):
            totals["cost_usd"] = totals.get("cost_usd", 0.0) + event["cost"]
    return totals


def run_case(case_id: str, template: str, work_root: str, keep_dir: str | None = None) -> dict[str, Any]:
    """Run one case in a fresh copy of the template; never raises. With ``keep_dir`` the
    documents it uploads are kept there (``kept_documents`` of the result)."""
    from golden.redact import leaks_in_files
    from golden.rubrics import RUBRICS, score

    started = time.perf_counter()
    result: dict[str, Any] = {"case_id": case_id, "status": "ran", "error": None}
    data_dir = Path(work_root) / case_id
    obs = None
    try:
        case = load_case(case_id)
        result.update(title=case.title, doc_types=case.doc_types, scenarios=case.scenarios, expected=case.expect)
        shutil.copytree(template, data_dir)
        obs = observe_case(case, data_dir, Path(keep_dir) if keep_dir else None)
        if keep_dir:
            result["kept_documents"] = obs.kept_documents
        leaks = leaks_in_files(data_dir, LOG_GLOBS, case.phi_strings())
        result["rubrics"] = score(obs, leaks)
        result["actual"] = actual_summary(obs)
        result["coverage"] = _coverage(obs)
        obs.wb.close()
        obs = None
        events = _telemetry(data_dir)
        result["stages"] = _stage_samples(events)
        result["usage"] = _usage(events)
    except Exception as exc:  # noqa: BLE001 - a case that cannot run fails the gate, it does not stop it
        from golden.documents import SharedDataMissing

        result["status"] = "error"
        result["error"] = f"{type(exc).__name__}: {exc}" if not isinstance(exc, SharedDataMissing) else str(exc)
        result["traceback"] = traceback.format_exc(limit=6)
        result["rubrics"] = {name: {"passed": False, "reason": "the case could not run"} for name in RUBRICS}
        result.setdefault("stages", {})
        if obs is not None:
            try:
                obs.wb.close()
            except Exception:  # noqa: BLE001
                pass
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    result["seconds"] = round(time.perf_counter() - started, 3)
    return result


def _coverage(obs: Observation) -> dict[str, Any] | None:
    """The coverage guard's tally on this case's documents (golden.coverage_measure); a
    measure, not a rubric: a failure to measure is kept as its reason, never fails the case."""
    from golden.coverage_measure import case_coverage

    try:
        return case_coverage(obs)
    except Exception as exc:  # noqa: BLE001
        return {"error": f"{type(exc).__name__}: {exc}"}


def actual_summary(obs: Observation) -> dict[str, Any]:
    documents = {}
    for name, report in obs.reports.items():
        job = report["job"] or {}
        documents[name] = {"document_id": report["document_id"], "doc_type": obs.uploads[name].doc_type,
                           "job_status": job.get("status"), "error_code": job.get("error_code"),
                           "error_message": job.get("error_message"),
                           "identity": report["identity"]["status"], "deleted": report["deleted"]}
    facts = [{k: f[k] for k in ("document", "fact_id", "fact_type", "certainty", "promotion_status", "active",
                                "fact_text", "structured_value", "citation", "review_reason")}
             for f in obs.facts()]
    answers = [{"step": a["step"], "question": a["question"], "patient": a["patient"],
                "refused": a["payload"]["refused"], "disposition": a["payload"]["question"]["disposition"],
                "refusal_reason": a["payload"]["refusal_reason"], "sections": a["payload"]["sections"],
                "text": a["payload"]["text"]}
               for a in obs.answers]
    return {"documents": documents, "facts": facts, "chart": obs.charts, "answers": answers,
            "step_errors": {str(k): v for k, v in obs.step_errors.items()}}


# --------------------------------------------------------------------------- many cases


def default_jobs() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def run_cases(case_ids: list[str], *, jobs: int | None = None,
              on_result: Callable[[dict[str, Any]], None] | None = None,
              keep_dir: Path | None = None) -> list[dict[str, Any]]:
    """Run the cases (in parallel worker processes when jobs > 1), results in case order.
    With ``keep_dir`` the uploaded documents are kept there (``run_case``)."""
    keep = str(keep_dir) if keep_dir is not None else None
    # No more worker processes than cases: one chosen case runs here, without a pool's start.
    jobs = max(1, min(jobs or default_jobs(), len(case_ids)))
    root = Path(tempfile.mkdtemp(prefix="golden-"))
    results: dict[str, dict[str, Any]] = {}
    try:
        template = build_template(root)
        if jobs <= 1:
            for cid in case_ids:
                results[cid] = run_case(cid, str(template), str(root), keep)
                if on_result:
                    on_result(results[cid])
        else:
            # spawn: a clean interpreter per worker; the parent has model threads running.
            with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
                futures = {pool.submit(run_case, cid, str(template), str(root), keep): cid for cid in case_ids}
                for future in as_completed(futures):
                    cid = futures[future]
                    try:
                        results[cid] = future.result()
                    except Exception as exc:  # noqa: BLE001 - a dead worker process
                        results[cid] = {"case_id": cid, "status": "error", "error": f"worker died: {exc}",
                                        "rubrics": {}, "stages": {}, "seconds": 0.0}
                    if on_result:
                        on_result(results[cid])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return [results[cid] for cid in case_ids]
