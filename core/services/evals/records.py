"""Eval runs for reviewers: store, import and read runs of the golden gate.

The gate (``python -m golden``, run by ``python -m core eval``) writes each run to
``<data dir>/eval-results/<run_id>.json`` (format: docs/evals.md). The CLI reads it back
(:func:`read_run_file`) and stores it in DuckDB through :func:`record_run`; a run started from the Evals page (``eval_runs``) runs as a
subprocess with ``--no-record`` (the UI process owns the database), and the page imports
finished run files with :func:`sync_runs`. The run file is the full record; the database
keeps the summary and one row per (case, rubric) for listing and trends. What a reviewer
reads of a run is ``eval_report``; a case's cited source, ``eval_sources``.
"""

from __future__ import annotations

import json
import re
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from domain.errors import BadInput, NotFound
from core.services.evals.report import VERDICT_LABELS, rubric_label, stage_label, verdict_label
from core.services.workbench import Workbench
from storage import eval_repo

PROGRESS_SUFFIX = ".progress.json"
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_record_lock = threading.Lock()

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
        run = _read_run_file(wb.settings.eval_results_dir / Path(name).name, run_id)
        if run is not None:
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


def _read_run_file(path: Path, run_id: str) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return run if isinstance(run, dict) and run.get("run_id") == run_id else None


def read_run_file(results_dir: Path, run_id: str) -> dict[str, Any]:
    """The run artifact ``<results_dir>/<run_id>.json`` as the gate wrote it, checked
    (:func:`check_run`); :class:`NotFound` when there is no such readable file."""
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
        raise BadInput(f"not a run id: {run_id!r}")
    run = _read_run_file(Path(results_dir) / f"{run_id}.json", run_id)
    if run is None:
        raise NotFound(f"the gate wrote no readable run {run_id} in {results_dir}")
    check_run(run)
    return run


WHOLE_SET = "Whole golden set"
SOME_CASES = "Chosen cases only"


def _selection(raw: Any) -> list[str]:
    """The case ids a run was limited to ([] for the whole golden set)."""
    try:
        chosen = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return []
    return [str(c) for c in chosen] if isinstance(chosen, list) else []


def rubric_trend(wb: Workbench) -> list[dict[str, Any]]:
    """``{run_id, started_at, rubric, label, pass_rate, series, cases}`` for every rubric of
    every run, oldest first. ``series`` keeps whole-set runs apart from runs of chosen
    cases: their pass rates are over different cases and do not compare."""
    with wb.db.cursor() as cur:
        found = eval_repo.rubric_pass_rates(cur)
    out = []
    for r in found:
        if r["pass_rate"] is None:
            continue
        chosen = _selection(r.pop("selection", None))
        out.append({**r, "label": rubric_label(r["rubric"]), "series": SOME_CASES if chosen else WHOLE_SET,
                    "cases": len(chosen) if chosen else r.get("cases")})
    return out


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
