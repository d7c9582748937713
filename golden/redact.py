"""PHI canaries: find planted identifiers where they must never be, and keep them out
of the eval's own artifacts.

Every golden patient is invented, with names and record numbers unique enough that
finding one in a log line can only mean the log carries patient data.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable

REDACTED = "[redacted]"


def _pattern(canaries: Iterable[str]) -> re.Pattern[str]:
    # Whole words only, any case: "Wren" is a leak, "wrench" is not. One alternation
    # (longest first) scans a large artifact once instead of once per canary.
    alternatives = "|".join(re.escape(c) for c in sorted(set(canaries), key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])", re.IGNORECASE)


def find(text: str, canaries: Iterable[str]) -> list[str]:
    canaries = [c for c in canaries if c]
    if not canaries:
        return []
    by_fold = {c.casefold(): c for c in canaries}
    return sorted({by_fold[m.group(0).casefold()] for m in _pattern(canaries).finditer(text)
                   if m.group(0).casefold() in by_fold})


def leaks_in_files(root: Path, globs: Iterable[str], canaries: list[str]) -> list[dict[str, Any]]:
    """Files under ``root`` matching ``globs`` that carry a canary. A leak names the
    file and the canary's position in the case's list, never the canary itself."""
    leaks = []
    seen: set[Path] = set()
    for pattern in globs:
        for path in sorted(root.glob(pattern)):
            if path in seen or not path.is_file():
                continue
            seen.add(path)
            text = path.read_text(encoding="utf-8", errors="replace")
            for canary in find(text, canaries):
                leaks.append({"file": str(path.relative_to(root)), "canary": f"canary #{canaries.index(canary) + 1}"})
    return leaks


def redact(value: Any, canaries: list[str]) -> Any:
    """A copy of ``value`` with every canary replaced, for artifacts a reviewer downloads."""
    if not canaries:
        return value
    pattern = _pattern(canaries)

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return pattern.sub(REDACTED, v)
        if isinstance(v, dict):
            return {walk(k) if isinstance(k, str) else k: walk(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [walk(x) for x in v]
        return v

    return walk(value)
