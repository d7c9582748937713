"""Eval runs and their per-case rubric rows (``eval_runs`` / ``eval_case_results``).

A run is keyed by its ``run_id`` (unique index, migration 7): inserting a run that is
already stored changes nothing. Functions take a cursor; :func:`insert_run` wants one
inside a transaction so a run and its rows land together or not at all.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable

import duckdb

from storage.db import one, rows, to_json

_RUN_COLUMNS = "run_id, started_at, finished_at, verdict, cases, rubrics, baseline, details"


def insert_run(cur: duckdb.DuckDBPyConnection, *, run_id: str, started_at: datetime, finished_at: datetime | None,
               verdict: str, cases: int, rubrics: dict[str, float], baseline: dict[str, float],
               details: dict[str, Any], case_rows: Iterable[tuple[str, str, bool, str | None]]) -> bool:
    """Store one run and its ``(case_id, rubric, passed, detail)`` rows.

    Returns False (and writes nothing) when ``run_id`` is already stored."""
    cur.execute(
        f"""INSERT INTO eval_runs ({_RUN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (run_id) DO NOTHING RETURNING id""",
        [run_id, started_at, finished_at, verdict, cases, to_json(rubrics), to_json(baseline), to_json(details)],
    )
    if cur.fetchone() is None:
        return False
    batch = [[run_id, case_id, rubric, bool(passed), detail] for case_id, rubric, passed, detail in case_rows]
    if batch:
        cur.executemany(
            "INSERT INTO eval_case_results (run_id, case_id, rubric, passed, detail) VALUES (?, ?, ?, ?, ?)", batch
        )
    return True


def run_ids(cur: duckdb.DuckDBPyConnection) -> set[str]:
    cur.execute("SELECT run_id FROM eval_runs")
    return {r[0] for r in cur.fetchall()}


def list_runs(cur: duckdb.DuckDBPyConnection, limit: int | None = None) -> list[dict[str, Any]]:
    """Runs, newest first, each with how many of its cases failed at least one rubric."""
    cur.execute(
        """SELECT r.run_id, r.started_at, r.finished_at, r.verdict, r.cases, r.rubrics, r.baseline, r.details,
                  coalesce(f.failed, 0) AS failed_cases_count
           FROM eval_runs r
           LEFT JOIN (SELECT run_id, count(DISTINCT case_id) AS failed FROM eval_case_results
                      WHERE NOT passed GROUP BY run_id) f ON f.run_id = r.run_id
           ORDER BY r.started_at DESC, r.run_id DESC"""
        + (" LIMIT ?" if limit is not None else ""),
        [limit] if limit is not None else [],
    )
    return rows(cur)


def get_run(cur: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, Any] | None:
    cur.execute(f"SELECT {_RUN_COLUMNS} FROM eval_runs WHERE run_id = ?", [run_id])
    return one(cur)


def case_results(cur: duckdb.DuckDBPyConnection, run_id: str) -> list[dict[str, Any]]:
    """One row per (case, rubric) of a run, failures first, then by case and rubric."""
    cur.execute(
        """SELECT case_id, rubric, passed, detail FROM eval_case_results WHERE run_id = ?
           ORDER BY passed, case_id, rubric""",
        [run_id],
    )
    return rows(cur)


def rubric_pass_rates(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every rubric's recorded pass rate in every run, oldest run first (for trends), with
    the run's case selection (JSON text; NULL or 'null' for the whole golden set).

    The rate is the one the run reported (``eval_runs.rubrics``), not recounted from
    the case rows: the runner decides which cases a rubric applies to."""
    cur.execute(
        """SELECT run_id, started_at, rubric,
                  CAST(json_extract(rubrics, '$."' || rubric || '"') AS DOUBLE) AS pass_rate,
                  CAST(json_extract(details, '$.selection') AS VARCHAR) AS selection, cases
           FROM (SELECT run_id, started_at, rubrics, details, cases, unnest(json_keys(rubrics)) AS rubric
                 FROM eval_runs)
           ORDER BY started_at, run_id, rubric"""
    )
    return rows(cur)
