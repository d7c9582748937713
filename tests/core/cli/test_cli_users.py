"""The CLI acts as a named account (issue 12): `user add|list|disable|enable|reset-password`,
`--by` checked on changing commands, the shell operator (``os:<login>``) for setup and
housekeeping and in the access audit of read-only commands, and the one-time admin
password `init` (and so `make run`) points to."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import duckdb
import pytest

from core.services.admin.access_audit import shell_user
from tests.support.cli_support import as_json, cli

PASSWORD = "cli-users-amber-kite-1\n"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli-users") / "data"
    proc = cli(d, "init")  # text, as `make run` shows it
    path = d / "initial-admin-password.txt"
    assert f"one-time password in {path}" in proc.stdout and "user 'admin'" in proc.stdout
    for username, role in (("dr.rev", "reviewer"), ("dr.view", "viewer"), ("dr.boss", "admin")):
        as_json(cli(d, "user", "add", "--username", username, "--role", role, "--json", stdin=PASSWORD))
    return d


def query(data_dir: Path, sql: str, params=()):
    """Read the database between commands (no CLI process holds it then)."""
    con = duckdb.connect(str(data_dir / "workbench.duckdb"), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def test_init_points_to_the_one_time_password_until_it_is_changed(data):
    path = data / "initial-admin-password.txt"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = as_json(cli(data, "init", "--json"))
    assert again["initial_admin_password_file"] == str(path)


def test_user_add_list_disable_enable(data):
    added = as_json(cli(data, "user", "add", "--username", "dr.temp", "--role", "viewer", "--json", stdin=PASSWORD))
    assert added["username"] == "dr.temp" and added["role"] == "viewer" and added["created_by"] == shell_user()
    # Issue 21: the operator who typed it knows the password; the person chooses their own.
    assert added["must_change_password"] is True
    assert "password" not in json.dumps(added).replace("must_change_password", "")
    users = {u["username"]: u for u in as_json(cli(data, "user", "list", "--json"))["users"]}
    assert {"admin", "dr.rev", "dr.view", "dr.boss", "dr.temp"} <= set(users)
    assert users["admin"]["must_change_password"] is True
    text = cli(data, "user", "list").stdout
    assert "dr.temp" in text and "viewer" in text and "{" not in text
    assert as_json(cli(data, "user", "disable", "dr.temp", "--by", "dr.boss", "--json"))["active"] is False
    assert as_json(cli(data, "user", "enable", "dr.temp", "--json"))["active"] is True
    reset = as_json(cli(data, "user", "reset-password", "dr.temp", "--json", stdin="another-granite-owl-22\n"))
    assert reset["must_change_password"] is True


@pytest.mark.parametrize("args, stdin, code", [
    (["--username", "dr.weak", "--role", "viewer"], "short\n", "weak_password"),
    (["--username", "dr.weak", "--role", "viewer"], "", "weak_password"),  # nothing on stdin
    (["--username", "dr.weak", "--role", "viewer"], "123456789012\n", "weak_password"),  # long, but guessable
    (["--username", "dr.weak", "--role", "viewer", "--by", "dr.rev"], PASSWORD, "forbidden"),
    (["--username", "dr.weak", "--role", "viewer", "--by", "dr.nobody"], PASSWORD, "unknown_user"),
    (["--username", "dr.rev", "--role", "viewer"], PASSWORD, "duplicate_user"),
])
def test_user_add_refusals(data, args, stdin, code):
    proc = cli(data, "user", "add", *args, "--json", stdin=stdin, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().count("\n") == 0 and f"error: {code}:" in proc.stderr
    assert PASSWORD.strip() not in proc.stderr and "123456789012" not in proc.stderr


def test_every_account_user_add_makes_must_change_its_password(data):
    rows = dict(query(data, "SELECT username, must_change_password FROM users WHERE username IN "
                            "('dr.rev', 'dr.view', 'dr.boss')"))
    assert rows == {"dr.rev": True, "dr.view": True, "dr.boss": True}


def test_a_guessable_password_is_refused_in_plain_words(data):
    for args in (["add", "--username", "dr.guess", "--role", "viewer"], ["reset-password", "dr.view"]):
        proc = cli(data, "user", *args, "--json", stdin="123456789012\n", check=False)
        assert proc.returncode == 2 and proc.stdout == ""
        assert "error: weak_password: This password is too easy to guess." in proc.stderr
        assert "commonly used password" in proc.stderr and proc.stderr.strip().count("\n") == 0
    assert query(data, "SELECT count(*) FROM users WHERE username = 'dr.guess'")[0][0] == 0


def test_a_password_is_never_an_argument(data):
    proc = cli(data, "user", "add", "--username", "dr.argv", "--role", "viewer", "--password", "in-the-argv-1234",
               check=False, stdin=PASSWORD)
    assert proc.returncode == 2 and "unrecognized arguments" in proc.stderr
    assert query(data, "SELECT count(*) FROM users WHERE username = 'dr.argv'")[0][0] == 0


def test_user_list_needs_an_admin(data):
    proc = cli(data, "user", "list", "--by", "dr.view", "--json", check=False)
    assert proc.returncode == 2 and "forbidden" in proc.stderr


@pytest.mark.parametrize("by, code", [("dr.nobody", "unknown_user"), ("dr.view", "forbidden"),
                                      (shell_user(), "forbidden"), ("", "missing_user")])
def test_review_needs_an_account_that_may_decide(data, by, code):
    before = query(data, "SELECT count(*) FROM review_decisions")[0][0]
    proc = cli(data, "review", "approve-fact", "--fact", "1", "--by", by, "--json", check=False)
    assert proc.returncode == 2 and proc.stdout == "" and f"error: {code}:" in proc.stderr
    assert query(data, "SELECT count(*) FROM review_decisions")[0][0] == before


def test_ingest_by_a_viewer_is_refused_and_without_by_is_the_shell_operator(data, tmp_path):
    f = tmp_path / "note.pdf"
    f.write_bytes(b"%PDF-1.4 stored only")
    before = query(data, "SELECT count(*) FROM documents")[0][0]
    refused = cli(data, "ingest", str(f), "--patient", "DEMO-1003", "--category", "Other", "--by", "dr.view",
                  "--json", check=False)
    assert refused.returncode == 2 and "error: forbidden:" in refused.stderr and "note.pdf" not in refused.stderr
    assert query(data, "SELECT count(*) FROM documents")[0][0] == before

    doc = as_json(cli(data, "ingest", str(f), "--patient", "DEMO-1003", "--category", "Other", "--json"))
    named = as_json(cli(data, "ingest", str(f), "--patient", "DEMO-1003", "--category", "Other", "--by", "dr.rev",
                        "--json"))
    uploaders = dict(query(data, "SELECT id, uploaded_by FROM documents WHERE id IN (?, ?)",
                           [doc["document_id"], named["document_id"]]))
    assert uploaders == {doc["document_id"]: shell_user(), named["document_id"]: "dr.rev"}

    refused = cli(data, "delete-document", str(doc["document_id"]), "--by", "dr.view", "--json", check=False)
    assert refused.returncode == 2 and "forbidden" in refused.stderr
    as_json(cli(data, "delete-document", str(doc["document_id"]), "--by", "dr.rev", "--json"))
    assert query(data, "SELECT deleted_by FROM documents WHERE id = ?", [doc["document_id"]])[0][0] == "dr.rev"


def test_patient_add_by_a_viewer_is_refused(data):
    proc = cli(data, "patient", "add", "--mrn", "CLI-V-1", "--first", "Ada", "--last", "Quist", "--dob",
               "1970-01-01", "--by", "dr.view", "--json", check=False)
    assert proc.returncode == 2 and "forbidden" in proc.stderr and "CLI-V-1" not in proc.stderr
    assert query(data, "SELECT count(*) FROM patients WHERE mrn = 'CLI-V-1'")[0][0] == 0


def test_chart_and_ask_record_the_shell_operator_in_the_access_audit(data):
    patient_id = query(data, "SELECT id FROM patients WHERE mrn = 'DEMO-1002'")[0][0]
    as_json(cli(data, "chart", "--patient", "DEMO-1002", "--json"))
    answer = as_json(cli(data, "ask", "--patient", "DEMO-1002", "What is his latest A1c?", "--json"))
    rows = query(data, "SELECT actor, event, channel, object_id, user_id FROM access_events WHERE patient_id = ? "
                       "ORDER BY id", [patient_id])
    assert rows == [(shell_user(), "view_chart", "cli", None, None),
                    (shell_user(), "view_answer", "cli", answer["request_id"], None)]


def test_category_map_needs_an_admin_and_list_shows_it(data):
    refused = cli(data, "category", "map", "Outside labs", "--doc-type", "lab_pdf", "--by", "dr.rev", "--json",
                  check=False)
    assert refused.returncode == 2 and "forbidden" in refused.stderr
    mapped = as_json(cli(data, "category", "map", "Outside labs", "--doc-type", "lab_pdf", "--by", "dr.boss", "--json"))
    assert mapped == {"category": "Outside labs", "doc_type": "lab_pdf"}
    listed = {c["category"]: c["doc_type"] for c in as_json(cli(data, "category", "list", "--json"))["categories"]}
    assert listed["Outside labs"] == "lab_pdf"
