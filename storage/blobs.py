"""Content-addressed store for original document bytes.

``documents/<sha256[:2]>/<sha256>``: the same bytes are stored once however often
they are uploaded, and a write is atomic (temp file in the same directory, fsync,
rename) so a crash never leaves a half-written original behind.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


class BlobStore:
    def __init__(self, root: Path):
        self.root = Path(root)

    def path_for(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes) -> tuple[str, Path]:
        sha = hashlib.sha256(data).hexdigest()
        target = self.path_for(sha)
        if target.exists() and target.stat().st_size == len(data):
            return sha, target
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".incoming-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return sha, target

    def get(self, sha256: str) -> bytes:
        return self.path_for(sha256).read_bytes()
