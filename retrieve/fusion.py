"""Merging ranked lists from different retrievers."""

from __future__ import annotations

from typing import Sequence

RRF_K = 60


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Merge ranked id lists by Reciprocal Rank Fusion.

    Cormack, Clarke and Buettcher, "Reciprocal Rank Fusion outperforms Condorcet and
    individual Rank Learning Methods", SIGIR 2009: each list gives an item
    ``1 / (k + rank)`` (rank from 1) and the contributions are summed. Only ranks are
    used, so BM25 scores and cosine similarities, which live on unrelated scales, need no
    normalisation. The constant ``k`` (60 in the paper, found robust across collections)
    damps the head of each list: with k=60 rank 1 is worth 1/61 and rank 10 still 1/70,
    so an item that both retrievers place fairly high beats one that a single retriever
    places first.

    Items repeated inside one list count once, at their best rank. Ties keep the order
    in which items were first seen, so the result is deterministic.
    """
    if k < 0:
        raise ValueError("k must be non-negative")
    scores: dict[str, float] = {}
    for ranking in rankings:
        seen: set[str] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda pair: -pair[1])
