"""DuckDB guideline rows: upsert, active version switch, lookups."""

from __future__ import annotations

import dataclasses

import duckdb
import pytest

from corpus.loader import load_corpus
from storage import guideline_repo

# The lead's migration creates exactly this table.
GUIDELINE_DDL = """
CREATE TABLE IF NOT EXISTS guideline_chunks (
  chunk_id VARCHAR NOT NULL, corpus_version VARCHAR NOT NULL, source_title VARCHAR NOT NULL,
  source_reference VARCHAR, section VARCHAR NOT NULL, text VARCHAR NOT NULL, citation JSON NOT NULL,
  active BOOLEAN NOT NULL DEFAULT TRUE, indexed_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
  PRIMARY KEY (corpus_version, chunk_id));
"""


@pytest.fixture
def cur():
    con = duckdb.connect(":memory:")
    con.execute(GUIDELINE_DDL)
    yield con.cursor()
    con.close()


@pytest.fixture(scope="module")
def chunks():
    return load_corpus()[1]


def _rows(cur):
    return cur.execute(
        "SELECT corpus_version, active, count(*) FROM guideline_chunks GROUP BY ALL ORDER BY 1"
    ).fetchall()


def test_upsert_is_idempotent_and_starts_inactive(cur, chunks):
    version = chunks[0].corpus_version
    assert guideline_repo.upsert_chunks(cur, chunks) == len(chunks)
    assert guideline_repo.upsert_chunks(cur, chunks) == len(chunks)
    assert _rows(cur) == [(version, False, len(chunks))]
    assert guideline_repo.active_version(cur) is None


def test_set_active_version_deactivates_older(cur, chunks):
    v1 = chunks[0].corpus_version
    v2_chunks = [dataclasses.replace(c, corpus_version="v2") for c in chunks[:4]]
    guideline_repo.upsert_chunks(cur, chunks)
    guideline_repo.set_active_version(cur, v1)
    assert guideline_repo.active_version(cur) == v1
    guideline_repo.upsert_chunks(cur, v2_chunks)
    assert guideline_repo.active_version(cur) == v1  # a new version is not live until switched
    guideline_repo.set_active_version(cur, "v2")
    assert _rows(cur) == sorted([(v1, False, len(chunks)), ("v2", True, 4)])
    version, active = guideline_repo.get_active_chunks(cur)
    assert version == "v2" and [c.chunk_id for c in active] == sorted(c.chunk_id for c in v2_chunks)


def test_upsert_refreshes_text_without_touching_active(cur, chunks):
    version = chunks[0].corpus_version
    guideline_repo.upsert_chunks(cur, chunks)
    guideline_repo.set_active_version(cur, version)
    changed = dataclasses.replace(chunks[0], text="Refreshed text.")
    guideline_repo.upsert_chunks(cur, [changed])
    got = guideline_repo.get_chunks(cur, version, [changed.chunk_id])[changed.chunk_id]
    assert got.text == "Refreshed text."
    assert guideline_repo.active_version(cur) == version


def test_get_chunks_round_trips_and_skips_unknown_ids(cur, chunks):
    version = chunks[0].corpus_version
    guideline_repo.upsert_chunks(cur, chunks)
    wanted = [chunks[3].chunk_id, "no-such#chunk", chunks[7].chunk_id, chunks[3].chunk_id]
    got = guideline_repo.get_chunks(cur, version, wanted)
    assert set(got) == {chunks[3].chunk_id, chunks[7].chunk_id}
    # Read back as storage's own row shape, field for field what the corpus chunk holds.
    assert dataclasses.astuple(got[chunks[3].chunk_id]) == dataclasses.astuple(chunks[3])
    assert guideline_repo.get_chunks(cur, "other-version", wanted) == {}
    assert guideline_repo.get_chunks(cur, version, []) == {}
    assert guideline_repo.count_chunks(cur, version) == len(chunks)


def test_prune_version_drops_only_missing_ids_of_that_version(cur, chunks):
    version = chunks[0].corpus_version
    guideline_repo.upsert_chunks(cur, chunks)
    guideline_repo.upsert_chunks(cur, [dataclasses.replace(c, corpus_version="v2") for c in chunks[:2]])
    keep = [c.chunk_id for c in chunks[:-3]]
    assert guideline_repo.prune_version(cur, version, keep) == 3
    assert guideline_repo.prune_version(cur, version, keep) == 0
    assert guideline_repo.count_chunks(cur, version) == len(chunks) - 3
    assert guideline_repo.count_chunks(cur, "v2") == 2
