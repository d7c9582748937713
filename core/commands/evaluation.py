"""The eval command: run the golden gate (its own program, ``python -m golden``), record
the run it wrote, and its text summary. The JSON answer is the gate's, passed on as it
printed it, and so is its exit status (1 when the verdict is ``fail``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from core.commands.base import open_here
from core.services.evals.report import coverage_guard_lines
from core.services.evals.runs import run_gate
from domain.errors import WorkbenchError
from domain.settings import get_settings


def cmd_eval(args) -> dict[str, Any]:
    # An unknown --case is the gate's to say: BadInput (unknown_case, exit 2) from run_gate.
    gate = run_gate(get_settings(), args.case or None, update_baseline=args.update_baseline, jobs=args.jobs,
                    progress_path=Path(args.progress) if args.progress else None)
    run = gate.run
    if not args.no_record:
        _record_eval(run)
    out = dict(gate.summary)
    if not args.json:
        out["_text"] = _eval_text(run)
    if gate.exit_code != 0 or run["verdict"] != "pass":
        out["_exit"] = gate.exit_code or 1
        out["_error"] = "the eval gate failed: " + "; ".join(g["message"] for g in (run.get("gate") or [])[:5])
    return out


def _record_eval(run: dict[str, Any]) -> None:
    """Store the run in the database too; when the UI owns the database the JSON file is
    enough (the Evals page imports it)."""
    from core.services.evals.records import record_run

    try:
        wb = open_here()
    except WorkbenchError as exc:
        print(f"note: run kept as JSON only ({exc.message})", file=sys.stderr)
        return
    try:
        record_run(wb, run)
    finally:
        wb.close()


def _eval_text(run: dict[str, Any]) -> str:
    """The human summary, built from the run artifact the gate wrote."""
    rubrics, thresholds, baseline = run.get("rubrics") or {}, run.get("thresholds") or {}, run.get("baseline") or {}
    lines = [f"eval {run['run_id']}: {run['verdict'].upper()} - {run.get('cases', 0)} cases in "
             f"{run.get('seconds') or 0:.1f} s"]
    width = max(len(n) for n in rubrics) if rubrics else 0
    for name, rate in rubrics.items():
        limit = thresholds.get(name)
        base = baseline.get(name)
        lines.append(f"  {name:<{width}}  {rate:6.1%}  threshold {limit if limit is None else f'{limit:.0%}'}"
                     f"  baseline {base if base is None else f'{base:.0%}'}")
    latency = run.get("latency") or {}
    stages = latency.get("stages") or {}
    if stages:
        lines.append("  latency (ms, p50/p95): " + ", ".join(f"{s} {v['p50']:.0f}/{v['p95']:.0f}"
                                                           for s, v in stages.items()))
        lines.append(f"  bottleneck: {latency.get('bottleneck')}")
    failed = run.get("failed_cases") or []
    for r in run.get("results") or []:
        if r["case_id"] in failed:
            why = r.get("error") or "; ".join(f"{k}: {v['reason']}" for k, v in (r.get("rubrics") or {}).items()
                                              if not v["passed"])
            lines.append(f"  FAILED {r['case_id']}: {why}")
    for g in run.get("gate") or []:
        lines.append(f"  gate: {g['message']}")
    lines += [f"  {line}" for line in coverage_guard_lines(run.get("coverage_guard"))]
    return "\n".join(lines)
