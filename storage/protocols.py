"""What callers rely on of the two search stores, declared once beside them: the vector
store (LanceDB, storage.vector_store) and the keyword index (tantivy,
storage.keyword_index). Retrieval and the services type against these, so another
implementation (an in-memory one for tests, a hosted one) can stand in; the shared
contract tests (tests/storage/test_store_contracts.py) run every implementation through the
behaviour callers rely on. The embedder's and the reranker's Protocols live in
retrieve/, beside them, for the same reason: each contract sits in the layer of the
things it describes, below every caller."""

from __future__ import annotations

from typing import Iterable, Protocol, runtime_checkable

import numpy as np

from storage.keyword_index import KeywordDoc
from storage.vector_store import GuidelineVectorRow, PatientFactHit, PatientFactRow


@runtime_checkable
class VectorIndex(Protocol):
    """Guideline chunk vectors per corpus version and patient fact vectors per patient."""

    def upsert_guideline_chunks(self, rows: Iterable[GuidelineVectorRow]) -> int:
        """Insert or replace by ``(corpus_version, chunk_id)``; returns rows written."""
        ...

    def remove_guideline_chunks(self, corpus_version: str, chunk_ids: Iterable[str]) -> int: ...

    def search_guidelines(self, vector: np.ndarray, corpus_version: str, k: int,
                          *, embedding_model: str | None = None) -> list[tuple[str, float]]:
        """Top ``k`` ``(chunk_id, cosine)``, best first, within one version (and model)."""
        ...

    def guideline_vectors(self, corpus_version: str, *, embedding_model: str | None = None
                          ) -> tuple[list[str], np.ndarray]:
        """All ``(chunk_ids, matrix)`` of one version (and model)."""
        ...

    def count_guideline_chunks(self, corpus_version: str | None = None, *,
                               embedding_model: str | None = None) -> int: ...

    def add_patient_facts(self, rows: Iterable[PatientFactRow]) -> int:
        """Insert or replace by ``fact_id``: adding a fact twice keeps one row."""
        ...

    def remove_patient_facts(self, fact_ids: Iterable[int]) -> int: ...

    def search_patient_facts(self, vector: np.ndarray, patient_id: int, k: int,
                             *, embedding_model: str | None = None) -> list[PatientFactHit]:
        """Nearest active facts of one patient, best first; no other patient's."""
        ...

    def count_patient_facts(self, patient_id: int | None = None, *, document_id: int | None = None,
                            active_only: bool = False) -> int: ...


@runtime_checkable
class KeywordSearchIndex(Protocol):
    """A BM25 index of one corpus version, complete once built."""

    def is_complete(self) -> bool: ...

    def doc_count(self) -> int:
        """Documents recorded by the completed build (0 when not built)."""
        ...

    def build(self, docs: Iterable[KeywordDoc], *, rebuild: bool = False) -> tuple[int, bool]:
        """Build unless complete (or ``rebuild``); returns ``(count, skipped)``."""
        ...

    def search(self, query: str, limit: int = 30) -> list[tuple[str, float]]:
        """Top ``limit`` ``(chunk_id, score)``, best first; empty for a query of no words."""
        ...
