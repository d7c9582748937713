"""Read-only queries the evidence retriever needs. Every query here enforces the
exclusion rules: one patient, live documents, unretracted facts, trusted identity."""

from __future__ import annotations

import json
from typing import Any

import duckdb

from domain.policy.facts.chart_rules import CHART_TABLES, CLOSED_PROMOTION_STATES, TRUSTED_IDENTITY_STATES
from storage.db import rows


def chart_rows_with_citations(cur: duckdb.DuckDBPyConnection, table: str, patient_id: int) -> list[dict[str, Any]]:
    """The evidence view of a chart table: active chart rows with the citation of the promotion that backs them (if any), and
    the clinical context of the fact it was promoted from (NULL for most); a lab row also
    the flags its result printed ("R" of a susceptibility, which the row keeps as abnormal)."""
    printed = (", json_extract(f.structured_value, '$.flags_as_printed') AS flags_as_printed"
               if table == CHART_TABLES["lab_result"] else "")
    cur.execute(
        f"""SELECT c.*, p.citation AS promotion_citation, p.document_id AS source_document_id,
                   f.context AS fact_context{printed}
            FROM {table} c
            LEFT JOIN promotions p ON p.id = c.promotion_id AND p.active
            LEFT JOIN documents d ON d.id = p.document_id
            LEFT JOIN document_facts f ON f.id = p.fact_id
            WHERE c.patient_id = ? AND c.active AND (c.promotion_id IS NULL OR (p.id IS NOT NULL AND NOT d.deleted))
            ORDER BY c.id""",
        [patient_id],
    )
    return rows(cur)


def usable_facts(cur: duckdb.DuckDBPyConnection, patient_id: int) -> list[dict[str, Any]]:
    """Unretracted, unrejected facts of this patient's live documents whose identity
    (for the fact's scope) is verified or approved by a person."""
    cur.execute(
        """SELECT f.*, d.filename FROM document_facts f
           JOIN documents d ON d.id = f.document_id
           JOIN current_identity_checks ci ON ci.document_id = f.document_id AND ci.scope IS NOT DISTINCT FROM f.scope
           WHERE f.patient_id = ? AND d.patient_id = ? AND NOT d.deleted AND d.active
             AND f.retracted_at IS NULL AND NOT list_contains(?, coalesce(f.promotion_status, ''))
             AND list_contains(?, ci.identity_status)
           ORDER BY f.id""",
        [patient_id, patient_id, list(CLOSED_PROMOTION_STATES), list(TRUSTED_IDENTITY_STATES)],
    )
    return rows(cur)



_CHECK_COLUMNS = ("id", "fact_type", "certainty", "promotion_status", "fact_text", "structured_value", "quote",
                  "document_id")


def chart_check_facts(cur: duckdb.DuckDBPyConnection, patient_id: int, *,
                      results_only_beside_a_medication: bool = False) -> list[dict[str, Any]]:
    """The active ones among ``usable_facts``, with only what the chart checks read
    (the citation's quote, not the whole citation): they run on every job, and decoding
    every usable fact's JSON grew with the chart. With ``results_only_beside_a_medication``
    the lab results come only when a medication fact comes too (the checks read results
    only for a medication: core.services.checks.alerts)."""
    # The identity check in force (the view: its one definition) of this patient's live
    # documents only, filtered by document before the join.
    cur.execute(
        """WITH ci AS (
               SELECT document_id, scope, identity_status FROM current_identity_checks
               WHERE document_id IN (SELECT id FROM documents WHERE patient_id = ? AND NOT deleted AND active)),
           live AS (
               SELECT f.id, f.fact_type, f.certainty, f.promotion_status, f.fact_text, f.structured_value,
                      f.citation, f.document_id
               FROM document_facts f
               JOIN ci ON ci.document_id = f.document_id AND ci.scope IS NOT DISTINCT FROM f.scope
               WHERE f.patient_id = ? AND f.active AND f.retracted_at IS NULL
                 AND NOT list_contains(?, coalesce(f.promotion_status, '')) AND list_contains(?, ci.identity_status))
           SELECT id, fact_type, certainty, promotion_status, fact_text, structured_value,
                  json_extract(citation, '$.quote_or_value'), document_id
           FROM live
           WHERE NOT ? OR fact_type <> 'lab_result' OR EXISTS (SELECT 1 FROM live WHERE fact_type = 'medication')
           ORDER BY id""",
        [patient_id, patient_id, list(CLOSED_PROMOTION_STATES), list(TRUSTED_IDENTITY_STATES),
         results_only_beside_a_medication],
    )
    out = []
    for record in cur.fetchall():  # two JSON columns decoded (storage.db.rows tests every column's type)
        fact = dict(zip(_CHECK_COLUMNS, record))
        for name in ("structured_value", "quote"):
            if isinstance(fact[name], str):
                fact[name] = json.loads(fact[name])
        out.append(fact)
    return out


def facts_for_absence_search(cur: duckdb.DuckDBPyConnection, patient_id: int) -> list[dict[str, Any]]:
    """Every unretracted fact of this patient's live documents, whatever its certainty,
    promotion or identity state, with the identity status of its scope: what an answer
    searches before it says that something was not found. Never evidence by itself."""
    cur.execute(
        """SELECT f.id, f.document_id, f.fact_type, f.fact_text, f.structured_value, f.citation, f.certainty,
                  f.promotion_status, f.context, f.active, ci.identity_status
           FROM document_facts f
           JOIN documents d ON d.id = f.document_id
           LEFT JOIN current_identity_checks ci ON ci.document_id = f.document_id
                AND ci.scope IS NOT DISTINCT FROM f.scope
           WHERE f.patient_id = ? AND d.patient_id = ? AND NOT d.deleted AND d.active AND f.retracted_at IS NULL
           ORDER BY f.id""",
        [patient_id, patient_id],
    )
    return rows(cur)


def supporting_citations(cur: duckdb.DuckDBPyConnection, patient_id: int) -> list[dict[str, Any]]:
    """The other documents behind a chart row: citations of the live promotions that
    found their fact already in the chart (``already_exists``/``duplicate_skipped``),
    so an answer lists the row once with every document that states it."""
    cur.execute(
        """SELECT p.promoted_table, p.promoted_record_id, p.citation FROM promotions p
           JOIN documents d ON d.id = p.document_id
           WHERE p.patient_id = ? AND p.active AND p.retracted_at IS NULL AND NOT d.deleted AND d.active
             AND p.outcome IN ('already_exists', 'duplicate_skipped') AND p.citation IS NOT NULL
           ORDER BY p.id""",
        [patient_id],
    )
    return rows(cur)


def conflict_details(cur: duckdb.DuckDBPyConnection, patient_id: int) -> list[dict[str, Any]]:
    """For each fact held in conflict with the chart: what the chart holds (the
    promotion's reason) and the citation behind the chart row it conflicts with, with
    the name of the document that citation is in."""
    cur.execute(
        """SELECT p.fact_id, p.conflict_reason, p.promoted_table, p.promoted_record_id,
                  rp.citation AS chart_citation, d.filename AS chart_document
           FROM promotions p
           LEFT JOIN promotions rp ON rp.promoted_table = p.promoted_table
                AND rp.promoted_record_id = p.promoted_record_id AND rp.outcome = 'promoted' AND rp.active
           LEFT JOIN documents d ON d.id = rp.document_id
           WHERE p.patient_id = ? AND p.active AND p.outcome = 'conflict_needs_review'
           ORDER BY p.id""",
        [patient_id],
    )
    return rows(cur)
