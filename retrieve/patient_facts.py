"""Patient-fact vectors: active facts embedded for retrieval, removed on retraction.

The LanceDB ``patient_facts`` table (never mixed with guideline chunks) holds one
row per active fact. Searches always filter by patient and active; the evidence
retriever re-checks every hit against DuckDB before using it.
"""

from __future__ import annotations

from typing import Any

from domain.settings import Settings
from retrieve.embedder import Embedder
from retrieve.providers import embedder_for
from storage.protocols import VectorIndex
from storage.vector_store import PatientFactHit, PatientFactRow, VectorStore


def fact_embedding_text(fact: dict[str, Any]) -> str:
    """What a fact is searched by: its sentence plus its kind, never the raw page."""
    return f"{fact['fact_type'].replace('_', ' ')}: {fact['fact_text']}"


class LancePatientFactIndex:
    def __init__(self, settings: Settings, *, embedder: Embedder | None = None, store: VectorIndex | None = None):
        self._settings = settings
        self._embedder = embedder
        self._store = store

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = embedder_for(self._settings)
        return self._embedder

    @property
    def store(self) -> VectorIndex:
        if self._store is None:
            self._store = VectorStore.for_data_dir(self._settings.data_dir)
        return self._store

    def add_facts(self, facts: list[dict[str, Any]]) -> int:
        facts = [f for f in facts if f.get("active")]
        if not facts:
            return 0
        vectors = self.embedder.embed([fact_embedding_text(f) for f in facts])
        rows = [PatientFactRow(fact_id=f["id"], patient_id=f["patient_id"], document_id=f["document_id"], active=True,
                               text=fact_embedding_text(f), vector=v, embedding_model=self.embedder.name)
                for f, v in zip(facts, vectors)]
        return self.store.add_patient_facts(rows)

    def remove_facts(self, fact_ids: list[int]) -> int:
        return self.store.remove_patient_facts(fact_ids) if fact_ids else 0

    def search(self, patient_id: int, query: str, k: int = 10) -> list[PatientFactHit]:
        vector = self.embedder.embed([query])[0]
        return self.store.search_patient_facts(vector, patient_id, k, embedding_model=self.embedder.name)

    def count(self, **filters: Any) -> int:
        return self.store.count_patient_facts(**filters)
