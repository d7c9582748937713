"""Owner-only files: the data dir holds patient data, so nothing in it is readable by
the group or other users of the machine.

One mechanism does the work: the process umask (0o077), set by every entry point and
again when the workbench opens its data dir, so every file any library creates there
(DuckDB and its WAL, LanceDB, tantivy, renders, logs) starts 0600 and every directory
0700. ``make_private`` makes the data dir itself 0700 and, when it finds it open to
others (a data dir from before this rule), tightens everything already inside.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

OWNER_ONLY_UMASK = 0o077
_GROUP_OTHER = 0o077


def restrict_new_files() -> None:
    """Files and directories this process creates from now on are the owner's only."""
    os.umask(OWNER_ONLY_UMASK)


def make_private(data_dir: Path) -> int:
    """Create ``data_dir`` 0700 (or make it so); when it was open to group/others,
    also strip those bits from everything under it. Returns how many entries changed."""
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not data_dir.stat().st_mode & _GROUP_OTHER:
        return 0  # the usual case: no walk over the tree on every open
    return tighten_tree(data_dir)


def tighten_tree(root: Path) -> int:
    """Strip group/other permission bits from ``root`` and everything beneath it.
    Symlinks are left alone: their targets are not ours to change."""
    changed = 0
    for path in _walk(Path(root)):
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode) or not mode & _GROUP_OTHER:
            continue
        path.chmod(stat.S_IMODE(mode) & ~_GROUP_OTHER)
        changed += 1
    return changed


def _walk(root: Path):
    yield root
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        for name in (*dirnames, *filenames):
            yield base / name
