"""The version of a patient's record: a number every write to the record changes, in the
writer's own transaction, so a result computed from the record (an answer's candidate
evidence, the review queue) can be kept until the record changes instead of being
rebuilt per question or per click.

It lives in the database because the UI, the worker and the CLI are separate processes
over one file. The repositories' write functions call ``bump``/``bump_rows``, so every
caller gets it without remembering to (``tests/storage/test_record_version.py`` fails
for a writer that neither bumps nor says why it need not). Inside
``Database.transaction`` the bumps are gathered and written in one statement just
before COMMIT (``begin``/``flush``); on a cursor outside one, at once.

Why an append-only table and a count, not one counter row per patient: DuckDB answers
two transactions updating the same row with "Conflict on update" instead of waiting, so
a hot counter row would make a reviewer's decision fail while the worker writes the same
patient's document. Appends never conflict. The version is the number of committed
change rows of the patient, so it grows by exactly one per committed bump whatever the
commit order (a rolled-back write leaves no row), and a reader that takes the version
before it reads the record can at worst keep a newer result under an older version,
which the next read, seeing a higher version, replaces.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterable, TypeVar

import duckdb

T = TypeVar("T")

# The tables whose rows name their patient, for writers that are given row ids.
_PATIENT_TABLES = frozenset({
    "document_facts", "identity_checks", "promotions", "documents", "chart_alerts", "chart_lab_results",
    "chart_allergies", "chart_medications", "chart_problems", "chart_vital_signs",
})


def current(cur: duckdb.DuckDBPyConnection, patient_id: int) -> int:
    """The patient's record version (0 for a record never written)."""
    cur.execute("SELECT count(*) FROM record_changes WHERE patient_id = ?", [patient_id])
    return int(cur.fetchone()[0])


def bump(cur: duckdb.DuckDBPyConnection, patient_ids: Iterable[int | None], source: str) -> None:
    """One change row per distinct patient, on the caller's cursor: at its transaction's
    commit when it is in one (``Database.transaction``), else now."""
    ids = {int(p) for p in patient_ids if p is not None}
    if not ids:
        return
    pending = _pending.get(cur)
    if pending is not None:
        pending.patients |= ids
        pending.sources.add(source)
        return
    cur.execute("INSERT INTO record_changes (patient_id, source) SELECT unnest(?), ?", [sorted(ids), source])


def bump_rows(cur: duckdb.DuckDBPyConnection, table: str, row_ids: Iterable[int | None], source: str) -> None:
    """Bump the patients of the given rows of ``table`` (a writer given ids, not a patient)."""
    if table not in _PATIENT_TABLES:
        raise ValueError(f"not a table of a patient's record: {table}")
    ids = {int(r) for r in row_ids if r is not None}
    if not ids:
        return
    pending = _pending.get(cur)
    if pending is not None:
        pending.rows.setdefault(table, set()).update(ids)
        pending.sources.add(source)
        return
    cur.execute(f"INSERT INTO record_changes (patient_id, source) SELECT DISTINCT patient_id, ? FROM {table} "
                "WHERE id IN (SELECT unnest(?))", [source, sorted(ids)])


# ------------------------------------------------------------------ one row per transaction
# A transaction's writers each bump (a stored document: its facts, identity checks,
# promotions, chart rows, statuses); written as they come that is a statement per
# writer, so inside ``Database.transaction`` the bumps are gathered and written in one
# statement just before COMMIT, one row per patient the transaction changed.
@dataclass
class _Pending:
    patients: set[int] = field(default_factory=set)
    rows: dict[str, set[int]] = field(default_factory=dict)
    sources: set[str] = field(default_factory=set)


_pending: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # cursor of an open transaction -> its bumps


_VALUES_ROWS = 16  # up to this many patients a flush binds two parameters each


def begin(cur: duckdb.DuckDBPyConnection) -> None:
    """``cur`` has just begun a transaction: gather its bumps until ``flush``."""
    _pending[cur] = _Pending()


def flush(cur: duckdb.DuckDBPyConnection) -> None:
    """Write the gathered bumps on ``cur`` (call just before its COMMIT); a rolled-back
    transaction is never flushed, so it leaves no row, like the writes it gathered."""
    pending = _pending.pop(cur, None)
    if pending is None or not (pending.patients or pending.rows):
        return
    source = ",".join(sorted(pending.sources))[:200]
    if not pending.rows and len(pending.patients) <= _VALUES_ROWS:
        # Patients named outright (a job names its one patient): a VALUES list, which
        # DuckDB runs in about half the time of the DISTINCT over an unnest below.
        cur.execute("INSERT INTO record_changes (patient_id, source) VALUES "
                    + ", ".join("(?, ?)" for _ in pending.patients),
                    [v for patient_id in sorted(pending.patients) for v in (patient_id, source)])
        return
    parts, params = ["SELECT unnest(?::BIGINT[]) AS patient_id"], [sorted(pending.patients)]
    for table, ids in sorted(pending.rows.items()):
        parts.append(f"SELECT patient_id FROM {table} WHERE id IN (SELECT unnest(?::BIGINT[]))")
        params.append(sorted(ids))
    cur.execute("INSERT INTO record_changes (patient_id, source) SELECT DISTINCT patient_id, ? FROM ("
                + " UNION ALL ".join(parts) + ") WHERE patient_id IS NOT NULL",
                [source, *params])


# ------------------------------------------------------------------ kept by version
KEPT_PER_DATABASE = 64  # results kept per open database (per process), least recently used dropped first
_kept: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_kept_lock = threading.Lock()
_MISSING = object()


def kept(db: Any, patient_id: int, what: Hashable, make: Callable[[], T]) -> T:
    """``make()`` for the patient's record as it is now, computed once per record version
    (per database, per process) and shared by every later caller until a write bumps the
    version: callers must treat the result as read-only. ``make`` may read only the
    patient's record (what the version covers) and ``what`` must name everything else
    its result depends on. The version is read before ``make`` reads the record, so a
    write in between can only make the kept result newer than its version (the next
    read, seeing the higher version, makes it again), never older."""
    with db.cursor() as cur:
        version = current(cur, patient_id)
    key = (patient_id, what)
    with _kept_lock:
        store = _kept.setdefault(db, OrderedDict())
        found = store.get(key)
        if found is not None and found[0] == version:
            store.move_to_end(key)
            return found[1]
    value = make()
    with _kept_lock:
        found = store.get(key)
        if found is None or found[0] <= version:  # an older version of the same result is dropped
            store[key] = (version, value)
            store.move_to_end(key)
        while len(store) > KEPT_PER_DATABASE:
            store.popitem(last=False)
    return value
