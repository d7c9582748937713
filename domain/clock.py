"""The one clock: naive UTC, as the database stores times.

Storage, services and pages all stamp times with ``utcnow``; it lives here, free of
storage and UI imports, so pages need not reach into storage for it.
"""

from __future__ import annotations

from datetime import datetime, timezone


def utcnow() -> datetime:
    """Now in UTC without tzinfo (DuckDB TIMESTAMP columns are naive UTC)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)
