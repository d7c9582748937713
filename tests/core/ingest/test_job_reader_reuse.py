"""A job's reader child is kept for the next job (core.services.ingest.sandbox): under the
production default, a forkserver, a child that answered its job well reads the next one
instead of a fresh fork per job. Each job still gets its ceilings, and a child that ends
otherwise than well fails only its own job: the next job gets a fresh child.

Which child read a job is told by its pid (returned by the job, or seen by the parent's
wait); no test here times anything."""

from __future__ import annotations

import os
import signal
import time

import pytest

from core.services.ingest import sandbox
from core.services.ingest.sandbox import RESOURCE_LIMIT, run_isolated
from domain.errors import ExtractionError

MB = 1024 * 1024


@pytest.fixture(autouse=True)
def no_idle_readers():
    """Each test starts and ends with no idle reader child of this process."""
    _drop_idle()
    yield
    _drop_idle()


def _drop_idle() -> None:
    with sandbox._readers_lock:  # noqa: SLF001 - the pool is emptied, not changed
        idle = list(sandbox._idle_readers)  # noqa: SLF001
        sandbox._idle_readers.clear()  # noqa: SLF001
    for reader in idle:
        reader.conn.close()
        reader.proc.join(5)


@pytest.fixture
def children(monkeypatch):
    """The pid of the child each job's wait watched, in order, and how the wait ended."""
    seen: list[tuple[str, int]] = []
    wait = sandbox._wait  # noqa: SLF001 - observed, not changed

    def watched_wait(proc, receiver, **limits):
        kind, payload = wait(proc, receiver, **limits)
        seen.append((kind, proc.pid))
        return kind, payload

    monkeypatch.setattr(sandbox, "_wait", watched_wait)
    return seen


def run(fn, *args, timeout: float = 60.0, memory_mb: int = 512):
    return run_isolated(fn, args, timeout=timeout, memory_mb=memory_mb, method="forkserver")


def own_pid() -> int:
    return os.getpid()


def hogs_memory_at_once() -> bytes:
    return b"x" * (4096 * MB)  # one allocation past the address-space limit: MemoryError


def hogs_memory_gradually() -> None:
    hoard = []
    while True:  # resident pages, 20 MB at a time: the parent's watch catches it
        hoard.append(b"x" * (20 * MB))
        time.sleep(0.01)


def keeps(megabytes: int) -> int:
    """Leaves ``megabytes`` resident in the child after the job (a module-level hoard)."""
    _kept.append(b"y" * (megabytes * MB))
    return os.getpid()


_kept: list[bytes] = []


def stalls() -> None:
    time.sleep(60)


def crashes() -> None:
    os.kill(os.getpid(), signal.SIGSEGV)  # as a C library crashing on a hostile file
    time.sleep(5)


def refuses() -> None:
    raise ExtractionError("No readable results table.", code="no_results_table")


def breaks() -> None:
    raise KeyError("a defect")


def test_a_child_that_answered_well_reads_the_next_job_too():
    first, second = run(own_pid), run(own_pid)
    assert first == second and first != os.getpid()


@pytest.mark.parametrize("hog", [hogs_memory_at_once, hogs_memory_gradually])
def test_a_reused_child_still_enforces_the_memory_ceiling_on_its_second_job(children, hog):
    pid = run(own_pid, memory_mb=300)
    with pytest.raises(ExtractionError) as caught:
        run(hog, memory_mb=300, timeout=30.0)
    assert caught.value.code == RESOURCE_LIMIT and "more than the 300 MB" in caught.value.message
    assert children[1] == ("memory", pid)  # the same child, ended by the memory ceiling
    after = run(own_pid, memory_mb=300)
    assert after != pid  # it was not kept: the next job has a fresh child, and succeeds


def test_a_reused_child_still_enforces_the_time_ceiling_on_its_second_job(children):
    pid = run(own_pid)
    with pytest.raises(ExtractionError) as caught:
        run(stalls, timeout=1.5)
    assert caught.value.code == RESOURCE_LIMIT and "longer than the 1.5 s" in caught.value.message
    assert children[1] == ("time", pid)
    assert run(own_pid) != pid


def test_a_killed_reused_child_fails_only_its_own_job(children):
    pid = run(own_pid)
    with pytest.raises(ExtractionError) as caught:
        run(crashes)
    assert caught.value.code == RESOURCE_LIMIT and f"signal {signal.SIGSEGV}" in caught.value.message
    assert children[1][1] == pid
    assert run(own_pid) != pid  # the next job runs, in a fresh child


def test_an_idle_child_killed_from_outside_is_replaced_before_its_next_job():
    pid = run(own_pid)
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    assert run(own_pid) not in (pid, os.getpid())


@pytest.mark.parametrize("fn, code", [(refuses, "no_results_table"), (breaks, None)])
def test_a_child_whose_job_ended_in_an_error_is_not_kept(children, fn, code):
    pid = run(own_pid)
    with pytest.raises(Exception) as caught:
        run(fn)
    if code:
        assert isinstance(caught.value, ExtractionError) and caught.value.code == code
    else:
        assert isinstance(caught.value, KeyError)
    assert children[1][1] == pid
    assert run(own_pid) != pid


def test_a_child_is_replaced_after_its_share_of_jobs(monkeypatch):
    monkeypatch.setattr(sandbox, "REUSE_JOBS", 2)
    pids = [run(own_pid) for _ in range(3)]
    assert pids[0] == pids[1] and pids[2] != pids[0]


def test_a_child_that_grew_past_its_allowance_is_replaced(monkeypatch):
    monkeypatch.setattr(sandbox, "REUSE_GROWTH_MB", 32)
    pid = run(keeps, 64)  # 64 MB left resident after the job
    assert run(own_pid) != pid
