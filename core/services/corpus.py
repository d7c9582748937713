"""Guideline corpus indexing as part of ``init`` (DuckDB rows, tantivy, LanceDB)."""

from __future__ import annotations

from typing import Any

from core.services.workbench import Workbench


def index_corpus_if_available(wb: Workbench, *, force: bool = False) -> dict[str, Any]:
    try:
        from retrieve.guidelines import index_corpus
    except ModuleNotFoundError as exc:
        if exc.name not in ("retrieve.guidelines",):
            raise
        return {"indexed": False, "detail": "guideline retrieval not installed"}
    from retrieve.providers import embedder_for

    with wb.db.cursor() as cur:
        return index_corpus(cur, wb.settings.data_dir, embedder_for(wb.settings), force=force)
