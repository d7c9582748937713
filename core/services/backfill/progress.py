"""The backfill's progress on stderr: documents read, documents per second and the time
left. A bar rewritten in place on a terminal; plain lines, at most one a second, when
stderr is a file or a pipe (a log). Counts only: never a path or a patient."""

from __future__ import annotations

import time
from typing import TextIO

_BAR = 24


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    def __init__(self, total: int, stream: TextIO | None, *, every: float = 1.0, label: str = "backfill"):
        self.total, self.stream, self.every, self.label = total, stream, every, label
        self.done = 0
        self.failed = 0
        self.started = time.monotonic()
        self._last = float("-inf")
        self.tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())

    def rate(self) -> float:
        elapsed = time.monotonic() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def line(self) -> str:
        rate = self.rate()
        left = f"about {_clock((self.total - self.done) / rate)} left" if rate > 0 else "time left unknown"
        failed = f", {self.failed} failed" if self.failed else ""
        if self.tty:
            filled = int(_BAR * self.done / self.total) if self.total else _BAR
            return (f"\r{self.label} [{'#' * filled}{'.' * (_BAR - filled)}] {self.done}/{self.total}{failed} "
                    f"· {rate:.2f} documents/s · {left} ")
        return f"{self.label}: {self.done}/{self.total} documents read{failed}, {rate:.2f} documents/s, {left}"

    def tick(self, *, failed: bool = False) -> None:
        self.done += 1
        self.failed += int(failed)
        now = time.monotonic()
        if self.stream is None or (now - self._last < self.every and self.done < self.total):
            return
        self._last = now
        self.stream.write(self.line() if self.tty else self.line() + "\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        """A plain line (a phase starting), counts only."""
        if self.stream is not None:
            self.stream.write(("\n" if self.tty and self.done else "") + f"{self.label}: {text}\n")
            self.stream.flush()

    def finish(self) -> None:
        if self.stream is not None and self.tty and self.total:
            self.stream.write("\n")
            self.stream.flush()
