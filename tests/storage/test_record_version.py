"""The record version (``storage.record_version``): every writer of a patient's record
bumps it in its own transaction, and only that patient's."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

from storage import record_version

REPOS = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "storage").glob("*_repo.py"))

# Writers that change no patient's record, and why. A new writer not listed here must
# bump the version, or a cached answer or review queue would go stale after it.
NOT_THE_RECORD = {
    ("access_repo", "add"): "the access audit logs reads; bumping on it would end every cache at each view",
    ("audit_repo", "add_handoff"): "an answer's trace, written by asking, not a change of the record",
    ("documents_repo", "add_category"): "document categories are the clinic's settings, no patient's",
    ("documents_repo", "set_mapping"): "document categories are the clinic's settings, no patient's",
    ("eval_repo", "insert_run"): "eval gate runs",
    ("fhir_exports_repo", "record_export"): "what an export sent: a read of the record, logged",
    ("guideline_repo", "upsert_chunks"): "the guideline corpus, no patient's",
    ("guideline_repo", "prune_version"): "the guideline corpus, no patient's",
    ("guideline_repo", "set_active_version"): "the guideline corpus, no patient's",
    ("inbound_repo", "insert_batch"): "a received message is held outside any chart until attached (mark_attached "
                                      "bumps); one attached at once has a document, which bumps",
    ("inbound_repo", "note_resent"): "a held message's resend count",
    ("inbound_repo", "mark_dismissed"): "a held message set aside, never in a chart",
    ("users_repo", "add"): "accounts",
    ("users_repo", "update"): "accounts",
    # The job queue's state: a job's results reach the record through the fact,
    # identity and promotion writers, which bump; heartbeats every few seconds must not.
    **{("jobs_repo", name): "the job queue's state, not the record" for name in (
        "enqueue", "enqueue_batch", "claim_next", "heartbeat", "finished", "reclaim_stale", "release", "requeue",
        "mark_retracted",
        "upsert_worker")},
}

_WRITES = re.compile(r"\b(INSERT|UPDATE|DELETE)\b|insert_rows\(|insert_many\(")


def _writers():
    for name in REPOS:
        module = importlib.import_module(f"storage.{name}")
        for fn_name, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ != module.__name__ or fn_name.startswith("_"):
                continue
            source = inspect.getsource(fn)
            body = ast.get_docstring(ast.parse(source).body[0]) or ""
            if _WRITES.search(source.replace(body, "")):
                yield name, fn_name, source


def test_every_repository_writer_bumps_the_record_version_or_says_why_not():
    found = list(_writers())
    assert len(found) >= 30  # the scan sees the writers (a broken scan would pass everything)
    forgot = [f"{m}.{f}" for m, f, source in found
              if "record_version.bump" not in source and (m, f) not in NOT_THE_RECORD]
    assert not forgot, f"these write the database without bumping the record version: {forgot}"
    stale = [f"{m}.{f}" for m, f in NOT_THE_RECORD if (m, f) not in {(m, f) for m, f, _ in found}]
    assert not stale, f"exempted writers that no longer exist or no longer write: {stale}"


def test_bump_counts_each_committed_write_of_each_patient_once(wb):
    with wb.db.cursor() as cur:
        before = record_version.current(cur, 901), record_version.current(cur, 902)
        record_version.bump(cur, [901, 901, None], "test")
    with wb.db.transaction() as cur:
        record_version.bump(cur, [901, 902], "test")
    with pytest.raises(RuntimeError):
        with wb.db.transaction() as cur:
            record_version.bump(cur, [902], "test")
            raise RuntimeError("rolled back")
    with wb.db.cursor() as cur:
        assert (record_version.current(cur, 901), record_version.current(cur, 902)) == (before[0] + 2, before[1] + 1)


def test_a_transaction_writes_one_change_row_per_patient_at_commit(wb):
    from storage import documents_repo

    with wb.db.cursor() as cur:
        before = record_version.current(cur, 903), record_version.current(cur, 904)
    with wb.db.transaction() as cur:
        doc = documents_repo.insert(cur, patient_id=903, category_id=None, filename="a.pdf", mime=None, sha256="x",
                                    size=1, stored_path="p", uploaded_by=None)
        record_version.bump_rows(cur, "documents", [doc["id"]], "test")
        record_version.bump(cur, [903, 904], "test")
        with wb.db.cursor() as other:  # not yet committed: not yet seen
            assert record_version.current(other, 903) == before[0]
    with wb.db.cursor() as cur:
        assert (record_version.current(cur, 903), record_version.current(cur, 904)) == (before[0] + 1, before[1] + 1)
        record_version.bump_rows(cur, "documents", [doc["id"]], "test")  # outside a transaction: at once
        assert record_version.current(cur, 903) == before[0] + 2


def test_bump_rows_bumps_the_patients_the_rows_belong_to(wb):
    with wb.db.cursor() as cur:
        with pytest.raises(ValueError):
            record_version.bump_rows(cur, "users", [1], "test")
        record_version.bump_rows(cur, "document_facts", [], "test")  # nothing named: nothing bumped
        assert cur.execute("SELECT count(*) FROM record_changes WHERE source = 'test'").fetchone()[0] == 0
