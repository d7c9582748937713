"""A patient's reviewable state, read and written back column by column, so that a
review decision can record what it changed and an undo can put exactly that back.

Only the columns a decision changes are read: a fact's certainty, status, values, words,
citation and correction; a promotion's outcome and review state; a chart row's
activity, link and note. Bookkeeping that runs after a decision (vector state,
``updated_at``) is left out, so it never looks like a later change. Values are kept
as JSON-ready text (timestamps as ISO text, JSON columns decoded).
"""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

import duckdb

from storage import record_version
from storage.db import to_json

# Columns any decision may change on any of the patient's facts (a superseded value,
# the lifetime rule), and those only a decision on the fact itself changes (a correction,
# a box): the latter are read for that fact alone, so a long chart stays quick to read.
FACT_STATE_COLUMNS = ("certainty", "active", "promotion_status", "review_reason", "deactivated_at", "retracted_at",
                      "retraction_reason")
FACT_CONTENT_COLUMNS = ("structured_value", "fact_text", "clinical_content_fingerprint", "citation", "corrected_by",
                        "corrected_at", "correction")
FACT_COLUMNS = FACT_STATE_COLUMNS + FACT_CONTENT_COLUMNS
PROMOTION_COLUMNS = ("fact_id", "document_id", "promoted_table", "promoted_record_id", "outcome", "active",
                     "review_status", "conflict_reason", "retracted_at", "retraction_reason")
CHART_COLUMNS = ("active", "promotion_id", "note")
_JSON_COLUMNS = {"structured_value", "citation", "correction"}
# Columns a restore writes back (the rest only identify the row).
_RESTORED_PROMOTION = ("outcome", "active", "review_status", "conflict_reason", "retracted_at", "retraction_reason")


def _plain(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    return value


def _read(cur: duckdb.DuckDBPyConnection, sql: str, params: list[Any], columns: tuple[str, ...]) -> dict[str, dict]:
    """id -> {column: value}; plain tuples, not ``rows()``: a long chart is read twice per decision."""
    cur.execute(sql, params)
    decode = [c in _JSON_COLUMNS for c in columns]
    out: dict[str, dict] = {}
    for rec in cur.fetchall():
        out[str(rec[0])] = {c: (json.loads(v) if d and isinstance(v, str) else _plain(v))
                            for c, d, v in zip(columns, decode, rec[1:])}
    return out


def patient_state(cur: duckdb.DuckDBPyConnection, patient_id: int, chart_tables: tuple[str, ...],
                  content_of: list[int] = ()) -> dict[str, Any]:
    """{"facts": {id: cols}, "promotions": {id: cols}, "chart": {table: {id: cols}}} for one
    patient; the content columns of the facts ``content_of`` only."""
    promo_cols = ", ".join(PROMOTION_COLUMNS)
    chart_cols = ", ".join(CHART_COLUMNS)
    facts = _read(cur, f"SELECT id, {', '.join(FACT_STATE_COLUMNS)} FROM document_facts WHERE patient_id = ?",
                  [patient_id], FACT_STATE_COLUMNS)
    if content_of:
        content = _read(cur, f"SELECT id, {', '.join(FACT_CONTENT_COLUMNS)} FROM document_facts "
                             "WHERE id IN (SELECT unnest(?))", [list(content_of)], FACT_CONTENT_COLUMNS)
        for fact_id, cols in content.items():
            facts.get(fact_id, {}).update(cols)
    return {
        "facts": facts,
        "promotions": _read(cur, f"SELECT id, {promo_cols} FROM promotions WHERE patient_id = ?", [patient_id],
                            PROMOTION_COLUMNS),
        "chart": {t: _read(cur, f"SELECT id, {chart_cols} FROM {t} WHERE patient_id = ?", [patient_id], CHART_COLUMNS)
                  for t in chart_tables},
    }


def _write(cur: duckdb.DuckDBPyConnection, table: str, row_id: int, values: dict[str, Any],
           json_columns: set[str] = frozenset()) -> None:
    if not values:
        return
    cols = ", ".join(f"{k} = ?" for k in values)
    params = [to_json(v) if k in json_columns and v is not None else v for k, v in values.items()]
    cur.execute(f"UPDATE {table} SET {cols} WHERE id = ?", [*params, row_id])
    record_version.bump_rows(cur, table, [row_id], "undo")


def restore_fact(cur: duckdb.DuckDBPyConnection, fact_id: int, values: dict[str, Any]) -> None:
    _write(cur, "document_facts", fact_id, {k: v for k, v in values.items() if k in FACT_COLUMNS}, _JSON_COLUMNS)


def restore_promotion(cur: duckdb.DuckDBPyConnection, promotion_id: int, values: dict[str, Any]) -> None:
    _write(cur, "promotions", promotion_id, {k: v for k, v in values.items() if k in _RESTORED_PROMOTION})


def restore_chart_row(cur: duckdb.DuckDBPyConnection, table: str, row_id: int, values: dict[str, Any],
                      chart_tables: tuple[str, ...]) -> None:
    if table not in chart_tables:  # a table name from stored JSON is never trusted into SQL
        raise ValueError(f"not a chart table: {table!r}")
    _write(cur, table, row_id, {k: v for k, v in values.items() if k in CHART_COLUMNS})
