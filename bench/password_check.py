"""Cost of judging a password, long or short (was a < 2 s assertion in
tests/domain/test_access_policy.py; speed is measured here, never asserted in unit tests).

Times ``password_problem`` on passwords of the maximum length (1,024 characters), a
guessable one and a long pass phrase, against a baseline measured in the same run: the
same password cut to STRENGTH_CHARS (72), all the strength estimator (zxcvbn) ever sees.
The ratio must stay near 1 (the characters past the cap cost nothing) and the time far
under a second; a typical 21-character phrase is shown for scale. To show why the cap is
there, the estimator alone is also timed on uncapped inputs longer than the cap: its cost
grows steeply with length (a 1,024-character input took most of a minute).
Usage: python bench/password_check.py [--repeat 5] [--uncapped 144,288]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere


def seconds(fn, repeat: int) -> float:
    """Median wall-clock seconds of ``fn()`` over ``repeat`` calls."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main(argv: list[str] | None = None) -> int:
    from zxcvbn import zxcvbn

    from domain.policy.access import permissions as access

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--uncapped", default="144,288",
                        help="comma-separated lengths at which the estimator alone is timed without the cap")
    args = parser.parse_args(argv)
    longest, cap = access.MAX_PASSWORD_LENGTH, access.STRENGTH_CHARS

    def judged(password: str) -> tuple[float, str]:
        verdict = access.password_problem(password, username="bench.a")
        took = seconds(lambda: access.password_problem(password, username="bench.a"), args.repeat)
        return took, "refused" if verdict else "accepted"

    access.password_problem("warm up the estimator", username="bench.a")  # its dictionaries load once
    print(f"password_problem, median of {args.repeat}; the estimator sees at most {cap} chars")
    typical, verdict = judged("correct horse battery")
    print(f"{'typical 21-char phrase':>24}: {typical * 1000:8.1f} ms  {verdict}")
    for label, text in (("guessable", "abcd" * longest), ("phrase", "correct horse battery " * 50)):
        baseline, _ = judged(text[:cap])
        took, verdict = judged(text[:longest])
        print(f"{f'{longest} chars, {label}':>24}: {took * 1000:8.1f} ms  {verdict}; its first {cap} chars "
              f"(baseline) {baseline * 1000:.1f} ms: {took / baseline:.2f}x baseline")
    print("the estimator alone, without the cap:")
    for n in (int(s) for s in args.uncapped.split(",") if s):
        text = ("abcd" * n)[:n]
        took = seconds(lambda t=text: zxcvbn(t, max_length=n), 1)
        print(f"{f'{n} chars, guessable':>24}: {took * 1000:8.1f} ms  ({took / typical:,.0f}x the typical phrase)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
