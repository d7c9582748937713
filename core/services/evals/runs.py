"""Running the golden gate: in the foreground for ``python -m core eval``, or started from
the Evals page and followed to the end.

The gate is a client of the product, never imported by it: it runs as its own program,
``python -m golden`` (:data:`GATE_COMMAND`), from the repository root, and writes its run
to ``<eval-results>/<run_id>.json`` (docs/evals.md). :func:`run_gate` runs it and reads
that artifact back; the CLI records it with :func:`core.services.evals.records.record_run`.

From the Evals page the run is ``python -m core eval --json --no-record --progress FILE``
in a subprocess (the UI process owns the database); its progress file and printed result
say where it is, and a finished run is imported with
:func:`core.services.evals.records.sync_runs`.
"""

from __future__ import annotations

import json
import os
import secrets
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.services.evals.records import PROGRESS_SUFFIX, read_run_file, sync_runs
from core.services.workbench import Workbench
from domain.errors import BadInput, WorkbenchError
from domain.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[3]
# The case files of the gate that start_run launches (from REPO_ROOT). The gate is a client
# of the product and is never imported: a case's id is its file name (docs/evals.md).
GOLDEN_CASES_DIR = REPO_ROOT / "golden" / "cases"


def golden_case_ids(cases_dir: Path = GOLDEN_CASES_DIR) -> list[str]:
    """The ids of the golden cases a run can be limited to: the names of the case files
    the launched gate reads (none when this checkout has no golden/)."""
    return sorted(p.stem for p in cases_dir.glob("*.json")) if cases_dir.is_dir() else []


# The gate as a program (golden/__main__.py): one JSON summary on stdout with --json, errors
# as "error: CODE: message" on stderr, exit 0 (pass), 1 (fail) or 2 (bad input).
GATE_COMMAND = (sys.executable, "-m", "golden")
_ERROR_LINE = re.compile(r"^error: (?:([a-z][a-z0-9_]*): )?(.*)$")


@dataclass
class GateRun:
    """A finished run of the gate program: its exit code, the summary it printed and the
    run artifact it wrote (docs/evals.md)."""

    exit_code: int
    summary: dict[str, Any]
    run: dict[str, Any]


def gate_argv(results_dir: Path, case_ids: list[str] | None = None, *, update_baseline: bool = False,
              jobs: int | None = None, progress_path: Path | None = None,
              command: tuple[str, ...] | list[str] | None = None) -> list[str]:
    argv = [*(command or GATE_COMMAND), "--json", "--results-dir", str(Path(results_dir).resolve())]
    for case_id in case_ids or []:
        argv += ["--case", case_id]
    if update_baseline:
        argv.append("--update-baseline")
    if jobs is not None:
        argv += ["--jobs", str(int(jobs))]
    if progress_path is not None:
        argv += ["--progress", str(Path(progress_path).resolve())]
    return argv


def run_gate(settings: Settings, case_ids: list[str] | None = None, *, update_baseline: bool = False,
             jobs: int | None = None, progress_path: Path | None = None,
             command: tuple[str, ...] | list[str] | None = None) -> GateRun:
    """Run the gate program to the end (cwd = repository root, this data dir) and read the
    run it wrote. What it prints on stderr is passed on as it comes, but for its error
    lines: a bad input (exit 2, e.g. ``unknown_case``) is raised as :class:`BadInput` with
    the gate's code and words; a gate that stops without a run raises
    :class:`WorkbenchError` (``eval_gate_crashed``). A failed verdict is not an error
    here: the caller reads ``exit_code`` and the run. ``command`` replaces the program (tests)."""
    results_dir = settings.eval_results_dir
    argv = gate_argv(results_dir, case_ids, update_baseline=update_baseline, jobs=jobs, progress_path=progress_path,
                     command=command)
    env = {**os.environ, "WORKBENCH_DATA_DIR": str(settings.data_dir.resolve())}
    errors: list[str] = []
    process = subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace")
    relay = threading.Thread(target=_relay_stderr, args=(process.stderr, errors), daemon=True)
    relay.start()
    stdout = process.stdout.read()
    exit_code = process.wait()
    relay.join()
    code, message = _last_error(errors)
    if exit_code == 2:
        raise BadInput(message or f"the eval gate refused its arguments (exit code {exit_code})",
                       code=code or "bad_input")
    summary = _summary_of(stdout)
    if summary is None:
        raise WorkbenchError(message or f"the eval gate stopped (exit code {exit_code}) without printing a result",
                             code="eval_gate_crashed")
    run = read_run_file(results_dir, summary["run_id"])
    return GateRun(exit_code=exit_code, summary=summary, run=run)


def _relay_stderr(stream, errors: list[str]) -> None:
    """Pass the gate's stderr on line by line, keeping back its ``error:`` lines (the
    caller says what went wrong, once)."""
    for line in stream:
        if line.startswith("error: "):
            errors.append(line.rstrip("\n"))
        else:
            sys.stderr.write(line)
            sys.stderr.flush()


def _last_error(errors: list[str]) -> tuple[str | None, str | None]:
    if not errors:
        return None, None
    match = _ERROR_LINE.match(errors[-1])
    return (match.group(1), match.group(2)) if match else (None, errors[-1])


def _summary_of(stdout: str) -> dict[str, Any] | None:
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    if not lines:
        return None
    try:
        summary = json.loads(lines[-1])
    except json.JSONDecodeError:
        return None
    return summary if isinstance(summary, dict) and isinstance(summary.get("run_id"), str) else None


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
