"""Every service call that changes data checks the actor's role first (issue 12).

For each changing operation: the roles that may do it succeed and the audit names the
account; a viewer is refused with Forbidden and nothing is written; an unknown, disabled
or missing actor is refused as bad input; the shell operator (``os:<login>``) and the
system may do the housekeeping they are allowed, never a review decision.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from domain.clock import utcnow
from domain.errors import BadInput, Forbidden
from core.services.review.corrections import correct_fact, set_fact_box
from core.services.review.identity_review import undo_identity_decision
from core.services.ingest.ingestion import attach_and_extract
from core.services.ingest.operations import retry_job
from core.services.admin.patients import add_patient
from core.services.review.retraction import delete_document
from core.services.review.decisions import approve_facts, decide_fact, decide_identity, keep_as_document_fact, review
from core.services.ingest.worker import Worker
from golden.fixtures import LAB_CASES, render_lab
from storage import users_repo
from tests.support.pipeline import chart_patient, ingest

CASE = LAB_CASES[0]
SHELL = "os:tester"


@pytest.fixture
def setup(wb) -> dict[str, Any]:
    """One typed lab on the chart (identity verified, findings promoted), one failed job,
    and a disabled reviewer account."""
    patient = chart_patient(wb, CASE.patient)
    report = ingest(wb, patient, render_lab(CASE), "lab_pdf", "lab.pdf")
    broken = attach_and_extract(wb, patient_id=patient["id"], source="broken.pdf", data=b"%PDF-1.4 broken",
                                filename="broken.pdf", doc_type="lab_pdf", by="dr.reviewer")
    failed = Worker(wb).run_specific(broken.job["id"])
    assert failed["status"] == "failed"
    with wb.db.transaction() as cur:
        gone = users_repo.add(cur, username="dr.gone", role="reviewer", password_hash=None, now=utcnow())
        users_repo.update(cur, gone["id"], active=False)
    labs = [f for f in report["facts"] if f["fact_type"] == "lab_result"]
    return {"wb": wb, "patient": patient, "document_id": report["document_id"],
            "check_id": report["identity"]["identity_check_id"], "fact_id": labs[0]["fact_id"],
            "fact_ids": [f["fact_id"] for f in labs[:2]], "failed_job_id": failed["id"]}


def _decided_check(s: dict[str, Any]) -> int:
    decide_identity(s["wb"], s["check_id"], approve=False, by="dr.alice", reason="not this patient's")
    return s["check_id"]


# name -> (run the operation as ``by``, who may do it besides reviewers and admins)
Operation = Callable[[dict[str, Any], str], Any]
OPERATIONS: dict[str, tuple[Operation, tuple[str, ...]]] = {
    "decide_identity": (lambda s, by: decide_identity(s["wb"], s["check_id"], approve=False, by=by, reason="no"), ()),
    "review (CLI entry)": (lambda s, by: review(s["wb"], "reject-fact", fact_id=s["fact_id"], by=by), ()),
    "decide_fact": (lambda s, by: decide_fact(s["wb"], s["fact_id"], approve=False, by=by), ()),
    "keep_as_document_fact": (lambda s, by: keep_as_document_fact(s["wb"], s["fact_id"], by=by), ()),
    "approve_facts": (lambda s, by: approve_facts(s["wb"], s["fact_ids"], by=by), ()),
    "correct_fact": (lambda s, by: correct_fact(s["wb"], s["fact_id"], by=by, value="99.9", reason="misread"), ()),
    "set_fact_box": (lambda s, by: set_fact_box(s["wb"], s["fact_id"], by=by, confirm_free_box=True,
                                                box={"x": 0.1, "y": 0.1, "width": 0.3, "height": 0.05}), ()),
    "undo_identity_decision": (lambda s, by: undo_identity_decision(s["wb"], s["decided_check"], by=by,
                                                                    reason="decided on the wrong document"), ()),
    "delete_document": (lambda s, by: delete_document(s["wb"], s["document_id"], by=by), (SHELL,)),
    "attach_and_extract": (lambda s, by: attach_and_extract(s["wb"], patient_id=s["patient"]["id"], source="n.pdf",
                                                            data=b"%PDF-1.4 note", filename="n.pdf",
                                                            category="Other", by=by), (SHELL, "system:demo")),
    "add_patient": (lambda s, by: add_patient(s["wb"], mrn="ROLE-1", first="Ada", last="Quist", dob="1970-01-01",
                                              by=by), (SHELL,)),
    "retry_job": (lambda s, by: retry_job(s["wb"], s["failed_job_id"], by=by), (SHELL,)),
}
NEEDS_DECIDED_CHECK = {"undo_identity_decision"}


def _state(wb) -> dict[str, Any]:
    """Everything a changing operation could write, to compare before and after a refusal."""
    queries = {
        "patients": "SELECT id, mrn FROM patients ORDER BY id",
        "documents": "SELECT id, deleted, deleted_by FROM documents ORDER BY id",
        "jobs": "SELECT id, status, attempts FROM processing_jobs ORDER BY id",
        "checks": "SELECT id, identity_status, review_decision FROM identity_checks ORDER BY id",
        "facts": "SELECT id, certainty, active, promotion_status, citation::VARCHAR, structured_value::VARCHAR "
                 "FROM document_facts ORDER BY id",
        "promotions": "SELECT id, active, outcome FROM promotions ORDER BY id",
        "decisions": "SELECT count(*) FROM review_decisions",
        "retractions": "SELECT count(*) FROM retractions",
    }
    with wb.db.cursor() as cur:
        return {name: cur.execute(sql).fetchall() for name, sql in queries.items()}


def _prepare(s: dict[str, Any], name: str) -> dict[str, Any]:
    if name in NEEDS_DECIDED_CHECK:
        s["decided_check"] = _decided_check(s)
    return s


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_refused_actors_change_nothing(setup, name):
    run, _ = OPERATIONS[name]
    s = _prepare(setup, name)
    before = _state(s["wb"])
    with pytest.raises(Forbidden) as refused:
        run(s, "dr.viewer")
    assert refused.value.code == "forbidden" and "viewer" in refused.value.message
    for actor, code in (("dr.nobody", "unknown_user"), ("dr.gone", "inactive_user"), ("", "missing_user"),
                        (None, "missing_user")):
        with pytest.raises(BadInput) as bad:
            run(s, actor)
        assert bad.value.code == code, actor
    assert _state(s["wb"]) == before


@pytest.mark.parametrize("name", list(OPERATIONS))
@pytest.mark.parametrize("actor", ["dr.reviewer", "dr.admin"])
def test_reviewers_and_admins_may(setup, name, actor):
    run, _ = OPERATIONS[name]
    s = _prepare(setup, name)
    result = run(s, actor)
    assert result is not None
    if name in ("attach_and_extract",):
        assert result.document["uploaded_by"] == actor
    if name == "delete_document":
        with s["wb"].db.cursor() as cur:
            assert cur.execute("SELECT deleted_by FROM documents WHERE id = ?",
                               [s["document_id"]]).fetchone()[0] == actor


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_shell_and_system_actors(setup, name):
    """The shell operator may do housekeeping (upload, delete, add patients, retry) but no
    review decision; the system (the demo loader) may only upload."""
    run, allowed = OPERATIONS[name]
    s = _prepare(setup, name)
    before = _state(s["wb"])
    for actor in (SHELL, "system:demo"):
        if actor not in allowed:
            with pytest.raises(Forbidden):
                run(s, actor)
    assert _state(s["wb"]) == before
    for actor in allowed:
        assert run(s, actor) is not None
        break  # done once: a second actor would find nothing left to do


def test_decisions_name_the_account_and_its_id(setup):
    s = setup
    decide_fact(s["wb"], s["fact_id"], approve=False, by=" dr.alice ", reason="wrong")
    with s["wb"].db.cursor() as cur:
        actor, user_id = cur.execute("SELECT actor, user_id FROM review_decisions WHERE item_type = 'fact' "
                                     "AND item_id = ?", [s["fact_id"]]).fetchone()
        expected = users_repo.by_username(cur, "dr.alice")["id"]
    assert actor == "dr.alice" and user_id == expected


def test_a_role_change_takes_effect_at_once(setup):
    s = setup
    with s["wb"].db.transaction() as cur:
        users_repo.update(cur, users_repo.by_username(cur, "dr.bob")["id"], role="viewer")
    with pytest.raises(Forbidden):
        decide_fact(s["wb"], s["fact_id"], approve=False, by="dr.bob")
