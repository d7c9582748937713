"""Starting the real app and a headless Debian chromium for the browser tests."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
NO_CHROMIUM = "Debian chromium is not installed (apt-get install chromium)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(data: Path, port: int | None = None) -> dict[str, str]:
    """The environment of a workbench on ``data`` served on ``port`` (loopback only)."""
    return {**os.environ, "WORKBENCH_DATA_DIR": str(data), "STREAMLIT_SERVER_PORT": str(port or free_port()),
            "STREAMLIT_SERVER_ADDRESS": "127.0.0.1", "WORKBENCH_WORKER_IDLE_SLEEP": "0.3"}


@contextmanager
def serving(env: dict[str, str], *, wait_s: float = 90) -> Iterator[tuple[str, subprocess.Popen]]:
    """`python -m ui.serve` as `make run` starts it; yields its URL once healthy."""
    proc = subprocess.Popen([sys.executable, "-m", "ui.serve"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{env['STREAMLIT_SERVER_PORT']}"
    try:
        deadline = time.time() + wait_s
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.3)
        else:
            proc.kill()
            pytest.fail("Streamlit did not come up: " + proc.stderr.read().decode()[-2000:])
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(20)


def launch_chromium(pw, profile: Path, *, width: int = 1400, height: int = 1000):
    """A persistent headless chromium context with the flags this machine needs."""
    return pw.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, headless=True,
                                                 args=CHROMIUM_ARGS, viewport={"width": width, "height": height})
