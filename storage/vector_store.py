"""LanceDB vector tables: guideline chunks and patient facts, never mixed.

``guideline_chunks`` is global and keyed by ``(corpus_version, chunk_id)`` so versions
coexist during a rebuild. ``patient_facts`` is keyed by ``fact_id``; every patient-fact
search is filtered by patient *and* ``active`` inside this module, so no caller can
forget the filter. Writes never store a key twice, so retries never duplicate rows:
merge-inserts, except a batch of fact ids the patient table is known not to hold,
which is appended (see ``add_patient_facts``).
"""

from __future__ import annotations

import fcntl
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa

GUIDELINE_TABLE = "guideline_chunks"
PATIENT_TABLE = "patient_facts"


class VectorDimensionMismatch(ValueError):
    """Vectors of a different size than the table's: the embedder changed under it."""


@dataclass(frozen=True)
class GuidelineVectorRow:
    chunk_id: str
    corpus_version: str
    text: str
    vector: np.ndarray
    embedding_model: str


@dataclass(frozen=True)
class PatientFactRow:
    fact_id: int
    patient_id: int
    document_id: int
    active: bool
    text: str
    vector: np.ndarray
    embedding_model: str


@dataclass(frozen=True)
class PatientFactHit:
    fact_id: int
    patient_id: int
    document_id: int
    text: str
    score: float  # cosine similarity


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _sql_int(value: int) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"expected an integer id, got {value!r}")
    return str(int(value))


def _schema(kind: str, dim: int) -> pa.Schema:
    vector = pa.field("vector", pa.list_(pa.float32(), dim))
    if kind == GUIDELINE_TABLE:
        return pa.schema([
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("corpus_version", pa.string(), nullable=False),
            pa.field("text", pa.string()),
            vector,
            pa.field("embedding_model", pa.string(), nullable=False),
        ])
    return pa.schema([
        pa.field("fact_id", pa.int64(), nullable=False),
        pa.field("patient_id", pa.int64(), nullable=False),
        pa.field("document_id", pa.int64(), nullable=False),
        pa.field("active", pa.bool_(), nullable=False),
        pa.field("text", pa.string()),
        vector,
        pa.field("embedding_model", pa.string(), nullable=False),
    ])


def _vector_column(vectors: Sequence[np.ndarray], dim: int) -> pa.Array:
    matrix = np.asarray(np.stack([np.asarray(v, dtype=np.float32) for v in vectors]), dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[1] != dim:
        raise VectorDimensionMismatch(f"vectors have shape {matrix.shape}, table expects dim {dim}")
    return pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel(), type=pa.float32()), dim)


class VectorStore:
    """One LanceDB directory (``<data_dir>/lance``). Table handles are opened once and
    reused; ``read_consistency_interval=0`` makes each read see writes made through
    other handles (the worker thread writes facts the chat then searches)."""

    def __init__(self, path: Path | str, *, read_consistency_interval: timedelta | None = timedelta(0)):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        import lancedb  # here, not at import: it costs ~2 s, and most CLI commands never open a table

        self._db = lancedb.connect(str(self.path), read_consistency_interval=read_consistency_interval)
        self._tables: dict[str, lancedb.table.Table] = {}
        # Each open table's vector size: a table's schema is fixed once created, and asking
        # LanceDB for it re-reads the latest version (~5 ms on every write otherwise).
        self._dims: dict[str, int] = {}
        self._lock = threading.Lock()
        # The fact ids the patient table holds as of one table version (add_patient_facts).
        # Only with reads that always see the latest version: a handle that may lag could
        # take another process's rows for absent.
        self._fact_ids_version: int | None = None
        self._fact_ids: set[int] = set()
        self._trust_fact_ids = read_consistency_interval == timedelta(0)
        self._fact_writes = threading.Lock()

    @classmethod
    def for_data_dir(cls, data_dir: Path | str, **kwargs) -> "VectorStore":
        return cls(Path(data_dir) / "lance", **kwargs)

    # -- tables --------------------------------------------------------------------

    def _table(self, name: str, dim: int | None = None):
        """The open table, created with ``dim`` when missing; None when missing and no dim."""
        with self._lock:
            table = self._tables.get(name)
            if table is None:
                if name in self._db.list_tables(limit=None).tables:
                    table = self._db.open_table(name)
                elif dim is None:
                    return None
                else:
                    table = self._db.create_table(name, schema=_schema(name, dim), exist_ok=True)
                self._tables[name] = table
            if dim is not None and name not in self._dims:
                self._dims[name] = table.schema.field("vector").type.list_size
        if dim is not None:
            have = self._dims[name]
            if have != dim:
                raise VectorDimensionMismatch(f"table {name} holds {have}-dim vectors, got {dim}")
        return table

    @staticmethod
    def _merge(table, keys: list[str], data: pa.Table):
        return table.merge_insert(keys).when_matched_update_all().when_not_matched_insert_all().execute(data)

    # -- guideline chunks ----------------------------------------------------------

    def upsert_guideline_chunks(self, rows: Iterable[GuidelineVectorRow]) -> int:
        """Insert or replace by ``(corpus_version, chunk_id)``; returns rows written."""
        unique = list({(r.corpus_version, r.chunk_id): r for r in rows}.values())
        if not unique:
            return 0
        dim = int(np.asarray(unique[0].vector).shape[-1])
        table = self._table(GUIDELINE_TABLE, dim)
        data = pa.table({
            "chunk_id": [r.chunk_id for r in unique],
            "corpus_version": [r.corpus_version for r in unique],
            "text": [r.text for r in unique],
            "vector": _vector_column([r.vector for r in unique], dim),
            "embedding_model": [r.embedding_model for r in unique],
        }, schema=_schema(GUIDELINE_TABLE, dim))
        self._merge(table, ["corpus_version", "chunk_id"], data)
        return len(unique)

    def remove_guideline_chunks(self, corpus_version: str, chunk_ids: Iterable[str]) -> int:
        """Delete rows of one version (e.g. ids left over from an interrupted rebuild)."""
        ids = [_sql_str(i) for i in chunk_ids]
        table = self._table(GUIDELINE_TABLE)
        if not ids or table is None:
            return 0
        where = f"corpus_version = {_sql_str(corpus_version)} AND chunk_id IN ({', '.join(ids)})"
        return int(table.delete(where).num_deleted_rows)

    def _guideline_filter(self, corpus_version: str, embedding_model: str | None) -> str:
        where = f"corpus_version = {_sql_str(corpus_version)}"
        if embedding_model is not None:
            where += f" AND embedding_model = {_sql_str(embedding_model)}"
        return where

    def search_guidelines(self, vector: np.ndarray, corpus_version: str, k: int,
                          *, embedding_model: str | None = None) -> list[tuple[str, float]]:
        """Top ``k`` ``(chunk_id, cosine)`` within one corpus version (and model)."""
        table = self._table(GUIDELINE_TABLE)
        if table is None or k <= 0:
            return []
        result = (table.search(np.asarray(vector, dtype=np.float32))
                  .distance_type("cosine")
                  .where(self._guideline_filter(corpus_version, embedding_model), prefilter=True)
                  .select(["chunk_id", "_distance"])
                  .limit(k)
                  .to_arrow())
        ids = result.column("chunk_id").to_pylist()
        distances = result.column("_distance").to_pylist()
        return [(cid, 1.0 - float(d)) for cid, d in zip(ids, distances)]

    def guideline_vectors(self, corpus_version: str, *, embedding_model: str | None = None
                          ) -> tuple[list[str], np.ndarray]:
        """All ``(chunk_ids, matrix)`` of one version, for in-memory rescoring."""
        table = self._table(GUIDELINE_TABLE)
        if table is None:
            return [], np.zeros((0, 0), dtype=np.float32)
        data = (table.search().where(self._guideline_filter(corpus_version, embedding_model))
                .select(["chunk_id", "vector"]).limit(None).to_arrow())
        ids = data.column("chunk_id").to_pylist()
        if not ids:
            return [], np.zeros((0, 0), dtype=np.float32)
        vectors = data.column("vector").combine_chunks()
        matrix = vectors.values.to_numpy(zero_copy_only=False).reshape(len(ids), vectors.type.list_size)
        return ids, matrix.astype(np.float32, copy=False)

    def count_guideline_chunks(self, corpus_version: str | None = None, *,
                               embedding_model: str | None = None) -> int:
        table = self._table(GUIDELINE_TABLE)
        if table is None:
            return 0
        if corpus_version is None:
            return table.count_rows()
        return table.count_rows(self._guideline_filter(corpus_version, embedding_model))

    # -- patient facts -------------------------------------------------------------

    def add_patient_facts(self, rows: Iterable[PatientFactRow]) -> int:
        """Insert or replace by ``fact_id``: adding the same fact twice keeps one row."""
        unique = list({int(r.fact_id): r for r in rows}.values())
        if not unique:
            return 0
        for r in unique:
            for value in (r.fact_id, r.patient_id, r.document_id):
                _sql_int(value)
        dim = int(np.asarray(unique[0].vector).shape[-1])
        table = self._table(PATIENT_TABLE, dim)
        data = pa.table({
            "fact_id": [int(r.fact_id) for r in unique],
            "patient_id": [int(r.patient_id) for r in unique],
            "document_id": [int(r.document_id) for r in unique],
            "active": [bool(r.active) for r in unique],
            "text": [r.text for r in unique],
            "vector": _vector_column([r.vector for r in unique], dim),
            "embedding_model": [r.embedding_model for r in unique],
        }, schema=_schema(PATIENT_TABLE, dim))
        ids = {int(r.fact_id) for r in unique}
        with self._patient_writes():
            # A merge-insert joins the batch with every stored row (~5 ms a job, growing with
            # the table); an append does not. Appending is exact only when none of these ids
            # is stored, which this store knows without a read while no other handle has
            # written since it last looked (the table's version says so); the lock keeps
            # any other writer from adding between that look and the append.
            before = table.version
            held = self._held_fact_ids(table, before)
            if held is not None and held.isdisjoint(ids):
                after = table.add(data).version
            else:
                after = self._merge(table, ["fact_id"], data).version
            if held is not None and after == before + 1:  # nobody else wrote in between
                self._fact_ids_version = after
                self._fact_ids |= ids
            else:
                self._fact_ids_version = None
        return len(unique)

    @contextmanager
    def _patient_writes(self):
        """Adds to the patient table one at a time, across threads and processes (an flock
        on a file beside the tables: a UI's decision and the worker write the same table)."""
        with self._fact_writes:
            fd = os.open(self.path / f".{PATIENT_TABLE}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # releases the flock

    def _held_fact_ids(self, table, version: int) -> set[int] | None:
        """The fact ids stored as of ``version`` (read again when another write came
        between), or None when this store cannot be sure."""
        if not self._trust_fact_ids:
            return None
        if self._fact_ids_version != version:
            stored = table.search().select(["fact_id"]).limit(None).to_arrow()
            if table.version != version:  # written while we read: no cache this time
                return None
            self._fact_ids = set(stored.column("fact_id").to_pylist())
            self._fact_ids_version = version
        return self._fact_ids

    def _delete(self, where: str) -> int:
        table = self._table(PATIENT_TABLE)
        if table is None:
            return 0
        return int(table.delete(where).num_deleted_rows)

    def remove_patient_facts(self, fact_ids: Iterable[int]) -> int:
        ids = [_sql_int(i) for i in fact_ids]
        return self._delete(f"fact_id IN ({', '.join(ids)})") if ids else 0

    def remove_document(self, document_id: int) -> int:
        """Delete every fact vector derived from one document (retraction)."""
        return self._delete(f"document_id = {_sql_int(document_id)}")

    def set_patient_facts_active(self, fact_ids: Iterable[int], active: bool) -> int:
        """Flip ``active`` without deleting (e.g. a fact sent back to review)."""
        ids = [_sql_int(i) for i in fact_ids]
        table = self._table(PATIENT_TABLE)
        if not ids or table is None:
            return 0
        result = table.update(where=f"fact_id IN ({', '.join(ids)})", values={"active": bool(active)})
        return int(result.rows_updated)

    def search_patient_facts(self, vector: np.ndarray, patient_id: int, k: int,
                             *, embedding_model: str | None = None) -> list[PatientFactHit]:
        """Nearest active facts of one patient; other patients' facts are never read."""
        table = self._table(PATIENT_TABLE)
        if table is None or k <= 0:
            return []
        where = f"patient_id = {_sql_int(patient_id)} AND active = true"
        if embedding_model is not None:
            where += f" AND embedding_model = {_sql_str(embedding_model)}"
        result = (table.search(np.asarray(vector, dtype=np.float32))
                  .distance_type("cosine")
                  .where(where, prefilter=True)
                  .select(["fact_id", "patient_id", "document_id", "text", "_distance"])
                  .limit(k)
                  .to_arrow()
                  .to_pylist())
        return [PatientFactHit(r["fact_id"], r["patient_id"], r["document_id"], r["text"], 1.0 - float(r["_distance"]))
                for r in result]

    def patient_fact_ids(self) -> list[int]:
        """The fact id of every row of the patient table, one per stored vector (so a
        fact stored twice shows twice); [] when the table does not exist yet."""
        table = self._table(PATIENT_TABLE)
        if table is None:
            return []
        return table.to_arrow().column("fact_id").to_pylist()

    def count_patient_facts(self, patient_id: int | None = None, *, document_id: int | None = None,
                            active_only: bool = False) -> int:
        table = self._table(PATIENT_TABLE)
        if table is None:
            return 0
        clauses = []
        if patient_id is not None:
            clauses.append(f"patient_id = {_sql_int(patient_id)}")
        if document_id is not None:
            clauses.append(f"document_id = {_sql_int(document_id)}")
        if active_only:
            clauses.append("active = true")
        return table.count_rows(" AND ".join(clauses) if clauses else None)
