"""An append-only file of records, each durable when ``append`` returns.

The MLLP listener acknowledges a message once its bytes are here
(core/services/interfaces/mllp_journal.py) and writes its rows from here afterwards.
A record is ``magic | length | crc32 | payload``; appends from several threads share
one ``fdatasync`` (whoever syncs covers everything written before it), as a database
flushes its write-ahead log for the commits that arrived together.

Each open log holds an exclusive ``flock`` for as long as its process lives: a log
found unlocked belongs to a process that has ended, and ``orphans`` hands its records
to the caller to finish. A torn last record (the process died inside ``write``) was
never synced, so never acknowledged: it is dropped; everything before it is whole.
"""

from __future__ import annotations

import fcntl
import os
import struct
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

MAGIC = b"WBL1"
_HEAD = struct.Struct(">4sII")  # magic, payload length, crc32 of the payload
SUFFIX = ".log"


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class AppendLog:
    """One process's log in ``directory`` (made private if new)."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path = self.directory / f"{time.time_ns()}-{os.getpid()}{SUFFIX}"
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _fsync_dir(self.directory)  # the file itself must survive a crash, not only its bytes
        self._write_lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self.size = 0  # bytes appended
        self._synced = 0  # bytes known durable
        self.syncs = 0  # fdatasync calls made (tests and the bench read it)

    def append(self, payload: bytes) -> int:
        """Write one record and return once it is durable; the log's size after it."""
        record = _HEAD.pack(MAGIC, len(payload), zlib.crc32(payload)) + payload
        with self._write_lock:
            view = memoryview(record)
            while view:
                view = view[os.write(self._fd, view):]
            self.size += len(record)
            end = self.size
        self._sync_to(end)
        return end

    def _sync_to(self, end: int) -> None:
        if self._synced >= end:
            return
        with self._sync_lock:
            if self._synced >= end:  # a sync that began after our write covered it
                return
            with self._write_lock:
                covered = self.size
            os.fdatasync(self._fd)
            self.syncs += 1
            self._synced = covered

    def close(self, *, remove: bool) -> None:
        """Close (and delete, when every record in it is finished with)."""
        if self._fd < 0:
            return
        if remove:
            self.path.unlink(missing_ok=True)
        os.close(self._fd)  # releases the lock
        self._fd = -1


@dataclass
class Orphan:
    """A log left by a process that has ended, locked by this one while it is read."""

    path: Path
    records: list[bytes]
    torn_bytes: int  # a last record cut short (never acknowledged), dropped
    _fd: int

    def discard(self) -> None:
        """Every record is finished with: the file goes."""
        self.path.unlink(missing_ok=True)
        _fsync_dir(self.path.parent)
        self.release()

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def read_records(data: bytes) -> tuple[list[bytes], int]:
    """The whole records at the start of ``data``, and how many bytes after them are not one."""
    records, pos = [], 0
    while pos + _HEAD.size <= len(data):
        magic, length, crc = _HEAD.unpack_from(data, pos)
        payload = data[pos + _HEAD.size:pos + _HEAD.size + length]
        if magic != MAGIC or len(payload) != length or zlib.crc32(payload) != crc:
            break
        records.append(payload)
        pos += _HEAD.size + length
    return records, len(data) - pos


def orphans(directory: Path) -> Iterator[Orphan]:
    """Each log in ``directory`` whose process has ended, oldest first (a log another
    live process holds is left alone)."""
    if not Path(directory).is_dir():
        return
    for path in sorted(Path(directory).glob("*" + SUFFIX)):
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        with open(fd, "rb", closefd=False) as f:
            records, torn = read_records(f.read())
        yield Orphan(path, records, torn, fd)
