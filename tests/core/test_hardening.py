"""Issue 12 hardening: the server listens on loopback only, the data dir is the owner's
only, and error lines that reach a log name ids, never a file name or an MRN."""

import json
import os
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.browser_support import make_run_env, server_env
from tests.support.accounts import seed_test_accounts

ROOT = Path(__file__).resolve().parents[2]

# A patient and a file name no code path would produce by accident.
MRN = "ZQMRN-48213"
FIRST, LAST = "Quillon", "Vexmoor"
FILENAME = "Vexmoor_Quillon_ZQMRN-48213_labs.pdf"
PRIVATE = (MRN, FIRST, LAST, FILENAME, "Vexmoor_Quillon")


@pytest.fixture(autouse=True)
def keep_umask():
    # open_workbench and main() set the umask; the rest of the suite keeps its own.
    old = os.umask(0o022)
    os.umask(old)
    yield
    os.umask(old)


def cli(data_dir, *args, check=True, cwd=ROOT):
    env = {**make_run_env(data_dir), "PYTHONPATH": str(ROOT)}  # the CLI as a user runs it
    # umask 022 as a login shell has it: the modes below must come from the workbench.
    proc = subprocess.run([sys.executable, "-m", "core", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300, umask=0o022)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def as_json(proc):
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- listen where it is safe -----------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening_addresses(port: int) -> set[str]:
    """Local addresses with a socket listening on ``port``, from /proc/net/tcp{,6}."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        lines = Path(table).read_text().splitlines()[1:] if Path(table).exists() else []
        for line in lines:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if int(hex_port, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                found.add(address)
    return found


LOOPBACK_V4 = "0100007F"  # 127.0.0.1, little-endian hex as /proc/net/tcp writes it


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc/net/tcp")
@pytest.mark.parametrize("where", ["repo root (config.toml)", "elsewhere (ui.serve's flag)"])
def test_server_listens_on_loopback_only(tmp_path, where):
    port = _free_port()
    # make run's environment (worker thread, CLI endpoint and job process at their defaults).
    # Headless is Streamlit's, not the workbench's: the repo's .streamlit/config.toml sets
    # it, and started elsewhere no config file is found, so it is given here instead.
    env = {**server_env(tmp_path / "data", port), "STREAMLIT_SERVER_HEADLESS": "true", "PYTHONPATH": str(ROOT)}
    cwd = ROOT if where.startswith("repo") else tmp_path  # elsewhere: Streamlit finds no config.toml
    proc = subprocess.Popen([sys.executable, "-m", "ui.serve"], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
                time.sleep(0.3)
        else:
            pytest.fail("Streamlit did not come up")
        assert _listening_addresses(port) == {LOOPBACK_V4}
    finally:
        proc.terminate()
        proc.wait(20)


def test_an_address_the_operator_chose_is_kept(monkeypatch):
    from ui.serve import LOOPBACK, listen_args

    assert listen_args(["--server.address", "10.0.0.5"]) == ["--server.address", "10.0.0.5"]
    assert listen_args(["--server.address=10.0.0.5"]) == ["--server.address=10.0.0.5"]
    monkeypatch.setenv("STREAMLIT_SERVER_ADDRESS", "10.0.0.5")
    assert LOOPBACK not in listen_args([])


# -- files only for the owner ----------------------------------------------------

def _loose(root: Path) -> list[str]:
    """Entries under ``root`` (and root) that are not 0700 dirs / 0600 files."""
    bad = []
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            continue
        want = 0o700 if stat.S_ISDIR(mode) else 0o600
        if stat.S_IMODE(mode) & 0o077 or (stat.S_ISDIR(mode) and stat.S_IMODE(mode) != want):
            bad.append(f"{oct(stat.S_IMODE(mode))} {path.relative_to(root)}")
    return bad


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A data dir after init, a lab ingest, index-corpus, a queued job and a worker pass,
    all run from a umask-022 shell."""
    from golden.fixtures import LAB_CASES, render_lab

    data = tmp_path_factory.mktemp("hardening") / "data"
    case = LAB_CASES[0]
    p = case.patient
    cli(data, "init", "--json")
    cli(data, "patient", "add", "--mrn", p.mrn, "--first", p.first, "--last", p.last, "--dob", p.dob, "--json")
    lab = data.parent / "lab.pdf"
    lab.write_bytes(render_lab(case))
    ingested = as_json(cli(data, "ingest", str(lab), "--patient", p.mrn, "--doc-type", "lab_pdf", "--json"))
    assert ingested["job"]["status"] == "succeeded"
    cli(data, "index-corpus", "--force", "--json")
    cli(data, "demo", "--queue", "--json")  # queues the demo documents for the worker
    worked = as_json(cli(data, "worker", "--once", "--json"))
    assert worked["ran"] is True
    cli(data, "eval", "--case", _first_case(), "--json", check=False)  # writes eval-results/
    return {"data": data, "document_id": ingested["document_id"]}


def _first_case() -> str:
    """A case that writes eval-results/ as any does, of the quickest kind (one FHIR bundle)."""
    cases = sorted(p.stem for p in (ROOT / "golden" / "cases").glob("*.json"))
    return next((c for c in cases if c.startswith("fhir-import-")), cases[0])


def test_every_file_the_workbench_writes_is_owner_only(built):
    data = built["data"]
    # A page render too, from a process that never set its umask itself.
    os.umask(0o022)
    from core.services.review.document_view import clear_caches, page_image
    from core.services.workbench import open_workbench
    from domain.settings import Settings

    wb = open_workbench(Settings(data_dir=data))
    try:
        clear_caches()
        assert page_image(wb, built["document_id"], 1, dpi=97)[:4] == b"\x89PNG"
    finally:
        wb.close()
    present = {p.name for p in data.iterdir()}
    assert {"workbench.duckdb", "documents", "renders", "lance", "tantivy", "logs", "worker-heartbeat.json",
            ".app-secret", "eval-results"} <= present, present
    assert list((data / "renders").rglob("*@97.png")), "the render was not written"
    assert _loose(data) == []


def test_an_older_data_dir_is_tightened_when_opened(built, tmp_path):
    import shutil

    old = tmp_path / "old"
    shutil.copytree(built["data"], old)
    for path in [old, *old.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)  # what older versions left behind
    cli(old, "init", "--json")
    assert _loose(old) == []


# -- error lines name ids, never a file name or an MRN ---------------------------

@pytest.fixture(scope="module")
def patient_dir(tmp_path_factory, cli_init):
    data = cli_init(tmp_path_factory.mktemp("logs") / "data")
    cli(data, "patient", "add", "--mrn", MRN, "--first", FIRST, "--last", LAST, "--dob", "1961-04-09", "--json")
    return data


def _logs_text(data: Path) -> str:
    return "".join(p.read_text() for p in (data / "logs").glob("*"))


def test_a_failed_ingest_names_ids_not_the_file_or_the_patient(patient_dir, tmp_path):
    broken = tmp_path / FILENAME
    broken.write_bytes(b"%PDF-1.4 broken on purpose")
    proc = cli(patient_dir, "ingest", str(broken), "--patient", MRN, "--doc-type", "lab_pdf", "--json", check=False)
    out = as_json(proc)
    assert out["job"]["status"] == "failed" and proc.returncode == 3
    assert f"document {out['document_id']}" in proc.stderr
    logs = _logs_text(patient_dir)
    assert f'"document_id": {out["document_id"]}' in logs and f'"job_id": {out["job"]["job_id"]}' in logs
    for secret in PRIVATE:
        assert secret not in proc.stderr and secret not in logs


def test_the_worker_logs_ids_not_the_file_or_the_patient(patient_dir, tmp_path):
    from core.services.ingest.ingestion import attach_and_extract
    from core.services.admin.patients import get_patient
    from core.services.workbench import open_workbench
    from domain.settings import Settings

    wb = open_workbench(Settings(data_dir=patient_dir))
    seed_test_accounts(wb)
    try:
        patient = get_patient(wb, mrn=MRN)
        attached = attach_and_extract(wb, patient_id=patient["id"], source=FILENAME, doc_type="lab_pdf",
                                      data=b"%PDF-1.4 queued and broken", filename=FILENAME, by="dr.reviewer")
    finally:
        wb.close()
    proc = cli(patient_dir, "worker", "--once", "--json")
    assert as_json(proc) == {"ran": True, "job_id": attached.job["id"], "status": "failed"}
    logs = _logs_text(patient_dir)
    assert f'"job_id": {attached.job["id"]}' in logs
    for secret in PRIVATE:
        assert secret not in proc.stderr and secret not in logs


def test_a_worker_defect_prints_ids_and_code_locations_only(patient_dir, monkeypatch, capsys):
    from core.services.ingest import worker as worker_module
    from core.services.ingest.ingestion import attach_and_extract
    from core.services.admin.patients import get_patient
    from core.services.workbench import open_workbench
    from domain.settings import Settings

    def defect(wb, job):
        raise RuntimeError(f"cannot read {FILENAME} for MRN {MRN}")  # a message that quotes values

    monkeypatch.setattr(worker_module, "run_pipeline", defect)
    wb = open_workbench(Settings(data_dir=patient_dir))
    seed_test_accounts(wb)
    try:
        patient = get_patient(wb, mrn=MRN)
        attached = attach_and_extract(wb, patient_id=patient["id"], source=FILENAME, doc_type="lab_pdf",
                                      data=b"%PDF-1.4 defect", filename=FILENAME, by="dr.reviewer")
        job = worker_module.Worker(wb, worker_id="test").run_specific(attached.job["id"])
    finally:
        wb.close()
    assert job["status"] == "failed" and job["error_code"] == "internal_error"
    err = capsys.readouterr().err
    assert f"job {job['id']} (document {attached.document['id']}) defect: RuntimeError" in err
    for secret in PRIVATE:
        assert secret not in err and secret not in (job["error_message"] or "")


@pytest.mark.parametrize("args", [
    ["ingest", f"/nonexistent/{FILENAME}", "--patient", MRN, "--doc-type", "lab_pdf"],  # file not found
    ["ingest", "Makefile", "--patient", MRN + "-X", "--doc-type", "lab_pdf"],  # unknown patient
    ["patient", "add", "--mrn", MRN, "--first", FIRST, "--last", LAST, "--dob", "1961-04-09"],  # duplicate
])
def test_cli_error_lines_name_the_option_not_the_value(patient_dir, args):
    proc = cli(patient_dir, *args, "--json", check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and line.startswith("error: ")
    assert "<--patient>" in line or "<file>" in line or "<--mrn>" in line
    for secret in PRIVATE:
        assert secret not in line


def test_a_cli_defect_prints_its_type_not_its_message(monkeypatch, capsys, tmp_path):
    import core.__main__ as cli_main
    from core.commands import operations

    def boom(args):
        raise RuntimeError(f"Duplicate key mrn: {MRN} ({FILENAME})")

    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(operations, "cmd_health", boom)
    assert cli_main.main(["health", "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "error: internal_error: unexpected RuntimeError in `health`" in captured.err
    assert "boom" in captured.err  # the code location is kept for whoever fixes it
    for secret in PRIVATE:
        assert secret not in captured.err
