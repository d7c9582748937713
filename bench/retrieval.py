"""Latency of hybrid guideline search on synthetic corpora of 1k and 10k chunks.

    .venv/bin/python -m bench.retrieval [--sizes 1000 10000] [--queries 200] [--full-embed]

For each size it builds a throwaway tantivy index and LanceDB table in a temp dir and
prints p50/p95 of the full search (query embedding + BM25 + dense + RRF + local rerank +
threshold) and of its parts alone (the tantivy query is the floor any hybrid search
pays). The dense step is the searcher's own (one product over the vectors it holds);
measured in the same run, the same full search with the dense step done by the peers:
a LanceDB query (what the searcher did before) and faiss's exact inner-product index
(``faiss-cpu``, a bench-only dependency in requirements-bench.txt; skipped when absent).
It also checks that the searcher's dense ranking is LanceDB's, query by query. Embedding 10k chunks with MiniLM takes minutes on two
cores, so by default only ``--unique`` texts are embedded and the other chunks reuse
those vectors plus small noise (the output says so); ``--full-embed`` embeds them all.
Query vectors always come from the real model.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time

import numpy as np

from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from corpus.loader import GuidelineChunk
from retrieve import lexical
from retrieve.embedder import MiniLmOnnxEmbedder, l2_normalise
from retrieve.guidelines import GuidelineSearcher
from storage.keyword_index import KeywordDoc, KeywordIndex
from storage.vector_store import GuidelineVectorRow, VectorStore

TOPICS = ["diabetes", "A1C", "glucose", "blood pressure", "hypertension", "statin", "LDL cholesterol",
          "lipid panel", "colorectal cancer", "colonoscopy", "mammography", "cervical cytology", "HPV",
          "lung cancer", "low-dose CT", "eGFR", "albuminuria", "kidney disease", "TSH", "free T4",
          "levothyroxine", "foot examination", "retinopathy", "hypoglycemia", "prediabetes"]
VERBS = ["check", "repeat", "measure", "confirm", "screen for", "review", "monitor", "start", "stop", "refer"]
WHEN = ["every year", "every three years", "every five years", "within a month", "after 4 to 12 weeks",
        "at diagnosis", "at every visit", "twice a year", "from age 45", "between ages 50 and 75"]
FILLER = ("the clinician patient adults people risk results test value range goal follow up evidence "
          "recommendation interval history family treatment lifestyle discussion shared decision making "
          "higher lower normal abnormal category stage level sample office home clinic report").split()
QUERY_TEMPLATES = ["How often should {t} be checked?", "When should we {v} {t}?", "What is the goal for {t}?",
                   "{t} follow-up interval", "Who needs {t} screening?", "Is {t} recommended for older adults?"]


def synthetic_chunks(n: int, seed: int = 7) -> list[GuidelineChunk]:
    rng = random.Random(seed)
    chunks = []
    for i in range(n):
        topic, other = rng.sample(TOPICS, 2)
        sentences = []
        for _ in range(rng.randint(3, 5)):
            words = rng.sample(FILLER, 6)
            sentences.append(f"{rng.choice(VERBS).capitalize()} {topic} {rng.choice(WHEN)} when "
                             f"{' '.join(words)} suggest {other}.")
        chunks.append(GuidelineChunk.build(
            chunk_id=f"synthetic-{i // 8:05d}#section-{i % 8}",
            corpus_version="bench",
            source_title=f"Synthetic guideline {i // 8} on {topic}",
            source_reference="synthetic benchmark text",
            section=f"{rng.choice(VERBS).capitalize()} {topic} {rng.choice(WHEN)}",
            text=" ".join(sentences),
        ))
    return chunks


def synthetic_queries(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(QUERY_TEMPLATES).format(t=rng.choice(TOPICS), v=rng.choice(VERBS)) for _ in range(n)]


def chunk_vectors(chunks, embedder, unique: int, full: bool, seed: int = 3) -> tuple[np.ndarray, str]:
    texts = [c.index_text for c in chunks]
    if full or unique >= len(chunks):
        return embedder.embed(texts), f"all {len(chunks)} chunks embedded with {embedder.name}"
    base = embedder.embed(texts[:unique])
    rng = np.random.default_rng(seed)
    reps = base[np.arange(len(chunks)) % unique]
    noisy = l2_normalise(reps + rng.normal(0, 0.03, reps.shape).astype(np.float32))
    noisy[:unique] = base
    return noisy, (f"{unique} chunks embedded with {embedder.name}; the other {len(chunks) - unique} "
                   "reuse those vectors plus gaussian noise (sd 0.03), re-normalised")


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def timed(fn, repeat_inputs) -> list[float]:
    out = []
    for item in repeat_inputs:
        t = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - t) * 1000)
    return out


def run_size(n: int, embedder: MiniLmOnnxEmbedder, queries: list[str], unique: int, full: bool) -> dict:
    chunks = synthetic_chunks(n)
    with tempfile.TemporaryDirectory(prefix=f"bench-{n}-") as tmp:
        t0 = time.perf_counter()
        vectors, note = chunk_vectors(chunks, embedder, unique, full)
        t1 = time.perf_counter()
        KeywordIndex(tmp, "bench").build(KeywordDoc(c.chunk_id, c.source_title, c.section, c.text) for c in chunks)
        t2 = time.perf_counter()
        store = VectorStore.for_data_dir(tmp, read_consistency_interval=None)
        for start in range(0, n, 2000):
            store.upsert_guideline_chunks(
                GuidelineVectorRow(c.chunk_id, "bench", c.text, v, embedder.name)
                for c, v in zip(chunks[start:start + 2000], vectors[start:start + 2000])
            )
        t3 = time.perf_counter()
        searcher = GuidelineSearcher(tmp, embedder=embedder, chunks=chunks, threshold=0.0, store=store)
        keyword = KeywordIndex(tmp, "bench")
        qvecs = embedder.embed(queries)
        same = sum([cid for cid, _ in searcher.dense(v, 30)] ==
                   [cid for cid, _ in store.search_guidelines(v, "bench", 30, embedding_model=embedder.name)]
                   for v in qvecs)
        variants = {"hybrid_total": searcher.dense,
                    "with_lancedb": lambda v, k: store.search_guidelines(v, "bench", k, embedding_model=embedder.name)}
        if (flat := faiss_index(vectors)) is not None:
            ids = [c.chunk_id for c in chunks]

            def faiss_dense(v, k):
                scores, rows = flat.search(np.asarray(v, dtype=np.float32)[None, :], k)
                return [(ids[r], float(sc)) for sc, r in zip(scores[0], rows[0]) if r >= 0]

            variants["with_faiss"] = faiss_dense
        totals = interleaved(searcher, variants, queries)
        results = [searcher.search(q) for q in queries]
        rerank = [r.timings_ms["rerank"] + r.timings_ms["fuse"] for r in results]
        embed = [r.timings_ms["embed"] for r in results]
        keyword_q = [lexical.keyword_query(q) for q in queries]
        tantivy_ms = timed(lambda q: keyword.search(q, 30), keyword_q)
        parts = {**totals, "tantivy_alone": tantivy_ms, "query_embedding": embed, "fuse_and_rerank": rerank}
        return {
            "chunks": n,
            "queries": len(queries),
            "vectors": note,
            "dense_same_as_lancedb": f"{same}/{len(queries)}",
            "build_s": {"embed": round(t1 - t0, 1), "tantivy": round(t2 - t1, 2), "lance": round(t3 - t2, 2)},
            "p50_ms": {k: pct(v, 50) for k, v in parts.items()},
            "p95_ms": {k: pct(v, 95) for k, v in parts.items()},
        }


def interleaved(searcher: GuidelineSearcher, variants: dict, queries: list[str]) -> dict[str, list[float]]:
    """Whole-search ms per variant of the dense step, the variants taking turns query by
    query, so that a busy machine slows each of them alike."""
    own = searcher.dense
    out: dict[str, list[float]] = {name: [] for name in variants}
    try:
        for q in queries[:10]:  # warm the ONNX session and the caches
            searcher.search(q)
        for q in queries:
            for name, dense in variants.items():
                searcher.dense = dense
                out[name].append(searcher.search(q).timings_ms["total"])
    finally:
        searcher.dense = own
    return out


def faiss_index(vectors: np.ndarray):
    """faiss's exact inner-product index over the unit vectors (cosine), or None."""
    try:
        import faiss
    except ImportError:
        return None
    flat = faiss.IndexFlatIP(vectors.shape[1])
    flat.add(l2_normalise(np.asarray(vectors, dtype=np.float32)))
    return flat


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--unique", type=int, default=500, help="chunks embedded for real when not --full-embed")
    parser.add_argument("--full-embed", action="store_true")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--target-p95-ms", type=float, default=30.0)
    args = parser.parse_args(argv)
    embedder = MiniLmOnnxEmbedder()
    queries = synthetic_queries(args.queries)
    runs = [run_size(n, embedder, queries, args.unique, args.full_embed) for n in args.sizes]
    if args.json:
        print(json.dumps({"runs": runs, "target_p95_ms": args.target_p95_ms}))
    else:
        print(f"hybrid guideline search, {args.queries} queries, local reranker, 2-core CPU\n")
        parts = [p for p in ("hybrid_total", "with_lancedb", "with_faiss", "tantivy_alone", "query_embedding",
                             "fuse_and_rerank") if p in runs[0]["p95_ms"]]
        print(f"{'chunks':>7}  " + "  ".join(f"{p:>22}" for p in parts))
        for run in runs:
            cells = [f"{run['p50_ms'][p]:7.2f} / {run['p95_ms'][p]:7.2f} ms" for p in parts]
            print(f"{run['chunks']:>7}  " + "  ".join(f"{c:>22}" for c in cells))
        print("\n(each cell: p50 / p95; with_lancedb / with_faiss: the same search, its dense step by that peer)")
        for run in runs:
            p95 = run["p95_ms"]
            verdict = "meets" if p95["hybrid_total"] <= args.target_p95_ms else "MISSES"
            ratios = ", ".join(f"{p95['hybrid_total'] / p95[p]:.2f}x {p[5:]}" for p in ("with_lancedb", "with_faiss")
                               if p in p95)
            print(f"{run['chunks']:>6} chunks: {verdict} the p95 <= {args.target_p95_ms:.0f} ms target; p95 {ratios}; "
                  f"dense ranking the same as LanceDB's for {run['dense_same_as_lancedb']} queries; "
                  f"build {run['build_s']}; vectors: {run['vectors']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
