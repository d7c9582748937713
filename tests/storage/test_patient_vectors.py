"""Patient-fact vectors: isolation by patient, active filter, idempotent adds, removal."""

from __future__ import annotations

import numpy as np
import pytest

from storage.vector_store import (
    GuidelineVectorRow,
    PatientFactRow,
    VectorDimensionMismatch,
    VectorStore,
)

DIM = 8
MODEL = "test-model"


def vec(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i % DIM] = 1.0
    v[(i + 1) % DIM] = 0.1
    return v / np.linalg.norm(v)


def fact(fact_id, patient_id, document_id, *, active=True, text=None):
    return PatientFactRow(fact_id, patient_id, document_id, active, text or f"fact {fact_id}", vec(fact_id), MODEL)


@pytest.fixture
def store(tmp_path) -> VectorStore:
    s = VectorStore(tmp_path / "lance")
    s.add_patient_facts([
        fact(1, patient_id=100, document_id=10),
        fact(2, patient_id=100, document_id=10),
        fact(3, patient_id=100, document_id=11),
        fact(4, patient_id=200, document_id=20),
        fact(5, patient_id=200, document_id=20, active=False),
    ])
    return s


def ids(hits):
    return sorted(h.fact_id for h in hits)


def test_fact_of_patient_a_is_never_returned_for_b(store):
    # Query with A's exact vector and a large k: B still sees only B's active facts.
    for i in (1, 2, 3):
        assert ids(store.search_patient_facts(vec(i), patient_id=200, k=50)) == [4]
    assert ids(store.search_patient_facts(vec(4), patient_id=100, k=50)) == [1, 2, 3]
    assert store.search_patient_facts(vec(1), patient_id=999, k=50) == []


def test_best_match_first_with_cosine_score(store):
    hits = store.search_patient_facts(vec(2), patient_id=100, k=3)
    assert hits[0].fact_id == 2 and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert hits[0].document_id == 10 and hits[0].patient_id == 100 and hits[0].text == "fact 2"
    assert hits[0].score >= hits[1].score >= hits[2].score


def test_inactive_facts_are_never_returned(store):
    assert 5 not in ids(store.search_patient_facts(vec(5), patient_id=200, k=50))
    assert store.set_patient_facts_active([1], False) == 1
    assert ids(store.search_patient_facts(vec(1), patient_id=100, k=50)) == [2, 3]
    store.set_patient_facts_active([1, 5], True)
    assert ids(store.search_patient_facts(vec(1), patient_id=100, k=50)) == [1, 2, 3]
    assert ids(store.search_patient_facts(vec(5), patient_id=200, k=50)) == [4, 5]


def test_re_adding_never_duplicates(store):
    before = store.count_patient_facts()
    assert store.add_patient_facts([fact(1, 100, 10), fact(1, 100, 10), fact(4, 200, 20)]) == 2
    assert store.count_patient_facts() == before == 5
    store.add_patient_facts([fact(2, 100, 10, text="corrected fact 2")])
    hits = store.search_patient_facts(vec(2), patient_id=100, k=1)
    assert hits[0].text == "corrected fact 2" and store.count_patient_facts() == 5


def test_remove_by_fact_id(store):
    assert store.remove_patient_facts([2, 999]) == 1
    assert ids(store.search_patient_facts(vec(2), patient_id=100, k=50)) == [1, 3]
    assert store.remove_patient_facts([]) == 0
    assert store.count_patient_facts(patient_id=100) == 2


def test_remove_document_retracts_only_its_facts(store):
    assert store.remove_document(10) == 2
    assert ids(store.search_patient_facts(vec(1), patient_id=100, k=50)) == [3]
    assert store.count_patient_facts(document_id=10) == 0
    assert store.count_patient_facts(patient_id=200) == 2
    assert store.remove_document(10) == 0  # retraction is repeatable


def test_counts(store):
    assert store.count_patient_facts() == 5
    assert store.count_patient_facts(patient_id=200) == 2
    assert store.count_patient_facts(patient_id=200, active_only=True) == 1
    assert store.count_patient_facts(document_id=11) == 1
    assert sorted(store.patient_fact_ids()) == [1, 2, 3, 4, 5]


def test_ids_must_be_integers(store):
    with pytest.raises(TypeError):
        store.search_patient_facts(vec(1), patient_id="100 OR 1=1", k=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.remove_document(True)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.remove_patient_facts(["1) OR (1=1"])  # type: ignore[list-item]


def test_guideline_and_patient_tables_never_mix(store):
    store.upsert_guideline_chunks([GuidelineVectorRow("g#1", "v1", "guideline text", vec(1), MODEL)])
    assert store.count_patient_facts() == 5
    assert store.count_guideline_chunks() == 1
    assert all(h.fact_id != "g#1" for h in store.search_patient_facts(vec(1), patient_id=100, k=50))
    assert [cid for cid, _ in store.search_guidelines(vec(1), "v1", k=50)] == ["g#1"]


def test_guideline_versions_coexist_and_upsert_is_idempotent(tmp_path):
    s = VectorStore(tmp_path / "lance")
    rows = [GuidelineVectorRow(f"c{i}", "v1", "t", vec(i), MODEL) for i in range(3)]
    s.upsert_guideline_chunks(rows)
    s.upsert_guideline_chunks(rows)
    s.upsert_guideline_chunks([GuidelineVectorRow("c0", "v2", "t2", vec(0), MODEL)])
    assert s.count_guideline_chunks("v1") == 3 and s.count_guideline_chunks("v2") == 1
    assert [cid for cid, _ in s.search_guidelines(vec(2), "v2", k=5)] == ["c0"]
    assert s.search_guidelines(vec(2), "v1", k=1)[0][0] == "c2"
    assert s.search_guidelines(vec(2), "v1", k=5, embedding_model="other-model") == []
    got_ids, matrix = s.guideline_vectors("v1", embedding_model=MODEL)
    assert sorted(got_ids) == ["c0", "c1", "c2"] and matrix.shape == (3, DIM)


def test_another_handle_sees_writes(tmp_path):
    path = tmp_path / "lance"
    reader, writer = VectorStore(path), VectorStore(path)
    writer.add_patient_facts([fact(1, 100, 10)])
    assert reader.count_patient_facts() == 1  # table created after the reader opened
    writer.add_patient_facts([fact(2, 100, 10)])
    assert ids(reader.search_patient_facts(vec(1), patient_id=100, k=5)) == [1, 2]
    writer.remove_document(10)
    assert reader.search_patient_facts(vec(1), patient_id=100, k=5) == []


def test_empty_store_and_wrong_dimension(tmp_path):
    s = VectorStore(tmp_path / "lance")
    assert s.search_patient_facts(vec(1), patient_id=1, k=5) == []
    assert s.count_patient_facts() == 0 and s.remove_document(1) == 0
    assert s.patient_fact_ids() == []
    s.add_patient_facts([fact(1, 1, 1)])
    wrong = PatientFactRow(2, 1, 1, True, "x", np.ones(DIM + 1, dtype=np.float32), MODEL)
    with pytest.raises(VectorDimensionMismatch):
        s.add_patient_facts([wrong])


# -- appends: a batch of ids the table does not hold is appended, never stored twice ----


def test_a_batch_of_new_ids_is_appended_and_a_batch_with_a_stored_one_is_merged(tmp_path, monkeypatch):
    s = VectorStore(tmp_path / "lance")
    merged = []
    real = VectorStore.__dict__["_merge"].__func__
    monkeypatch.setattr(VectorStore, "_merge", staticmethod(lambda t, k, d: merged.append(d.num_rows) or real(t, k, d)))
    s.add_patient_facts([fact(1, 1, 1), fact(2, 1, 1)])
    s.add_patient_facts([fact(3, 1, 2)])
    assert merged == []  # none of these ids was stored: appended
    s.add_patient_facts([fact(4, 1, 3), fact(2, 1, 1, text="fact 2 again")])
    assert merged == [2]  # id 2 is stored: the batch is merged, so 2 keeps one row, with its new words
    assert sorted(s.patient_fact_ids()) == [1, 2, 3, 4]
    assert s.search_patient_facts(vec(2), patient_id=1, k=1)[0].text == "fact 2 again"


def test_ids_another_handle_stored_are_never_appended_again(tmp_path):
    path = tmp_path / "lance"
    mine, other = VectorStore(path), VectorStore(path)
    mine.add_patient_facts([fact(1, 1, 1)])
    other.add_patient_facts([fact(i, 1, 1) for i in range(2, 40)])  # after `mine` last looked
    mine.add_patient_facts([fact(39, 1, 1, text="again"), fact(40, 1, 1)])
    other.remove_patient_facts([40])
    mine.add_patient_facts([fact(40, 1, 1)])  # removed elsewhere: stored again, once
    mine.add_patient_facts([fact(1, 1, 1)])
    assert sorted(mine.patient_fact_ids()) == list(range(1, 41))


def test_a_handle_that_may_read_an_old_version_always_merges(tmp_path):
    from datetime import timedelta

    path = tmp_path / "lance"
    lagging = VectorStore(path, read_consistency_interval=timedelta(hours=1))
    lagging.add_patient_facts([fact(1, 1, 1)])
    VectorStore(path).add_patient_facts([fact(2, 1, 1)])
    lagging.add_patient_facts([fact(2, 1, 1)])  # it may not see 2 yet: merged, not appended
    assert sorted(VectorStore(path).patient_fact_ids()) == [1, 2]


def _add_in_turn(path: str, start, rounds: int) -> None:
    import time

    store = VectorStore(path)
    look = store._held_fact_ids

    def slow_look(table, version):  # widens the gap between the look and the append
        held = look(table, version)
        time.sleep(0.05)
        return held

    store._held_fact_ids = slow_look
    start.wait()
    for i in range(rounds):
        store.add_patient_facts([fact(i, 1, 1), fact(1000 + i, 1, 1)])


def test_processes_adding_the_same_facts_at_once_store_each_once(tmp_path):
    """The worker and a page's decision write the same table from two processes: the
    look at what is stored and the append are one step for each (the file lock)."""
    import multiprocessing

    path = str(tmp_path / "lance")
    VectorStore(path).add_patient_facts([fact(5000, 1, 1)])  # the table exists before they race
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=_add_in_turn, args=(path, start, 6)) for _ in range(3)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    stored = VectorStore(path).patient_fact_ids()
    assert sorted(stored) == sorted(set(stored)) and len(stored) == 13
