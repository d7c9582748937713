"""tantivy BM25 index: per-version directories, idempotent builds, safe queries."""

from __future__ import annotations

import pytest

from storage.keyword_index import KeywordDoc, KeywordIndex, sanitise_query

DOCS = [
    KeywordDoc("crc#ages", "Colorectal Cancer: Screening", "Ages to screen", "Screening is advised from 45 to 75."),
    KeywordDoc("bp#home", "Hypertension", "Home monitoring", "Confirm raised office readings with home monitoring."),
    KeywordDoc("tsh#first", "Hypothyroidism", "TSH first", "TSH is the first test for thyroid disease."),
]


@pytest.fixture
def index(tmp_path) -> KeywordIndex:
    idx = KeywordIndex(tmp_path, "v1")
    assert idx.build(DOCS) == (3, False)
    return idx


def test_one_directory_per_version(tmp_path, index):
    assert index.path == tmp_path / "tantivy" / "v1"
    other = KeywordIndex(tmp_path, "v2")
    other.build(DOCS[:1])
    assert other.doc_count() == 1 and index.doc_count() == 3


def test_build_is_idempotent(tmp_path, index):
    again = KeywordIndex(tmp_path, "v1")
    assert again.build([]) == (3, True)  # the complete marker wins; nothing rebuilt
    assert again.search("thyroid")[0][0] == "tsh#first"


def test_half_built_index_is_rebuilt(tmp_path):
    idx = KeywordIndex(tmp_path, "v1")
    idx.path.mkdir(parents=True)
    (idx.path / "leftover").write_text("crash debris")
    assert idx.build(DOCS) == (3, False)
    assert not (idx.path / "leftover").exists()


def test_english_stemming_matches_word_forms(index):
    hits = index.search("screened")
    assert hits and hits[0][0] == "crc#ages" and hits[0][1] > 0
    assert index.search("monitored readings")[0][0] == "bp#home"


@pytest.mark.parametrize("query", [
    'AND OR NOT', '"unbalanced', "title:tsh", "(((", "[1 TO 5]", "tsh^2 ~3", "-+*?", "a\\b",
    "IN [a b]", "thyroid OR", "colon: screening", "'; DROP TABLE x; --",
])
def test_punctuation_never_raises(index, query):
    hits = index.search(query)
    assert {cid for cid, _ in hits} <= {d.chunk_id for d in DOCS}
    assert all(score > 0 for _, score in hits)


def test_operators_are_plain_words(index):
    assert sanitise_query('TSH AND "thyroid" -x title:foo') == "tsh and thyroid x title foo"
    assert index.search("NOT thyroid")[0][0] == "tsh#first"


def test_empty_and_symbol_only_queries_return_nothing(index):
    assert index.search("") == [] and index.search("?!.") == []


def test_limit_and_score_order(index):
    hits = index.search("screening thyroid home", limit=2)
    assert len(hits) == 2
    assert hits[0][1] >= hits[1][1]


def test_unbuilt_index_and_unsafe_version(tmp_path):
    with pytest.raises(FileNotFoundError):
        KeywordIndex(tmp_path, "never-built").search("tsh")
    with pytest.raises(ValueError):
        KeywordIndex(tmp_path, "../escape")
