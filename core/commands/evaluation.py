"""The eval command: run the golden gate, record the run, and its text summary."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from core.commands.base import open_here
from domain.errors import BadInput, WorkbenchError
from domain.settings import get_settings


def cmd_eval(args) -> dict[str, Any]:
    from golden.gate import run_gate, summary

    settings = get_settings()
    progress = Path(args.progress) if args.progress else None
    if args.case:
        from golden.cases import load_cases

        try:
            load_cases(only=args.case)
        except KeyError as exc:
            raise BadInput(str(exc.args[0]), code="unknown_case") from None
    run = run_gate(case_ids=args.case or None, results_dir=settings.eval_results_dir,
                   update_baseline=args.update_baseline, jobs=args.jobs, progress_path=progress)
    if not args.no_record:
        _record_eval(run)
    out = summary(run)
    if not args.json:
        out["_text"] = _eval_text(run)
    if run["verdict"] != "pass":
        out["_exit"] = 1
        out["_error"] = "the eval gate failed: " + "; ".join(g["message"] for g in run["gate"][:5])
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
    lines = [f"eval {run['run_id']}: {run['verdict'].upper()} - {run['cases']} cases in {run['seconds']:.1f} s"]
    width = max(len(n) for n in run["rubrics"]) if run["rubrics"] else 0
    for name, rate in run["rubrics"].items():
        limit = run["thresholds"].get(name)
        base = run["baseline"].get(name)
        lines.append(f"  {name:<{width}}  {rate:6.1%}  threshold {limit if limit is None else f'{limit:.0%}'}"
                     f"  baseline {base if base is None else f'{base:.0%}'}")
    stages = run["latency"]["stages"]
    if stages:
        lines.append("  latency (ms, p50/p95): " + ", ".join(f"{s} {v['p50']:.0f}/{v['p95']:.0f}"
                                                           for s, v in stages.items()))
        lines.append(f"  bottleneck: {run['latency']['bottleneck']}")
    for r in run["results"]:
        if r["case_id"] in run["failed_cases"]:
            why = r["error"] or "; ".join(f"{k}: {v['reason']}" for k, v in r["rubrics"].items() if not v["passed"])
            lines.append(f"  FAILED {r['case_id']}: {why}")
    for g in run["gate"]:
        lines.append(f"  gate: {g['message']}")
    return "\n".join(lines)
