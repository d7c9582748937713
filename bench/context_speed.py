"""Cost of the clinical context policy per sentence (was a < 5 ms assertion in
tests/domain/test_context.py; speed is measured here, never asserted in unit tests).

Times ``assess(sentence, target)`` over N generated history sentences, and, as a
baseline measured in the same run on the same machine, a plain case-insensitive
regex search for the target in each sentence: the floor any policy that finds its
target must pay. Prints ms per sentence for both and the ratio; the policy runs on
every sentence of every page, so a few ms per sentence is the budget.
Usage: python bench/context_speed.py [--sentences 600] [--repeat 5]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere


def sentences(n: int) -> list[str]:
    return [f"Patient {i} denies chest pain, reports cough for {i} days; mother had diabetes in 20{i % 90 + 10}."
            for i in range(n)]


def per_sentence_ms(fn, texts: list[str], repeat: int) -> float:
    """Median over ``repeat`` passes of the mean cost per sentence, in ms."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for s in texts:
            fn(s)
        runs.append((time.perf_counter() - start) * 1000 / len(texts))
    return statistics.median(runs)


def main(argv: list[str] | None = None) -> int:
    from domain.policy.context.mentions import assess

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    texts = sentences(args.sentences)
    assess(texts[0], "cough")  # load the lexicon outside the timing
    target = re.compile(re.escape("cough"), re.IGNORECASE)
    baseline = per_sentence_ms(target.search, texts, args.repeat)
    policy = per_sentence_ms(lambda s: assess(s, "cough"), texts, args.repeat)
    print(f"{args.sentences} sentences, median of {args.repeat} passes")
    print(f"{'regex find (baseline)':>24}: {baseline:8.4f} ms/sentence")
    print(f"{'assess(sentence, target)':>24}: {policy:8.4f} ms/sentence  ({policy / baseline:,.0f}x baseline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
