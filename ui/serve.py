"""`make run`: start the workbench and its worker, then hand over to `streamlit run`.

Running Streamlit's own CLI in this process keeps every Streamlit setting
(STREAMLIT_* variables, .streamlit/config.toml, extra flags) working as usual,
while the worker is live from the start rather than from the first page view.

The server listens on the loopback address unless told otherwise (a
``--server.address`` flag, ``STREAMLIT_SERVER_ADDRESS``, or ``server.address`` in a
Streamlit config file): patient data is never on every interface by accident. A
clinic puts a TLS reverse proxy in front (README, "Running it for a clinic").
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from streamlit import config as streamlit_config
from streamlit.web import cli as streamlit_cli

from ui.runtime import start

HOME = Path(__file__).resolve().parent.parent / "Home.py"
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
    start()
    sys.argv = ["streamlit", "run", str(HOME), *listen_args(sys.argv[1:])]
    return streamlit_cli.main()


if __name__ == "__main__":
    sys.exit(main())
