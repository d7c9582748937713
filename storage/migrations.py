"""Ordered schema migrations. Each runs once, inside a transaction, and is recorded
in ``schema_version``; re-running ``init`` applies nothing new. Never edit a
migration that has shipped: add the next one."""

from __future__ import annotations

from typing import Callable

import duckdb

_SEQ_TABLES = (
    "patients", "chart_lab_results", "chart_allergies", "chart_medications", "chart_problems",
    "document_categories", "document_type_mappings", "documents", "processing_jobs",
    "identity_checks", "document_facts", "promotions", "retractions", "review_decisions",
    "supervisor_handoffs", "eval_runs", "eval_case_results",
)


def _id(table: str) -> str:
    return f"id BIGINT PRIMARY KEY DEFAULT nextval('seq_{table}')"


def _chart_cols() -> str:
    # Every chart row says where it came from and whether it still counts.
    return """active BOOLEAN NOT NULL DEFAULT TRUE,
        source VARCHAR NOT NULL DEFAULT 'manual',
        promotion_id BIGINT,
        note VARCHAR,
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        updated_at TIMESTAMP"""


def m001_base_schema(cur: duckdb.DuckDBPyConnection) -> None:
    for table in _SEQ_TABLES:
        cur.execute(f"CREATE SEQUENCE IF NOT EXISTS seq_{table} START 1")
    cur.execute(f"""CREATE TABLE patients ({_id('patients')},
        mrn VARCHAR NOT NULL UNIQUE, first_name VARCHAR NOT NULL, last_name VARCHAR NOT NULL,
        middle_name VARCHAR, dob DATE NOT NULL, sex VARCHAR NOT NULL DEFAULT 'U',
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp)""")
    cur.execute(f"""CREATE TABLE chart_lab_results ({_id('chart_lab_results')},
        patient_id BIGINT NOT NULL, test_name VARCHAR NOT NULL, value VARCHAR NOT NULL,
        unit VARCHAR, reference_range VARCHAR, collection_date DATE, abnormal_flag VARCHAR,
        {_chart_cols()})""")
    cur.execute(f"""CREATE TABLE chart_allergies ({_id('chart_allergies')},
        patient_id BIGINT NOT NULL, substance VARCHAR NOT NULL, reaction VARCHAR, severity VARCHAR,
        {_chart_cols()})""")
    cur.execute(f"""CREATE TABLE chart_medications ({_id('chart_medications')},
        patient_id BIGINT NOT NULL, name VARCHAR NOT NULL, dose VARCHAR, frequency VARCHAR,
        {_chart_cols()})""")
    cur.execute(f"""CREATE TABLE chart_problems ({_id('chart_problems')},
        patient_id BIGINT NOT NULL, description VARCHAR NOT NULL, code VARCHAR,
        {_chart_cols()})""")
    cur.execute(f"""CREATE TABLE document_categories ({_id('document_categories')},
        name VARCHAR NOT NULL UNIQUE)""")
    cur.execute(f"""CREATE TABLE document_type_mappings ({_id('document_type_mappings')},
        category_id BIGINT NOT NULL, doc_type VARCHAR NOT NULL, active BOOLEAN NOT NULL DEFAULT TRUE,
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp)""")
    cur.execute(f"""CREATE TABLE documents ({_id('documents')},
        patient_id BIGINT NOT NULL, category_id BIGINT, filename VARCHAR NOT NULL, mime VARCHAR,
        sha256 VARCHAR NOT NULL, size BIGINT NOT NULL, stored_path VARCHAR NOT NULL,
        uploaded_at TIMESTAMP NOT NULL DEFAULT current_timestamp, uploaded_by VARCHAR,
        deleted BOOLEAN NOT NULL DEFAULT FALSE, deleted_at TIMESTAMP, deleted_by VARCHAR,
        active BOOLEAN NOT NULL DEFAULT TRUE)""")
    cur.execute(f"""CREATE TABLE processing_jobs ({_id('processing_jobs')},
        patient_id BIGINT NOT NULL, document_id BIGINT NOT NULL, doc_type VARCHAR NOT NULL,
        status VARCHAR NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp, started_at TIMESTAMP,
        finished_at TIMESTAMP, heartbeat_at TIMESTAMP, worker_id VARCHAR,
        error_code VARCHAR, error_message VARCHAR, timings JSON, counts JSON, engine VARCHAR)""")
    cur.execute("""CREATE TABLE worker_heartbeats (worker_id VARCHAR PRIMARY KEY,
        status VARCHAR NOT NULL, heartbeat_at TIMESTAMP NOT NULL, current_job_id BIGINT,
        processed BIGINT NOT NULL DEFAULT 0, failed BIGINT NOT NULL DEFAULT 0)""")
    cur.execute(f"""CREATE TABLE identity_checks ({_id('identity_checks')},
        patient_id BIGINT NOT NULL, document_id BIGINT NOT NULL, job_id BIGINT, doc_type VARCHAR,
        scope VARCHAR, identity_status VARCHAR NOT NULL, extracted_identifiers JSON,
        matched_fields JSON, mismatch_reason VARCHAR, review_required BOOLEAN NOT NULL DEFAULT FALSE,
        review_decision VARCHAR, reviewed_by VARCHAR, reviewed_at TIMESTAMP,
        checked_at TIMESTAMP NOT NULL DEFAULT current_timestamp)""")
    cur.execute(f"""CREATE TABLE document_facts ({_id('document_facts')},
        patient_id BIGINT NOT NULL, document_id BIGINT NOT NULL, job_id BIGINT,
        identity_check_id BIGINT, doc_type VARCHAR NOT NULL, fact_type VARCHAR NOT NULL,
        certainty VARCHAR NOT NULL, fact_fingerprint VARCHAR NOT NULL,
        clinical_content_fingerprint VARCHAR NOT NULL, fact_text VARCHAR NOT NULL,
        structured_value JSON, citation JSON NOT NULL, confidence DOUBLE NOT NULL,
        promotion_status VARCHAR, review_reason VARCHAR, scope VARCHAR,
        active BOOLEAN NOT NULL DEFAULT FALSE,
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp, deactivated_at TIMESTAMP,
        retracted_at TIMESTAMP, retraction_reason VARCHAR)""")
    cur.execute(f"""CREATE TABLE promotions ({_id('promotions')},
        patient_id BIGINT NOT NULL, document_id BIGINT NOT NULL, job_id BIGINT, fact_id BIGINT NOT NULL,
        fact_fingerprint VARCHAR NOT NULL, clinical_content_fingerprint VARCHAR NOT NULL,
        promoted_table VARCHAR, promoted_record_id BIGINT, outcome VARCHAR NOT NULL,
        duplicate_key VARCHAR, conflict_reason VARCHAR, citation JSON, confidence DOUBLE,
        review_status VARCHAR, active BOOLEAN NOT NULL DEFAULT TRUE,
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp, updated_at TIMESTAMP,
        retracted_at TIMESTAMP, retraction_reason VARCHAR)""")
    cur.execute(f"""CREATE TABLE retractions ({_id('retractions')},
        patient_id BIGINT NOT NULL, document_id BIGINT, job_id BIGINT, fact_id BIGINT,
        promotion_id BIGINT, promoted_table VARCHAR, promoted_record_id BIGINT,
        prior_state VARCHAR, new_state VARCHAR, action VARCHAR NOT NULL, actor_type VARCHAR,
        actor_id VARCHAR, reason VARCHAR, created_at TIMESTAMP NOT NULL DEFAULT current_timestamp)""")
    cur.execute(f"""CREATE TABLE review_decisions ({_id('review_decisions')},
        item_type VARCHAR NOT NULL, item_id BIGINT NOT NULL, decision VARCHAR NOT NULL,
        actor VARCHAR NOT NULL, reason VARCHAR, before_state JSON, after_state JSON,
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp)""")
    cur.execute(f"""CREATE TABLE supervisor_handoffs ({_id('supervisor_handoffs')},
        request_id VARCHAR, job_id BIGINT, source_node VARCHAR NOT NULL,
        destination_node VARCHAR NOT NULL, decision_reason VARCHAR, task_type VARCHAR,
        outcome VARCHAR, latency_ms DOUBLE, error_reason VARCHAR,
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp)""")
    cur.execute("""CREATE TABLE guideline_chunks (
        chunk_id VARCHAR NOT NULL, corpus_version VARCHAR NOT NULL, source_title VARCHAR NOT NULL,
        source_reference VARCHAR, section VARCHAR NOT NULL, text VARCHAR NOT NULL, citation JSON NOT NULL,
        active BOOLEAN NOT NULL DEFAULT TRUE, indexed_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (corpus_version, chunk_id))""")
    cur.execute(f"""CREATE TABLE eval_runs ({_id('eval_runs')},
        run_id VARCHAR NOT NULL, started_at TIMESTAMP NOT NULL, finished_at TIMESTAMP,
        verdict VARCHAR, cases INTEGER, rubrics JSON, baseline JSON, details JSON)""")
    cur.execute(f"""CREATE TABLE eval_case_results ({_id('eval_case_results')},
        run_id VARCHAR NOT NULL, case_id VARCHAR NOT NULL, rubric VARCHAR NOT NULL,
        passed BOOLEAN NOT NULL, detail VARCHAR)""")


SEEDED_CATEGORIES = (
    ("Lab Report", "lab_pdf"),
    ("Intake Form", "intake_form"),
    ("Referral Document", "referral_docx"),
    ("Clinical Workbook", "clinical_workbook"),
    ("Fax Packet", "fax_packet"),
    ("HL7 v2 Message", "hl7v2_message"),
)


def m002_categories_and_indexes(cur: duckdb.DuckDBPyConnection) -> None:
    for name, doc_type in SEEDED_CATEGORIES:
        cur.execute("INSERT INTO document_categories (name) VALUES (?)", [name])
        cur.execute(
            "INSERT INTO document_type_mappings (category_id, doc_type) "
            "SELECT id, ? FROM document_categories WHERE name = ?",
            [doc_type, name],
        )
    # A category that creates no job: stored, listed, never extracted.
    cur.execute("INSERT INTO document_categories (name) VALUES ('Other')")
    cur.execute("CREATE INDEX idx_jobs_status ON processing_jobs (status)")
    cur.execute("CREATE INDEX idx_facts_patient ON document_facts (patient_id)")
    cur.execute("CREATE INDEX idx_facts_document ON document_facts (document_id)")
    cur.execute("CREATE INDEX idx_promotions_ccf ON promotions (clinical_content_fingerprint)")


def m003_fact_vector_state(cur: duckdb.DuckDBPyConnection) -> None:
    # Facts are embedded after their job succeeds (in batches, by the worker);
    # this records which active facts already have a vector.
    cur.execute("ALTER TABLE document_facts ADD COLUMN vector_indexed_at TIMESTAMP")


def m004_job_warnings_and_current_identity(cur: duckdb.DuckDBPyConnection) -> None:
    # Coded warnings (an unreadable page, a formula without a value) belong to the job.
    cur.execute("ALTER TABLE processing_jobs ADD COLUMN warnings JSON")
    # The one definition of "the identity check in force": the latest per document and
    # scope (NULL scope = the whole document; "page 3" / "message 2" = a part).
    cur.execute("""CREATE VIEW current_identity_checks AS
        SELECT * EXCLUDE (rn) FROM (
            SELECT *, row_number() OVER (PARTITION BY document_id, scope ORDER BY id DESC) AS rn
            FROM identity_checks) WHERE rn = 1""")


def m005_fact_context(cur: duckdb.DuckDBPyConnection) -> None:
    # Free-text facts carry how they were meant (negated, family, historical, hypothetical,
    # uncertain): the fact view and answers show it, and promotion honours it.
    cur.execute("ALTER TABLE document_facts ADD COLUMN context JSON")


def m006_chart_lab_loinc(cur: duckdb.DuckDBPyConnection) -> None:
    # A result's LOINC code (HL7 OBX-3, a workbook column) names its analyte better than
    # any printed name; the chart keeps it so conflicts are found by code where known.
    cur.execute("ALTER TABLE chart_lab_results ADD COLUMN loinc VARCHAR")


def m007_eval_run_keys(cur: duckdb.DuckDBPyConnection) -> None:
    # A run is stored once however often it is recorded or imported (the CLI records it,
    # the Evals page imports run files written by a subprocess): run_id is the key.
    cur.execute("CREATE UNIQUE INDEX idx_eval_runs_run_id ON eval_runs (run_id)")
    cur.execute("CREATE INDEX idx_eval_case_results_run ON eval_case_results (run_id)")


def m008_fact_corrections(cur: duckdb.DuckDBPyConnection) -> None:
    # A reviewer may correct a misread value: the fact keeps its citation (the quote as
    # printed) and says who corrected it, when, and what it said before.
    cur.execute("ALTER TABLE document_facts ADD COLUMN corrected_by VARCHAR")
    cur.execute("ALTER TABLE document_facts ADD COLUMN corrected_at TIMESTAMP")
    cur.execute("ALTER TABLE document_facts ADD COLUMN correction JSON")
    cur.execute("CREATE INDEX idx_review_decisions_item ON review_decisions (item_type, item_id)")


def m009_accounts_and_access_audit(cur: duckdb.DuckDBPyConnection) -> None:
    # Local accounts (argon2id hashes) and identity-provider users share one table; an
    # account is disabled, never deleted, so the audit's user ids always resolve.
    cur.execute("CREATE SEQUENCE IF NOT EXISTS seq_users START 1")
    cur.execute("CREATE SEQUENCE IF NOT EXISTS seq_access_events START 1")
    cur.execute(f"""CREATE TABLE users ({_id('users')},
        username VARCHAR NOT NULL UNIQUE, role VARCHAR NOT NULL, password_hash VARCHAR,
        auth_source VARCHAR NOT NULL DEFAULT 'local', active BOOLEAN NOT NULL DEFAULT TRUE,
        must_change_password BOOLEAN NOT NULL DEFAULT FALSE, failed_attempts INTEGER NOT NULL DEFAULT 0,
        locked_until TIMESTAMP, last_sign_in_at TIMESTAMP, password_changed_at TIMESTAMP,
        created_at TIMESTAMP NOT NULL DEFAULT current_timestamp, created_by VARCHAR,
        disabled_at TIMESTAMP, disabled_by VARCHAR)""")
    # Append-only: who did or saw what, when. Sign-ins (and failures), sign-outs, and
    # every view of a chart, a document's source or an answer.
    cur.execute(f"""CREATE TABLE access_events ({_id('access_events')},
        occurred_at TIMESTAMP NOT NULL DEFAULT current_timestamp, user_id BIGINT, actor VARCHAR NOT NULL,
        event VARCHAR NOT NULL, patient_id BIGINT, object_type VARCHAR, object_id VARCHAR,
        channel VARCHAR NOT NULL DEFAULT 'ui', detail VARCHAR)""")
    cur.execute("CREATE INDEX idx_access_events_actor ON access_events (actor)")
    cur.execute("CREATE INDEX idx_access_events_patient ON access_events (patient_id)")
    cur.execute("ALTER TABLE review_decisions ADD COLUMN user_id BIGINT")


def m010_job_owner_and_reclaims(cur: duckdb.DuckDBPyConnection) -> None:
    # Which process holds a running job ("host:pid:start"), so a restarted worker can see at
    # once that the holder is gone instead of waiting out the heartbeat window; and each
    # reclaim (how often, when, why) so Operations can show jobs whose worker stopped.
    cur.execute("ALTER TABLE processing_jobs ADD COLUMN worker_process VARCHAR")
    cur.execute("ALTER TABLE processing_jobs ADD COLUMN reclaims INTEGER DEFAULT 0")
    cur.execute("ALTER TABLE processing_jobs ADD COLUMN reclaimed_at TIMESTAMP")
    cur.execute("ALTER TABLE processing_jobs ADD COLUMN reclaim_reason VARCHAR")


def m011_inbound_messages(cur: duckdb.DuckDBPyConnection) -> None:
    # HL7 v2 messages received over MLLP (issue 13), one row per distinct message: the
    # sender (MSH-3^MSH-4), its control id (MSH-10) and the bytes' sha256 recognise a
    # resend after a lost ACK. A message whose patient is not on a chart is kept here,
    # held for review, instead of being refused or dropped.
    cur.execute("CREATE SEQUENCE IF NOT EXISTS seq_inbound_messages START 1")
    cur.execute(f"""CREATE TABLE inbound_messages ({_id('inbound_messages')},
        channel VARCHAR NOT NULL, sender VARCHAR NOT NULL, control_id VARCHAR NOT NULL,
        message_type VARCHAR, sha256 VARCHAR NOT NULL, size BIGINT NOT NULL, stored_path VARCHAR NOT NULL,
        status VARCHAR NOT NULL, hold_reason VARCHAR, note VARCHAR, patient_mrn VARCHAR,
        patient_id BIGINT, document_id BIGINT, job_id BIGINT,
        received_at TIMESTAMP NOT NULL DEFAULT current_timestamp, resent INTEGER NOT NULL DEFAULT 0,
        last_received_at TIMESTAMP, decided_by VARCHAR, decided_at TIMESTAMP)""")
    cur.execute("CREATE UNIQUE INDEX idx_inbound_messages_key ON inbound_messages (sender, control_id, sha256)")
    cur.execute("CREATE INDEX idx_inbound_messages_status ON inbound_messages (status)")


def m012_document_parts(cur: duckdb.DuckDBPyConnection) -> None:
    # A large HL7 v2 batch is kept as uploaded (the parent, no job of its own) and read as
    # parts of consecutive messages, each a document of its own that names its parent
    # (issue 13): deleting the parent deletes its parts.
    cur.execute("ALTER TABLE documents ADD COLUMN parent_document_id BIGINT")


def m013_chart_vital_signs(cur: duckdb.DuckDBPyConnection) -> None:
    # Vital signs are a chart kind of their own (issue 23): one row per sign per time,
    # a blood pressure with its two numbers kept apart. measured_at is text because a
    # sheet prints a date or a date and time ("2025-03-04 14:30").
    cur.execute("CREATE SEQUENCE IF NOT EXISTS seq_chart_vital_signs START 1")
    cur.execute(f"""CREATE TABLE chart_vital_signs ({_id('chart_vital_signs')},
        patient_id BIGINT NOT NULL, kind VARCHAR NOT NULL, value VARCHAR NOT NULL, unit VARCHAR,
        systolic VARCHAR, diastolic VARCHAR, measured_at VARCHAR,
        {_chart_cols()})""")
    cur.execute("CREATE INDEX idx_chart_vital_signs_patient ON chart_vital_signs (patient_id)")


def m014_unread_identifiers(cur: duckdb.DuckDBPyConnection) -> None:
    # Identity values a document prints that no reader attributed (issue 23): stored with
    # the check that could not be verified because of them, so the review shows them as
    # printed but not read (with their box) and approval asks for a reason. The view of
    # the checks in force is rebuilt so it carries the new column.
    cur.execute("ALTER TABLE identity_checks ADD COLUMN unread_identifiers JSON")
    cur.execute("DROP VIEW current_identity_checks")
    cur.execute("""CREATE VIEW current_identity_checks AS
        SELECT * EXCLUDE (rn) FROM (
            SELECT *, row_number() OVER (PARTITION BY document_id, scope ORDER BY id DESC) AS rn
            FROM identity_checks) WHERE rn = 1""")


def m015_chart_lab_critical_basis(cur: duckdb.DuckDBPyConnection) -> None:
    # Why a charted lab result is critical (issue 24): its printed flag, or its value past
    # a critical limit of domain/policy/facts/critical_limits.json (named with its source).
    cur.execute("ALTER TABLE chart_lab_results ADD COLUMN critical_basis VARCHAR")


def m016_chart_alerts(cur: duckdb.DuckDBPyConnection) -> None:
    # Chart checks (issue 24): one row per alert a rule raised, keyed by the rule and the
    # facts it rests on, so running the checks again finds the row instead of adding
    # one. An alert whose facts no longer hold it up is withdrawn, never deleted (the
    # audit keeps what was shown); an acknowledgement names who, when and why.
    # (15 is another part of issue 24's migration.)
    cur.execute("CREATE SEQUENCE IF NOT EXISTS seq_chart_alerts START 1")
    cur.execute(f"""CREATE TABLE chart_alerts ({_id('chart_alerts')},
        patient_id BIGINT NOT NULL, alert_key VARCHAR NOT NULL, rule_id VARCHAR NOT NULL,
        rule_version INTEGER NOT NULL, rules_version VARCHAR, kind VARCHAR NOT NULL, priority VARCHAR NOT NULL,
        message VARCHAR NOT NULL, fact_ids JSON NOT NULL, "references" JSON,
        status VARCHAR NOT NULL DEFAULT 'open', raised_at TIMESTAMP NOT NULL, withdrawn_at TIMESTAMP,
        withdrawn_reason VARCHAR, acknowledged_by VARCHAR, acknowledged_at TIMESTAMP, acknowledgement_note VARCHAR)""")
    cur.execute("CREATE UNIQUE INDEX idx_chart_alerts_key ON chart_alerts (patient_id, alert_key)")


def m018_fhir_exports(cur: duckdb.DuckDBPyConnection) -> None:
    # What each FHIR bundle id exported (issue 25): one row per (bundle id, resource), with
    # the resource as last written. Re-exporting the same bundle id sends a resource that
    # has left the chart since (retracted, deleted) as entered-in-error instead of
    # dropping it silently; a bundle id belongs to one patient.
    cur.execute("""CREATE TABLE fhir_export_entries (
        bundle_id VARCHAR NOT NULL, patient_id BIGINT NOT NULL, resource_type VARCHAR NOT NULL,
        resource_id VARCHAR NOT NULL, resource JSON NOT NULL, status VARCHAR NOT NULL,
        first_exported_at TIMESTAMP NOT NULL, last_exported_at TIMESTAMP NOT NULL,
        PRIMARY KEY (bundle_id, resource_type, resource_id))""")
    cur.execute("CREATE INDEX idx_fhir_export_entries_patient ON fhir_export_entries (patient_id)")


def m019_fhir_bundle_category(cur: duckdb.DuckDBPyConnection) -> None:
    # FHIR R4 JSON is read as a seventh document type (issue 25): its category, mapped
    # unless an administrator already made one by that name.
    cur.execute("INSERT INTO document_categories (name) SELECT 'FHIR Bundle' WHERE NOT EXISTS "
                "(SELECT 1 FROM document_categories WHERE lower(name) = 'fhir bundle')")
    cur.execute("INSERT INTO document_type_mappings (category_id, doc_type) SELECT id, 'fhir_bundle' "
                "FROM document_categories WHERE name = 'FHIR Bundle' AND NOT EXISTS "
                "(SELECT 1 FROM document_type_mappings m WHERE m.category_id = document_categories.id)")


def m021_record_changes(cur: duckdb.DuckDBPyConnection) -> None:
    # The record version (issue 27, ``storage.record_version``): one row per write to a
    # patient's record, appended in the writer's transaction; the version is the count of
    # a patient's rows. No key or index: appends never conflict, and the count is a scan
    # of two narrow columns. Existing records start at the count of their writes so far
    # (none recorded: 0), which no cached result has seen.
    cur.execute("""CREATE TABLE record_changes (patient_id BIGINT NOT NULL, source VARCHAR NOT NULL,
        changed_at TIMESTAMP NOT NULL DEFAULT current_timestamp)""")


def m022_review_decision_effects(cur: duckdb.DuckDBPyConnection) -> None:
    # What a review decision changed, row by row (issue 26): each fact, promotion and chart
    # row before and after, so an undo restores the chart exactly, and refuses when a
    # later change overtook any of them. Decisions recorded before have none: not undoable.
    cur.execute("ALTER TABLE review_decisions ADD COLUMN effects JSON")


def m023_inbound_control_id_index(cur: duckdb.DuckDBPyConnection) -> None:
    # Every MLLP message looks up its sender's control id before it is written (a resend,
    # or a reused id). DuckDB answers an equality on one indexed column from the index;
    # the three-column key index is not used for it, so the look-up scanned the table:
    # 1.6 ms at 100,000 messages, 0.57 ms with this index.
    cur.execute("CREATE INDEX IF NOT EXISTS idx_inbound_messages_control_id ON inbound_messages (control_id)")


MIGRATIONS: list[tuple[int, str, Callable[[duckdb.DuckDBPyConnection], None]]] = [
    (1, "base schema", m001_base_schema),
    (2, "seeded categories and indexes", m002_categories_and_indexes),
    (3, "fact vector state", m003_fact_vector_state),
    (4, "job warnings and current identity view", m004_job_warnings_and_current_identity),
    (5, "fact context attributes", m005_fact_context),
    (6, "LOINC code on chart lab results", m006_chart_lab_loinc),
    (7, "one row per eval run", m007_eval_run_keys),
    (8, "reviewer corrections on facts", m008_fact_corrections),
    (9, "accounts and the access audit", m009_accounts_and_access_audit),
    (10, "job owner process and reclaims", m010_job_owner_and_reclaims),
    (11, "HL7 v2 messages received over MLLP", m011_inbound_messages),
    (12, "documents read in parts", m012_document_parts),
    (13, "chart vital signs", m013_chart_vital_signs),
    (14, "identity values printed but not read", m014_unread_identifiers),
    (15, "why a charted lab result is critical", m015_chart_lab_critical_basis),
    (16, "chart alerts from the drug-lab, allergy and record checks", m016_chart_alerts),
    (18, "what each FHIR bundle id exported", m018_fhir_exports),
    (19, "FHIR bundle category", m019_fhir_bundle_category),
    (21, "record version: one row per write to a patient's record", m021_record_changes),
    (22, "what each review decision changed, for undo", m022_review_decision_effects),
    (23, "an index on inbound messages' control ids", m023_inbound_control_id_index),
]
LATEST_VERSION = MIGRATIONS[-1][0]


def current_version(cur: duckdb.DuckDBPyConnection) -> int:
    cur.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name VARCHAR, "
        "applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    row = cur.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def applied_versions(cur: duckdb.DuckDBPyConnection) -> set[int]:
    current_version(cur)  # creates the table on a new file
    return {int(v) for (v,) in cur.execute("SELECT version FROM schema_version").fetchall()}


def migrate(cur: duckdb.DuckDBPyConnection, target: int | None = None) -> list[int]:
    """Apply every migration not yet recorded (up to ``target``), in order. By what is
    recorded, not by the highest number: work merged out of number order (a migration
    15 landing after 16 was applied) is still applied."""
    applied: list[int] = []
    have = applied_versions(cur)
    for version, name, step in MIGRATIONS:
        if version in have or (target is not None and version > target):
            continue
        cur.execute("BEGIN TRANSACTION")
        try:
            step(cur)
            cur.execute("INSERT INTO schema_version (version, name) VALUES (?, ?)", [version, name])
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        applied.append(version)
    return applied
