"""DuckDB rows for guideline chunks (the table is created by the lead's migration).

Functions take a DuckDB connection or cursor and leave transactions to the caller, so a
caller can make "write rows + switch active version" one atomic step. Rows are read back
as ``GuidelineRow``, the table's own shape: storage knows nothing of the corpus loader.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Protocol, Sequence


class ChunkFields(Protocol):
    """What a chunk to be written must have (a corpus.loader.GuidelineChunk has it)."""

    chunk_id: str
    corpus_version: str
    source_title: str
    source_reference: str
    section: str
    text: str
    citation: dict[str, Any]


@dataclass(frozen=True)
class GuidelineRow:
    """One stored guideline chunk: the cited unit of one corpus version."""

    chunk_id: str
    corpus_version: str
    source_title: str
    source_reference: str
    section: str
    text: str
    citation: dict[str, Any] = field(hash=False, compare=False)


_COLUMNS = "chunk_id, corpus_version, source_title, source_reference, section, text, citation"


def upsert_chunks(cur: Any, chunks: Iterable[ChunkFields]) -> int:
    """Insert or refresh chunks by ``(corpus_version, chunk_id)``; returns rows written.

    New rows start inactive: only :func:`set_active_version` decides which version the
    workbench answers from, after its indexes exist.
    """
    rows = [
        (c.chunk_id, c.corpus_version, c.source_title, c.source_reference, c.section, c.text,
         json.dumps(c.citation, ensure_ascii=False))
        for c in chunks
    ]
    if not rows:
        return 0
    cur.executemany(
        f"""INSERT INTO guideline_chunks ({_COLUMNS}, active) VALUES (?, ?, ?, ?, ?, ?, ?, FALSE)
            ON CONFLICT (corpus_version, chunk_id) DO UPDATE SET
              source_title = excluded.source_title, source_reference = excluded.source_reference,
              section = excluded.section, text = excluded.text, citation = excluded.citation,
              indexed_at = now()""",
        rows,
    )
    return len(rows)


def prune_version(cur: Any, corpus_version: str, keep_chunk_ids: Iterable[str]) -> int:
    """Delete rows of ``corpus_version`` whose ids are not in ``keep_chunk_ids``
    (left behind when a same-version rebuild had fewer chunks)."""
    keep = list(keep_chunk_ids)
    stale = cur.execute(
        "SELECT count(*) FROM guideline_chunks WHERE corpus_version = ? AND NOT list_contains(?, chunk_id)",
        [corpus_version, keep],
    ).fetchone()[0]
    if stale:
        cur.execute(
            "DELETE FROM guideline_chunks WHERE corpus_version = ? AND NOT list_contains(?, chunk_id)",
            [corpus_version, keep],
        )
    return stale


def set_active_version(cur: Any, version: str) -> None:
    """Make ``version`` the only active one; older versions stay for audit, inactive."""
    cur.execute("UPDATE guideline_chunks SET active = (corpus_version = ?)", [version])


def active_version(cur: Any) -> str | None:
    row = cur.execute(
        "SELECT DISTINCT corpus_version FROM guideline_chunks WHERE active ORDER BY 1"
    ).fetchall()
    if len(row) > 1:
        raise RuntimeError(f"more than one active guideline corpus version: {[r[0] for r in row]}")
    return row[0][0] if row else None


def count_chunks(cur: Any, corpus_version: str) -> int:
    return cur.execute(
        "SELECT count(*) FROM guideline_chunks WHERE corpus_version = ?", [corpus_version]
    ).fetchone()[0]


def _row_to_chunk(row: Sequence[Any]) -> GuidelineRow:
    chunk_id, version, title, reference, section, text, citation = row
    return GuidelineRow(chunk_id, version, title, reference or "", section, text,
                          json.loads(citation) if isinstance(citation, str) else citation)


def get_chunks(cur: Any, corpus_version: str, chunk_ids: Iterable[str]) -> dict[str, GuidelineRow]:
    """The requested chunks of one version, by id (missing ids are simply absent)."""
    ids = list(dict.fromkeys(chunk_ids))
    if not ids:
        return {}
    rows = cur.execute(
        f"SELECT {_COLUMNS} FROM guideline_chunks WHERE corpus_version = ? AND list_contains(?, chunk_id)",
        [corpus_version, ids],
    ).fetchall()
    return {row[0]: _row_to_chunk(row) for row in rows}


def get_active_chunks(cur: Any) -> tuple[str | None, list[GuidelineRow]]:
    """``(version, chunks)`` of the active corpus, ordered by chunk id."""
    version = active_version(cur)
    if version is None:
        return None, []
    rows = cur.execute(
        f"SELECT {_COLUMNS} FROM guideline_chunks WHERE corpus_version = ? ORDER BY chunk_id", [version]
    ).fetchall()
    return version, [_row_to_chunk(r) for r in rows]
