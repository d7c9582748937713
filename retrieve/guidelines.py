"""Guideline index building and hybrid search.

``build_indexes`` writes the two search stores of one corpus version: the tantivy BM25
index and the LanceDB ``guideline_chunks`` vectors. The DuckDB rows and the active flag,
flipped last so the workbench never answers from an incomplete version, are the indexing
service's (core.services.answer.corpus); retrieval reads no repository.

Search: BM25 top-N and dense top-N -> reciprocal rank fusion -> rerank -> threshold ->
top-k cited chunks, or ``not_found``. Chunk texts and vectors are held in memory once per
searcher so a query costs one query embedding, one tantivy query and one LanceDB query.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Protocol, Sequence

import numpy as np
from pydantic import BaseModel

from domain.errors import WorkbenchError
from corpus.loader import GuidelineChunk
from retrieve import lexical
from retrieve.embedder import Embedder
from retrieve.fusion import reciprocal_rank_fusion
from retrieve.rerank import LocalReranker, RerankCandidate, Reranker
from storage.keyword_index import KeywordDoc, KeywordIndex
from storage.protocols import KeywordSearchIndex, VectorIndex
from storage.vector_store import GuidelineVectorRow, VectorStore

THRESHOLDS_FILE = Path(__file__).resolve().parent / "thresholds.json"
SPARSE_N = 30
DENSE_N = 30
RERANK_N = 30
EMBED_BATCH = 64


class SearchableChunk(Protocol):
    """What search reads of a chunk: a corpus.loader.GuidelineChunk, or the row
    storage.guideline_repo reads back (GuidelineRow) for the active version."""

    @property
    def chunk_id(self) -> str: ...

    @property
    def corpus_version(self) -> str: ...

    @property
    def source_title(self) -> str: ...

    @property
    def section(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def citation(self) -> dict[str, Any]: ...


class GuidelineIndexMissing(WorkbenchError):
    code = "guideline_index_missing"


class ThresholdNotCalibrated(WorkbenchError):
    code = "threshold_not_calibrated"


# -- indexing ---------------------------------------------------------------------------


def build_indexes(data_dir: Path | str, corpus_version: str, chunks: Sequence[GuidelineChunk],
                  embedder: Embedder, *, store: VectorIndex | None = None,
                  force: bool = False) -> dict[str, int | bool]:
    """Build (or complete) the keyword index and vector rows for one version.

    Only chunks without a vector from this embedder are embedded, so a rerun after a
    crash finishes the job instead of starting over; ``force`` rebuilds and re-embeds all.
    """
    keyword: KeywordSearchIndex = KeywordIndex(data_dir, corpus_version)
    keyword_count, keyword_skipped = keyword.build(
        (KeywordDoc(c.chunk_id, c.source_title, c.section, c.text) for c in chunks),
        rebuild=force or (keyword.is_complete() and keyword.doc_count() != len(chunks)),
    )
    store = store if store is not None else VectorStore.for_data_dir(data_dir)
    wanted = {c.chunk_id for c in chunks}
    have, _ = store.guideline_vectors(corpus_version)
    store.remove_guideline_chunks(corpus_version, [cid for cid in have if cid not in wanted])
    embedded_ids = set() if force else set(store.guideline_vectors(corpus_version, embedding_model=embedder.name)[0])
    todo = [c for c in chunks if c.chunk_id not in embedded_ids]
    for start in range(0, len(todo), EMBED_BATCH):
        batch = todo[start : start + EMBED_BATCH]
        vectors = embedder.embed([c.index_text for c in batch])
        store.upsert_guideline_chunks(
            GuidelineVectorRow(c.chunk_id, corpus_version, c.text, v, embedder.name)
            for c, v in zip(batch, vectors)
        )
    return {
        "keyword": keyword_count,
        "keyword_skipped": keyword_skipped,
        "vectors": store.count_guideline_chunks(corpus_version, embedding_model=embedder.name),
        "embedded": len(todo),
    }


# -- thresholds -------------------------------------------------------------------------


def threshold_key(reranker_name: str, embedder_name: str) -> str:
    return f"{reranker_name}/{embedder_name}"


def load_threshold(reranker_name: str, embedder_name: str, path: Path = THRESHOLDS_FILE) -> float:
    """The checked-in threshold for this reranker (and embedder, whose cosine it uses)."""
    entries = json.loads(path.read_text(encoding="utf-8"))
    for key in (threshold_key(reranker_name, embedder_name), threshold_key(reranker_name, "*")):
        if key in entries:
            return float(entries[key]["threshold"])
    raise ThresholdNotCalibrated(
        f"no guideline threshold for {threshold_key(reranker_name, embedder_name)}: "
        "run `python -m retrieve.calibrate --write` or pass threshold explicitly"
    )


# -- search -----------------------------------------------------------------------------


class GuidelineHit(BaseModel):
    chunk_id: str
    corpus_version: str
    source_title: str
    section: str
    score: float
    text: str
    citation: dict[str, Any]


class SearchResult(BaseModel):
    not_found: bool
    results: list[GuidelineHit]
    corpus_version: str
    threshold: float
    best_score: float | None  # the top reranked score, even when below the threshold
    reranker: str
    timings_ms: dict[str, float]


class GuidelineSearcher:
    """Hybrid guideline search over one corpus version, built once and reused.

    ``chunks``: the version's chunks, all one version (the caller reads the active ones
    from the database). ``threshold`` defaults to the checked-in value for this reranker
    and embedder.
    """

    def __init__(
        self,
        data_dir: Path | str,
        *,
        embedder: Embedder,
        reranker: Reranker | None = None,
        chunks: Sequence[SearchableChunk],
        threshold: float | None = None,
        store: VectorIndex | None = None,
        sparse_n: int = SPARSE_N,
        dense_n: int = DENSE_N,
        rerank_n: int = RERANK_N,
    ):
        if not chunks:
            raise GuidelineIndexMissing("no active guideline corpus: run the indexer first")
        versions = {c.corpus_version for c in chunks}
        if len(versions) != 1:
            raise ValueError(f"chunks span several corpus versions: {sorted(versions)}")
        self.corpus_version = versions.pop()
        self.embedder = embedder
        self.reranker = reranker or LocalReranker(embedder)
        self.threshold = threshold if threshold is not None else load_threshold(self.reranker.name, embedder.name)
        self._chunks = {c.chunk_id: c for c in chunks}
        self._keyword: KeywordSearchIndex = KeywordIndex(data_dir, self.corpus_version)
        if not self._keyword.is_complete():
            raise GuidelineIndexMissing(f"keyword index missing for {self.corpus_version}")
        self._store: VectorIndex = store if store is not None else \
            VectorStore.for_data_dir(data_dir, read_consistency_interval=None)
        ids, matrix = self._store.guideline_vectors(self.corpus_version, embedding_model=embedder.name)
        missing = set(self._chunks) - set(ids)
        if missing:
            raise GuidelineIndexMissing(
                f"{len(missing)} chunks of {self.corpus_version} have no {embedder.name} vector"
            )
        self._row = {cid: i for i, cid in enumerate(ids)}
        self._ids = ids
        self._matrix = matrix
        # Rows scaled to unit length once: the dense search is then one matrix-vector
        # product over the vectors already held here (exact cosine, as LanceDB's flat
        # search computes it), instead of a LanceDB query that spent 60% of a search
        # reading the same vectors again.
        norms = np.linalg.norm(matrix, axis=1, keepdims=True) if len(ids) else np.ones((0, 1), np.float32)
        self._unit = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
        self._sizes = (sparse_n, dense_n, rerank_n)

    def warm_up(self) -> None:
        """Load the embedding model and chunk term sets now, so the first user query
        does not pay for them (call once at server start; not done in ``__init__``
        because a keyed embedder would make a network call)."""
        self.embedder.embed(["warm up"])
        for chunk in self._chunks.values():
            lexical.terms(chunk.text)
            lexical.terms(f"{chunk.source_title} {chunk.section}")

    def rank(self, query: str) -> tuple[list[tuple[str, float]], dict[str, float]]:
        """Every merged candidate with its rerank score, best first, plus timings (ms)."""
        sparse_n, dense_n, rerank_n = self._sizes
        t0 = time.perf_counter()
        sparse = self._keyword.search(lexical.keyword_query(query), sparse_n)
        t1 = time.perf_counter()
        qvec = self.embedder.embed([query])[0]
        t2 = time.perf_counter()
        dense = self.dense(qvec, dense_n)
        t3 = time.perf_counter()
        fused = reciprocal_rank_fusion([[cid for cid, _ in sparse], [cid for cid, _ in dense]])
        bm25 = dict(sparse)
        candidates = []
        for cid, _ in fused[:rerank_n]:
            chunk = self._chunks.get(cid)
            if chunk is None:  # a vector row whose chunk is no longer loaded
                continue
            similarity = float(self._matrix[self._row[cid]] @ qvec)
            candidates.append(RerankCandidate(cid, chunk.text, chunk.section, chunk.source_title,
                                              bm25.get(cid), similarity))
        t4 = time.perf_counter()
        ranked = self.reranker.rerank(query, candidates)
        t5 = time.perf_counter()
        timings = {"sparse": t1 - t0, "embed": t2 - t1, "dense": t3 - t2, "fuse": t4 - t3, "rerank": t5 - t4}
        return ranked, {k: round(v * 1000, 3) for k, v in timings.items()}

    def dense(self, qvec: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Top ``k`` ``(chunk_id, cosine)`` by the held vectors, best first (ties by row)."""
        if k <= 0 or not self._ids:
            return []
        q = np.asarray(qvec, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        scores = self._unit @ (q / norm if norm else q)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]
        return [(self._ids[i], float(scores[i])) for i in top]

    def search(self, query: str, k: int = 5) -> SearchResult:
        start = time.perf_counter()
        if not query.strip():
            ranked, timings = [], {"sparse": 0.0, "embed": 0.0, "dense": 0.0, "fuse": 0.0, "rerank": 0.0}
        else:
            ranked, timings = self.rank(query)
        passing = [(cid, score) for cid, score in ranked if score >= self.threshold][:k]
        hits = [
            GuidelineHit(
                chunk_id=cid, corpus_version=self.corpus_version, source_title=self._chunks[cid].source_title,
                section=self._chunks[cid].section, score=score, text=self._chunks[cid].text,
                citation=dict(self._chunks[cid].citation),
            )
            for cid, score in passing
        ]
        timings["total"] = round((time.perf_counter() - start) * 1000, 3)
        return SearchResult(
            not_found=not hits, results=hits, corpus_version=self.corpus_version, threshold=self.threshold,
            best_score=ranked[0][1] if ranked else None, reranker=self.reranker.name, timings_ms=timings,
        )
