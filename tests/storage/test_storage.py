"""Schema migrations, blob store and database ownership."""

import hashlib
import os
from pathlib import Path
import subprocess
import threading
import sys

import duckdb
import pytest

from storage.blobs import BlobStore
from storage.db import open_database
from storage.migrations import LATEST_VERSION, MIGRATIONS, current_version, migrate


def test_migrations_are_idempotent(tmp_path):
    db = open_database(tmp_path / "w.duckdb")
    with db.cursor() as cur:
        assert current_version(cur) == LATEST_VERSION
        assert migrate(cur) == []  # nothing new to apply
        cur.execute("SELECT count(*) FROM document_type_mappings")
        assert cur.fetchone()[0] == 7  # seeds did not run twice
        cur.execute("SELECT count(*) FROM schema_version")
        assert cur.fetchone()[0] == len(MIGRATIONS)
    db.close()


def test_older_database_is_upgraded(tmp_path):
    path = tmp_path / "w.duckdb"
    con = duckdb.connect(str(path))
    assert migrate(con, target=1) == [1]
    assert con.execute("SELECT count(*) FROM document_categories").fetchone()[0] == 0
    con.close()
    db = open_database(path)
    with db.cursor() as cur:
        assert current_version(cur) == LATEST_VERSION
        names = {r[0] for r in cur.execute("SELECT name FROM document_categories").fetchall()}
    assert {"Lab Report", "Intake Form", "Referral Document", "Clinical Workbook", "Fax Packet",
            "HL7 v2 Message", "FHIR Bundle"} <= names
    db.close()


def test_every_design_table_exists(tmp_path):
    db = open_database(tmp_path / "w.duckdb")
    with db.cursor() as cur:
        tables = {r[0] for r in cur.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    db.close()
    expected = {
        "patients", "chart_lab_results", "chart_allergies", "chart_medications", "chart_problems", "chart_vital_signs",
        "document_categories", "document_type_mappings", "documents", "processing_jobs", "worker_heartbeats",
        "identity_checks", "document_facts", "promotions", "retractions", "review_decisions",
        "supervisor_handoffs", "guideline_chunks", "eval_runs", "eval_case_results",
    }
    assert expected <= tables


def test_blob_store_dedupes_by_sha256(tmp_path):
    store = BlobStore(tmp_path / "documents")
    sha1, path1 = store.put(b"same bytes")
    sha2, path2 = store.put(b"same bytes")
    assert sha1 == sha2 == hashlib.sha256(b"same bytes").hexdigest()
    assert path1 == path2 == tmp_path / "documents" / sha1[:2] / sha1
    assert store.get(sha1) == b"same bytes"
    files = [p for p in (tmp_path / "documents").rglob("*") if p.is_file()]
    assert files == [path1]


def test_blob_write_is_atomic(tmp_path, monkeypatch):
    store = BlobStore(tmp_path / "documents")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        store.put(b"half written?")
    leftovers = [p for p in (tmp_path / "documents").rglob("*") if p.is_file()]
    assert leftovers == []  # neither a partial target nor a temp file remains


def test_put_then_sync_places_the_original_only_once_it_is_synced(tmp_path, monkeypatch):
    store = BlobStore(tmp_path / "documents")
    release, synced = threading.Event(), []
    real_fsync = os.fsync

    def slow_fsync(fd):
        release.wait(5)
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    sha, path, durable = store.put_then_sync(b"an HL7 message")
    assert not path.exists() and not durable.done()  # not at its place before it is durable
    release.set()
    durable.result(timeout=5)
    assert synced and path.read_bytes() == b"an HL7 message" and store.get(sha) == b"an HL7 message"
    # the same bytes again: already stored, nothing to wait for, one file
    _, again, done = store.put_then_sync(b"an HL7 message")
    assert again == path and done.done()
    assert [p for p in (tmp_path / "documents").rglob("*") if p.is_file()] == [path]


def test_put_then_sync_reports_a_failed_write_on_its_future_and_leaves_nothing(tmp_path, monkeypatch):
    store = BlobStore(tmp_path / "documents")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    _, _, durable = store.put_then_sync(b"half written?")
    with pytest.raises(OSError):
        durable.result(timeout=5)
    assert [p for p in (tmp_path / "documents").rglob("*") if p.is_file()] == []


def test_second_process_gets_a_clear_error(tmp_path):
    path = tmp_path / "w.duckdb"
    db = open_database(path)
    code = (
        "import sys; from storage.db import Database; from domain.errors import DatabaseBusy\n"
        f"try:\n    Database(r'{path}')\nexcept DatabaseBusy as e:\n    print(e); sys.exit(7)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=str(Path(__file__).resolve().parents[2]))
    db.close()
    assert proc.returncode == 7, proc.stderr
    assert str(tmp_path) in proc.stdout and "another process" in proc.stdout


@pytest.mark.parametrize("unnest_rows", [64, 0], ids=["list parameters", "arrow scan"])
def test_bulk_insert_stores_what_parameters_stored(tmp_path, monkeypatch, unnest_rows):
    """storage.db.insert_rows (a few rows as list parameters, many as an Arrow scan) keeps
    every value as a parameter insert did: NULLs, JSON text, booleans, doubles, naive
    timestamps, strings cast to DATE; a column that holds a number and a string is stored
    as the parameter path stored it, and one neither way can type takes the parameter path
    inside the caller's transaction, which goes on."""
    from datetime import datetime

    from storage import db as db_module
    from storage.db import insert_rows

    monkeypatch.setattr(db_module, "UNNEST_ROWS", unnest_rows)
    db = open_database(tmp_path / "w.duckdb")
    columns = ("id", "note", "payload", "flag", "score", "seen_at", "day")
    records = [[1, "a", '{"k": [1, 2]}', True, 0.9512, datetime(2024, 3, 1, 9, 30, 5, 123456), "2024-03-01"],
               [2, None, None, False, None, datetime(2024, 3, 2), None],
               [3, "c", "[]", None, 2, datetime(2024, 3, 3), "2024-03-03"]]
    with db.cursor() as cur:
        for table in ("by_param", "by_bulk", "mixed", "untyped"):
            cur.execute(f"CREATE TABLE {table} (id BIGINT, note VARCHAR, payload JSON, flag BOOLEAN, "
                        "score DOUBLE, seen_at TIMESTAMP, day DATE)")
        cur.executemany("INSERT INTO by_param VALUES (?, ?, ?, ?, ?, ?, ?)", records)
        insert_rows(cur, "by_bulk", columns, records)
        insert_rows(cur, "mixed", columns, [[3, 7, *records[0][2:]], [4, "x", *records[1][2:]]])
        param = cur.execute("SELECT * FROM by_param ORDER BY id").fetchall()
        bulk = cur.execute("SELECT * FROM by_bulk ORDER BY id").fetchall()
        mixed = cur.execute("SELECT id, note FROM mixed ORDER BY id").fetchall()
    with db.transaction() as cur:
        insert_rows(cur, "untyped", ("id", "note"), [[5, {"k": 1}], [6, "y"]])
        cur.execute("INSERT INTO untyped (id, note) VALUES (7, 'z')")
    with db.cursor() as cur:
        untyped = cur.execute("SELECT id, note FROM untyped ORDER BY id").fetchall()
    db.close()
    assert bulk == param and bulk[0][2] == '{"k": [1, 2]}' and bulk[1][1:5] == (None, None, False, None)
    assert bulk[2][4] == 2.0 and isinstance(bulk[2][4], float)
    assert mixed == [(3, "7"), (4, "x")]
    assert untyped == [(5, "{'k': 1}"), (6, "y"), (7, "z")]


def test_a_migration_merged_out_of_number_order_is_still_applied(tmp_path, monkeypatch):
    # Branches merged out of number order: a data dir at 16 must still get 15.
    import duckdb

    from storage import migrations

    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    cur = con.cursor()
    ran: list[int] = []
    one, three = (1, "one", lambda c: ran.append(1)), (3, "three", lambda c: ran.append(3))
    monkeypatch.setattr(migrations, "MIGRATIONS", [one, three])
    assert migrate(cur) == [1, 3]
    monkeypatch.setattr(migrations, "MIGRATIONS", [one, (2, "two", lambda c: ran.append(2)), three])
    assert migrate(cur) == [2] and ran == [1, 3, 2]
    assert migrate(cur) == []
    con.close()
