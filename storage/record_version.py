"""The version of a patient's record: a number every write to the record changes, in the
writer's own transaction, so a result computed from the record (an answer's candidate
evidence, the review queue) can be kept until the record changes instead of being
rebuilt per question or per click.

It lives in the database because the UI, the worker and the CLI are separate processes
over one file. The repositories' write functions call ``bump``/``bump_rows``, so every
caller gets it without remembering to (``tests/storage/test_record_version.py`` fails
for a writer that neither bumps nor says why it need not).

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

from typing import Iterable

import duckdb

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
    """One change row per distinct patient, on the caller's cursor (its transaction)."""
    ids = sorted({int(p) for p in patient_ids if p is not None})
    if ids:
        cur.execute("INSERT INTO record_changes (patient_id, source) SELECT unnest(?), ?", [ids, source])


def bump_rows(cur: duckdb.DuckDBPyConnection, table: str, row_ids: Iterable[int | None], source: str) -> None:
    """Bump the patients of the given rows of ``table`` (a writer given ids, not a patient)."""
    if table not in _PATIENT_TABLES:
        raise ValueError(f"not a table of a patient's record: {table}")
    ids = sorted({int(r) for r in row_ids if r is not None})
    if ids:
        cur.execute(f"INSERT INTO record_changes (patient_id, source) SELECT DISTINCT patient_id, ? FROM {table} "
                    "WHERE id IN (SELECT unnest(?))", [source, ids])
