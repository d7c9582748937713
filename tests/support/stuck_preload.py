"""A forkserver preload that never finishes, for the test of a stuck forkserver: it
records the server's pid, then sleeps, once (``STUCK_PRELOAD_ONCE`` names a flag file
made on the first import) or every time (``STUCK_PRELOAD_ALWAYS``)."""

import os
import time
from pathlib import Path

_pids = os.environ.get("STUCK_PRELOAD_PIDS")
if _pids:
    with open(_pids, "a") as out:
        out.write(f"{os.getpid()}\n")
_once = os.environ.get("STUCK_PRELOAD_ONCE")
if os.environ.get("STUCK_PRELOAD_ALWAYS") or (_once and not Path(_once).exists()):
    if _once:
        Path(_once).touch()
    time.sleep(3600)
