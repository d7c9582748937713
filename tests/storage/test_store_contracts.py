"""The search stores' shared contracts (storage.protocols): every implementation of a
Protocol is listed in its fixture's params and goes through the same behaviour callers
rely on. Today each Protocol has one implementation (LanceDB, tantivy); a stand-in added
later is added to the list, not given tests of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from storage.keyword_index import KeywordDoc, KeywordIndex
from storage.protocols import KeywordSearchIndex, VectorIndex
from storage.vector_store import GuidelineVectorRow, PatientFactRow, VectorStore

DIM = 8
MODEL = "contract-model"

# name -> a new, empty implementation in a directory of its own
VECTOR_INDEXES: dict[str, Callable[[Path], VectorIndex]] = {
    "lancedb": lambda root: VectorStore.for_data_dir(root),
}
KEYWORD_INDEXES: dict[str, Callable[[Path, str], KeywordSearchIndex]] = {
    "tantivy": lambda root, version: KeywordIndex(root, version),
}


@pytest.fixture(params=sorted(VECTOR_INDEXES))
def vectors(request, tmp_path) -> VectorIndex:
    return VECTOR_INDEXES[request.param](tmp_path)


@pytest.fixture(params=sorted(KEYWORD_INDEXES))
def keyword_factory(request, tmp_path) -> Callable[[str], KeywordSearchIndex]:
    return lambda version: KEYWORD_INDEXES[request.param](tmp_path, version)


def vec(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i % DIM] = 1.0
    v[(i + 1) % DIM] = 0.3
    return v / np.linalg.norm(v)


def chunk(i: int, version: str = "v1", model: str = MODEL) -> GuidelineVectorRow:
    return GuidelineVectorRow(f"c{i}", version, f"chunk {i}", vec(i), model)


def fact(fact_id: int, patient_id: int, document_id: int, *, active: bool = True) -> PatientFactRow:
    return PatientFactRow(fact_id, patient_id, document_id, active, f"fact {fact_id}", vec(fact_id), MODEL)


# -- vector index -----------------------------------------------------------------------


def test_vector_index_satisfies_the_protocol(vectors):
    assert isinstance(vectors, VectorIndex)


def test_guideline_upsert_is_idempotent_and_counted_per_version_and_model(vectors):
    rows = [chunk(i) for i in range(4)]
    assert vectors.upsert_guideline_chunks(rows) == 4
    assert vectors.upsert_guideline_chunks(rows) == 4  # replaced, not added
    vectors.upsert_guideline_chunks([chunk(0, version="v2"), chunk(1, model="other-model")])
    assert vectors.count_guideline_chunks() == 5
    assert vectors.count_guideline_chunks("v1") == 4
    assert vectors.count_guideline_chunks("v1", embedding_model=MODEL) == 3
    assert vectors.count_guideline_chunks("v2") == 1 and vectors.count_guideline_chunks("v3") == 0


def test_guideline_search_is_best_first_within_one_version(vectors):
    vectors.upsert_guideline_chunks([chunk(i) for i in range(6)] + [chunk(2, version="v2")])
    hits = vectors.search_guidelines(vec(2), "v1", 3, embedding_model=MODEL)
    assert [cid for cid, _ in hits][0] == "c2" and len(hits) == 3
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True) and scores[0] == pytest.approx(1.0, abs=1e-5)
    assert [cid for cid, _ in vectors.search_guidelines(vec(2), "v2", 5)] == ["c2"]
    assert vectors.search_guidelines(vec(2), "v1", 0) == []


def test_guideline_vectors_are_the_version_s_matrix(vectors):
    vectors.upsert_guideline_chunks([chunk(i) for i in range(3)] + [chunk(9, version="v2")])
    ids, matrix = vectors.guideline_vectors("v1", embedding_model=MODEL)
    assert sorted(ids) == ["c0", "c1", "c2"] and matrix.shape == (3, DIM)
    assert np.allclose(matrix[ids.index("c1")], vec(1), atol=1e-6)
    assert vectors.guideline_vectors("v1", embedding_model="other-model")[0] == []


def test_guideline_remove_retracts_only_that_version_s_ids(vectors):
    vectors.upsert_guideline_chunks([chunk(i) for i in range(3)] + [chunk(0, version="v2")])
    assert vectors.remove_guideline_chunks("v1", ["c0", "c-unknown"]) == 1
    assert vectors.remove_guideline_chunks("v1", []) == 0
    assert vectors.count_guideline_chunks("v1") == 2 and vectors.count_guideline_chunks("v2") == 1
    assert "c0" not in [cid for cid, _ in vectors.search_guidelines(vec(0), "v1", 5)]


def test_empty_store_answers_empty(vectors):
    assert vectors.count_guideline_chunks() == 0 and vectors.count_patient_facts() == 0
    assert vectors.search_guidelines(vec(0), "v1", 5) == [] and vectors.search_patient_facts(vec(0), 1, 5) == []
    assert vectors.guideline_vectors("v1")[0] == [] and vectors.remove_patient_facts([1]) == 0


def test_patient_facts_add_is_idempotent_and_counted(vectors):
    rows = [fact(1, 100, 10), fact(2, 100, 10), fact(3, 100, 11), fact(4, 200, 20, active=False)]
    assert vectors.add_patient_facts(rows) == 4
    assert vectors.add_patient_facts(rows[:2]) == 2
    assert vectors.count_patient_facts() == 4
    assert vectors.count_patient_facts(100) == 3 and vectors.count_patient_facts(100, document_id=10) == 2
    assert vectors.count_patient_facts(200, active_only=True) == 0


def test_patient_fact_search_is_best_first_one_patient_and_active_only(vectors):
    vectors.add_patient_facts([fact(1, 100, 10), fact(2, 100, 10), fact(3, 100, 11), fact(4, 200, 20),
                               fact(5, 100, 12, active=False)])
    hits = vectors.search_patient_facts(vec(2), 100, 10, embedding_model=MODEL)
    assert hits[0].fact_id == 2 and {h.patient_id for h in hits} == {100}
    assert 5 not in {h.fact_id for h in hits}  # inactive: never returned
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert [h.fact_id for h in vectors.search_patient_facts(vec(2), 200, 10)] == [4]


def test_patient_fact_remove_retracts(vectors):
    vectors.add_patient_facts([fact(1, 100, 10), fact(2, 100, 10)])
    assert vectors.remove_patient_facts([1]) == 1
    assert vectors.remove_patient_facts([]) == 0
    assert [h.fact_id for h in vectors.search_patient_facts(vec(1), 100, 10)] == [2]
    assert vectors.count_patient_facts(100) == 1


# -- keyword index ----------------------------------------------------------------------

DOCS = [
    KeywordDoc("crc#ages", "Colorectal Cancer: Screening", "Ages to screen", "Screening is advised from 45 to 75."),
    KeywordDoc("bp#home", "Hypertension", "Home monitoring", "Confirm raised office readings with home monitoring."),
    KeywordDoc("tsh#first", "Hypothyroidism", "TSH first", "TSH is the first test for thyroid disease."),
]


def test_keyword_index_satisfies_the_protocol(keyword_factory):
    assert isinstance(keyword_factory("v1"), KeywordSearchIndex)


def test_keyword_version_is_complete_only_once_built(keyword_factory):
    index = keyword_factory("v1")
    assert not index.is_complete() and index.doc_count() == 0
    assert index.build(DOCS) == (3, False)
    assert index.is_complete() and index.doc_count() == 3
    assert not keyword_factory("v2").is_complete()  # versions are separate


def test_keyword_build_is_idempotent_unless_rebuilt(keyword_factory):
    keyword_factory("v1").build(DOCS)
    again = keyword_factory("v1")
    assert again.build([]) == (3, True)  # complete: nothing rebuilt
    assert again.build(DOCS[:1], rebuild=True) == (1, False)
    assert again.doc_count() == 1 and [cid for cid, _ in again.search("thyroid screening")] == ["crc#ages"]


def test_keyword_search_is_best_first_and_limited(keyword_factory):
    index = keyword_factory("v1")
    index.build(DOCS)
    hits = index.search("thyroid TSH screening")
    assert hits[0][0] == "tsh#first" and {cid for cid, _ in hits} <= {d.chunk_id for d in DOCS}
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    assert len(index.search("thyroid TSH screening", limit=1)) == 1
    assert index.search("") == [] and index.search("   ") == []
