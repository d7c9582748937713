"""Guideline corpus indexing as part of ``init`` (DuckDB rows, tantivy, LanceDB)."""

from __future__ import annotations

from typing import Any

from core.services.workbench import Workbench


def index_guideline_corpus(wb: Workbench, *, force: bool = False) -> dict[str, Any]:
    """Index the checked-in corpus version (a no-op when it is already indexed)."""
    from retrieve.guidelines import index_corpus
    from retrieve.providers import embedder_for

    with wb.db.cursor() as cur:
        return index_corpus(cur, wb.settings.data_dir, embedder_for(wb.settings), force=force)
