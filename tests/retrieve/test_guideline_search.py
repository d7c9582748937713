"""Hybrid guideline search on the real corpus with the real offline embedder:
indexing, the checked-in threshold against the calibration questions and against
held-out questions calibration never sees, citations, not_found."""

from __future__ import annotations

import dataclasses
import json

import pytest

from domain.models import Citation
from core.services.answer.corpus import index_corpus
from corpus.loader import load_corpus
from retrieve import calibrate
from retrieve.calibrate import (
    HOLDOUT_FILE,
    QUESTIONS_FILE,
    CalibrationFailed,
    load_questions,
    midpoint_threshold,
    score_questions,
)
from retrieve.embedder import MiniLmOnnxEmbedder
from retrieve.guidelines import (
    THRESHOLDS_FILE,
    GuidelineIndexMissing,
    GuidelineSearcher,
    ThresholdNotCalibrated,
    load_threshold,
    threshold_key,
)
from retrieve.rerank import LocalReranker
from storage import guideline_repo
from storage.db import open_database
from storage.keyword_index import KeywordIndex
from storage.vector_store import VectorStore

QUESTIONS = load_questions()
K = QUESTIONS["k"]
HOLDOUT = json.loads(HOLDOUT_FILE.read_text(encoding="utf-8"))  # read here only, never by calibrate

# Held-out questions the checked-in threshold (0.4556) gets wrong: real findings, kept
# visible as strict xfails rather than reworded until they pass. Scores as measured.
HOLDOUT_MISSES = {
    "hin-14": "expected when-to-stop chunk ranks 2nd at 0.4458, under the threshold; "
              "only who-should-be-screened (0.5205) is returned",
    "hout-02": "INR/warfarin question scores 0.4570 on how-often-to-check-a1c, just over the threshold",
    "hout-08": "hepatitis C screening question scores 0.4566 on hypertension screening-intervals, "
               "just over the threshold",
}


def _holdout(items: list[dict]) -> list:
    return [pytest.param(i, id=i["id"], marks=pytest.mark.xfail(strict=True, reason=HOLDOUT_MISSES[i["id"]]))
            if i["id"] in HOLDOUT_MISSES else pytest.param(i, id=i["id"]) for i in items]


@pytest.fixture(scope="module")
def embedder():
    return MiniLmOnnxEmbedder()


def active_version(db):
    with db.cursor() as cur:
        return guideline_repo.active_version(cur)


def active_chunks(db):
    with db.cursor() as cur:
        return guideline_repo.get_active_chunks(cur)[1]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, embedder):
    data_dir = tmp_path_factory.mktemp("guidelines") / "data"
    db = open_database(tmp_path_factory.mktemp("guidelines-db") / "workbench.duckdb")
    first = index_corpus(db, data_dir, embedder)
    second = index_corpus(db, data_dir, embedder)
    yield data_dir, db, first, second
    db.close()


@pytest.fixture(scope="module")
def searcher(indexed, embedder):
    data_dir, db, _, _ = indexed
    return GuidelineSearcher(data_dir, embedder=embedder, chunks=active_chunks(db))


# -- indexing -------------------------------------------------------------------------


def test_index_corpus_is_idempotent(indexed):
    data_dir, db, first, second = indexed
    version, chunks = load_corpus()
    n = len(chunks)
    assert first["corpus_version"] == version and first["skipped"] is False
    assert first["counts"] == {"chunks": n, "duckdb": n, "keyword": n, "vectors": n, "embedded": n}
    assert second["skipped"] is True and second["counts"]["embedded"] == 0
    assert active_version(db) == version
    assert KeywordIndex(data_dir, version).doc_count() == n
    assert VectorStore.for_data_dir(data_dir).count_guideline_chunks() == n  # no duplicate rows


def test_new_corpus_version_coexists_and_takes_over(tmp_path, embedder):
    version, chunks = load_corpus()
    db = open_database(tmp_path / "workbench.duckdb")
    small = chunks[:6]
    index_corpus(db, tmp_path, embedder, corpus=(version, small))
    v2 = [dataclasses.replace(c, corpus_version="v2") for c in small[:3]]
    result = index_corpus(db, tmp_path, embedder, corpus=("v2", v2))
    assert result["skipped"] is False and result["counts"]["vectors"] == 3
    store = VectorStore.for_data_dir(tmp_path)
    assert store.count_guideline_chunks(version) == 6 and store.count_guideline_chunks("v2") == 3
    assert (tmp_path / "tantivy" / version).is_dir() and (tmp_path / "tantivy" / "v2").is_dir()
    assert active_version(db) == "v2"
    live = GuidelineSearcher(tmp_path, embedder=embedder, chunks=active_chunks(db), threshold=0.0)
    assert live.corpus_version == "v2"
    assert {h.chunk_id for h in live.search("A1C", k=10).results} <= {c.chunk_id for c in v2}


def test_index_corpus_repairs_a_partial_index(tmp_path, embedder):
    version, chunks = load_corpus()
    small = chunks[:5]
    db = open_database(tmp_path / "workbench.duckdb")
    index_corpus(db, tmp_path, embedder, corpus=(version, small))
    store = VectorStore.for_data_dir(tmp_path)
    store.remove_guideline_chunks(version, [small[0].chunk_id])  # a lost vector
    (tmp_path / "tantivy" / version / "COMPLETE").unlink()  # an interrupted keyword build
    result = index_corpus(db, tmp_path, embedder, corpus=(version, small))
    assert result["skipped"] is False and result["counts"]["embedded"] == 1
    assert result["counts"]["keyword"] == result["counts"]["vectors"] == 5
    forced = index_corpus(db, tmp_path, embedder, corpus=(version, small), force=True)
    assert forced["skipped"] is False and forced["counts"]["embedded"] == 5
    assert VectorStore.for_data_dir(tmp_path).count_guideline_chunks(version) == 5  # replaced, not added
    fewer = index_corpus(db, tmp_path, embedder, corpus=(version, small[1:]))
    assert fewer["counts"] == {"chunks": 4, "duckdb": 4, "keyword": 4, "vectors": 4, "embedded": 0}
    assert len(active_chunks(db)) == 4  # stale rows dropped everywhere


def test_searcher_refuses_a_missing_index(tmp_path, embedder):
    _, chunks = load_corpus()
    with pytest.raises(GuidelineIndexMissing):
        GuidelineSearcher(tmp_path, embedder=embedder, chunks=chunks)
    with pytest.raises(GuidelineIndexMissing):  # no active corpus: nothing to search
        GuidelineSearcher(tmp_path, embedder=embedder, chunks=[])


# -- checked-in threshold -------------------------------------------------------------


def test_question_set_size_and_ids_exist():
    ids = {c.chunk_id for c in load_corpus()[1]}
    assert len(QUESTIONS["in_corpus"]) >= 25 and len(QUESTIONS["out_of_corpus"]) >= 15
    for item in QUESTIONS["in_corpus"]:
        assert item["expected_chunk_ids"] and set(item["expected_chunk_ids"]) <= ids, item["id"]


def test_threshold_was_calibrated_for_this_corpus_and_reranker(embedder):
    entries = json.loads(THRESHOLDS_FILE.read_text())
    reranker = LocalReranker(embedder)
    entry = entries[threshold_key(reranker.name, embedder.name)]
    assert entry["calibrated"] is True
    assert entry["corpus_version"] == load_corpus()[0], "corpus changed: run python -m retrieve.calibrate --write"
    assert entry["reranker"] == reranker.describe(), "weights changed: recalibrate"
    assert entry["max_out_of_corpus"] < entry["threshold"] < entry["min_in_corpus"]
    assert load_threshold(reranker.name, embedder.name) == entry["threshold"]


def test_unknown_reranker_has_no_threshold():
    with pytest.raises(ThresholdNotCalibrated):
        load_threshold("never-calibrated", "any")
    assert load_threshold("cohere:rerank-v3.5", "any-embedder") > 0  # documented starting value


@pytest.mark.parametrize("item", QUESTIONS["in_corpus"], ids=lambda i: i["id"])
def test_supported_question_clears_threshold_with_expected_chunk(searcher, item):
    result = searcher.search(item["question"], k=K)
    assert not result.not_found, f"best score {result.best_score} < threshold {result.threshold}"
    assert set(item["expected_chunk_ids"]) & {h.chunk_id for h in result.results}


@pytest.mark.parametrize("item", QUESTIONS["out_of_corpus"], ids=lambda i: i["id"])
def test_out_of_corpus_question_is_not_found(searcher, item):
    result = searcher.search(item["question"], k=K)
    assert result.not_found and result.results == []
    assert result.best_score is None or result.best_score < result.threshold


def test_fresh_calibration_agrees_with_checked_in_threshold(searcher):
    report = score_questions(searcher, QUESTIONS)
    assert report.misses == []
    assert report.max_out < searcher.threshold < report.min_in
    assert midpoint_threshold(report.min_in, report.max_out) == pytest.approx(searcher.threshold, abs=0.02)


# -- result shape ----------------------------------------------------------------------


def test_results_carry_citations_of_retrieved_chunks(searcher):
    result = searcher.search("When should a lipid panel be repeated after starting a statin?", k=3)
    assert 1 <= len(result.results) <= 3
    assert [h.score for h in result.results] == sorted((h.score for h in result.results), reverse=True)
    for hit in result.results:
        cite = Citation.model_validate(hit.citation)
        assert cite.source_type == "guideline"
        assert cite.source_id == cite.field_or_chunk_id == hit.chunk_id
        assert cite.page_or_section == hit.section
        assert cite.quote_or_value in hit.text
        assert hit.corpus_version == searcher.corpus_version and hit.score >= result.threshold
    payload = result.model_dump()
    assert set(payload["results"][0]) == {"chunk_id", "corpus_version", "source_title", "section", "score",
                                          "text", "citation"}
    assert {"sparse", "dense", "fuse", "rerank", "total"} <= set(result.timings_ms)


def test_synonym_query_finds_the_same_chunk(searcher):
    a = searcher.search("HbA1c goal for most adults with diabetes", k=1).results[0].chunk_id
    b = searcher.search("A1C target for most adults with diabetes", k=1).results[0].chunk_id
    assert a == b == "ada-2024-glycemic-goals#a1c-goal-for-most-nonpregnant-adults"


@pytest.mark.parametrize("query", ["", "   ", "?!", 'AND "(( title:', "🙂"])
def test_degenerate_queries_are_not_found(searcher, query):
    result = searcher.search(query)
    assert result.not_found and result.results == []


def test_preloaded_chunks_give_the_same_answer(indexed, embedder, searcher):
    data_dir, _, _, _ = indexed
    _, chunks = load_corpus()
    preloaded = GuidelineSearcher(data_dir, embedder=embedder, chunks=chunks)
    q = "How often should a screening colonoscopy be repeated?"
    assert [h.chunk_id for h in preloaded.search(q).results] == [h.chunk_id for h in searcher.search(q).results]


def test_warm_up_then_search_finds_the_chunk(searcher):
    # Its latency is measured by bench/guideline_warm_search.py, not asserted here.
    searcher.warm_up()
    result = searcher.search("How often should TSH be checked on levothyroxine?")
    assert result.results[0].chunk_id == "aace-ata-2012-hypothyroidism#monitoring-tsh-on-levothyroxine"


# -- held-out questions ----------------------------------------------------------------


def test_holdout_set_is_apart_from_the_calibration_set():
    ids = {c.chunk_id for c in load_corpus()[1]}
    assert len(HOLDOUT["in_corpus"]) >= 20 and len(HOLDOUT["out_of_corpus"]) >= 10 and HOLDOUT["k"] == K
    for item in HOLDOUT["in_corpus"]:
        assert item["expected_chunk_ids"] and set(item["expected_chunk_ids"]) <= ids, item["id"]
    seen = QUESTIONS["in_corpus"] + QUESTIONS["out_of_corpus"]
    held = HOLDOUT["in_corpus"] + HOLDOUT["out_of_corpus"]
    assert not {q["id"] for q in seen} & {q["id"] for q in held}
    assert not {q["question"].casefold() for q in seen} & {q["question"].casefold() for q in held}


def test_calibration_reads_the_calibration_set_and_refuses_the_holdout(monkeypatch):
    read = []

    def record(path=QUESTIONS_FILE):
        read.append(path)
        raise CalibrationFailed("stop before indexing")

    monkeypatch.setattr("retrieve.embedder.MiniLmOnnxEmbedder", lambda: None)  # no model load to reach the read
    monkeypatch.setattr(calibrate, "load_questions", record)
    with pytest.raises(CalibrationFailed):
        calibrate.main([])
    assert [p.resolve() for p in read] == [QUESTIONS_FILE.resolve()] != [HOLDOUT_FILE.resolve()]
    monkeypatch.undo()
    with pytest.raises(CalibrationFailed, match="held-out"):
        load_questions(HOLDOUT_FILE)


@pytest.mark.parametrize("item", _holdout(HOLDOUT["in_corpus"]))
def test_holdout_supported_question_clears_threshold_with_expected_chunk(searcher, item):
    result = searcher.search(item["question"], k=K)
    got = [h.chunk_id for h in result.results]
    assert not result.not_found, f"best score {result.best_score} < threshold {result.threshold}"
    assert set(item["expected_chunk_ids"]) & set(got), f"expected {item['expected_chunk_ids']}, got {got}"


@pytest.mark.parametrize("item", _holdout(HOLDOUT["out_of_corpus"]))
def test_holdout_out_of_corpus_question_is_not_found(searcher, item):
    result = searcher.search(item["question"], k=K)
    assert result.not_found and result.results == [], f"best score {result.best_score} >= {result.threshold}"


def test_the_dense_step_ranks_as_lancedb_does(indexed, searcher):
    # Issue 27: the dense candidates come from the vectors the searcher holds, in the order
    # LanceDB's exact cosine search gives them, so no answer changes.
    from storage.vector_store import VectorStore

    store = VectorStore.for_data_dir(indexed[0], read_consistency_interval=None)
    for question in ("How often should A1C be checked?", "statin for LDL cholesterol", "colon cancer screening"):
        qvec = searcher.embedder.embed([question])[0]
        ours = searcher.dense(qvec, 30)
        theirs = store.search_guidelines(qvec, searcher.corpus_version, 30, embedding_model=searcher.embedder.name)
        assert [cid for cid, _ in ours] == [cid for cid, _ in theirs]
        assert all(abs(a - b) < 1e-4 for (_, a), (_, b) in zip(ours, theirs))
