"""Keeping the patient-fact vector table in step with active facts.

Facts are embedded after their job has succeeded, in batches, by the worker (or
right away for an inline CLI ingest or a review decision): extraction results are
visible without waiting for the embedder, and one batch embeds faster than many
small calls. Removal on retraction is immediate (``core.services.review.retraction``).
"""

from __future__ import annotations

import threading
import time
import weakref

from core import telemetry
from core.services.workbench import Workbench
from storage import facts_repo


def index_pending(wb: Workbench, *, limit: int = 256) -> int:
    """Embed active facts that have no vector yet; returns how many were added."""
    if wb.fact_index is None:
        return 0
    with wb.db.cursor() as cur:
        pending = facts_repo.facts_to_embed(cur, limit)
    if not pending:
        return 0
    start = time.perf_counter()
    added = wb.fact_index.add_facts([f.to_dict() for f in pending])  # the index (retrieve/) reads plain rows
    embed_ms = round((time.perf_counter() - start) * 1000, 2)
    # In a transaction so it waits for a decision writing the same rows (storage.db).
    with wb.db.transaction() as cur:
        # A fact deleted or corrected while we embedded: take its vector straight back
        # out (a corrected one is embedded again, from its new words, by the next pass).
        # Marking hands back each row's words and state, read in this transaction.
        now = facts_repo.mark_vectors(cur, [f.id for f in pending], True)
        gone = sorted(f.id for f in pending if f.id not in now or now[f.id][0] != f.fact_text or now[f.id][1])
    if gone:
        wb.fact_index.remove_facts(gone)
        with wb.db.transaction() as cur:
            facts_repo.mark_vectors(cur, gone, False)
    _emit_embedded(wb, embed_ms, added, len(gone))
    return added - len(gone)


def _emit_embedded(wb: Workbench, embed_ms: float, added: int, removed: int) -> None:
    """One ``facts_embedded`` event per batch: the ``embed`` stage latency (embedding the
    texts and writing the vectors) and how many facts; no patient, document or text."""
    try:
        model = getattr(getattr(wb.fact_index, "embedder", None), "name", None)
    except Exception:  # noqa: BLE001 - naming the model must never fail the batch
        model = None
    counts = {"facts": added}
    if removed:
        counts["removed_deleted"] = removed
    telemetry.emit("facts_embedded", settings=wb.settings, latency_ms={"embed": embed_ms}, counts=counts,
                   embedding_model=model)


def remove_vectors(wb: Workbench, fact_ids: list[int]) -> int:
    if wb.fact_index is None or not fact_ids:
        return 0
    removed = wb.fact_index.remove_facts(fact_ids)
    with wb.db.transaction() as cur:
        facts_repo.mark_vectors(cur, fact_ids, False)
    return removed


# The fact indexes already warmed in this process (a weak set: a closed workbench's goes).
_warmed: weakref.WeakSet = weakref.WeakSet()
_warming = threading.Lock()


def warm_up(wb: Workbench, patient_id: int) -> None:
    """Open the vector table and load the embedder now, in the background, once per
    index and process: a review decision writes vectors at once (``index_pending``,
    ``remove_vectors``), and in a fresh server the first one otherwise waits for
    LanceDB's import and the model's load (seconds) before its next item is drawn.
    A search of the patient's facts needs both, and reads nothing else."""
    index = wb.fact_index
    if index is None:
        return
    with _warming:
        if index in _warmed:
            return
        _warmed.add(index)

    def warm() -> None:
        try:
            index.search(patient_id, "warm up", k=1)
        except Exception:  # noqa: BLE001 - only a head start: a decision opens them itself, and reports its own error
            pass

    threading.Thread(target=warm, name="fact-index-warm-up", daemon=True).start()
