"""Run one job's reading (normalize + extract) in a child process under a wall-clock
and a memory ceiling, so one hostile or broken document cannot hold the worker.

Why a child from a forkserver: the worker is a thread inside the app process
(Streamlit, DuckDB and embedder threads), and forking a multi-threaded process can copy
a lock some other thread holds. The forkserver is a separate process with no Python
threads (see sandbox_preload), started once with the extractors imported up front.

Why a child reads several jobs in turn (``_Reader``): a fresh fork per job cost a typed
page ~17 ms on this machine (the fork, then copy-on-write faults as the child first
touches the warm readers) against ~4 ms of reading. A reader child is kept after a job
it answered well, for at most ``REUSE_JOBS`` jobs and while its resident size stays
within ``REUSE_GROWTH_MB`` of where it started; each job gets the ceilings a fresh
child gets (the wall clock; the parent's watch of its resident size, which then starts
at most ``REUSE_GROWTH_MB`` higher; an address-space limit set again at the job's
start). Any other ending (a ceiling, a crash, a MemoryError, an error or a defect)
ends that child: the job fails with its code, and the next job gets a fresh child. What a
kept child carries from one job to the next is the caches of pure functions (compiled
patterns, printed test names looked up), which change no reading: the readers are
functions of the bytes. ``fork`` (tests: monkeypatched extractors
reach the child) keeps a fresh child per job, and ``off`` runs in-process for debugging.

The child never re-creates the parent's ``__main__``. multiprocessing normally tells a
spawned or forkserver child to run the parent's main script again (as ``__mp_main__``)
so that functions defined there unpickle; under Streamlit, ``__main__`` is whatever page
script ran last (Home.py), and re-running it in a job's child opened the database the
app holds and killed every job after the first page view. Our job functions live in
importable modules, so the child is launched without that step (``JobProcess``, in
forkserver_internals: the one place this reaches into multiprocessing's private names).

Memory is bounded twice: the parent watches the child's resident size (with its own
children, e.g. an OCR engine) and kills it past the ceiling; in the child an address
space limit of the baseline plus the ceiling turns a sudden huge allocation into a
MemoryError before the parent's next look.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import resource
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import psutil

from core.services.ingest.forkserver_internals import START_SECONDS, ForkserverStuck, JobProcess
from domain.errors import ExtractionError

RESOURCE_LIMIT = "resource_limit"
INTERNAL_ERROR = "internal_error"
METHODS = ("forkserver", "fork", "off")
_POLL_SECONDS = 0.05  # how soon a finished child's answer is taken
# How often the child's memory is looked at: finding its OCR grandchildren walks all of
# /proc, ~10% of a core at 20 looks a second. A sudden huge allocation is caught in the
# child by its address-space limit meanwhile.
_MEMORY_LOOK_SECONDS = 0.25
_MB = 1024 * 1024
# Modules the forkserver imports once so that every job's child starts warm; a process
# that reads a few documents and exits (``read_lazily``) preloads only the process group.
_PRELOAD = ["core.services.ingest.sandbox_preload"]
_LAZY_PRELOAD = ["core.services.ingest.sandbox_group"]
_warm = True
_context_lock = threading.Lock()
_contexts: dict[str, Any] = {}
# A reader child answers at most this many jobs, and is replaced once it has grown this
# much past its size at its first job (memory a reading left behind, e.g. fragmentation):
# the memory ceiling counts the child's whole resident size, so a kept child's job has at
# most this much less room than a fresh child's (3% of the default 2048 MB). A typed lab
# page's child grew ~10 MB over its first job and then stayed flat over 35 more.
REUSE_JOBS = 50
REUSE_GROWTH_MB = 64
_IDLE_READERS = 2  # idle reader children kept per process (one per concurrent worker is enough)


class _ChildDefect(Exception):
    """A defect in the child whose exception could not be sent back as it was."""


def read_lazily() -> None:
    """For a process that reads a few documents and ends (a CLI command's ``ingest``,
    ``retry``, ``demo``, ``backfill``): its forkserver, started at the first job, imports
    and warms nothing, and the first reader child imports only the reader its document
    needs (kept children then read the rest warm). Warming every reader up front (~2 s:
    the PDF, image, office and HL7 readers, both OCR engines' models) pays off in the app
    and `core worker`, whose forkserver lives for days; for one command it was most of
    the time a typed page took. Call it before the first job; the ceilings are the same."""
    global _warm
    with _context_lock:
        _warm = False


def _context(method: str):
    with _context_lock:
        if method not in _contexts:
            ctx = multiprocessing.get_context(method)
            if method == "forkserver":
                ctx.set_forkserver_preload(_PRELOAD if _warm else _LAZY_PRELOAD)
            _contexts[method] = ctx
        return _contexts[method]


def _process_class(method: str, ctx):
    # fork copies the parent's memory and prepares nothing; forkserver would prepare main.
    return JobProcess if method == "forkserver" else ctx.Process


def time_limit_message(seconds: float) -> str:
    return (f"Reading this document took longer than the {seconds:g} s allowed for one job, so it was stopped; "
            "the original is kept. Split it into smaller files, or ask an administrator to raise the time limit.")


def memory_limit_message(memory_mb: int) -> str:
    return (f"Reading this document needed more than the {memory_mb} MB of memory allowed for one job, so it was "
            "stopped; the original is kept. The file may be damaged or built to exhaust memory.")


def _limit_address_space(memory_mb: int) -> None:
    baseline = psutil.Process().memory_info().vms
    limit = baseline + memory_mb * _MB
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _orphan_watch(worker_pid: int) -> None:
    """End this child when the worker that waits for it is gone (killed, crashed): a
    forkserver child outlives its worker otherwise, still reading a hostile file."""
    while True:
        time.sleep(0.5)
        if not psutil.pid_exists(worker_pid):
            os._exit(1)


def _answer(fn: Callable, args: tuple, memory_mb: int) -> tuple:
    """``fn(*args)`` under the job's address-space limit, as the reply sent to the worker."""
    try:
        _limit_address_space(memory_mb)  # from this job's start: a reused child's job gets the full ceiling
        return ("ok", fn(*args))
    except MemoryError:
        return ("memory", None)
    except ExtractionError as exc:
        return ("error", (exc.code, exc.message))
    except BaseException as exc:  # noqa: BLE001 - a defect is reported to the worker, which fails the job
        traceback.print_exc(file=sys.stderr)  # code locations; extractors put no document text in exceptions
        try:
            pickle.dumps(exc)
            return ("defect", exc)
        except Exception:  # noqa: BLE001
            return ("defect", _ChildDefect(type(exc).__name__))


def _send(conn, reply: tuple) -> None:
    try:
        conn.send(reply)
    except MemoryError:
        conn.send(("memory", None))


def _child(conn, fn: Callable, args: tuple, memory_mb: int, worker_pid: int) -> None:
    """A child for one job (``fork``)."""
    threading.Thread(target=_orphan_watch, args=(worker_pid,), daemon=True).start()
    try:
        _send(conn, _answer(fn, args, memory_mb))
    finally:
        conn.close()


def _serve(conn, worker_pid: int) -> None:
    """A reader child: jobs ``(fn, args, memory_mb)`` one at a time until the worker
    closes the pipe or a job ends otherwise than well (then it exits: the worker starts
    a fresh child for the next job)."""
    threading.Thread(target=_orphan_watch, args=(worker_pid,), daemon=True).start()
    try:
        while True:
            try:
                request = conn.recv_bytes()
            except (EOFError, OSError):
                return  # the worker retired this child, or is gone
            try:
                fn, args, memory_mb = pickle.loads(request)
            except BaseException as exc:  # noqa: BLE001 - a job that cannot be unpickled here is a defect
                reply: tuple = ("defect", _ChildDefect(type(exc).__name__))
            else:
                reply = _answer(fn, args, memory_mb)
            del request
            _send(conn, reply)
            if reply[0] != "ok":
                return
            del reply
    finally:
        conn.close()


def _resident_bytes(proc: psutil.Process) -> int:
    try:
        total = proc.memory_info().rss
        for child in proc.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.Error:
                pass
        return total
    except psutil.Error:
        return 0


def _kill(proc) -> None:
    try:
        for child in psutil.Process(proc.pid).children(recursive=True):
            child.kill()
    except psutil.Error:
        pass
    proc.kill()
    proc.join(5)


# Answers the child itself sent: after these it only exits.
_ANSWERED = frozenset({"ok", "error"})


def _end(proc) -> None:
    """Wait briefly for a child to exit, then kill it (and what it started)."""
    if proc.is_alive():
        proc.join(2)
    if proc.is_alive():
        _kill(proc)


@dataclass(eq=False)
class _Reader:
    """A reader child (``_serve``), the worker's end of its pipe, and what it has read."""

    proc: Any
    conn: Any
    owner: int  # the process that started it: a forked copy of the worker must not use its pipe
    jobs: int = 0
    start_rss: int = 0


_readers_lock = threading.Lock()
_idle_readers: list[_Reader] = []


def stuck_message() -> str:
    return (f"The process that reads documents did not start within {START_SECONDS:g} s, twice; the original is "
            "kept. This is a fault in the workbench, not in the file. Tell an administrator, who can retry it once "
            "the fault is fixed.")


def _start_reader(method: str) -> _Reader:
    """A new reader child. A forkserver that starts no child in time has been ended by
    then (forkserver_internals); one more try starts a fresh server, and a second stuck
    start fails the job instead of holding the worker."""
    ctx = _context(method)
    for _attempt in range(2):
        mine, theirs = ctx.Pipe(duplex=True)
        proc = _process_class(method, ctx)(target=_serve, args=(theirs, os.getpid()), daemon=True)
        try:
            proc.start()
        except ForkserverStuck:
            mine.close()
            continue
        finally:
            theirs.close()
        return _Reader(proc=proc, conn=mine, owner=os.getpid())
    raise ExtractionError(stuck_message(), code=INTERNAL_ERROR)


def _take_reader(method: str) -> _Reader:
    """An idle reader child of this process, or a new one."""
    with _readers_lock:
        while _idle_readers:
            reader = _idle_readers.pop()
            if reader.owner == os.getpid() and reader.proc.is_alive():
                return reader
            if reader.owner == os.getpid():
                _retire(reader)
    return _start_reader(method)


def _retire(reader: _Reader) -> None:
    """Close the child's pipe (it exits on that) and reap it off the job's path."""
    try:
        reader.conn.close()
    except OSError:
        pass
    _reap_later(reader.proc)


def _reap_later(proc) -> None:
    """End a child that answered and is only exiting now (~5-15 ms for a process this
    size) off the job's path, with ``_end``'s grace and kill."""
    threading.Thread(target=_end, args=(proc,), name="job-child-reaper", daemon=True).start()


def _rss(proc) -> int:
    try:
        return psutil.Process(proc.pid).memory_info().rss
    except psutil.Error:
        return 0


def _give_back(reader: _Reader) -> None:
    """Keep a child that answered its job well for the next one, unless it has read its
    share of jobs or grown past its allowance."""
    reader.jobs += 1
    grown = _rss(reader.proc) - reader.start_rss > REUSE_GROWTH_MB * _MB
    with _readers_lock:
        if reader.jobs < REUSE_JOBS and not grown and len(_idle_readers) < _IDLE_READERS:
            _idle_readers.append(reader)
            return
    _retire(reader)


def _run_in_reader(fn: Callable, args: tuple, *, timeout: float, memory_mb: int, method: str) -> tuple[str, Any]:
    reader = _take_reader(method)
    request = pickle.dumps((fn, args, memory_mb))
    try:
        reader.conn.send_bytes(request)
    except OSError:  # an idle child that ended meanwhile (killed from outside): a fresh one
        _retire(reader)
        reader = _start_reader(method)
        reader.conn.send_bytes(request)
    del request
    if not reader.jobs:
        reader.start_rss = _rss(reader.proc)
    kind = None
    try:
        kind, payload = _wait(reader.proc, reader.conn, timeout=timeout, memory_mb=memory_mb)
    finally:
        if kind == "ok":
            _give_back(reader)
        else:
            reader.conn.close()
            if kind in _ANSWERED:  # it answered and is exiting
                _reap_later(reader.proc)
            else:
                _end(reader.proc)
    return kind, payload


def _run_in_fresh_child(fn: Callable, args: tuple, *, timeout: float, memory_mb: int, method: str
                        ) -> tuple[str, Any]:
    ctx = _context(method)
    receiver, sender = ctx.Pipe(duplex=False)
    proc = _process_class(method, ctx)(target=_child, args=(sender, fn, args, memory_mb, os.getpid()), daemon=True)
    proc.start()
    sender.close()
    kind = None
    try:
        kind, payload = _wait(proc, receiver, timeout=timeout, memory_mb=memory_mb)
    finally:
        receiver.close()
        if kind in _ANSWERED:
            _reap_later(proc)
        else:
            _end(proc)
    return kind, payload


def run_isolated(fn: Callable, args: tuple, *, timeout: float, memory_mb: int, method: str = "forkserver") -> Any:
    """``fn(*args)`` in a child process (a reader child kept between jobs under a
    forkserver, a fresh one under ``fork``); ``fn`` and its arguments and return value
    must pickle. Raises ExtractionError(code="resource_limit") when the child passes a
    ceiling (it is killed), the child's ExtractionError as is, and a defect as the
    original exception (or one named after it)."""
    if method == "off":
        return fn(*args)
    if method not in METHODS:
        raise ValueError(f"unknown job process method {method!r}; use one of {', '.join(METHODS)}")
    run = _run_in_reader if method == "forkserver" else _run_in_fresh_child
    kind, payload = run(fn, args, timeout=timeout, memory_mb=memory_mb, method=method)
    if kind == "ok":
        return payload
    if kind == "error":
        code, message = payload
        raise ExtractionError(message, code=code)
    if kind == "memory":
        raise ExtractionError(memory_limit_message(memory_mb), code=RESOURCE_LIMIT)
    if kind == "time":
        raise ExtractionError(time_limit_message(timeout), code=RESOURCE_LIMIT)
    if kind == "died":
        raise died_error(payload)
    raise payload  # a defect


def died_error(exitcode: int | None) -> ExtractionError:
    """Why a child that sent no answer ended, by how it ended."""
    if isinstance(exitcode, int) and exitcode > 0:
        # An exit status, not a signal: the child stopped in Python before it could answer
        # (in its start-up, say) - a fault of the workbench, not of the file.
        return ExtractionError(
            f"The process reading this document stopped before it could read it (exit {exitcode}). This is a "
            "fault in the workbench, not in the file; the original is kept. Tell an administrator, who can "
            "retry it once the fault is fixed.", code=INTERNAL_ERROR)
    how = f" (signal {-exitcode})" if isinstance(exitcode, int) and exitcode < 0 else ""
    return ExtractionError(
        f"The process reading this document ended abruptly{how}; the original is kept. "
        "The file may be damaged or built to exhaust the reader.", code=RESOURCE_LIMIT)


def _wait(proc, receiver, *, timeout: float, memory_mb: int) -> tuple[str, Any]:
    deadline = time.monotonic() + timeout
    try:
        watched: psutil.Process | None = psutil.Process(proc.pid)
    except psutil.NoSuchProcess:  # a quick child may be done (and reaped) already
        watched = None
    ceiling = memory_mb * _MB
    next_look = 0.0
    while True:
        if receiver.poll(_POLL_SECONDS):
            try:
                return receiver.recv()
            except (EOFError, OSError):
                proc.join(1)
                return ("memory", None) if proc.exitcode == -9 else ("died", proc.exitcode)
        if not proc.is_alive():
            if receiver.poll(0):
                continue
            # Killed by the kernel's OOM killer (SIGKILL) or crashed inside a C library.
            return ("memory", None) if proc.exitcode == -9 else ("died", proc.exitcode)
        if time.monotonic() > deadline:
            _kill(proc)
            return ("time", None)
        if watched is not None and time.monotonic() >= next_look:
            next_look = time.monotonic() + _MEMORY_LOOK_SECONDS
            if _resident_bytes(watched) > ceiling:
                _kill(proc)
                return ("memory", None)
