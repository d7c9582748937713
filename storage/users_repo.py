"""Accounts: one row per user, disabled rather than deleted."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import duckdb

from storage.db import one, rows


def add(cur: duckdb.DuckDBPyConnection, *, username: str, role: str, password_hash: str | None,
        auth_source: str = "local", must_change_password: bool = False, created_by: str | None = None,
        now: datetime) -> dict[str, Any]:
    cur.execute(
        """INSERT INTO users (username, role, password_hash, auth_source, must_change_password, created_by,
               created_at, password_changed_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *""",
        [username, role, password_hash, auth_source, must_change_password, created_by, now,
         now if password_hash else None],
    )
    return one(cur)


def by_username(cur: duckdb.DuckDBPyConnection, username: str) -> dict[str, Any] | None:
    cur.execute("SELECT * FROM users WHERE username = ?", [username])
    return one(cur)


def by_id(cur: duckdb.DuckDBPyConnection, user_id: int) -> dict[str, Any] | None:
    cur.execute("SELECT * FROM users WHERE id = ?", [user_id])
    return one(cur)


def all_users(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cur.execute("SELECT * FROM users ORDER BY username")
    return rows(cur)


def count(cur: duckdb.DuckDBPyConnection) -> int:
    cur.execute("SELECT count(*) FROM users")
    return int(cur.fetchone()[0])


_UPDATABLE = {"role", "password_hash", "active", "must_change_password", "failed_attempts", "locked_until",
              "last_sign_in_at", "password_changed_at", "disabled_at", "disabled_by"}


def update(cur: duckdb.DuckDBPyConnection, user_id: int, **values: Any) -> dict[str, Any]:
    unknown = set(values) - _UPDATABLE
    if unknown:
        raise ValueError(f"not an updatable user column: {sorted(unknown)}")
    sets = ", ".join(f"{k} = ?" for k in values)
    cur.execute(f"UPDATE users SET {sets} WHERE id = ? RETURNING *", [*values.values(), user_id])
    return one(cur)
