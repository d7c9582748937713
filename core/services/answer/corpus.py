"""Guideline corpus indexing (``init`` and ``index-corpus``): three stores for one corpus
version, the tantivy BM25 index, the LanceDB vectors and the DuckDB rows. The DuckDB
rows are written and the active version switched last, in one transaction, so the
workbench never answers from a version whose indexes are incomplete."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.services.workbench import Workbench
from corpus.loader import GuidelineChunk, load_corpus
from retrieve.embedder import Embedder
from retrieve.guidelines import GuidelineIndexMissing, build_indexes
from storage import guideline_repo
from storage.db import Database
from storage.keyword_index import KeywordIndex
from storage.protocols import KeywordSearchIndex, VectorIndex
from storage.vector_store import VectorStore


def index_guideline_corpus(wb: Workbench, *, force: bool = False) -> dict[str, Any]:
    """Index the checked-in corpus version (a no-op when it is already indexed)."""
    from retrieve.providers import embedder_for

    return index_corpus(wb.db, wb.settings.data_dir, embedder_for(wb.settings), force=force)


def index_corpus(db: Database, data_dir: Path | str, embedder: Embedder,
                 corpus: tuple[str, list[GuidelineChunk]] | None = None, *, force: bool = False) -> dict[str, Any]:
    """Index the checked-in corpus (or ``corpus``) into all three stores; idempotent.

    ``skipped`` is True when every store already held this version for this embedder
    and it was already the active version: nothing was written. ``force`` rebuilds the
    keyword index and re-embeds every chunk even then.
    """
    version, chunks = corpus or load_corpus()
    n = len(chunks)
    keyword: KeywordSearchIndex = KeywordIndex(data_dir, version)
    store: VectorIndex = VectorStore.for_data_dir(data_dir)
    with db.cursor() as cur:
        complete = (
            keyword.is_complete() and keyword.doc_count() == n
            and store.count_guideline_chunks(version, embedding_model=embedder.name) == n
            and guideline_repo.count_chunks(cur, version) == n
            and guideline_repo.active_version(cur) == version
        )
    if complete and not force:
        counts = {"chunks": n, "duckdb": n, "keyword": n, "vectors": n, "embedded": 0}
        return {"corpus_version": version, "skipped": True, "counts": counts}
    built = build_indexes(data_dir, version, chunks, embedder, store=store, force=force)
    if built["keyword"] != n or built["vectors"] != n:
        raise GuidelineIndexMissing(f"index for {version} is incomplete after build: {built}")
    with db.transaction() as cur:
        guideline_repo.upsert_chunks(cur, chunks)
        guideline_repo.prune_version(cur, version, [c.chunk_id for c in chunks])
        guideline_repo.set_active_version(cur, version)
    with db.cursor() as cur:
        stored = guideline_repo.count_chunks(cur, version)
    counts = {"chunks": n, "duckdb": stored, "keyword": built["keyword"], "vectors": built["vectors"],
              "embedded": built["embedded"]}
    return {"corpus_version": version, "skipped": False, "counts": counts}
