"""Eval runs for reviewers: store, import, read and start runs of the golden gate.

The gate (`python -m core eval`) writes each run to ``<data dir>/eval-results/<run_id>.json``
(format: docs/evals.md). The CLI stores the run in DuckDB itself through
:func:`record_run`; a run started from the Evals page runs as a subprocess with
``--no-record`` (the UI process owns the database), and the page imports finished run
files with :func:`sync_runs`. The run file is the full record; the database keeps the
summary and one row per (case, rubric) for listing and trends.
"""

from __future__ import annotations

import io
import json
import os
import re
import secrets
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from core.errors import BadInput, ExtractionError, NotFound
from core.services.workbench import Workbench
from core.settings import Settings
from storage import eval_repo
from golden.gate import REGRESSION_POINTS  # noqa: F401 - the page states the rule the gate applies

REPO_ROOT = Path(__file__).resolve().parents[2]
PROGRESS_SUFFIX = ".progress.json"
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_record_lock = threading.Lock()

# Plain words for every rubric the gate scores (DESIGN §7); unknown names still read.
RUBRIC_LABELS: dict[str, str] = {
    "schema_valid": "Facts and answers match their schemas",
    "citation_present": "Every fact and claim carries a citation",
    "citation_verified": "Every quote is found at its cited place",
    "bounding_box_present": "Paged citations carry a box on the page",
    "box_on_words": "Each box sits on the words it quotes",
    "factually_consistent": "Documents, jobs and facts are as expected",
    "identity_safe": "Nothing from an unverified document counts",
    "no_wrong_patient": "Nothing lands on or names the wrong patient",
    "safe_refusal": "Unsafe or unsupported questions are refused",
    "no_phi_in_logs": "No patient identifiers in logs",
    "retraction_complete": "Deleting a document retracts everything from it",
    "deleted_document_not_retrieved": "Deleted documents never come back as evidence",
    "no_duplicate_promotion": "No chart row is promoted twice",
    "promotion_expectations": "The right facts reach the chart, nothing else",
    "document_fact_expectations": "Review findings and document facts are as expected",
    "guideline_retrieval": "Guideline questions find the right guideline sections",
    "case_error": "The case ran to the end",
}
STAGE_LABELS: dict[str, str] = {
    "normalize": "Read document", "ocr": "OCR", "extract": "Extract facts", "verify": "Verify citations",
    "identity": "Identity check", "promote": "Promote to chart", "embed": "Embed facts",
    "retrieve": "Retrieve evidence", "rerank": "Rerank", "compose": "Compose answer", "draft": "Draft (model)",
}
GATE_KIND_LABELS: dict[str, str] = {
    "below_threshold": "Below its threshold",
    "regressed": "Worse than the baseline",
    "case_error": "A case could not run",
    "canary_leak": "A planted patient identifier leaked",
}
VERDICT_LABELS = {"pass": "Passed", "fail": "Failed"}
SECTION_LABELS = {
    "patient_findings": "Patient findings", "needs_review": "Needs human review",
    "guideline_evidence": "Guideline evidence", "missing": "Missing or not found",
}


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def rubric_label(name: str) -> str:
    return RUBRIC_LABELS.get(name) or name.replace("_", " ").capitalize()


def stage_label(name: str) -> str:
    return STAGE_LABELS.get(name) or name.replace("_", " ").capitalize()


def verdict_label(verdict: str | None) -> str:
    return VERDICT_LABELS.get(verdict or "", "Unknown")


# --- validating and storing runs -------------------------------------------------------

def _parse_time(value: Any, what: str) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        raise BadInput(f"{what} is not an ISO 8601 time: {value!r}") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment


def check_run(run: Any) -> None:
    """Raise :class:`BadInput` naming the first way ``run`` is not a run artifact."""
    if not isinstance(run, dict):
        raise BadInput("a run is a JSON object")
    run_id = run.get("run_id")
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
        raise BadInput(f"run_id is missing or unsafe: {run_id!r}")
    if run.get("verdict") not in VERDICT_LABELS:
        raise BadInput(f"verdict must be 'pass' or 'fail', not {run.get('verdict')!r}")
    if _parse_time(run.get("started_at"), "started_at") is None:
        raise BadInput("started_at is missing")
    _parse_time(run.get("finished_at"), "finished_at")
    rubrics = run.get("rubrics")
    if not isinstance(rubrics, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1 for v in rubrics.values()):
        raise BadInput("rubrics must map each rubric to a pass rate between 0 and 1")
    results = run.get("results")
    if not isinstance(results, list) or not all(isinstance(r, dict) and isinstance(r.get("case_id"), str)
                                                for r in results):
        raise BadInput("results must be a list of case results, each with a case_id")
    if not isinstance(run.get("cases", len(results)), int):
        raise BadInput("cases must be a whole number")


def _case_rows(run: dict) -> list[tuple[str, str, bool, str | None]]:
    out: list[tuple[str, str, bool, str | None]] = []
    for result in run["results"]:
        case_id = result["case_id"]
        if result.get("status") == "error":
            out.append((case_id, "case_error", False, result.get("error") or "the case stopped with an error"))
        for rubric, outcome in (result.get("rubrics") or {}).items():
            if isinstance(outcome, dict):
                passed, reason = outcome.get("passed"), outcome.get("reason")
            else:
                passed, reason = outcome, None
            if passed is None:  # the rubric does not apply to this case
                continue
            out.append((case_id, rubric, bool(passed), reason))
    return out


def _details(run: dict, artifact: str) -> dict[str, Any]:
    keep = ("seconds", "commit", "selection", "thresholds", "gate", "failed_cases", "latency", "usage")
    details = {k: run.get(k) for k in keep}
    details["artifact"] = artifact
    return details


def record_run(wb: Workbench, run: dict, *, artifact: str | None = None) -> bool:
    """Store a run (summary + one row per case and rubric). Recording the same
    ``run_id`` again changes nothing and returns False."""
    check_run(run)
    started = _parse_time(run["started_at"], "started_at")
    finished = _parse_time(run.get("finished_at"), "finished_at")
    with _record_lock, wb.db.transaction() as cur:
        return eval_repo.insert_run(
            cur, run_id=run["run_id"], started_at=started, finished_at=finished, verdict=run["verdict"],
            cases=int(run.get("cases", len(run["results"]))), rubrics=run["rubrics"],
            baseline=run.get("baseline") or {}, details=_details(run, artifact or f"{run['run_id']}.json"),
            case_rows=_case_rows(run),
        )


def _run_files(results_dir: Path) -> list[Path]:
    if not results_dir.is_dir():
        return []
    return sorted(p for p in results_dir.glob("*.json") if not p.name.endswith(PROGRESS_SUFFIX))


def sync_runs(wb: Workbench, skipped: list[tuple[str, str]] | None = None) -> int:
    """Import every run file in eval-results/ that the database does not hold yet.

    Progress files are not runs and are passed over; a file that is not a run artifact
    is skipped, and ``(file name, why)`` is appended to ``skipped`` when given.
    Returns how many runs were imported."""
    with wb.db.cursor() as cur:
        known = eval_repo.run_ids(cur)
    imported = 0
    for path in _run_files(wb.settings.eval_results_dir):
        if path.stem in known:
            continue
        try:
            run = json.loads(path.read_text(encoding="utf-8"))
            check_run(run)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            if skipped is not None:
                skipped.append((path.name, f"not readable as JSON ({exc.__class__.__name__})"))
            continue
        except BadInput as exc:
            if skipped is not None:
                skipped.append((path.name, f"not a run file: {exc.message}"))
            continue
        if run["run_id"] in known:
            continue
        if record_run(wb, run, artifact=path.name):
            imported += 1
        known.add(run["run_id"])
    return imported


# --- reading runs -------------------------------------------------------------------------

def _duration(row: dict) -> float | None:
    seconds = (row.get("details") or {}).get("seconds")
    if isinstance(seconds, (int, float)):
        return float(seconds)
    if row.get("finished_at") and row.get("started_at"):
        return (row["finished_at"] - row["started_at"]).total_seconds()
    return None


def _summary(row: dict) -> dict[str, Any]:
    details = row.get("details") or {}
    failed = details.get("failed_cases")
    return {
        "run_id": row["run_id"], "verdict": row["verdict"], "verdict_label": verdict_label(row["verdict"]),
        "commit": details.get("commit"), "started_at": row["started_at"], "finished_at": row["finished_at"],
        "seconds": _duration(row), "cases": row["cases"],
        "failed_cases": len(failed) if isinstance(failed, list) else row.get("failed_cases_count", 0),
        "failed_case_ids": failed if isinstance(failed, list) else [],
        "selection": details.get("selection"), "rubrics": row.get("rubrics") or {},
    }


def list_runs(wb: Workbench, limit: int | None = None) -> list[dict[str, Any]]:
    """Stored runs, newest first: verdict, commit, times, duration, cases, failed cases."""
    with wb.db.cursor() as cur:
        return [_summary(r) for r in eval_repo.list_runs(cur, limit)]


def load_run(wb: Workbench, run_id: str) -> dict[str, Any]:
    """The full run artifact from its file; when the file is gone, what the database
    kept (summary and rubric outcomes, no expected/actual) with ``"from_database": True``."""
    if not _RUN_ID.match(run_id or ""):
        raise BadInput(f"not a run id: {run_id!r}")
    with wb.db.cursor() as cur:
        row = eval_repo.get_run(cur, run_id)
        case_rows = eval_repo.case_results(cur, run_id) if row else []
    names = [((row or {}).get("details") or {}).get("artifact"), f"{run_id}.json"]
    for name in filter(None, names):
        path = wb.settings.eval_results_dir / Path(name).name
        if path.is_file():
            try:
                run = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                continue
            if isinstance(run, dict) and run.get("run_id") == run_id:
                return run
    if row is None:
        raise NotFound(f"No eval run {run_id} in the database or in {wb.settings.eval_results_dir}.")
    details = row.get("details") or {}
    results: dict[str, dict] = {}
    for cr in case_rows:
        result = results.setdefault(cr["case_id"], {"case_id": cr["case_id"], "title": None, "status": "ran",
                                                     "error": None, "rubrics": {}, "expected": None,
                                                     "actual": None})
        if cr["rubric"] == "case_error":
            result["status"], result["error"] = "error", cr["detail"]
        else:
            result["rubrics"][cr["rubric"]] = {"passed": cr["passed"], "reason": cr["detail"]}
    return {
        "run_id": run_id, "started_at": row["started_at"].isoformat() + "Z",
        "finished_at": row["finished_at"].isoformat() + "Z" if row["finished_at"] else None,
        "verdict": row["verdict"], "cases": row["cases"], "rubrics": row.get("rubrics") or {},
        "baseline": row.get("baseline") or {}, "results": sorted(results.values(), key=lambda r: r["case_id"]),
        **{k: v for k, v in details.items() if k != "artifact"}, "from_database": True,
    }


def rubric_trend(wb: Workbench) -> list[dict[str, Any]]:
    """``{run_id, started_at, rubric, label, pass_rate}`` for every rubric of every run, oldest first."""
    with wb.db.cursor() as cur:
        found = eval_repo.rubric_pass_rates(cur)
    return [{**r, "label": rubric_label(r["rubric"])} for r in found if r["pass_rate"] is not None]


def stage_latency(run: dict) -> list[dict[str, Any]]:
    """``{stage, label, p50, p95, n, total, bottleneck}`` per pipeline stage (milliseconds),
    in the run's (pipeline) order; ``bottleneck`` marks the stage with the largest total time."""
    latency = run.get("latency") or {}
    bottleneck = latency.get("bottleneck")
    out = []
    for stage, stats in (latency.get("stages") or {}).items():
        if not isinstance(stats, dict):
            continue
        out.append({"stage": stage, "label": stage_label(stage), "p50": float(stats.get("p50") or 0.0),
                    "p95": float(stats.get("p95") or 0.0), "n": stats.get("n"), "total": stats.get("total"),
                    "bottleneck": stage == bottleneck})
    return out


# --- what a reviewer reads first -------------------------------------------------------

def _failing(result: dict) -> list[tuple[str, str | None]]:
    return [(name, (o or {}).get("reason") if isinstance(o, dict) else None)
            for name, o in (result.get("rubrics") or {}).items()
            if (o.get("passed") if isinstance(o, dict) else o) is False]


def case_failed(result: dict) -> bool:
    return result.get("status") == "error" or bool(_failing(result))


def ordered_cases(run: dict) -> list[dict]:
    """The run's case results, failed cases first (each group in run order)."""
    results = run.get("results") or []
    return [r for r in results if case_failed(r)] + [r for r in results if not case_failed(r)]


def failure_rows(run: dict) -> list[dict[str, str]]:
    """One row per failed rubric (or error) of every failed case, in plain words."""
    out = []
    for result in ordered_cases(run):
        if not case_failed(result):
            break
        title = result.get("title") or ""
        if result.get("status") == "error":  # its rubrics all failed for this one reason
            out.append({"case_id": result["case_id"], "title": title, "rubric": "case_error",
                        "check": rubric_label("case_error"),
                        "reason": result.get("error") or "The case stopped with an error."})
            continue
        for rubric, reason in _failing(result):
            out.append({"case_id": result["case_id"], "title": title, "rubric": rubric,
                        "check": rubric_label(rubric), "reason": reason or "No reason was recorded."})
    return out


def rubric_table(run: dict) -> list[dict[str, Any]]:
    """Each rubric's pass rate against its threshold and the baseline, with a plain status."""
    thresholds = run.get("thresholds") or {}
    baseline = run.get("baseline") or {}
    gate = {(g.get("kind"), g.get("rubric")) for g in run.get("gate") or []}
    out = []
    for rubric, rate in sorted((run.get("rubrics") or {}).items(), key=lambda kv: (kv[1], kv[0])):
        threshold, base = thresholds.get(rubric), baseline.get(rubric)
        change = None if base is None else round((rate - base) * 100, 1)
        # The gate judged the run (golden.gate.judge); the page shows that verdict, never its own.
        problems = [word for kind, word in (("below_threshold", "Below threshold"), ("regressed", "regressed"))
                    if (kind, rubric) in gate]
        status = _sentence(", ".join(problems)) if problems else (
            "Meets threshold" + (", below baseline" if change is not None and change < 0 else ""))
        out.append({"rubric": rubric, "label": rubric_label(rubric), "pass_rate": rate, "threshold": threshold,
                    "baseline": base, "change_points": change, "status": status, "ok": not problems})
    return out


def gate_reasons(run: dict) -> list[dict[str, str]]:
    """The gate's reasons for a failed verdict in plain words, one ``{subject, reasons}``
    per rubric or case (a rubric below its threshold and regressed is one line)."""
    grouped: dict[tuple, dict[str, Any]] = {}
    for g in run.get("gate") or []:
        kind = GATE_KIND_LABELS.get(g.get("kind"), (g.get("kind") or "gate").replace("_", " ").capitalize())
        subject = " · ".join(filter(None, [rubric_label(g["rubric"]) if g.get("rubric") else None,
                                           f"case {g['case_id']}" if g.get("case_id") else None])) or "The run"
        entry = grouped.setdefault((g.get("rubric"), g.get("case_id")), {"subject": subject, "parts": []})
        message = (g.get("message") or "").strip()
        entry["parts"].append(f"{kind.lower()}" + (f" ({message})" if message else ""))
    return [{"subject": e["subject"], "reasons": _sentence("; ".join(e["parts"]))} for e in grouped.values()]


def ordered_facts(result: dict) -> list[dict]:
    """The case's facts, those a failing reason quotes first (the likely culprits)."""
    reasons = " ".join(reason or "" for _, reason in _failing(result)).lower()
    facts = list((result.get("actual") or {}).get("facts") or [])

    def named(fact: dict) -> bool:
        quote = str((fact.get("citation") or {}).get("quote_or_value") or "").strip().lower()
        return bool(quote) and quote in reasons

    return [f for f in facts if named(f)] + [f for f in facts if not named(f)]


def golden_case_ids() -> list[str]:
    """The ids of the golden cases a run can be limited to."""
    from golden.cases import case_files

    return [p.stem for p in case_files()]


def document_key_for(result: dict, citation: dict) -> str | None:
    """Which of the case's documents a ``documents:<id>`` citation points at."""
    source = str(citation.get("source_id") or "")
    if not source.startswith("documents:"):
        return None
    try:
        doc_id = int(source.split(":", 1)[1])
    except ValueError:
        return None
    for key, doc in ((result.get("actual") or {}).get("documents") or {}).items():
        if isinstance(doc, dict) and doc.get("document_id") == doc_id:
            return key
    return None


# --- showing a case's cited source ----------------------------------------------------

@dataclass
class FixtureSource:
    """A fixture document's cited place: a page image (box drawn by the page) or the
    cited paragraph / cell range / segment text."""

    title: str
    location: str
    quote: str
    page_png: bytes | None = None
    box: dict | None = None
    source_text: str | None = None
    note: str | None = None


Builder = Callable[[str, str], tuple[bytes, str]]


def _default_builder(case_id: str, name: str) -> tuple[bytes, str]:
    """Rebuild the document a case uploaded as ``name`` (a document key, or the
    ``"as"`` name of an upload step, e.g. a second upload of the same file)."""
    from golden.cases import load_case
    from golden.documents import SharedDataMissing, build

    try:
        case = load_case(case_id)
        key = name if name in case.documents else next(
            (s.upload for s in case.steps if s.upload and s.name == name), name)
        return build(case_id, key)
    except KeyError as exc:  # no such case file, or no such document in it
        raise NotFound(f"case {case_id} has no document {name} here ({exc})") from None
    except SharedDataMissing as exc:
        raise NotFound(str(exc)) from None


def _render_page(data: bytes, page: int) -> bytes | None:
    from extract.sniff import sniff_kind

    kind = sniff_kind(data)
    if kind == "pdf":
        import pymupdf

        with pymupdf.open(stream=data, filetype="pdf") as pdf:
            if not 1 <= page <= pdf.page_count:
                return None
            return pdf[page - 1].get_pixmap(dpi=110).tobytes("png")
    if kind in ("png", "jpeg", "webp", "tiff"):
        from PIL import Image

        with Image.open(io.BytesIO(data)) as image:
            try:
                image.seek(page - 1)
            except EOFError:
                return None
            buf = io.BytesIO()
            image.convert("RGB").save(buf, format="PNG")
            return buf.getvalue()
    return None


def cited_source(case_id: str, doc_key: str, citation: dict, *, builder: Builder | None = None) -> FixtureSource:
    """Rebuild the case's fixture document and find the cited place in it."""
    source = FixtureSource(title=doc_key, location=str(citation.get("page_or_section") or ""),
                           quote=str(citation.get("quote_or_value") or ""))
    try:
        data, filename = (builder or _default_builder)(case_id, doc_key)
    except NotFound as exc:
        source.note = f"the fixture document could not be rebuilt: {exc.message}"
        return source
    source.title = filename
    page = citation.get("page")
    if page is not None:
        source.page_png = _render_page(data, int(page))
        source.box = citation.get("bounding_box")
        if source.page_png is None:
            source.note = f"page {page} could not be drawn; showing the quote only"
        elif not source.box:
            source.note = "no bounding box recorded for this citation"
        return source
    from extract.normalize import normalize

    try:
        content = normalize(data, allow_ocr=False)
    except ExtractionError as exc:
        source.note = f"the source could not be re-read ({exc.code})"
        return source
    for section in content.sections:
        if section.locator == source.location:
            source.source_text = section.text
            return source
    source.note = "the cited location was not found in the rebuilt document"
    return source


# --- starting a run from the page -------------------------------------------------------

@dataclass
class RunHandle:
    """A gate run started in the background; poll it with :func:`run_progress`."""

    token: str
    progress_path: Path
    stdout_path: Path
    stderr_path: Path
    case_ids: list[str] | None = None
    started: float = field(default_factory=time.time)
    process: subprocess.Popen | None = field(default=None, repr=False, compare=False)


def _paths(results_dir: Path, token: str) -> tuple[Path, Path, Path]:
    return (results_dir / f"{token}{PROGRESS_SUFFIX}", results_dir / f"{token}.stdout.log",
            results_dir / f"{token}.stderr.log")


def start_run(settings: Settings, case_ids: list[str] | None = None, *, command: list[str] | None = None,
              jobs: int | None = None) -> RunHandle:
    """Start ``python -m core eval --json --no-record --progress FILE`` in the background
    (cwd = repository root, ``WORKBENCH_DATA_DIR`` = this data dir). ``command`` replaces
    the program and its first arguments (tests); ``--progress FILE`` and the case
    selection are appended to it."""
    results_dir = settings.eval_results_dir
    results_dir.mkdir(parents=True, exist_ok=True)
    token = f"run-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    progress, stdout, stderr = _paths(results_dir, token)
    argv = list(command or [sys.executable, "-m", "core", "eval", "--json", "--no-record"])
    argv += ["--progress", str(progress)]
    if jobs:
        argv += ["--jobs", str(int(jobs))]
    for case_id in case_ids or []:
        argv += ["--case", case_id]
    env = {**os.environ, "WORKBENCH_DATA_DIR": str(settings.data_dir.resolve())}
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        process = subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    return RunHandle(token=token, progress_path=progress, stdout_path=stdout, stderr_path=stderr,
                     case_ids=list(case_ids) if case_ids else None, process=process)


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _last_line(path: Path) -> str | None:
    try:
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    except OSError:
        return None
    lines = [ln for ln in lines if ln]
    return lines[-1][:500] if lines else None


def run_progress(handle: RunHandle | Path | str) -> dict[str, Any]:
    """Where a background run is: ``{token, state, run_id, done, total, case_id, fraction,
    finished, exit_code, error, summary}``. ``state``: starting | running | finished | crashed
    (finished means the gate printed its result, whatever the verdict)."""
    if isinstance(handle, RunHandle):
        progress_path, stdout_path, stderr_path = handle.progress_path, handle.stdout_path, handle.stderr_path
        exit_code = handle.process.poll() if handle.process is not None else None
        alive = handle.process is not None and exit_code is None
    else:
        progress_path = Path(handle)
        token = progress_path.name.removesuffix(PROGRESS_SUFFIX)
        _, stdout_path, stderr_path = _paths(progress_path.parent, token)
        exit_code, alive = None, None  # unknown without the process
    token = progress_path.name.removesuffix(PROGRESS_SUFFIX)
    progress = _read_json(progress_path) or {}
    summary = _read_json(stdout_path)
    if summary is not None and "run_id" not in summary:
        summary = None
    done, total = progress.get("done") or 0, progress.get("total")
    report: dict[str, Any] = {
        "token": token, "run_id": (summary or {}).get("run_id") or progress.get("run_id"),
        "done": done, "total": total, "case_id": progress.get("case_id"),
        "fraction": min(1.0, done / total) if isinstance(total, int) and total > 0 else 0.0,
        "finished": bool(progress.get("finished")) or summary is not None,
        "exit_code": exit_code, "error": None, "summary": summary,
    }
    if summary is not None and alive is not True:
        report["state"] = "finished"
        report["fraction"] = 1.0
    elif alive or alive is None:  # without the process, no result yet means still going
        report["state"] = "running" if progress else "starting"
    else:
        report["state"] = "crashed"
        report["error"] = _last_line(stderr_path) or (
            f"the gate stopped (exit code {exit_code}) without printing a result")
    return report


def collect_run(wb: Workbench, handle: RunHandle) -> dict[str, Any]:
    """Poll ``handle``; once the run is finished, import it into the database and remove
    its progress and output files (kept when it crashed, for diagnosis)."""
    report = run_progress(handle)
    if report["state"] == "finished":
        skipped: list[tuple[str, str]] = []
        report["imported"] = sync_runs(wb, skipped)
        report["skipped"] = skipped
        for path in (handle.progress_path, handle.stdout_path, handle.stderr_path):
            path.unlink(missing_ok=True)
    return report
