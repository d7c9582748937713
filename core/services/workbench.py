"""The service context: settings, database, blob store and the patient-fact index,
opened once per process and passed to every service function."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from domain.settings import Settings, get_settings
from storage.blobs import BlobStore
from storage.db import Database, open_database
from storage.private_files import make_private, restrict_new_files


class FactIndex(Protocol):
    """Where active patient facts are embedded for retrieval (LanceDB by default)."""

    def add_facts(self, facts: list[dict[str, Any]]) -> int: ...

    def remove_facts(self, fact_ids: list[int]) -> int: ...

    def search(self, patient_id: int, query: str, k: int = 10) -> list[Any]:
        """Nearest active facts of one patient (objects with ``fact_id`` and ``score``)."""
        ...


@dataclass
class Workbench:
    settings: Settings
    db: Database
    blobs: BlobStore
    fact_index: FactIndex | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    def close(self) -> None:
        self.db.close()


def open_workbench(settings: Settings | None = None, *, fact_index: FactIndex | None = None) -> Workbench:
    settings = settings or get_settings()
    # Patient data: whatever this process (or a library in it) creates in the data
    # dir is the owner's only, including from a plain `streamlit run` or a test.
    restrict_new_files()
    make_private(settings.data_dir)
    db = open_database(settings.db_path)
    if fact_index is None:
        fact_index = _default_fact_index(settings)
    return Workbench(settings=settings, db=db, blobs=BlobStore(settings.documents_dir), fact_index=fact_index)


def _default_fact_index(settings: Settings) -> FactIndex:
    # Lazy: the embedder and LanceDB open on first use, not when the workbench opens.
    from retrieve.patient_facts import LancePatientFactIndex

    return LancePatientFactIndex(settings)
