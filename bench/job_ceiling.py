"""How soon a job's child is stopped at its ceilings (were < 10 s and < 20 s assertions in
tests/core/ingest/test_job_ceiling.py; speed is measured here, never asserted in unit tests).

Runs hostile readers through ``sandbox.run_isolated`` as the worker does (a child per job,
from the forkserver by default): one that sleeps past a time ceiling of --timeout seconds,
one that grows its memory 20 MB at a time and one that asks for 4 GB at once, both past a
--memory-mb ceiling. The baseline, measured in the same run, is a child that answers at
once: what any job pays for its child. Prints, as medians of --repeat runs, the seconds
until the job failed with resource_limit and, for the time ceiling, the overshoot past it;
each against the baseline. Targets: an overshoot of tens of ms, a few baselines (the
watch looks every 50 ms, then kills), and a memory hog stopped well under a second.
Usage: python bench/job_ceiling.py [--timeout 1.5] [--memory-mb 300] [--repeat 3] [--method forkserver]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

MB = 1024 * 1024


# The children's work: module-level, so that a forkserver child can import them by name.

def answers() -> str:
    return "done"


def stalls() -> None:
    time.sleep(600)


def hogs_memory_gradually() -> None:
    hoard = []
    while True:
        hoard.append(b"x" * (20 * MB))
        time.sleep(0.01)


def hogs_memory_at_once() -> bytes:
    return b"x" * (4096 * MB)


def one_run(fn, *, timeout: float, memory_mb: int, method: str) -> tuple[float, str]:
    """Seconds until ``fn``'s child answered or was stopped, and how it ended."""
    from core.services.ingest import sandbox
    from domain.errors import ExtractionError

    start = time.perf_counter()
    try:
        sandbox.run_isolated(fn, (), timeout=timeout, memory_mb=memory_mb, method=method)
        ended = "answered"
    except ExtractionError as exc:
        which = "time" if "longer than" in exc.message else "memory" if "memory" in exc.message else "?"
        ended = f"{exc.code} ({which})"
    return time.perf_counter() - start, ended


def main(argv: list[str] | None = None) -> int:
    from bench import job_ceiling as this  # by its module name, not __main__: the child imports it

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=1.5, help="the time ceiling (s)")
    parser.add_argument("--memory-mb", type=int, default=300, help="the memory ceiling (MB)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--method", default="forkserver", choices=("forkserver", "fork"))
    args = parser.parse_args(argv)
    limits = {"timeout": args.timeout, "memory_mb": args.memory_mb, "method": args.method}
    one_run(this.answers, **{**limits, "timeout": 60.0})  # start the forkserver outside the timing

    def median(fn, **over) -> tuple[float, str]:
        runs = [one_run(fn, **{**limits, **over}) for _ in range(args.repeat)]
        return statistics.median(t for t, _ in runs), ", ".join(sorted({e for _, e in runs}))

    print(f"job children from the {args.method}, median of {args.repeat}; ceilings {args.timeout:g} s "
          f"and {args.memory_mb} MB")
    baseline, ended = median(this.answers, timeout=60.0)
    print(f"{'a child that answers (baseline)':>34}: {baseline:6.3f} s  {ended}")
    took, ended = median(this.stalls)
    over = took - args.timeout
    print(f"{f'sleeps past the {args.timeout:g} s ceiling':>34}: {took:6.3f} s  {ended}; "
          f"{over:.3f} s past the ceiling ({over / baseline:.1f}x baseline)")
    for label, fn in (("grows 20 MB at a time", this.hogs_memory_gradually),
                      ("asks for 4 GB at once", this.hogs_memory_at_once)):
        took, ended = median(fn, timeout=30.0)
        print(f"{label:>34}: {took:6.3f} s  {ended} ({took / baseline:.1f}x baseline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
