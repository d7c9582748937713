"""Content-addressed store for original document bytes.

``documents/<sha256[:2]>/<sha256>``: the same bytes are stored once however often
they are uploaded, and a write is atomic (temp file in the same directory, fsync,
rename) so a crash never leaves a half-written original behind.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

# fsync + rename for put_then_sync: a few threads, as many messages arrive at once.
_SYNCERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="blob-sync")


class BlobStore:
    def __init__(self, root: Path):
        self.root = Path(root)
        self._made: set[Path] = set()  # shard folders known to exist: no mkdir call per original
        self._made_lock = threading.Lock()

    def path_for(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes) -> tuple[str, Path]:
        sha, target, written = self._write(data)
        if written is not None:
            _sync_and_place(written, target)
        return sha, target

    def put_then_sync(self, data: bytes) -> tuple[str, Path, Future]:
        """``put`` with its fsync and rename on a helper thread, so that the caller can
        write its rows meanwhile (an MLLP message's fsync overlaps its statements). The
        caller must wait on the future before it commits anything that names the path:
        until it is done, the original is neither durable nor at its place."""
        sha, target, written = self._write(data)
        if written is None:
            done: Future = Future()
            done.set_result(None)
            return sha, target, done
        return sha, target, _SYNCERS.submit(_sync_and_place, written, target)

    def _write(self, data: bytes) -> tuple[str, Path, tuple[int, str] | None]:
        """The bytes in a temp file beside their place, not yet synced: (sha, place, (fd,
        temp path)), or no temp file when the same bytes are stored already."""
        sha = hashlib.sha256(data).hexdigest()
        target = self.path_for(sha)
        if target.exists() and target.stat().st_size == len(data):
            return sha, target, None
        if target.parent not in self._made:
            target.parent.mkdir(parents=True, exist_ok=True)
            with self._made_lock:
                self._made.add(target.parent)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".incoming-")
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except BaseException:
            os.close(fd)
            Path(tmp).unlink(missing_ok=True)
            raise
        return sha, target, (fd, tmp)

    def get(self, sha256: str) -> bytes:
        return self.path_for(sha256).read_bytes()


def _sync_and_place(written: tuple[int, str], target: Path) -> None:
    fd, tmp = written
    try:
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
