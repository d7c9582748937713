"""The DuckDB file: open it once per process, hand out a cursor per call.

DuckDB allows one read-write process per file and a connection is not safe to
share across threads, so ``Database`` keeps one parent connection and every
unit of work takes its own ``cursor()`` (a cheap child connection).
"""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import duckdb
import pyarrow as pa

from domain.clock import utcnow
from domain.errors import DatabaseBusy, WorkbenchError
from storage import record_version
from storage.migrations import migrate


class Database:
    def __init__(self, path: Path, *, read_only: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._con = duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.IOException as exc:
            if "lock" in str(exc).lower():
                raise DatabaseBusy(
                    f"The database in data dir {self.path.parent} is in use by another process "
                    "(`make run`, `python -m core worker` or `mllp`); stop it (Ctrl-C in its terminal) or use "
                    "another WORKBENCH_DATA_DIR, then run this again."
                ) from None
            raise WorkbenchError(f"Cannot open database {self.path}: {exc}", code="database_error") from None
        self._closed = False
        self._lock = threading.Lock()
        # One writer at a time within this process: the worker thread and a page's decision
        # may update the same fact rows, and DuckDB answers a concurrent update of a row
        # with "Conflict on update" instead of waiting.
        self._write = threading.RLock()

    def migrate(self) -> list[int]:
        with self._lock:
            cur = self._con.cursor()
            try:
                return migrate(cur)
            finally:
                cur.close()

    @contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A fresh cursor for one call on the current thread (autocommit)."""
        cur = self._con.cursor()
        try:
            yield cur
        finally:
            cur.close()

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor inside BEGIN/COMMIT; rolled back on any exception."""
        with self._write:
            cur = self._con.cursor()
            cur.execute("BEGIN TRANSACTION")
            record_version.begin(cur)  # the record-version bumps of this transaction: one row each at commit
            try:
                yield cur
                record_version.flush(cur)
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            finally:
                cur.close()

    def close(self) -> None:
        if not self._closed:
            self._con.close()
            self._closed = True


def open_database(path: Path, *, migrate_schema: bool = True) -> Database:
    db = Database(path)
    if migrate_schema:
        db.migrate()
    return db


def rows(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Fetch the last result as dicts, decoding JSON columns."""
    cols = [d[0] for d in cur.description]
    types = [str(d[1]).upper() for d in cur.description]
    out = []
    for rec in cur.fetchall():
        item = {}
        for name, typ, value in zip(cols, types, rec):
            if typ == "JSON" and isinstance(value, str):
                value = json.loads(value)
            item[name] = value
        out.append(item)
    return out


def one(cur: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
    found = rows(cur)
    return found[0] if found else None


def to_json(value: Any) -> str:
    return json.dumps(value, default=str, sort_keys=True)


# Up to this many rows insert_rows binds a list parameter per column (unnest): ~0.5 ms
# less than registering an Arrow table for a job's handful of rows; past ~100 rows the
# Arrow scan is the faster (a list parameter is converted value by value).
UNNEST_ROWS = 64


def insert_rows(cur: duckdb.DuckDBPyConnection, table: str, columns: tuple[str, ...] | list[str],
                records: list[list[Any]]) -> None:
    """Insert many rows in one statement: a few as a list parameter per column, many in
    one scan of an Arrow table built column by column.

    Why not one ``VALUES (?, ...), (?, ...)`` statement: DuckDB binds parameters one by one
    and a statement with tens of thousands of them took seconds (an HL7 batch stores a fact,
    a promotion and an identity check per message); an Arrow scan is a few ms per thousand
    rows. Values are what the parameter path took (str for JSON, naive UTC datetimes) and
    DuckDB casts each column to the table's type on insert, as it did for parameters.
    A column Arrow cannot type (mixed kinds) falls back to the parameter path.
    """
    if not records:
        return
    into = f"INSERT INTO {table} ({', '.join(columns)}) "
    if len(records) <= UNNEST_ROWS:
        try:
            cur.execute(into + "SELECT " + ", ".join("unnest(?)" for _ in columns),
                        [[r[i] for r in records] for i in range(len(columns))])
            return
        except duckdb.InvalidInputException:
            pass  # a list DuckDB cannot type (refused while binding, nothing written): below
    try:
        data = pa.table({f"c{i}": pa.array([r[i] for r in records]) for i in range(len(columns))})
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        one_row = "(" + ", ".join("?" for _ in columns) + ")"
        cur.execute(into + "VALUES " + ", ".join(one_row for _ in records), [v for r in records for v in r])
        return
    name = f"_rows_{table}"
    cur.register(name, data)
    try:
        cur.execute(into + f"SELECT * FROM {name}")
    finally:
        cur.unregister(name)


def insert_many(cur: duckdb.DuckDBPyConnection, table: str, records: list[dict[str, Any]], *,
                 key: tuple[str, ...], stamp: str | None = None) -> list[int]:
    """One INSERT for many rows (a list parameter per column); the new ids in the order of
    ``records``, matched by ``key`` (DuckDB does not promise RETURNING's order)."""
    if not records:
        return []
    cols = list(records[0])
    keys = [tuple(r[k] for k in key) for r in records]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{table}: rows to insert together must differ in {key}")
    values = [[r[c] for r in records] for c in cols]
    if stamp:
        cols.append(stamp)
        values.append([utcnow()] * len(records))
    cur.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {', '.join('unnest(?)' for _ in cols)} "
                f"RETURNING id, {', '.join(key)}", values)
    ids = {tuple(found[1:]): found[0] for found in cur.fetchall()}
    return [ids[k] for k in keys]
