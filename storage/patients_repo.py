"""Chart patients."""

from __future__ import annotations

from datetime import date
from typing import Any

import duckdb

from storage.db import one, rows
from storage import record_version


def add(cur: duckdb.DuckDBPyConnection, *, mrn: str, first: str, last: str, dob: date,
        sex: str = "U", middle: str | None = None) -> dict[str, Any]:
    cur.execute(
        "INSERT INTO patients (mrn, first_name, last_name, middle_name, dob, sex) "
        "VALUES (?, ?, ?, ?, ?, ?) RETURNING *",
        [mrn, first, last, middle, dob, sex],
    )
    patient = one(cur)
    record_version.bump(cur, [patient["id"]], "patient")
    return patient


def by_mrn(cur: duckdb.DuckDBPyConnection, mrn: str) -> dict[str, Any] | None:
    cur.execute("SELECT * FROM patients WHERE mrn = ?", [mrn])
    return one(cur)


def by_id(cur: duckdb.DuckDBPyConnection, patient_id: int) -> dict[str, Any] | None:
    cur.execute("SELECT * FROM patients WHERE id = ?", [patient_id])
    return one(cur)


def all_patients(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cur.execute("SELECT * FROM patients ORDER BY last_name, first_name, id")
    return rows(cur)
