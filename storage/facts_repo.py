"""Document facts and identity checks, handed out as ``FactRow`` and ``IdentityCheckRow``
(storage.rows). The chart row a finding is compared with stays a dict: four chart
tables, four shapes."""

from __future__ import annotations

import json
from typing import Any, Iterable

import duckdb

from domain.clock import utcnow
from domain.policy.facts.chart_rules import CHART_TABLES
from storage.db import insert_rows, one, to_json
from storage.rows import FactRow, IdentityCheckRow, fetch_all, fetch_one
from storage import record_version


_CHECK_COLUMNS = ("id", "patient_id", "document_id", "job_id", "doc_type", "scope", "identity_status",
                  "extracted_identifiers", "matched_fields", "mismatch_reason", "review_required", "checked_at",
                  "unread_identifiers")


def insert_identity_check(cur: duckdb.DuckDBPyConnection, *, patient_id: int, document_id: int, job_id: int | None,
                          doc_type: str, scope: str | None, status: str, identifiers: list[dict],
                          matched: dict, mismatch_reason: str | None, review_required: bool,
                          unread: list[dict] | None = None) -> IdentityCheckRow:
    return insert_identity_checks(cur, [dict(
        patient_id=patient_id, document_id=document_id, job_id=job_id, doc_type=doc_type, scope=scope,
        status=status, identifiers=identifiers, matched=matched, mismatch_reason=mismatch_reason,
        review_required=review_required, unread=unread)])[0]


def insert_identity_checks(cur: duckdb.DuckDBPyConnection, checks: list[dict[str, Any]]) -> list[IdentityCheckRow]:
    """Store many checks (keys as ``insert_identity_check``'s arguments) in one statement,
    ids in the order given; returns the stored rows in that order, as a ``SELECT *``
    would return them (built from what was written, not read back: a statement less on
    every job; tests/storage/test_facts_repo.py compares them with the rows read)."""
    if not checks:
        return []
    cur.execute("SELECT nextval('seq_identity_checks') FROM range(?)", [len(checks)])
    ids = [int(r[0]) for r in cur.fetchall()]
    now = utcnow()
    records = [[check_id, c["patient_id"], c["document_id"], c["job_id"], c["doc_type"], c["scope"], c["status"],
                to_json(c["identifiers"]), to_json(c["matched"]), c["mismatch_reason"], c["review_required"], now,
                to_json(c.get("unread") or [])]
               for check_id, c in zip(ids, checks)]
    insert_rows(cur, "identity_checks", _CHECK_COLUMNS, records)
    record_version.bump(cur, [c["patient_id"] for c in checks], "identity_checks")
    return [_check_as_stored(dict(zip(_CHECK_COLUMNS, record))) for record in records]


# identity_checks' columns in table order (SELECT *), with what a new check holds in those
# it is not written with.
_CHECK_TABLE_ORDER = ("id", "patient_id", "document_id", "job_id", "doc_type", "scope", "identity_status",
                      "extracted_identifiers", "matched_fields", "mismatch_reason", "review_required",
                      "review_decision", "reviewed_by", "reviewed_at", "checked_at", "unread_identifiers")
_CHECK_JSON = ("extracted_identifiers", "matched_fields", "unread_identifiers")


def _check_as_stored(written: dict[str, Any]) -> IdentityCheckRow:
    values = {name: written.get(name) for name in _CHECK_TABLE_ORDER}
    for name in _CHECK_JSON:  # decoded from the text stored, as a read decodes it
        values[name] = json.loads(values[name])
    return IdentityCheckRow.from_mapping(values)


def latest_identity(cur: duckdb.DuckDBPyConnection, document_id: int,
                    scope: str | None = None) -> IdentityCheckRow | None:
    cur.execute(
        "SELECT * FROM current_identity_checks WHERE document_id = ? AND scope IS NOT DISTINCT FROM ?",
        [document_id, scope],
    )
    return fetch_one(cur, IdentityCheckRow)


def identity_checks_for_document(cur: duckdb.DuckDBPyConnection, document_id: int) -> list[IdentityCheckRow]:
    cur.execute(
        "SELECT * FROM current_identity_checks WHERE document_id = ? ORDER BY scope NULLS FIRST",
        [document_id],
    )
    return fetch_all(cur, IdentityCheckRow)


def identity_by_id(cur: duckdb.DuckDBPyConnection, check_id: int) -> IdentityCheckRow | None:
    cur.execute("SELECT * FROM identity_checks WHERE id = ?", [check_id])
    return fetch_one(cur, IdentityCheckRow)


def set_identity_review(cur: duckdb.DuckDBPyConnection, check_id: int, *, status: str, decision: str, by: str) -> None:
    cur.execute(
        """UPDATE identity_checks SET identity_status = ?, review_decision = ?, reviewed_by = ?, reviewed_at = ?,
               review_required = FALSE WHERE id = ?""",
        [status, decision, by, utcnow(), check_id],
    )
    record_version.bump_rows(cur, "identity_checks", [check_id], "identity_review")


_FACT_COLUMNS = ("id", "patient_id", "document_id", "job_id", "identity_check_id", "doc_type", "fact_type",
                 "certainty", "fact_fingerprint", "clinical_content_fingerprint", "fact_text", "structured_value",
                 "citation", "confidence", "promotion_status", "review_reason", "scope", "active", "context", "created_at")


def insert_facts(cur: duckdb.DuckDBPyConnection, facts: list[dict[str, Any]]) -> list[FactRow]:
    """One insert per document, not per fact; returns the rows (as given, with their id,
    created_at and the optional columns filled in: not read back)."""
    if not facts:
        return []
    cur.execute("SELECT nextval('seq_document_facts') FROM range(?)", [len(facts)])
    ids = [int(r[0]) for r in cur.fetchall()]
    now = utcnow()
    stored: list[FactRow] = []
    records = []
    for fact_id, f in zip(ids, facts):
        row = {**f, "id": fact_id, "created_at": now, "promotion_status": f.get("promotion_status"),
               "review_reason": f.get("review_reason"), "scope": f.get("scope"), "context": f.get("context")}
        stored.append(FactRow.from_mapping(row))
        records.append([row[c] if c not in ("structured_value", "citation", "context") else to_json(row[c])
                        for c in _FACT_COLUMNS])
    insert_rows(cur, "document_facts", _FACT_COLUMNS, records)
    record_version.bump(cur, [f["patient_id"] for f in facts], "facts")
    return stored


def facts_by_fingerprints_or_document(cur: duckdb.DuckDBPyConnection, fingerprints: list[str],
                                      document_id: int) -> tuple[dict[str, FactRow], list[FactRow]]:
    """What a job storing its reading must know in one read: (the first stored fact of
    each fingerprint, every fact of the document in id order)."""
    cur.execute("SELECT * FROM document_facts WHERE document_id = ? OR fact_fingerprint IN (SELECT unnest(?)) "
                "ORDER BY id", [document_id, fingerprints])
    wanted = set(fingerprints)
    found: dict[str, FactRow] = {}
    of_document: list[FactRow] = []
    for row in fetch_all(cur, FactRow):
        if row.fact_fingerprint in wanted:
            found.setdefault(row.fact_fingerprint, row)
        if row.document_id == document_id:
            of_document.append(row)
    return found, of_document


# Up to this many ids are written into a statement as numbers rather than passed as a
# list parameter: DuckDB looks a literal IN list up by the primary key (an UPDATE of a
# job's facts: 0.7 ms against 0.9 with ``IN (SELECT unnest(?))``, a read 0.45 against 0.75).
_LITERAL_IDS = 512


def _ids_in(fact_ids: list[int]) -> tuple[str, list[Any]]:
    """``IN (...)`` for these ids and its parameters: the ids as integers in the text
    (each passed through int(), so nothing but digits is ever written), or one list
    parameter beyond ``_LITERAL_IDS``."""
    if 0 < len(fact_ids) <= _LITERAL_IDS:
        return "IN (" + ", ".join(str(int(i)) for i in fact_ids) + ")", []
    return "IN (SELECT unnest(?))", [list(fact_ids)]


def set_promotion_status(cur: duckdb.DuckDBPyConnection, outcomes: dict[int, str],
                         patient_ids: Iterable[int] | None = None) -> None:
    """One UPDATE per distinct outcome. ``patient_ids``: the patients of these facts, when
    the caller holds the facts (a job: its patient), so the record's change rows are
    written without reading the facts' patients again at commit."""
    by_outcome: dict[str, list[int]] = {}
    for fact_id, outcome in outcomes.items():
        by_outcome.setdefault(outcome, []).append(fact_id)
    for outcome, ids in by_outcome.items():
        where, params = _ids_in(ids)
        cur.execute(f"UPDATE document_facts SET promotion_status = ? WHERE id {where}", [outcome, *params])
    if patient_ids is None:
        record_version.bump_rows(cur, "document_facts", outcomes, "promotion_status")
    elif outcomes:
        record_version.bump(cur, patient_ids, "promotion_status")


def update_fact(cur: duckdb.DuckDBPyConnection, fact_id: int, **changes: Any) -> None:
    if not changes:
        return
    cols = ", ".join(f"{k} = ?" for k in changes)
    cur.execute(f"UPDATE document_facts SET {cols} WHERE id = ?", [*changes.values(), fact_id])
    record_version.bump_rows(cur, "document_facts", [fact_id], "fact")


def fact_by_id(cur: duckdb.DuckDBPyConnection, fact_id: int) -> FactRow | None:
    cur.execute("SELECT * FROM document_facts WHERE id = ?", [fact_id])
    return fetch_one(cur, FactRow)


def facts_for_document(cur: duckdb.DuckDBPyConnection, document_id: int) -> list[FactRow]:
    cur.execute("SELECT * FROM document_facts WHERE document_id = ? ORDER BY id", [document_id])
    return fetch_all(cur, FactRow)


def facts_for_patient(cur: duckdb.DuckDBPyConnection, patient_id: int, *,
                      include_retracted: bool = False) -> list[FactRow]:
    cur.execute(
        """SELECT f.*, d.filename, d.deleted AS document_deleted, ci.identity_status
           FROM document_facts f JOIN documents d ON d.id = f.document_id
           LEFT JOIN current_identity_checks ci ON ci.document_id = f.document_id
                AND ci.scope IS NOT DISTINCT FROM f.scope
           WHERE f.patient_id = ? AND (? OR f.retracted_at IS NULL)
           ORDER BY f.document_id DESC, f.id""",
        [patient_id, include_retracted],
    )
    return fetch_all(cur, FactRow)


def pending_identity_reviews(cur: duckdb.DuckDBPyConnection, patient_id: int) -> list[IdentityCheckRow]:
    """Latest identity check per (document, scope) that still waits for a human."""
    cur.execute(
        """SELECT i.*, d.filename FROM current_identity_checks i JOIN documents d ON d.id = i.document_id
           WHERE i.patient_id = ? AND NOT d.deleted AND i.review_required AND i.review_decision IS NULL
           ORDER BY i.id""",
        [patient_id],
    )
    return fetch_all(cur, IdentityCheckRow)


# What embedding a fact reads (retrieve.patient_facts): its ids, kind, words and whether it is active.
_EMBED_COLUMNS = ("id", "patient_id", "document_id", "fact_type", "fact_text", "active")


def facts_to_embed(cur: duckdb.DuckDBPyConnection, limit: int) -> list[FactRow]:
    """Active, unretracted facts of live documents that have no vector yet, with only the
    columns embedding reads: the vector pass runs after every job, and ``SELECT f.*``
    decoded three JSON columns per fact for it."""
    cur.execute(
        f"""SELECT {', '.join('f.' + c for c in _EMBED_COLUMNS)} FROM document_facts f
            JOIN documents d ON d.id = f.document_id
            WHERE f.active AND f.retracted_at IS NULL AND f.vector_indexed_at IS NULL AND NOT d.deleted
            ORDER BY f.id LIMIT ?""",
        [limit],
    )
    return fetch_all(cur, FactRow)


def mark_vectors(cur: duckdb.DuckDBPyConnection, fact_ids: list[int], indexed: bool) -> dict[int, tuple[str, bool]]:
    """Mark the facts' vectors written (or not). Returns, for each fact marked, its words
    and whether it has left the chart (inactive or retracted), read in the same
    transaction: the vector pass checks what changed while it embedded with this one
    narrow read (an UPDATE ... RETURNING cost 1 ms more than the UPDATE and the read)."""
    if not fact_ids:
        return {}
    where, params = _ids_in(fact_ids)
    cur.execute(f"UPDATE document_facts SET vector_indexed_at = ? WHERE id {where}",
                [utcnow() if indexed else None, *params])
    cur.execute("SELECT id, fact_text, (NOT active OR retracted_at IS NOT NULL) IS TRUE, patient_id "
                f"FROM document_facts WHERE id {where}", params)
    found = cur.fetchall()
    # The rows' patients as read here: the same change rows as bump_rows, without its
    # look-up of the ids at commit.
    record_version.bump(cur, [r[3] for r in found], "fact_vectors")
    return {int(r[0]): (r[1], bool(r[2])) for r in found}


def apply_correction(cur: duckdb.DuckDBPyConnection, fact_id: int, *, structured_value: dict[str, Any], fact_text: str,
                     clinical_content_fingerprint: str, by: str, correction: dict[str, Any]) -> None:
    """A reviewer's correction of a misread value. The citation and the fact fingerprint
    stay: the fact still quotes the page as printed, and reprocessing the document finds
    this (corrected) row instead of storing the misread value again."""
    cur.execute(
        """UPDATE document_facts SET structured_value = ?, fact_text = ?, clinical_content_fingerprint = ?,
               corrected_by = ?, corrected_at = ?, correction = ? WHERE id = ?""",
        [to_json(structured_value), fact_text, clinical_content_fingerprint, by, utcnow(), to_json(correction),
         fact_id],
    )
    record_version.bump_rows(cur, "document_facts", [fact_id], "correction")


def set_citation(cur: duckdb.DuckDBPyConnection, fact_id: int, citation: dict[str, Any]) -> None:
    cur.execute("UPDATE document_facts SET citation = ? WHERE id = ?", [to_json(citation), fact_id])
    record_version.bump_rows(cur, "document_facts", [fact_id], "citation")


def facts_by_ids(cur: duckdb.DuckDBPyConnection, fact_ids: list[int]) -> dict[int, FactRow]:
    if not fact_ids:
        return {}
    cur.execute("SELECT * FROM document_facts WHERE id IN (SELECT unnest(?))", [fact_ids])
    return {int(r.id): r for r in fetch_all(cur, FactRow)}


_CHART_TABLES = tuple(CHART_TABLES.values())


def chart_row_for_comparison(cur: duckdb.DuckDBPyConnection, table: str, record_id: int) -> dict[str, Any] | None:
    """The chart row a finding conflicts with, to show both side by side."""
    if table not in _CHART_TABLES:
        raise ValueError(f"not a chart table: {table}")
    cur.execute(f"SELECT * FROM {table} WHERE id = ?", [record_id])
    return one(cur)


def decided_identity_checks(cur: duckdb.DuckDBPyConnection, patient_id: int) -> list[IdentityCheckRow]:
    """Identity checks in force that a person decided, on live documents (undo candidates)."""
    cur.execute(
        """SELECT i.*, d.filename FROM current_identity_checks i JOIN documents d ON d.id = i.document_id
           WHERE i.patient_id = ? AND NOT d.deleted AND i.review_decision IS NOT NULL ORDER BY i.reviewed_at DESC""",
        [patient_id],
    )
    return fetch_all(cur, IdentityCheckRow)
