"""`make run`: start the workbench and its worker, then hand over to `streamlit run app.py`
(Home.py with the sign-in cookie's route and session guard, ui/session_cookie.py).

Running Streamlit's own CLI in this process keeps every Streamlit setting
(STREAMLIT_* variables, .streamlit/config.toml, extra flags) working as usual,
while the worker is live from the start rather than from the first page view.

The server listens on the loopback address unless told otherwise (a
``--server.address`` flag, ``STREAMLIT_SERVER_ADDRESS``, or ``server.address`` in a
Streamlit config file): patient data is never on every interface by accident. A
clinic puts a TLS reverse proxy in front (README, "Running it for a clinic").

On SIGTERM (or Ctrl-C) uvicorn, which serves app.py, shuts the server down and then
raises the signal again once its own handlers are gone; ``_stop_on_signal`` turns that
into a return here (uvicorn's default would end the process on the spot). The worker
then finishes its document within a short grace or hands the job back to the queue, so
the process is gone within 5 s and no job is left running.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from streamlit import config as streamlit_config
from streamlit.web import cli as streamlit_cli

from ui.runtime import start

APP = Path(__file__).resolve().parent.parent / "app.py"
LOOPBACK = "127.0.0.1"


def listen_args(argv: list[str]) -> list[str]:
    """``argv`` plus ``--server.address 127.0.0.1`` when nothing chose an address."""
    if any(a == "--server.address" or a.startswith("--server.address=") for a in argv):
        return argv
    if os.environ.get("STREAMLIT_SERVER_ADDRESS"):
        return argv
    if streamlit_config.is_manually_set("server.address"):  # a config.toml names one
        return argv
    return ["--server.address", LOOPBACK, *argv]


def main() -> int:
    # start() opens the workbench first, which sets the owner-only umask before
    # anything is written (storage/private_files).
    runtime = start()
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, _stop_on_signal)
    sys.argv = ["streamlit", "run", str(APP), *listen_args(sys.argv[1:])]
    try:
        code = streamlit_cli.main()
    except SystemExit as exc:  # click ends every run this way
        code = exc.code
    except BaseException:
        stop_worker(runtime)
        raise
    stop_worker(runtime)
    # Streamlit's idle executor threads can hold the interpreter's exit for seconds after
    # the server stopped; everything of ours is closed (or the job handed back) by now.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else int(code is not None))


def _stop_on_signal(signum, frame) -> None:
    # Outside uvicorn's own handling: before the server is up, or the signal uvicorn raises
    # again after its graceful shutdown. Either way main() goes on to stop the worker.
    raise SystemExit(0)


def stop_worker(runtime) -> None:
    """Stop the worker thread and close the workbench; a worker (or a CLI command run for
    the CLI) still inside a document has handed its job back, and the database is then
    left to the process's end (closing it under that thread could crash; its writes are
    transactions)."""
    # The CLI's endpoint first: its file goes, so a command from now on gets the plain
    # "database held" answer rather than a connection refused.
    endpoint_idle = runtime.endpoint.stop() if runtime.endpoint is not None else True
    if runtime.mllp is not None:
        runtime.mllp.stop()  # lets messages under way be stored and acknowledged first
    if runtime.worker.shutdown() and endpoint_idle:
        runtime.wb.close()


if __name__ == "__main__":
    sys.exit(main())
