"""Latency of one guideline search on the real corpus after ``warm_up()`` (was a
< 1 s assertion in tests/retrieve/test_guideline_search.py; speed is measured here, never
asserted in unit tests). bench/retrieval.py covers synthetic 1k/10k corpora.

Indexes the checked-in corpus in a temp dir with the real offline embedder, warms
the searcher up as the server does at start, then times the calibration questions:
the full hybrid search, and as a baseline measured in the same run the tantivy
keyword query alone (the floor any hybrid search pays). Prints p50/p95 of both.
Usage: python bench/guideline_warm_search.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def main(argv: list[str] | None = None) -> int:
    from corpus.loader import load_corpus
    from retrieve import lexical
    from retrieve.calibrate import load_questions
    from retrieve.embedder import MiniLmOnnxEmbedder
    from retrieve.guidelines import GuidelineSearcher, build_indexes
    from storage.keyword_index import KeywordIndex

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="passes over the question set")
    args = parser.parse_args(argv)
    questions = load_questions()
    texts = [q["question"] for q in questions["in_corpus"] + questions["out_of_corpus"]] * args.repeat
    embedder = MiniLmOnnxEmbedder()
    version, chunks = load_corpus()
    with tempfile.TemporaryDirectory(prefix="bench-guidelines-") as tmp:
        build_indexes(tmp, version, chunks, embedder)
        searcher = GuidelineSearcher(tmp, embedder=embedder, chunks=chunks)
        start = time.perf_counter()
        searcher.warm_up()
        warm_s = time.perf_counter() - start
        first = searcher.search(texts[0]).timings_ms["total"]
        hybrid = [searcher.search(q).timings_ms["total"] for q in texts]
        keyword = KeywordIndex(tmp, version)
        baseline = []
        for q in texts:
            t = time.perf_counter()
            keyword.search(lexical.keyword_query(q), 30)
            baseline.append((time.perf_counter() - t) * 1000)
    print(f"{len(chunks)} corpus chunks, {len(texts)} searches; warm_up {warm_s:.2f} s; "
          f"first search after warm-up {first:.1f} ms")
    print(f"{'tantivy alone (baseline)':>26}: p50 {pct(baseline, 50):7.2f} ms  p95 {pct(baseline, 95):7.2f} ms")
    print(f"{'hybrid search (total)':>26}: p50 {pct(hybrid, 50):7.2f} ms  p95 {pct(hybrid, 95):7.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
