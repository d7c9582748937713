"""The CLI contract of DESIGN §9, run as a user runs it: a subprocess per command."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.browser_support import make_run_env
from tests.support.cli_support import as_json, cli

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def initialised(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli") / "data"
    out = as_json(cli(d, "init", "--json"))
    assert out["ok"] is True and out["demo_patients_added"] == 4
    # Review decisions name an account (issue 12); the operator at the shell adds it.
    as_json(cli(d, "user", "add", "--username", "dr.cli", "--role", "reviewer", "--json",
                stdin="cli-reviewer-spruce-otter\n"))
    return d


def test_init_is_idempotent(initialised):
    again = as_json(cli(initialised, "init", "--json"))
    assert again["ok"] is True and again["demo_patients_added"] == 0


def test_patient_add_shape_and_duplicate(initialised):
    out = as_json(cli(initialised, "patient", "add", "--mrn", "CLI-1", "--first", "Ines", "--last", "Marchetti",
                      "--dob", "1970-02-03", "--sex", "F", "--json"))
    assert {"patient_id", "mrn"} <= set(out) and out["mrn"] == "CLI-1"
    dup = cli(initialised, "patient", "add", "--mrn", "CLI-1", "--first", "X", "--last", "Y", "--dob", "1970-02-03",
              "--json", check=False)
    assert dup.returncode != 0 and dup.stdout == ""
    assert dup.stderr.strip().count("\n") == 0 and "already exists" in dup.stderr


def test_ingest_failure_shape(initialised, tmp_path):
    f = tmp_path / "broken.pdf"
    f.write_bytes(b"%PDF-1.4 broken")
    proc = cli(initialised, "ingest", str(f), "--patient", "DEMO-1002", "--doc-type", "lab_pdf", "--json", check=False)
    out = as_json(proc)
    assert {"document_id", "job", "identity", "facts", "promotions"} <= set(out)
    assert {"status", "error_code", "error_message"} <= set(out["job"])
    assert out["job"]["status"] == "failed" and out["job"]["error_code"]
    assert proc.returncode != 0 and "is stored" in proc.stderr
    assert out["identity"]["status"] == "identity_unchecked"


@pytest.mark.parametrize("args, needle", [
    (["ingest", "/nonexistent/file.pdf", "--patient", "DEMO-1001", "--doc-type", "lab_pdf"], "not found"),
    (["ingest", "Makefile", "--patient", "NOBODY", "--doc-type", "lab_pdf"], "No patient"),
    (["ingest", "Makefile", "--patient", "DEMO-1001", "--doc-type", "lab_pdf"], "does not look like"),
    (["ingest", "Makefile", "--patient", "DEMO-1001", "--category", "Nope"], "Unknown category"),
    (["delete-document", "987654"], "No document"),
    (["review", "approve-fact", "--fact", "987654", "--by", "dr.cli"], "No fact"),
    (["review", "approve-fact", "--fact", "987654", "--by", "dr.who"], "No account is named"),
])
def test_bad_input_is_one_line_on_stderr(initialised, args, needle):
    proc = cli(initialised, *args, "--json", check=False)
    assert proc.returncode != 0 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and needle in proc.stderr


def test_delete_document_shape(initialised, tmp_path):
    f = tmp_path / "other.pdf"
    f.write_bytes(b"%PDF-1.4 stored only")
    doc = as_json(cli(initialised, "ingest", str(f), "--patient", "DEMO-1003", "--category", "Other", "--json"))
    assert doc["job"] is None
    out = as_json(cli(initialised, "delete-document", str(doc["document_id"]), "--json"))
    assert out["document_id"] == doc["document_id"]
    assert set(out["retracted"]) >= {"facts", "promotions", "chart_rows", "vectors"}


def test_health_answers_while_another_process_holds_the_database(initialised):
    holder = subprocess.Popen([sys.executable, "-m", "core", "worker"], cwd=ROOT, env=make_run_env(initialised),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        beat = Path(initialised) / "worker-heartbeat.json"
        deadline = time.time() + 60
        def beat_pid():
            try:
                return json.loads(beat.read_text()).get("pid")
            except (OSError, ValueError):
                return None

        while time.time() < deadline and beat_pid() != holder.pid:
            time.sleep(0.1)
        assert beat_pid() == holder.pid, "worker never wrote its heartbeat"
        out = as_json(cli(initialised, "health", "--json"))
        assert {"status", "checks", "components"} <= set(out)
        assert out["components"]["database"]["status"] == "ok"
        assert "held" in out["components"]["database"]["detail"]
        assert out["checks"]["worker_fresh"] is True and out["status"] == "ok"
        # A write command fails fast and clearly instead of corrupting anything.
        busy = cli(initialised, "patient", "add", "--mrn", "Z", "--first", "A", "--last", "B", "--dob", "1999-01-01",
                   "--json", check=False)
        assert busy.returncode != 0 and "in use by another process" in busy.stderr
    finally:
        holder.terminate()
        holder.wait(20)
    out = as_json(cli(initialised, "health", "--json"))
    assert out["components"]["worker"]["status"] == "stale"  # the worker said it stopped


FACT_KEYS = {"fact_id", "fact_type", "certainty", "structured_value", "fact_text", "citation", "confidence",
             "promotion_status", "active"}


def test_ingest_ask_search_review_delete_shapes(initialised, tmp_path):
    from golden.fixtures import LAB_CASES, render_lab

    case = LAB_CASES[0]
    p = case.patient
    as_json(cli(initialised, "patient", "add", "--mrn", p.mrn, "--first", p.first, "--last", p.last, "--dob", p.dob,
                "--json"))
    pdf = tmp_path / "lab.pdf"
    pdf.write_bytes(render_lab(case))
    out = as_json(cli(initialised, "ingest", str(pdf), "--patient", p.mrn, "--doc-type", "lab_pdf", "--json"))
    assert out["job"]["status"] == "succeeded" and out["identity"]["status"] == "identity_verified"
    assert out["facts"] and all(FACT_KEYS <= set(f) for f in out["facts"])
    lab = out["facts"][0]["structured_value"]
    assert {"test_name", "value", "unit", "reference_range", "collection_date", "abnormal_flag"} <= set(lab)
    assert {p_["outcome"] for p_ in out["promotions"]} == {"promoted"}

    answer = as_json(cli(initialised, "ask", "--patient", p.mrn, "How often should her A1c be checked?", "--json"))
    assert {"request_id", "refused", "refusal_reason", "sections", "text"} <= set(answer)
    assert set(answer["sections"]) == {"patient_findings", "needs_review", "guideline_evidence", "missing"}
    item = answer["sections"]["guideline_evidence"][0]
    assert {"text", "citations"} <= set(item) and item["citations"][0]["source_type"] == "guideline"
    follow = as_json(cli(initialised, "ask", "--patient", p.mrn, "and her LDL?", "--previous",
                         "What is her latest A1c?", "--json"))
    assert all("LDL" in i["text"] for i in follow["sections"]["patient_findings"])
    refused = as_json(cli(initialised, "ask", "--patient", p.mrn, "What dose of metformin should she take?", "--json"))
    assert refused["refused"] is True and refused["refusal_reason"]

    found = as_json(cli(initialised, "search-guidelines", "statin for primary prevention", "--k", "3", "--json"))
    assert found["not_found"] is False and 1 <= len(found["results"]) <= 3
    assert {"chunk_id", "corpus_version", "source_title", "section", "score", "text", "citation"} <= set(
        found["results"][0])
    assert as_json(cli(initialised, "search-guidelines", "best pizza in town", "--json"))["not_found"] is True

    fact_id = out["facts"][0]["fact_id"]
    reviewed = as_json(cli(initialised, "review", "reject-fact", "--fact", str(fact_id), "--by", "dr.cli", "--reason", "test",
                           "--json"))
    assert reviewed["fact_id"] == fact_id and reviewed["active"] is False
    deleted = as_json(cli(initialised, "delete-document", str(out["document_id"]), "--json"))
    assert deleted["retracted"]["facts"] == len(case.results)
    # the rejected fact already took its chart row back out
    assert deleted["retracted"]["chart_rows"] == len(case.results) - 1


def test_chart_and_review_through_the_cli(initialised, tmp_path):
    """The defects met through the CLI: orphan chart rows after deleting a duplicate pair,
    and an identity decision that took a document id for a check id."""
    from golden.fixtures import LAB_CASES, Patient, render_lab

    case = LAB_CASES[1]
    p = Patient("Perpetua", "Vandersloot", "1961-06-17", "CLI-CHART-1", sex="F")
    import dataclasses

    case = dataclasses.replace(case, patient=p)
    as_json(cli(initialised, "patient", "add", "--mrn", p.mrn, "--first", p.first, "--last", p.last, "--dob", p.dob,
                "--json"))
    pdf = tmp_path / "lab.pdf"
    pdf.write_bytes(render_lab(case))
    first = as_json(cli(initialised, "ingest", str(pdf), "--patient", p.mrn, "--doc-type", "lab_pdf", "--json"))
    second = as_json(cli(initialised, "ingest", str(pdf), "--patient", p.mrn, "--doc-type", "lab_pdf", "--json"))
    assert {x["outcome"] for x in second["promotions"]} == {"duplicate_skipped"}

    charted = as_json(cli(initialised, "chart", "--patient", p.mrn, "--json"))
    assert set(charted) == {"labs", "allergies", "medications", "problems", "vital_signs"}
    assert len(charted["labs"]) == len(case.results)
    assert all(r["document_ids"] == [first["document_id"], second["document_id"]] and "critical" in r
               for r in charted["labs"])

    for doc in (first, second):
        as_json(cli(initialised, "delete-document", str(doc["document_id"]), "--json"))
    assert as_json(cli(initialised, "chart", "--patient", p.mrn, "--json"))["labs"] == []

    # One kind of id per flag; the old positional id is gone.
    old_style = cli(initialised, "review", "approve-identity", str(first["document_id"]), "--by", "dr.cli", "--json",
                    check=False)
    assert old_style.returncode != 0 and old_style.stdout == ""
    mixed = cli(initialised, "review", "approve-fact", "--document", str(first["document_id"]), "--by", "dr.cli",
                "--json", check=False)
    assert mixed.returncode == 2 and "--fact" in mixed.stderr


def test_approving_a_document_with_identifiers_not_read_needs_a_reason_at_the_cli(initialised, tmp_path):
    """`review approve-identity` refuses, in one line on stderr, a document that prints an
    identity value no reader read, until a reason is given; `ingest --json` names it."""
    import dataclasses

    from golden.fixtures import LAB_CASES, Patient
    from tests.support.pipeline import abbreviated_identity_lab

    p = Patient("Ottoline", "Marchbank-Reyes", "1957-02-11", "CLI-UNREAD-1", sex="F")
    as_json(cli(initialised, "patient", "add", "--mrn", p.mrn, "--first", p.first, "--last", p.last, "--dob", p.dob,
                "--json"))
    pdf = tmp_path / "abbreviated.pdf"
    pdf.write_bytes(abbreviated_identity_lab(dataclasses.replace(LAB_CASES[0], patient=p)))
    out = as_json(cli(initialised, "ingest", str(pdf), "--patient", p.mrn, "--doc-type", "lab_pdf", "--json"))
    identity = out["identity"]
    assert identity["status"] == "identity_ambiguous_needs_review"
    assert [(u["kind"], u["label"]) for u in identity["unread_identifiers"]] == [("dob", "Geb.-Dat.")]
    check = str(identity["identity_check_id"])
    refused = cli(initialised, "review", "approve-identity", "--check", check, "--by", "dr.cli", "--json", check=False)
    assert refused.returncode != 0 and refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1 and "reason" in refused.stderr
    done = as_json(cli(initialised, "review", "approve-identity", "--check", check, "--by", "dr.cli", "--reason",
                       "birth date on the page checked against the chart", "--json"))
    assert done["status"] == "identity_review_approved"
