"""The worker's heartbeat and queue counts as a small JSON file in the data dir,
so ``health`` can answer while another process holds the database; and the token of
the process holding a job, so a restarted worker can tell at once that it is gone."""

from __future__ import annotations

import json
import os
import socket
import tempfile
from pathlib import Path
from typing import Any


def write_heartbeat(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".heartbeat-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, default=str, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_heartbeat(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except json.JSONDecodeError:
        return None


# --- which process holds a job --------------------------------------------------------
# A running job records its holder as "host:pid:start" (start = the process's start time
# in clock ticks since boot, from /proc). The start time tells a dead worker from another
# process that has since been given the same pid.

def _start_ticks(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    # Field 22 (starttime); the command name in field 2 may hold spaces, so count from ')'.
    fields = stat[stat.rfind(")") + 2:].split()
    return fields[19] if len(fields) > 19 else ""


def process_token(pid: int | None = None) -> str:
    """This process (or ``pid``) as ``host:pid:start``."""
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{_start_ticks(pid)}"


def process_gone(token: str | None) -> bool:
    """True when ``token`` names a process on this host that no longer runs. A token of
    another host, or none, is never called gone: only its heartbeat can tell."""
    if not token:
        return False
    parts = token.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False
    pid, start = int(parts[1]), parts[2]
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # alive, owned by someone else: the start time below decides
    if start and _start_ticks(pid) not in ("", start):
        return True  # the pid now belongs to another process
    return _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    # A killed child not yet reaped by its parent still answers kill(pid, 0).
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:][:1] == "Z"
