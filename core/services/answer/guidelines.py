"""Guideline search as a service: one searcher per workbench, stage latencies to telemetry."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from core import telemetry
from domain.errors import BadInput, WorkbenchError
from core.services.workbench import Workbench


def guideline_searcher(wb: Workbench):
    """Built once per process (model, chunk texts and vectors stay in memory)."""
    searcher = wb.extras.get("guideline_searcher")
    if searcher is None:
        from retrieve.guidelines import GuidelineIndexMissing, GuidelineSearcher
        from retrieve.providers import embedder_for, reranker_for
        from storage import guideline_repo

        embedder = embedder_for(wb.settings)
        with wb.db.cursor() as cur:
            _, chunks = guideline_repo.get_active_chunks(cur)
        try:
            searcher = GuidelineSearcher(wb.settings.data_dir, embedder=embedder,
                                         reranker=reranker_for(wb.settings, embedder), chunks=chunks)
        except GuidelineIndexMissing as exc:
            raise WorkbenchError(f"The guideline index is missing ({exc}); run `python -m core index-corpus`.",
                                 code="index_missing") from None
        wb.extras["guideline_searcher"] = searcher
    return searcher


def search_guidelines(wb: Workbench, query: str, *, k: int = 5, request_id: str | None = None) -> dict[str, Any]:
    if not query.strip():
        raise BadInput("Ask a question to search the guidelines.", code="empty_query")
    if not 1 <= k <= 20:
        raise BadInput("k must be between 1 and 20.")
    searcher = guideline_searcher(wb)
    kept = _kept_results(wb, searcher)
    key = (query, k)
    with _results_lock:
        found = kept.get(key)
        if found is not None:
            kept.move_to_end(key)
    if found is not None:  # the same search by the same searcher: its results, no time spent
        return found | {"timings_ms": {stage: 0.0 for stage in found.get("timings_ms") or {}}}
    result = searcher.search(query, k=k)
    telemetry.emit("guideline_search", settings=wb.settings, request_id=request_id, latency_ms=result.timings_ms,
                   corpus_version=result.corpus_version, reranker=result.reranker,
                   counts={"results": len(result.results)}, status="not_found" if result.not_found else "found")
    dumped = result.model_dump(mode="json")
    with _results_lock:
        kept[key] = dumped
        while len(kept) > KEPT_SEARCHES:
            kept.popitem(last=False)
    return dumped


KEPT_SEARCHES = 256  # a searcher's latest results by (query, k), least recently used dropped first
_results_lock = threading.Lock()


def _kept_results(wb: Workbench, searcher: Any) -> OrderedDict:
    """The results kept for this searcher (a new searcher starts with none). An attention
    answer searches one query per abnormal test, the same queries until the record
    changes; the searcher and its corpus stay as they are for the process."""
    with _results_lock:
        owner, kept = wb.extras.get("guideline_results", (None, None))
        if owner is not searcher:
            kept = OrderedDict()
            wb.extras["guideline_results"] = (searcher, kept)
        return kept
