"""The eval gate as a program: ``python -m golden [--json] [--case ID ...] [--update-baseline]
[--jobs N] [--progress FILE] [--results-dir DIR] [--no-record]``.

``python -m core eval`` runs this in a child process (the product never imports golden/)
and passes its answer on: stdout is one JSON object with ``--json`` (the summary of
``golden.gate.summary``), errors are one line on stderr (``error: CODE: message``), and
the exit code is 0 when the verdict is ``pass``, 1 when it is ``fail`` and 2 for bad
input (an unknown ``--case``: ``error: unknown_case: ...``). The run itself is written to
``<results dir>/<run_id>.json`` with the documents it uploaded kept under
``<results dir>/documents/`` (docs/evals.md); the gate never writes the database, so
``--no-record`` is accepted for symmetry with ``core eval`` and changes nothing here.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

EXIT_FAIL = 1
EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m golden", description="run the golden eval gate")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--case", action="append", help="run only this case (repeatable)")
    p.add_argument("--update-baseline", action="store_true", help="write this run's pass rates as the baseline")
    p.add_argument("--jobs", type=int, default=None, help="cases run at once (default: one per core, at most 4)")
    p.add_argument("--progress", help="rewrite this JSON file after every case")
    p.add_argument("--results-dir", help="where the run is written (default: the data dir's eval-results/)")
    p.add_argument("--no-record", action="store_true", help="accepted for symmetry: the gate never records")
    return p


def _text(run: dict[str, Any], path: Path) -> str:
    lines = [f"eval {run['run_id']}: {run['verdict'].upper()} - {run['cases']} cases in {run['seconds']:.1f} s",
             f"  run written to {path}"]
    lines += [f"  FAILED {case_id}" for case_id in run["failed_cases"]]
    lines += [f"  gate: {g['message']}" for g in run["gate"]]
    from core.services.evals.report import coverage_guard_lines

    lines += [f"  {line}" for line in coverage_guard_lines(run.get("coverage_guard"))]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from domain.settings import get_settings
    from golden.cases import load_cases
    from golden.gate import run_gate, summary
    from storage.private_files import restrict_new_files

    restrict_new_files()  # the run and its documents go into the data dir: the owner's only
    args = build_parser().parse_args(argv)
    if args.case:
        try:
            load_cases(only=args.case)
        except KeyError as exc:
            print(f"error: unknown_case: {exc.args[0]}", file=sys.stderr)
            return EXIT_BAD_INPUT
    results_dir = Path(args.results_dir) if args.results_dir else get_settings().eval_results_dir
    # With --json stdout carries the one JSON object; anything a library prints goes to stderr.
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
        run = run_gate(case_ids=args.case or None, results_dir=results_dir, update_baseline=args.update_baseline,
                       jobs=args.jobs, progress_path=Path(args.progress) if args.progress else None)
    if args.json:
        print(json.dumps(summary(run), default=str), flush=True)
    else:
        print(_text(run, results_dir / f"{run['run_id']}.json"), flush=True)
    if run["verdict"] != "pass":
        print("error: the eval gate failed: " + "; ".join(g["message"] for g in run["gate"][:5]), file=sys.stderr)
        return EXIT_FAIL
    return 0


if __name__ == "__main__":
    sys.exit(main())
