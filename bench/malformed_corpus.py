"""The malformed corpus as an attacker or a broken interface sends it: every sample of
tests/support/malformed_corpus.py (151 generated files) and of tests/support/damaged_corpus.py
(the second round's 20, issue 28) through `python -m core ingest`, one
process each, as the app's default runs it (reading in a forkserver child under the job
ceilings). Prints, per family, the outcomes (exit codes and error codes), the worst wall
time of one ingest and the worst peak memory of its whole process tree (the CLI, its
forkserver and the job's child, sampled every 20 ms), plus the same figures for an
intact lab PDF as the baseline measured in the same run.

Usage: python bench/malformed_corpus.py [--only KIND[,KIND]] [--timeout-seconds 600]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_SAMPLE_SECONDS = 0.02


def tree_rss(proc: psutil.Process) -> int:
    try:
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def run_cli(env: dict, *args: str, timeout: float) -> tuple[int, dict, float, int]:
    """Exit code, the JSON printed (or the error), seconds, peak tree RSS in bytes."""
    started = time.perf_counter()
    popen = subprocess.Popen([sys.executable, "-m", "core", *args], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    watched = psutil.Process(popen.pid)
    peak = 0
    while popen.poll() is None:
        peak = max(peak, tree_rss(watched))
        if time.perf_counter() - started > timeout:
            popen.kill()
            break
        time.sleep(_SAMPLE_SECONDS)
    out, err = popen.communicate()
    seconds = time.perf_counter() - started
    try:
        body = json.loads(out or b"{}")
    except json.JSONDecodeError:
        body = {}
    if not body and err:
        body = {"error": err.decode(errors="replace").strip().splitlines()[-1][:200]}
    return popen.returncode, body, seconds, peak


def outcome(code: int, body: dict) -> str:
    job = body.get("job") or {}
    if code == 0:
        held = job.get("status") == "succeeded" and all(f.get("certainty") == "needs_review"
                                                         for f in body.get("facts", []))
        return "held" if held else "SUCCEEDED"
    if job.get("error_code"):
        return f"failed:{job['error_code']}"
    # stderr reads "error: <code>: <sentence>" for a file the upload check refuses
    error = (body.get("error") or "").removeprefix("error: ")
    return f"exit {code}:{body.get('code') or error.split(':')[0][:40]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="comma-separated families")
    parser.add_argument("--timeout-seconds", type=float, default=600.0, help="kill one ingest after this")
    args = parser.parse_args()

    from golden.fixtures import render_lab
    from tests.support import damaged_corpus, malformed_corpus

    samples = [*malformed_corpus.build(), *damaged_corpus.build()]
    if args.only:
        wanted = set(args.only.split(","))
        samples = [s for s in samples if s.kind in wanted]
    lab = malformed_corpus.LAB.patient
    # The damaged-but-readable samples carry the identity of the "lab" or "hl7" chart.
    people = {"demo": ("CORPUS-DEMO", "Ada", "Lind", "1970-01-01"), "lab": (lab.mrn, lab.first, lab.last, lab.dob),
              "hl7": ("WB-204118", "Marisol", "Quentara", "1978-03-14")}
    with tempfile.TemporaryDirectory(prefix="malformed-") as tmp:
        env = {**os.environ, "WORKBENCH_DATA_DIR": str(Path(tmp) / "data"), "WORKBENCH_JOB_PROCESS": "forkserver"}
        env.pop("WORKBENCH_EMBEDDER", None)
        for person in people.values():
            code, body, _, _ = run_cli(env, "patient", "add", "--mrn", person[0], "--first", person[1], "--last",
                                       person[2], "--dob", person[3], timeout=120)
            assert code == 0, body
        mrn = {key: person[0] for key, person in people.items()}

        files = Path(tmp) / "files"
        files.mkdir()
        baseline_file = files / "intact-lab.pdf"
        baseline_file.write_bytes(render_lab(malformed_corpus.LAB))
        _, _, base_s, base_rss = run_cli(env, "ingest", str(baseline_file), "--patient", mrn["lab"], "--doc-type",
                                         "lab_pdf", timeout=args.timeout_seconds)

        outcomes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        worst_s: dict[str, float] = defaultdict(float)
        worst_mb: dict[str, float] = defaultdict(float)
        started = time.perf_counter()
        for i, sample in enumerate(samples):
            path = files / f"{i:03d}-{sample.name.replace('/', '_')}"
            path.write_bytes(sample.data)
            code, body, seconds, peak = run_cli(env, "ingest", str(path), "--patient", mrn[sample.patient],
                                                "--doc-type", sample.doc_type, timeout=args.timeout_seconds)
            outcomes[sample.kind][outcome(code, body)] += 1
            worst_s[sample.kind] = max(worst_s[sample.kind], seconds)
            worst_mb[sample.kind] = max(worst_mb[sample.kind], peak / 2**20)
            path.unlink()
        total = time.perf_counter() - started

    print(f"malformed corpus through `python -m core ingest`: {len(samples)} files in {total:.0f} s "
          f"(load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"  baseline: an intact lab PDF, {base_s:.2f} s, peak {base_rss / 2**20:.0f} MB (process tree)")
    print(f"  {'family':15} {'files':>5} {'worst s':>8} {'x base':>7} {'worst MB':>9} {'x base':>7}  outcomes")
    for kind in sorted(outcomes):
        n = sum(outcomes[kind].values())
        ends = ", ".join(f"{k} {v}" for k, v in sorted(outcomes[kind].items()))
        print(f"  {kind:15} {n:5d} {worst_s[kind]:8.2f} {worst_s[kind] / base_s:7.2f} {worst_mb[kind]:9.0f} "
              f"{worst_mb[kind] / (base_rss / 2**20):7.2f}  {ends}")
    bad = [k for k, o in outcomes.items() if "SUCCEEDED" in o or any("internal_error" in x for x in o)]
    if bad:
        print(f"  NOT CONTAINED: {', '.join(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
