"""Stored documents, their categories and the category -> doc_type mapping."""

from __future__ import annotations

from typing import Any, NamedTuple

import duckdb

from storage.db import insert_many, one, rows
from storage import record_version


# A category with the doc_type it maps to (NULL: stored without extraction).
_CATEGORY = ("SELECT c.id, c.name, m.doc_type FROM document_categories c "
             "LEFT JOIN document_type_mappings m ON m.category_id = c.id AND m.active ")


# Bumped by every write to the categories or their mappings in this process: a cache of
# them (the MLLP listener's HL7 category, read for every message) compares it. Every
# writer of the database file is in this process (DuckDB lets one process open it).
_category_writes = 0


def category_generation() -> int:
    return _category_writes


def _categories_changed() -> None:
    global _category_writes
    _category_writes += 1


def categories(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cur.execute(_CATEGORY + "ORDER BY c.id")
    return rows(cur)


def category_by_name(cur: duckdb.DuckDBPyConnection, name: str) -> dict[str, Any] | None:
    cur.execute(_CATEGORY + "WHERE lower(c.name) = lower(?)", [name])
    return one(cur)


def category_for_doc_type(cur: duckdb.DuckDBPyConnection, doc_type: str) -> dict[str, Any] | None:
    cur.execute(_CATEGORY + "WHERE m.doc_type = ? ORDER BY c.id LIMIT 1", [doc_type])
    return one(cur)


def insert(cur: duckdb.DuckDBPyConnection, *, patient_id: int, category_id: int | None,
           filename: str, mime: str | None, sha256: str, size: int, stored_path: str,
           uploaded_by: str | None, parent_document_id: int | None = None) -> dict[str, Any]:
    cur.execute(
        "INSERT INTO documents (patient_id, category_id, filename, mime, sha256, size, stored_path, uploaded_by, "
        "parent_document_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
        [patient_id, category_id, filename, mime, sha256, size, stored_path, uploaded_by, parent_document_id],
    )
    document = one(cur)
    record_version.bump(cur, [patient_id], "document")
    return document


def insert_batch(cur: duckdb.DuckDBPyConnection, records: list[dict[str, Any]]) -> list[int]:
    """Several documents (each record with ``insert``'s fields, each sha256 once) in one
    statement, as the MLLP journal's writer stores a batch; their ids, in order."""
    ids = insert_many(cur, "documents", records, key=("sha256",))
    record_version.bump(cur, [r["patient_id"] for r in records], "document")
    return ids


def by_id(cur: duckdb.DuckDBPyConnection, document_id: int) -> dict[str, Any] | None:
    cur.execute(
        "SELECT d.*, c.name AS category FROM documents d LEFT JOIN document_categories c ON c.id = d.category_id "
        "WHERE d.id = ?",
        [document_id],
    )
    return one(cur)


def for_patient(cur: duckdb.DuckDBPyConnection, patient_id: int, *, include_deleted: bool = False) -> list[dict[str, Any]]:
    cur.execute(
        """SELECT d.id, d.filename, d.mime, d.size, d.sha256, d.uploaded_at, d.deleted, d.active,
                  d.parent_document_id,
                  (SELECT count(*) FROM documents p WHERE p.parent_document_id = d.id) AS parts,
                  c.name AS category,
                  j.id AS job_id, j.status AS job_status, j.error_code, j.error_message, j.doc_type,
                  j.attempts, j.finished_at, ci.identity_status
           FROM documents d
           LEFT JOIN document_categories c ON c.id = d.category_id
           LEFT JOIN current_identity_checks ci ON ci.document_id = d.id AND ci.scope IS NULL
           LEFT JOIN processing_jobs j ON j.id = (SELECT max(id) FROM processing_jobs WHERE document_id = d.id)
           WHERE d.patient_id = ? AND (? OR NOT d.deleted)
           ORDER BY d.id DESC""",
        [patient_id, include_deleted],
    )
    return rows(cur)


def parts_of(cur: duckdb.DuckDBPyConnection, document_id: int) -> list[dict[str, Any]]:
    """The documents a batch was read as (its parts), in message order."""
    cur.execute("SELECT * FROM documents WHERE parent_document_id = ? ORDER BY id", [document_id])
    return rows(cur)


class ReadingState(NamedTuple):
    gone: bool  # deleted, or never stored
    checked: bool  # an identity check was stored for it (by an earlier reading)
    has_facts: bool  # a fact was stored for it (by an earlier reading)


def reading_state(cur: duckdb.DuckDBPyConnection, document_id: int) -> ReadingState:
    """What a job storing its reading must know of the document first, in one narrow
    read: a first reading, the usual case, then need not look for earlier checks and
    facts."""
    cur.execute("SELECT deleted, EXISTS (SELECT 1 FROM identity_checks WHERE document_id = ?), "
                "EXISTS (SELECT 1 FROM document_facts WHERE document_id = ?) FROM documents WHERE id = ?",
                [document_id, document_id, document_id])
    found = cur.fetchone()
    return ReadingState(True, False, False) if found is None else ReadingState(*(bool(v) for v in found))


def mark_deleted(cur: duckdb.DuckDBPyConnection, document_id: int, by: str) -> None:
    cur.execute(
        "UPDATE documents SET deleted = TRUE, active = FALSE, deleted_at = current_timestamp, deleted_by = ? "
        "WHERE id = ?",
        [by, document_id],
    )
    record_version.bump_rows(cur, "documents", [document_id], "document_deleted")


def any_document(cur: duckdb.DuckDBPyConnection) -> bool:
    cur.execute("SELECT EXISTS (SELECT 1 FROM documents)")
    return bool(cur.fetchone()[0])


def add_category(cur: duckdb.DuckDBPyConnection, name: str) -> dict[str, Any]:
    _categories_changed()
    cur.execute("INSERT INTO document_categories (name) VALUES (?) RETURNING id", [name])
    return category_by_name(cur, name)


def set_mapping(cur: duckdb.DuckDBPyConnection, category_id: int, doc_type: str | None) -> None:
    """The category's one active mapping becomes ``doc_type`` (None: stored without
    extraction). Earlier mappings are kept, inactive, as the history."""
    _categories_changed()
    cur.execute("UPDATE document_type_mappings SET active = FALSE WHERE category_id = ? AND active", [category_id])
    if doc_type is not None:
        cur.execute("INSERT INTO document_type_mappings (category_id, doc_type) VALUES (?, ?)",
                    [category_id, doc_type])
