"""The one place the jobs' sandbox reaches into multiprocessing's private names: a
forkserver process whose child is prepared without the parent's ``__main__``.

Why the public API is not enough: multiprocessing prepares every forkserver child by
running the parent's main script again (as ``__mp_main__``), so that functions defined
there unpickle. Under Streamlit, ``__main__`` is whatever page script ran last (Home.py),
and running it in a job's child opened the database the app holds: every job after the
first page view died (docs/decisions.md, issue 21). No public option turns that step
off, so ``JobProcess`` launches its child with the standard launch, line for line,
except that the preparation data (``preparation_data``) leaves out the two keys that
name ``__main__``. That means overriding two private hooks the standard library calls,
``ForkServerProcess._Popen`` and ``popen_forkserver.Popen._launch``, and reading what
the original reads there: the launcher's ``self._fds`` and the process's ``_name``.

The launch is also bounded in time (``START_SECONDS``): the original waits without a
limit for the forkserver to report the child's pid, so a forkserver stuck in its start-up
(in importing the readers it preloads) would hold the job, and the worker, for ever. A
launch that gets no pid in time raises ``ForkserverStuck`` after ending that forkserver
(``restart_forkserver``): the next launch starts a fresh one.

Checked against CPython 3.11 (3.11.7; README: Python 3.11 is required), whose
``multiprocessing/popen_forkserver.py`` ``Popen._launch`` this copies. What breaks if
the standard library changes: a renamed hook is silently not called, and the child is
prepared with ``__main__`` again (jobs die after the first page view); a changed launch
protocol (what the forkserver expects on its pipe) makes every job's child fail to
start. tests/core/ingest/test_job_child_main.py puts a page script in ``__main__`` as
Streamlit does and runs real children, so either shows there.
"""

from __future__ import annotations

import io
import os
import signal
from multiprocessing import forkserver, popen_forkserver, reduction, spawn, util
from multiprocessing.connection import wait
from multiprocessing.context import ForkServerProcess, set_spawning_popen

# What multiprocessing's preparation data uses to re-create the parent's __main__ in a
# child; a job's child must never run a page script.
_MAIN_KEYS = ("init_main_from_path", "init_main_from_name")

# How long a launch waits for the forkserver to fork the child. Its first launch includes
# the server's start-up (importing and warming the readers: ~3 s here, more on a busy
# machine); a launch to a running server takes milliseconds.
START_SECONDS = 120.0


class ForkserverStuck(RuntimeError):
    """The forkserver did not start a child within ``START_SECONDS``; it was ended."""


def restart_forkserver() -> None:
    """End this process's forkserver (killed: a stuck one does not answer the polite
    request to stop) and forget it, so that the next launch starts a fresh one. Children
    it already started are not touched: each watches its own worker."""
    server = forkserver._forkserver
    with server._lock:
        pid = server._forkserver_pid
        if pid is None:
            return
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass  # it ended meanwhile, or was reaped already
        os.close(server._forkserver_alive_fd)
        address = server._forkserver_address
        if address and not util.is_abstract_socket_namespace(address):
            try:
                os.unlink(address)
            except FileNotFoundError:
                pass
        server._forkserver_pid = server._forkserver_alive_fd = server._forkserver_address = None


def preparation_data(name: str) -> dict:
    """What a job's child is prepared with: the parent's sys.path, cwd, logging and
    authkey, and nothing that names ``__main__``."""
    data = spawn.get_preparation_data(name)
    for key in _MAIN_KEYS:
        data.pop(key, None)
    return data


class _PopenWithoutMain(popen_forkserver.Popen):
    """The standard library's forkserver launch (Python 3.11), with the preparation data
    from ``preparation_data`` instead of ``spawn.get_preparation_data``, and a time limit
    on the wait for the child's pid. Kept line for line with the original otherwise, so
    the child side (spawn._main) is unchanged."""

    def _launch(self, process_obj):
        prep_data = preparation_data(process_obj._name)
        buf = io.BytesIO()
        set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            set_spawning_popen(None)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)
        _parent_w = os.dup(w)  # the parent's sentinel for the child, as in the original
        self.finalizer = util.Finalize(self, util.close_fds, (_parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        if not wait([self.sentinel], START_SECONDS):
            restart_forkserver()
            raise ForkserverStuck(f"the forkserver started no child in {START_SECONDS:g} s")
        self.pid = forkserver.read_signed(self.sentinel)


class JobProcess(ForkServerProcess):
    """A forkserver ``Process`` whose child never runs the parent's ``__main__``; start
    it from a forkserver context (``multiprocessing.get_context("forkserver")``)."""

    @staticmethod
    def _Popen(process_obj):
        return _PopenWithoutMain(process_obj)
