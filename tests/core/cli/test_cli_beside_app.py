"""The CLI beside a running app (issue 13): the app holds the DuckDB file, so the CLI
hands ingest, review, delete-document, ask (and the other commands marked so) to the
app's loopback endpoint, and fails at once, saying what to do, for the rest."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.services.admin.access_audit import shell_user
from core.services.interfaces.app_endpoint import ENDPOINT_FILE, Endpoint, EndpointError, live_endpoint, parse_request, send
from tests.support.browser_support import make_run_env

ROOT = Path(__file__).resolve().parents[3]

# An app-like holder: what `make run` does before Streamlit starts (ui.runtime.start), and
# what it does on SIGTERM (ui.serve.stop_worker).
HOLDER = """
import signal, threading
from ui.runtime import start
from ui.serve import stop_worker
runtime = start()
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
print("ready", flush=True)
while not stop.wait(0.2):
    pass
stop_worker(runtime)
print("stopped", flush=True)
"""


def env_for(data_dir: Path) -> dict[str, str]:
    # make run's environment: the app-like holder reads a handed-over file in its forkserver
    # child, with its worker thread polling at the default pace, as the app does.
    return make_run_env(data_dir)


def cli(data_dir, *args, stdin=""):
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=env_for(data_dir),
                          capture_output=True, text=True, timeout=300, input=stdin)


def as_json(proc):
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, (proc.stdout, proc.stderr)  # exactly one JSON object on stdout
    return json.loads(lines[0])


def ok(proc):
    assert proc.returncode == 0, proc.stderr
    return as_json(proc)


class Holder:
    """The app-like process holding the data dir's database."""

    def __init__(self, data_dir: Path):
        self.data_dir = data_dir
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER], cwd=ROOT, env=env_for(data_dir),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()  # blocks until start() returned (or the process died)
        assert line.strip() == "ready", self.proc.stderr.read()

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=60)
        assert "stopped" in out, err
        return err


def shape(value):
    """The keys and value types of a JSON answer, recursively (lists by their first item)."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


def same_shape(direct, handed, ignore=()):
    """``handed`` answers with the keys and types ``direct`` has (``ignore``: keys whose
    value may be null in one and set in the other, e.g. the engine of a job)."""
    a, b = shape(direct), shape(handed)
    for key in ignore:
        a.pop(key, None), b.pop(key, None)
    assert a.keys() == b.keys()
    return a, b


# Not named data_dir: that name is conftest's fixture, which the unit test at the end of
# this module needs (through wb) to get a throwaway WORKBENCH_DATA_DIR; shadowed, its
# workbench went to ./data, make run's default data dir.
@pytest.fixture(scope="module")
def app_dir(tmp_path_factory, cli_init):
    d = cli_init(tmp_path_factory.mktemp("beside") / "data")
    ok(cli(d, "user", "add", "--username", "dr.cli", "--role", "reviewer", "--json",
           stdin="cli-reviewer-spruce-otter\n"))
    return d


@pytest.fixture(scope="module")
def labs(app_dir, tmp_path_factory):
    """Two lab reports, each for its own new patient: one ingested directly, one handed over."""
    from golden.fixtures import LAB_CASES, render_lab

    files = []
    folder = tmp_path_factory.mktemp("labs")
    for case in LAB_CASES[:2]:
        p = case.patient
        ok(cli(app_dir, "patient", "add", "--mrn", p.mrn, "--first", p.first, "--last", p.last, "--dob", p.dob,
               "--json"))
        pdf = folder / f"{p.mrn}.pdf"
        pdf.write_bytes(render_lab(case))
        files.append((pdf, p.mrn))
    return files


def direct_and_handed(data_dir, labs):
    """Each command run once with the database free, then once while the app holds it."""
    (pdf_a, mrn_a), (pdf_b, mrn_b) = labs
    question = "What is her latest A1c?"
    direct = {"ingest": cli(data_dir, "ingest", str(pdf_a), "--patient", mrn_a, "--doc-type", "lab_pdf", "--json")}
    fact_a = as_json(direct["ingest"])["facts"][0]["fact_id"]
    direct["review"] = cli(data_dir, "review", "reject-fact", "--fact", str(fact_a), "--by", "dr.cli", "--reason",
                           "test", "--json")
    direct["ask"] = cli(data_dir, "ask", "--patient", mrn_a, question, "--json")
    direct["chart"] = cli(data_dir, "chart", "--patient", mrn_a, "--json")

    holder = Holder(data_dir)
    try:
        # A relative path, as typed at the shell: the CLI reads it, the app never opens it.
        handed = {"ingest": subprocess.run(
            [sys.executable, "-m", "core", "ingest", pdf_b.name, "--patient", mrn_b, "--doc-type", "lab_pdf",
             "--json"], cwd=pdf_b.parent, env={**env_for(data_dir), "PYTHONPATH": str(ROOT)},
            capture_output=True, text=True, timeout=300)}
        fact_b = as_json(handed["ingest"])["facts"][0]["fact_id"]
        handed["review"] = cli(data_dir, "review", "reject-fact", "--fact", str(fact_b), "--by", "dr.cli",
                               "--reason", "test", "--json")
        handed["ask"] = cli(data_dir, "ask", "--patient", mrn_b, question, "--json")
        handed["chart"] = cli(data_dir, "chart", "--patient", mrn_b, "--json")
        handed["export"] = cli(data_dir, "export-fhir", "--patient", mrn_b, "--out",
                               str(data_dir.parent / "handed-bundle.json"), "--json")
        handed["bad_review"] = cli(data_dir, "review", "approve-fact", "--fact", "987654", "--by", "dr.cli",
                                   "--json")
        handed["nobody"] = cli(data_dir, "ingest", str(pdf_b), "--patient", "NOBODY-1", "--doc-type", "lab_pdf",
                               "--json")
        handed["delete"] = cli(data_dir, "delete-document", str(as_json(handed["ingest"])["document_id"]),
                               "--json")
        handed["text"] = cli(data_dir, "patient", "list")
        handed["user_add"] = cli(data_dir, "user", "add", "--username", "dr.new", "--role", "viewer",
                                 stdin="a-new-pebble-comet-1\n")
        handed["index"] = cli(data_dir, "index-corpus", "--json")
        endpoint = live_endpoint(_settings(data_dir))
    finally:
        holder_log = holder.stop()
    direct["delete"] = cli(data_dir, "delete-document", str(as_json(direct["ingest"])["document_id"]), "--json")
    direct["bad_review"] = cli(data_dir, "review", "approve-fact", "--fact", "987654", "--by", "dr.cli", "--json")
    direct["nobody"] = cli(data_dir, "ingest", str(pdf_b), "--patient", "NOBODY-1", "--doc-type", "lab_pdf",
                           "--json")
    direct["text"] = cli(data_dir, "patient", "list")
    return direct, handed, endpoint, holder_log


def _settings(data_dir):
    from domain.settings import Settings

    return Settings(data_dir=data_dir)


@pytest.fixture(scope="module")
def runs(app_dir, labs):
    return direct_and_handed(app_dir, labs)


def test_ingest_handed_over_answers_as_a_direct_run(runs):
    direct, handed, _, _ = runs
    a, b = ok(direct["ingest"]), ok(handed["ingest"])
    same_shape(a, b)
    assert a["job"].keys() == b["job"].keys()
    assert b["job"]["status"] == a["job"]["status"] == "succeeded"
    assert b["identity"]["status"] == a["identity"]["status"] == "identity_verified"
    assert b["facts"] and b["facts"][0].keys() == a["facts"][0].keys()
    assert {p["outcome"] for p in b["promotions"]} == {p["outcome"] for p in a["promotions"]} == {"promoted"}
    # Claimed once: the app's own worker loop and the handed-over run never both ran it.
    assert b["job"]["attempts"] == 1
    assert handed["ingest"].stderr == direct["ingest"].stderr == ""


def test_export_fhir_handed_over_writes_its_file_in_the_callers_process(runs):
    _, handed, _, _ = runs
    answer = ok(handed["export"])
    assert "bundle" not in answer and answer["resources"]["Observation"] >= 1
    bundle = json.loads(Path(answer["out"]).read_text())
    assert bundle["type"] == "collection" and bundle["id"] == answer["bundle_id"]


def test_review_ask_chart_delete_handed_over(runs):
    direct, handed, _, _ = runs
    for name in ("review", "ask", "chart", "delete"):
        a, b = ok(direct[name]), ok(handed[name])
        same_shape(a, b, ignore=("caveat",))
    assert ok(handed["review"])["active"] is False
    assert set(ok(handed["ask"])["sections"]) == {"patient_findings", "needs_review", "guideline_evidence",
                                                  "missing"}
    assert ok(handed["delete"])["retracted"]["facts"] > 0
    # Text output (no --json) comes through verbatim too.
    assert handed["text"].returncode == 0 and handed["text"].stdout == direct["text"].stdout


def test_errors_handed_over_are_the_direct_ones(runs):
    direct, handed, _, _ = runs
    for name in ("bad_review", "nobody"):
        assert handed[name].returncode == direct[name].returncode == 2
        assert handed[name].stdout == direct[name].stdout == ""
        assert handed[name].stderr == direct[name].stderr
    assert "<--patient>" in handed["nobody"].stderr and "NOBODY-1" not in handed["nobody"].stderr


def test_commands_not_handed_over_fail_at_once_saying_what_to_do(runs):
    _, handed, _, holder_log = runs
    for name in ("user_add", "index"):
        proc = handed[name]
        assert proc.returncode == 1 and proc.stdout == ""
        assert len(proc.stderr.strip().splitlines()) == 1
        assert "app is running" in proc.stderr and "make run" in proc.stderr and "run this again" in proc.stderr
    # The app's log names no patient and no file.
    assert "NOBODY-1" not in holder_log and ".pdf" not in holder_log


def test_actors_are_recorded_as_for_a_direct_run(runs, app_dir, labs):
    """The handed-over ingest is uploaded by the caller's os:<login>; the chart view and
    the answer it read are recorded for the same login."""
    from core.services.workbench import open_workbench

    _, handed, _, _ = runs
    document_id = ok(handed["ingest"])["document_id"]
    wb = open_workbench(_settings(app_dir))
    try:
        with wb.db.cursor() as cur:
            uploader = cur.execute("SELECT uploaded_by FROM documents WHERE id = ?", [document_id]).fetchone()[0]
            attempts = cur.execute("SELECT attempts, worker_id FROM processing_jobs WHERE document_id = ?",
                                   [document_id]).fetchall()
            viewers = {r[0] for r in cur.execute(
                "SELECT actor FROM access_events WHERE channel = 'cli' AND event IN ('view_chart', 'view_answer')"
            ).fetchall()}
    finally:
        wb.close()
    assert uploader == shell_user()
    # Read once: by the handed-over run, or by the app's own worker when its poll claimed
    # the job first (the inline run then waits for that result; test_an_inline_run_waits...).
    assert len(attempts) == 1 and attempts[0][0] == 1
    assert attempts[0][1] in ("intake-extractor:cli", "intake-extractor:ui")
    assert viewers == {shell_user()}


def test_the_endpoint_file_is_gone_after_shutdown(runs, app_dir):
    _, _, endpoint, _ = runs
    assert endpoint is not None and endpoint.port > 0
    assert not (app_dir / ENDPOINT_FILE).exists()


# ---------------------------------------------------------------------------- the endpoint itself


@pytest.fixture(scope="module")
def holder(app_dir, runs):
    h = Holder(app_dir)
    yield h
    h.stop()


def test_endpoint_file_is_owner_only(holder, app_dir):
    path = app_dir / ENDPOINT_FILE
    assert path.stat().st_mode & 0o777 == 0o600
    raw = json.loads(path.read_text())
    assert raw["pid"] == holder.proc.pid and len(raw["token"]) >= 32


def test_a_wrong_or_missing_token_is_refused(holder, app_dir):
    endpoint = live_endpoint(_settings(app_dir))
    wrong = Endpoint(port=endpoint.port, token="not-" + endpoint.token, process=endpoint.process)
    with pytest.raises(EndpointError) as refused:
        send(wrong, ["patient", "list", "--json"], os_user=shell_user(), upload=None, timeout=30)
    assert refused.value.code == "bad_token"
    status, body = raw_post(endpoint.port, b'{"argv": ["patient", "list"], "os_user": "os:x"}', {})
    assert status == 403 and body["error"] == "bad_token"
    # The right token gets an answer: the refusals above are about the token.
    reply = send(endpoint, ["patient", "list", "--json"], os_user=shell_user(), upload=None, timeout=30)
    assert reply["exit"] == 0 and "patients" in json.loads(reply["stdout"])


def test_oversized_or_malformed_requests_are_refused(holder, app_dir):
    endpoint = live_endpoint(_settings(app_dir))
    auth = {"Authorization": f"Bearer {endpoint.token}"}
    # Judged on Content-Length before any body is read.
    status, body = raw_post(endpoint.port, b"", {**auth, "Content-Length": str(10**12)}, send_body=False)
    assert status == 413 and body["error"] == "too_large"
    status, body = raw_post(endpoint.port, b"not json", auth)
    assert status == 400 and body["error"] == "bad_request"
    reply = send(endpoint, ["init", "--json"], os_user=shell_user(), upload=None, timeout=30)
    assert reply["exit"] == 2 and "not_handed_over" in reply["stderr"]
    reply = send(endpoint, ["ingest", "x.pdf", "--patient", "DEMO-1001", "--json"], os_user=shell_user(),
                 upload=None, timeout=30)
    assert reply["exit"] == 2 and "file_missing" in reply["stderr"]
    reply = send(endpoint, ["chart", "--bogus"], os_user=shell_user(), upload=None, timeout=30)
    assert reply["exit"] == 2 and "bad_arguments" in reply["stderr"]


def test_the_endpoint_listens_on_loopback_only(holder, app_dir):
    endpoint = live_endpoint(_settings(app_dir))
    out = subprocess.run(["ss", "-ltnp"], capture_output=True, text=True).stdout if _has_ss() else ""
    if out:
        lines = [line for line in out.splitlines() if f":{endpoint.port} " in line]
        assert lines and all("127.0.0.1:" in line for line in lines)
    with socket.create_connection(("127.0.0.1", endpoint.port), timeout=5):
        pass


def _has_ss() -> bool:
    return subprocess.run(["sh", "-c", "command -v ss"], capture_output=True).returncode == 0


def raw_post(port: int, body: bytes, headers: dict[str, str], *, send_body: bool = True):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest("POST", "/cli")
        if "Content-Length" not in headers:
            headers = {**headers, "Content-Length": str(len(body))}
        for key, value in headers.items():
            conn.putheader(key, value)
        conn.endheaders(body if send_body else None)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


@pytest.mark.parametrize("body, why", [
    (b'{"argv": [], "os_user": "os:me"}', "argv"),
    (b'{"argv": ["chart", 3], "os_user": "os:me"}', "argv"),
    (b'{"argv": ["chart"], "os_user": "dr.admin"}', "os_user"),
    (b'{"argv": ["chart"], "os_user": "os:me\\nforged"}', "os_user"),
    (b'{"argv": ["chart"], "os_user": "os:me", "upload": "***"}', "base64"),
    (b'[1, 2]', "object"),
])
def test_parse_request_refuses_what_is_not_a_command(body, why):
    with pytest.raises(EndpointError) as refused:
        parse_request(body)
    assert why in refused.value.message


def test_parse_request_reads_a_command_and_its_upload():
    request = parse_request(b'{"argv": ["ingest", "a.pdf"], "os_user": "os:me", "upload": "JVBERg=="}')
    assert request.argv == ["ingest", "a.pdf"] and request.os_user == "os:me" and request.upload == b"%PDF"


# ---------------------------------------------------------------------------- no app, or a stale file


def test_stale_endpoint_file_is_ignored_and_replaced(tmp_path):
    """A file left by a crashed app (its process gone) is not an app: with the database
    held by another process, the CLI gives the plain answer at once; an app starting on
    the data dir writes its own file over it."""
    from domain.settings import Settings
    from storage.heartbeat import process_token

    data_dir = tmp_path / "data"
    ok(cli(data_dir, "category", "list", "--json"))  # creates the data dir and schema
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(gone.stdout)
    stale = {"port": 9, "pid": dead_pid, "process": f"{socket.gethostname()}:{dead_pid}:1", "token": "stale"}
    (data_dir / ENDPOINT_FILE).write_text(json.dumps(stale))
    assert live_endpoint(Settings(data_dir=data_dir)) is None

    worker = subprocess.Popen([sys.executable, "-m", "core", "worker"], cwd=ROOT, env=env_for(data_dir),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for line in worker.stderr:  # once it says so, it holds the database
            if line.startswith("intake-extractor worker running"):
                break
        busy = cli(data_dir, "delete-document", "1", "--json")
        assert busy.returncode == 1 and busy.stdout == ""
        assert "in use by another process" in busy.stderr and "run this again" in busy.stderr
        assert "app is running" not in busy.stderr
    finally:
        worker.terminate()
        worker.wait(30)

    holder = Holder(data_dir)
    try:
        fresh = json.loads((data_dir / ENDPOINT_FILE).read_text())
        assert fresh["token"] != "stale" and fresh["process"] == process_token(holder.proc.pid)
        assert ok(cli(data_dir, "category", "list", "--json"))["categories"]
    finally:
        holder.stop()
    assert not (data_dir / ENDPOINT_FILE).exists()


# ---------------------------------------------------------------------------- one claim per job


def test_an_inline_run_waits_for_a_job_another_worker_claimed(wb, queued):
    """In the app, the handed-over ingest and the app's worker loop race for the new job:
    the claim is exclusive, so the loser waits for the winner's result and the job runs
    once (attempts 1)."""
    from core.services.ingest.worker import Worker
    from storage import jobs_repo

    job_id = queued.job["id"]
    with wb.db.transaction() as cur:
        claimed = jobs_repo.claim_next(cur, "intake-extractor:ui", job_id=job_id)
    assert claimed.status == "running"
    inline = Worker(wb, worker_id="intake-extractor:cli", heartbeat_file=False)
    result: dict = {}
    waiter = threading.Thread(target=lambda: result.update(job=inline.run_now(job_id, poll=0.01)))
    waiter.start()
    with wb.db.cursor() as cur:  # the loop finishes the job it claimed
        assert jobs_repo.finish(cur, job_id, status="succeeded", error_code=None, error_message=None, timings={},
                                counts={}, engine=None, warnings=[], holder="intake-extractor:ui")
    waiter.join(timeout=60)
    assert not waiter.is_alive()
    assert result["job"]["status"] == "succeeded" and result["job"]["attempts"] == 1
    assert result["job"]["worker_id"] == "intake-extractor:ui"
    assert not wb.settings.heartbeat_path.exists()  # the inline run wrote no heartbeat file
