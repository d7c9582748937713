"""Rerankers: reorder merged candidates and give each an absolute relevance score.

The score, not just the order, matters: the searcher drops everything below a calibrated
threshold and reports ``not_found`` when nothing is left. Scores of different rerankers
live on different scales, so each reranker has its own ``name`` and its own threshold.

No offline cross-encoder ships inside a wheel, so the default :class:`LocalReranker`
combines the embedder's cosine with BM25 and two lexical features a reviewer can read.
:class:`CohereReranker` calls Cohere's hosted rerank when the lead's settings give a key.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from retrieve import lexical
from retrieve.embedder import Embedder


@dataclass(frozen=True)
class RerankCandidate:
    """A merged candidate. ``bm25`` is None when only the dense retriever found it;
    ``similarity`` (query-chunk cosine) is None when the caller had no vector for it."""

    chunk_id: str
    text: str
    section: str = ""
    title: str = ""
    bm25: float | None = None
    similarity: float | None = None

    @property
    def document(self) -> str:
        return f"{self.title} - {self.section}\n{self.text}" if self.section else self.text


@runtime_checkable
class Reranker(Protocol):
    name: str

    def rerank(self, query: str, candidates: Sequence[RerankCandidate]) -> list[tuple[str, float]]:
        """``(chunk_id, score)`` for every candidate, best first."""
        ...


@dataclass(frozen=True)
class LocalRerankWeights:
    """How the local score is made; the weights sum to 1 so the score stays in 0..1.

    - ``cosine``: query-chunk cosine of the embedder, the main semantic signal. MiniLM
      cosines of unrelated texts sit near 0.0-0.2 and of matching ones near 0.5-0.8.
    - ``bm25``: BM25 squashed as ``s / (s + bm25_half)``, an absolute (not per-query
      min-max) scale, so a junk query whose best BM25 hit is weak stays weak.
    - ``coverage``: share of the question's content terms (after synonyms and
      stemming) present in the chunk; out-of-corpus questions rarely reach half.
    - ``heading``: share of the question's terms present in the section heading or
      source title, which name what a chunk is about.
    """

    cosine: float = 0.45
    bm25: float = 0.15
    coverage: float = 0.25
    heading: float = 0.15
    bm25_half: float = 12.0

    def __post_init__(self) -> None:
        total = self.cosine + self.bm25 + self.coverage + self.heading
        if abs(total - 1.0) > 1e-9 or min(self.cosine, self.bm25, self.coverage, self.heading) < 0:
            raise ValueError("local rerank weights must be non-negative and sum to 1")
        if self.bm25_half <= 0:
            raise ValueError("bm25_half must be positive")


@dataclass(frozen=True)
class LocalFeatures:
    cosine: float
    bm25: float
    coverage: float
    heading: float

    def score(self, w: LocalRerankWeights) -> float:
        return w.cosine * self.cosine + w.bm25 * self.bm25 + w.coverage * self.coverage + w.heading * self.heading


class LocalReranker:
    """Offline default. When a candidate has no ``similarity`` and an embedder is
    given, the query and that candidate are embedded here; without an embedder the
    cosine feature counts as 0 for it."""

    VERSION = "local-v1"

    def __init__(self, embedder: Embedder | None = None, weights: LocalRerankWeights | None = None):
        self._embedder = embedder
        self.weights = weights or LocalRerankWeights()
        self.name = self.VERSION

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "weights": asdict(self.weights)}

    def features(self, query: str, candidates: Sequence[RerankCandidate]) -> list[LocalFeatures]:
        q_terms = lexical.terms(query)
        sims = self._similarities(query, candidates)
        half = self.weights.bm25_half
        out = []
        for cand, sim in zip(candidates, sims):
            bm25 = max(cand.bm25 or 0.0, 0.0)
            heading_terms = lexical.terms(f"{cand.title} {cand.section}")
            doc_terms = lexical.terms(cand.text) | heading_terms
            out.append(LocalFeatures(
                cosine=min(max(sim, 0.0), 1.0),
                bm25=bm25 / (bm25 + half),
                coverage=lexical.coverage(q_terms, doc_terms),
                heading=lexical.coverage(q_terms, heading_terms),
            ))
        return out

    def rerank(self, query: str, candidates: Sequence[RerankCandidate]) -> list[tuple[str, float]]:
        scored = [(c.chunk_id, round(f.score(self.weights), 6)) for c, f in zip(candidates, self.features(query, candidates))]
        return sorted(scored, key=lambda pair: -pair[1])

    def _similarities(self, query: str, candidates: Sequence[RerankCandidate]) -> list[float]:
        sims = [c.similarity for c in candidates]
        missing = [i for i, s in enumerate(sims) if s is None]
        if missing and self._embedder is not None:
            vectors = self._embedder.embed([query] + [candidates[i].document for i in missing])
            for row, i in enumerate(missing, start=1):
                sims[i] = float(np.dot(vectors[0], vectors[row]))
        return [0.0 if s is None else float(s) for s in sims]


class CohereReranker:
    """Cohere ``rerank`` (v2 API). ``client`` is a ``cohere.ClientV2``; tests build one
    on an ``httpx.MockTransport``. Relevance scores are 0..1 and need their own threshold."""

    def __init__(self, client: Any, model: str = "rerank-v3.5"):
        self._client = client
        self._model = model
        self.name = f"cohere:{model}"

    @classmethod
    def from_api_key(cls, api_key: str, *, model: str = "rerank-v3.5", httpx_client: Any = None,
                     timeout: float = 10.0) -> "CohereReranker":
        import cohere

        return cls(cohere.ClientV2(api_key=api_key, httpx_client=httpx_client, timeout=timeout), model)

    def rerank(self, query: str, candidates: Sequence[RerankCandidate]) -> list[tuple[str, float]]:
        if not candidates:
            return []
        response = self._client.rerank(
            model=self._model,
            query=query,
            documents=[c.document for c in candidates],
            top_n=len(candidates),
        )
        ranked = [(candidates[r.index].chunk_id, float(r.relevance_score)) for r in response.results]
        return sorted(ranked, key=lambda pair: -pair[1])
