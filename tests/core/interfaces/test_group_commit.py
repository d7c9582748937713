"""Group commit (issue 27): messages arriving together on different connections share
one transaction, each caller is answered only after the commit that holds its rows,
a refusal refuses only its own message, and a batch that fails is written again one
message per transaction so the others still get theirs."""

from __future__ import annotations

import threading
import time

import pytest

from core.services.interfaces.group_commit import GroupCommit
from storage.db import open_database


class Refusal(Exception):
    pass


@pytest.fixture
def db(tmp_path):
    database = open_database(tmp_path / "g.duckdb", migrate_schema=False)
    with database.cursor() as cur:
        cur.execute("CREATE TABLE t (n INTEGER PRIMARY KEY)")
    yield database
    database.close()


def writer(delay: float = 0.0):
    def write(cur, n):
        if n < 0:
            raise Refusal(f"refused {n}")
        time.sleep(delay)  # a slow write lets the others queue behind the leader
        cur.execute("INSERT INTO t VALUES (?)", [n])
        return n * 10
    return write


def submit_all(group: GroupCommit, items: list[int]) -> dict[int, object]:
    out: dict[int, object] = {}

    def one(n):
        try:
            out[n] = group.submit(n)
            with group.db.cursor() as cur:  # answered only once its row is committed
                assert cur.execute("SELECT count(*) FROM t WHERE n = ?", [n]).fetchone()[0] == 1
        except Exception as exc:  # noqa: BLE001
            out[n] = exc

    threads = [threading.Thread(target=one, args=(n,)) for n in items]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return out


def test_concurrent_messages_share_commits_and_each_gets_its_own_answer(db):
    group = GroupCommit(db, writer(0.02), refusals=(Refusal,))
    out = submit_all(group, list(range(1, 25)))
    assert out == {n: n * 10 for n in range(1, 25)}
    assert group.batches < 24  # some commits carried several messages
    with db.cursor() as cur:
        assert cur.execute("SELECT count(*) FROM t").fetchone()[0] == 24


def test_a_refusal_refuses_only_its_own_message(db):
    group = GroupCommit(db, writer(0.02), refusals=(Refusal,))
    out = submit_all(group, [1, 2, -3, 4, 5])
    assert isinstance(out[-3], Refusal)
    assert {n: out[n] for n in (1, 2, 4, 5)} == {1: 10, 2: 20, 4: 40, 5: 50}


def test_a_batch_that_fails_is_written_again_one_message_at_a_time(db):
    with db.cursor() as cur:
        cur.execute("INSERT INTO t VALUES (3)")  # message 3's row breaks the primary key
    group = GroupCommit(db, writer(0.02), refusals=(Refusal,))
    out = submit_all(group, [1, 2, 3, 4])
    assert isinstance(out[3], Exception) and not isinstance(out[3], Refusal)
    assert {n: out[n] for n in (1, 2, 4)} == {1: 10, 2: 20, 4: 40}
    with db.cursor() as cur:
        assert sorted(r[0] for r in cur.execute("SELECT n FROM t").fetchall()) == [1, 2, 3, 4]


def test_one_caller_alone_is_one_commit_each(db):
    group = GroupCommit(db, writer(), refusals=(Refusal,))
    assert [group.submit(n) for n in (7, 8, 9)] == [70, 80, 90]
    assert group.batches == 3


def test_several_payloads_from_one_caller_are_written_in_as_few_commits_as_the_cap_allows(db, monkeypatch):
    from core.services.interfaces import group_commit

    monkeypatch.setattr(group_commit, "MAX_BATCH", 4)
    with db.cursor() as cur:
        cur.execute("INSERT INTO t VALUES (6)")  # 6's row breaks the key: its batch is written one by one
    group = GroupCommit(db, writer(), refusals=(Refusal,))
    out = group.submit_many([1, 2, -3, 4, 5, 6, 7, 8, 9])
    assert [r for r, _ in out] == [10, 20, None, 40, 50, None, 70, 80, 90]
    assert isinstance(out[2][1], Refusal) and isinstance(out[5][1], Exception)
    assert group.batches == 1 + 3 + 1  # [1,2,-3,4] together; [5,6,7,8] one by one (6 fails); [9]
    with db.cursor() as cur:
        assert sorted(r[0] for r in cur.execute("SELECT n FROM t").fetchall()) == [1, 2, 4, 5, 6, 7, 8, 9]
