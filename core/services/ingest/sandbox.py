"""Run one job's reading (normalize + extract) in a child process under a wall-clock
and a memory ceiling, so one hostile or broken document cannot hold the worker.

Why a fresh child per job, from a forkserver: the worker is a thread inside the app
process (Streamlit, DuckDB and embedder threads), and forking a multi-threaded process
can copy a lock some other thread holds. The forkserver is a separate process with no
Python threads (see sandbox_preload), started once with the extractors imported up
front; each job is a cheap fork of it (tens of ms, no re-import), killed outright at a
ceiling, and its memory is returned to the system when it ends. ``fork`` is offered for tests (monkeypatched
extractors reach the child) and ``off`` runs in-process for debugging.

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
from typing import Any, Callable

import psutil

from core.services.ingest.forkserver_internals import JobProcess
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
# Modules the forkserver imports once so that every job's child starts warm.
_PRELOAD = ["core.services.ingest.sandbox_preload"]
_context_lock = threading.Lock()
_contexts: dict[str, Any] = {}


class _ChildDefect(Exception):
    """A defect in the child whose exception could not be sent back as it was."""


def _context(method: str):
    with _context_lock:
        if method not in _contexts:
            ctx = multiprocessing.get_context(method)
            if method == "forkserver":
                ctx.set_forkserver_preload(_PRELOAD)
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


def _child(conn, fn: Callable, args: tuple, memory_mb: int, worker_pid: int) -> None:
    threading.Thread(target=_orphan_watch, args=(worker_pid,), daemon=True).start()
    try:
        _limit_address_space(memory_mb)
        reply: tuple = ("ok", fn(*args))
    except MemoryError:
        reply = ("memory", None)
    except ExtractionError as exc:
        reply = ("error", (exc.code, exc.message))
    except BaseException as exc:  # noqa: BLE001 - a defect is reported to the worker, which fails the job
        traceback.print_exc(file=sys.stderr)  # code locations; extractors put no document text in exceptions
        try:
            pickle.dumps(exc)
            reply = ("defect", exc)
        except Exception:  # noqa: BLE001
            reply = ("defect", _ChildDefect(type(exc).__name__))
    try:
        conn.send(reply)
    except MemoryError:
        conn.send(("memory", None))
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


def run_isolated(fn: Callable, args: tuple, *, timeout: float, memory_mb: int, method: str = "forkserver") -> Any:
    """``fn(*args)`` in a child process; its return value must pickle. Raises
    ExtractionError(code="resource_limit") when the child passes a ceiling (it is
    killed), the child's ExtractionError as is, and a defect as the original
    exception (or one named after it)."""
    if method == "off":
        return fn(*args)
    if method not in METHODS:
        raise ValueError(f"unknown job process method {method!r}; use one of {', '.join(METHODS)}")
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
            # The child sent its answer and is only exiting now (~5-15 ms for a process
            # this size): reaped off the job's path, with the same grace and kill.
            threading.Thread(target=_end, args=(proc,), name="job-child-reaper", daemon=True).start()
        else:
            _end(proc)
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
