"""The append-only log the MLLP listener acknowledges from (storage/append_log.py):
records come back whole, a torn tail is dropped, a live process's log is left alone,
and appends arriving together share an fsync without any returning before its own."""

from __future__ import annotations

import os
import threading
import time

import pytest

from storage import append_log
from storage.append_log import AppendLog, orphans, read_records
from storage.db import insert_many, open_database


def test_records_of_an_ended_process_come_back_whole_and_in_order(tmp_path):
    log = AppendLog(tmp_path)
    payloads = [b"first", b"", b"\x0b\x1c binary \r\n" * 40, "é".encode()]
    for p in payloads:
        log.append(p)
    log.close(remove=False)  # as a killed process leaves it: file kept, lock gone
    found = list(orphans(tmp_path))
    assert [o.records for o in found] == [payloads] and found[0].torn_bytes == 0
    found[0].discard()
    assert not list(tmp_path.iterdir())


def test_a_torn_last_record_is_dropped_and_the_rest_kept(tmp_path):
    log = AppendLog(tmp_path)
    log.append(b"one")
    log.append(b"two")
    log.close(remove=False)
    whole = log.path.read_bytes()
    record = len(whole) // 2
    with open(log.path, "ab") as f:  # a process killed inside write(): a record's head, part of its payload
        f.write(whole[:record - 1])
    (found,) = orphans(tmp_path)
    assert found.records == [b"one", b"two"] and found.torn_bytes > 0
    found.release()
    # A flipped byte inside a record ends the whole records there, too.
    damaged = bytearray(whole)
    damaged[-1] ^= 0xFF
    assert read_records(bytes(damaged)) == ([b"one"], record)


def test_a_log_a_live_process_holds_is_not_an_orphan(tmp_path):
    live = AppendLog(tmp_path)
    live.append(b"mine")
    ended = AppendLog(tmp_path)
    ended.append(b"left")
    ended.close(remove=False)
    assert [o.records for o in orphans(tmp_path)] == [[b"left"]]
    live.close(remove=True)
    assert not live.path.exists()


def test_appends_together_share_a_sync_and_none_returns_before_its_own(tmp_path, monkeypatch):
    log = AppendLog(tmp_path)
    synced_sizes: list[int] = []
    real = os.fdatasync

    def slow_sync(fd):  # a disk whose flush takes a while: writers queue behind it
        size = os.fstat(fd).st_size
        time.sleep(0.005)
        real(fd)
        synced_sizes.append(size)

    monkeypatch.setattr(append_log.os, "fdatasync", slow_sync)
    early: list[int] = []

    def writer(k: int):
        for i in range(25):
            end = log.append(f"{k}:{i}".encode())
            if not synced_sizes or max(synced_sizes) < end:
                early.append(end)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close(remove=False)
    assert not early  # every append returned after a sync that covered it
    # 8 writers, 200 appends: some syncs covered several (idle, about 140 syncs; under load fewer)
    assert log.syncs < 200
    (found,) = orphans(tmp_path)
    assert sorted(found.records) == sorted(f"{k}:{i}".encode() for k in range(8) for i in range(25))
    found.release()


def test_insert_many_returns_each_rows_id_in_the_order_given(tmp_path):
    db = open_database(tmp_path / "m.duckdb", migrate_schema=False)
    try:
        with db.cursor() as cur:
            cur.execute("CREATE SEQUENCE s START 100")
            cur.execute("CREATE TABLE t (id INTEGER DEFAULT nextval('s'), k VARCHAR, v INTEGER)")
            cur.execute("INSERT INTO t (k, v) VALUES ('old', 0)")
            records = [{"k": f"k{n}", "v": n} for n in (5, 3, 9, 1)]
            ids = insert_many(cur, "t", records, key=("k",))
            assert dict(cur.execute("SELECT k, id FROM t").fetchall()) == {"old": 100, **{
                r["k"]: i for r, i in zip(records, ids)}}
            assert sorted(ids) == [101, 102, 103, 104]
            with pytest.raises(ValueError, match="must differ"):
                insert_many(cur, "t", [{"k": "same", "v": 1}, {"k": "same", "v": 2}], key=("k",))
    finally:
        db.close()
