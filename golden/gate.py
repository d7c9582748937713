"""The eval gate: run the golden set, score it, compare, decide, write the run.

A run fails when a rubric's pass rate is below its threshold, when it falls more than
``REGRESSION_POINTS`` below the baseline, when a case cannot run, or when a planted
identifier leaks into a log or into the run's own artifact. (The Evals page states the
regression rule too, so its number lives in the product: ``core.services.evals.report``.) Only ``update_baseline=True``
writes ``golden/baseline.json``.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from core.services.evals.report import REGRESSION_POINTS
from golden.cases import load_cases
from golden.latency import summarize
from golden.redact import find, redact
from golden.rubrics import RUBRICS
from golden.runner import run_cases

GOLDEN_DIR = Path(__file__).resolve().parent
BASELINE_PATH = GOLDEN_DIR / "baseline.json"
THRESHOLDS_PATH = GOLDEN_DIR / "thresholds.json"
MIN_CASES = 60


def _read(path: Path) -> dict[str, float]:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=GOLDEN_DIR.parent, capture_output=True,
                             text=True, timeout=5)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _write_atomic(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=1, default=str, sort_keys=False), encoding="utf-8")
    tmp.replace(path)


def pass_rates(results: list[dict[str, Any]]) -> dict[str, float]:
    rates = {}
    for name in RUBRICS:
        scored = [r["rubrics"].get(name, {}).get("passed", False) for r in results]
        rates[name] = round(sum(scored) / len(scored), 4) if scored else 0.0
    return rates


def judge(rates: dict[str, float], thresholds: dict[str, float], baseline: dict[str, float],
          results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every reason the run fails, in words (empty when it passes)."""
    reasons = []
    for name, rate in rates.items():
        if name in thresholds and rate < thresholds[name]:
            reasons.append({"kind": "below_threshold", "rubric": name, "case_id": None,
                            "message": f"{name} passed {rate:.0%} of cases; the threshold is {thresholds[name]:.0%}"})
        if name in baseline and (baseline[name] - rate) * 100 > REGRESSION_POINTS:
            reasons.append({"kind": "regressed", "rubric": name, "case_id": None,
                            "message": f"{name} fell from {baseline[name]:.0%} (baseline) to {rate:.0%}"})
    for r in results:
        if r["status"] == "error":
            reasons.append({"kind": "case_error", "rubric": None, "case_id": r["case_id"],
                            "message": f"{r['case_id']} could not run: {r['error']}"})
        elif not r["rubrics"].get("no_phi_in_logs", {}).get("passed", True):
            reasons.append({"kind": "canary_leak", "rubric": "no_phi_in_logs", "case_id": r["case_id"],
                            "message": f"{r['case_id']}: {r['rubrics']['no_phi_in_logs']['reason']}"})
    return reasons


def _coverage_guard(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The coverage guard's figures for the run: each case's tally (taken out of its
    result) and the layouts written to measure it (golden.coverage_measure)."""
    from golden.coverage_measure import layout_samples, score_sample, scores_from, tally_from_dict

    tallies = [tally_from_dict(c) for r in results if (c := r.pop("coverage", None)) and "error" not in c]
    try:
        written = [score_sample(s) for s in layout_samples()]
    except Exception as exc:  # noqa: BLE001 - a measure, never a reason for the verdict
        return {**scores_from(tallies, []), "error": f"{type(exc).__name__}: {exc}"}
    return scores_from(tallies, written)


def run_gate(*, case_ids: list[str] | None = None, results_dir: Path, update_baseline: bool = False,
             jobs: int | None = None, progress_path: Path | None = None) -> dict[str, Any]:
    """Run the gate and write its artifact; returns the run (already redacted)."""
    started_at = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    run_id = f"{started_at:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
    cases = load_cases(only=case_ids)
    canaries = sorted({s for c in cases for s in c.phi_strings()})
    done: list[str] = []

    def progress(result: dict[str, Any]) -> None:
        done.append(result["case_id"])
        if progress_path is not None:
            _write_atomic(progress_path, {"run_id": run_id, "done": len(done), "total": len(cases),
                                          "case_id": result["case_id"], "finished": False})

    if progress_path is not None:
        _write_atomic(progress_path, {"run_id": run_id, "done": 0, "total": len(cases), "case_id": None,
                                      "finished": False})
    # The documents each case uploads are kept beside the run for the Evals page (docs/evals.md).
    results = run_cases([c.id for c in cases], jobs=jobs, on_result=progress, keep_dir=Path(results_dir).resolve())

    samples: dict[str, list[float]] = {}
    usage: dict[str, float] = {}
    for r in results:
        for stage, values in r.pop("stages", {}).items():
            samples.setdefault(stage, []).extend(values)
        for k, v in r.pop("usage", {}).items():
            usage[k] = usage.get(k, 0) + v
    coverage = _coverage_guard(results)
    rates = pass_rates(results)
    thresholds, baseline = _read(THRESHOLDS_PATH), _read(BASELINE_PATH)
    gate = judge(rates, thresholds, baseline, results)
    if case_ids is None and len(cases) < MIN_CASES:
        gate.append({"kind": "case_error", "rubric": None, "case_id": None,
                     "message": f"the golden set has {len(cases)} cases; it needs at least {MIN_CASES}"})
    failed = [r["case_id"] for r in results
              if r["status"] == "error" or not all(v["passed"] for v in r["rubrics"].values())]
    run = {
        "run_id": run_id, "started_at": started_at.isoformat(timespec="seconds"),
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - t0, 2), "commit": _commit(),
        "verdict": "fail" if gate else "pass", "cases": len(results), "selection": case_ids,
        "rubrics": rates, "thresholds": thresholds, "baseline": baseline, "gate": gate, "failed_cases": failed,
        "latency": summarize(samples),
        "coverage_guard": coverage,
        "usage": {"tokens": {k: v for k, v in usage.items() if k != "cost_usd"},
                  "cost_usd": round(usage.get("cost_usd", 0.0), 4),
                  "provider": os.environ.get("WORKBENCH_DRAFTER") if usage else None},
        "results": results,
    }
    run = redact(run, canaries)
    leaked = find(json.dumps(run, default=str), canaries)
    if leaked:  # the redaction itself failed: never keep such an artifact
        run["verdict"] = "fail"
        run["gate"].append({"kind": "canary_leak", "rubric": None, "case_id": None,
                            "message": f"{len(leaked)} planted identifiers reached the run artifact"})
        run["results"] = []
    run["seconds"] = round(time.perf_counter() - t0, 2)
    run["finished_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    path = results_dir / f"{run_id}.json"
    _write_atomic(path, run)
    if update_baseline:
        _write_atomic(BASELINE_PATH, rates)
    if progress_path is not None:
        _write_atomic(progress_path, {"run_id": run_id, "done": len(results), "total": len(cases),
                                      "case_id": None, "finished": True, "verdict": run["verdict"],
                                      "path": str(path)})
    return run


def summary(run: dict[str, Any]) -> dict[str, Any]:
    """The CLI's JSON answer (DESIGN §9) plus the gate's reasons and the bottleneck."""
    return {"run_id": run["run_id"], "verdict": run["verdict"], "cases": run["cases"], "rubrics": run["rubrics"],
            "failed_cases": run["failed_cases"], "seconds": run["seconds"], "gate": run["gate"],
            "bottleneck": run["latency"]["bottleneck"], "commit": run["commit"]}
