"""Crash safety, measured: SIGKILL the worker at random moments, restart it, let it finish.

A queue of documents of every kind (typed and scanned labs, intake form, referral DOCX,
workbook, fax packet, HL7, another patient's lab) is read by `python -m core worker` in
a child process that is killed with SIGKILL again and again, then run to the end. Then
the database and the vector table are checked: every document succeeded or failed, no
job pending or running, and no duplicate facts, promotions, chart rows or vectors. The
same queue is also read once without kills, and the totals must match.

Prints the counts, the kills that hit a job in flight, and the longest stall: the time
from a kill to that job running again in the restarted worker (a restart reclaims the
job of a dead worker at once instead of after the 120 s heartbeat window), and how soon the
last worker is gone after SIGTERM (target 5 s). The tests assert neither figure: they check
the reclaims' recorded reason and the worker's exit instead (bench/sigterm_exit.py times
SIGTERM mid-job, in the headless worker and in the app).

Usage: python bench/kill_worker.py [--kills 50] [--documents 30] [--seed 13] [--max-attempts 100]
       [--no-reference]
tests/core/ingest/test_crash_safety.py runs the same harness with a few kills.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


# --- the queue ---------------------------------------------------------------------------

def corpus(n: int, *, scans: bool = True) -> list[tuple[str, str, str, bytes]]:
    """``n`` documents as (patient MRN, filename, doc type, bytes), cycling through the demo
    documents (one of every kind). Copies differ in name; HL7 copies also in control id."""
    from golden.demo import DOCUMENTS

    kinds = [d for d in DOCUMENTS if scans or "scan" not in d.spec]
    built = {d.filename: d.build() for d in kinds}
    out = []
    for i in range(n):
        doc = kinds[i % len(kinds)]
        data = built[doc.filename]
        round_ = i // len(kinds)
        if doc.doc_type == "hl7v2_message" and round_:
            data = data.replace(b"|DEMO0001|", f"|DEMO{round_:04d}|".encode())
        stem, ext = doc.filename.rsplit(".", 1)
        out.append((doc.patient_mrn, f"{stem}-{round_}.{ext}", doc.doc_type, data))
    return out


def queue_documents(data_dir: Path, documents: list[tuple[str, str, str, bytes]]) -> list[int]:
    """Store and queue the documents (nothing is read yet); returns the document ids."""
    from core.services.ingest.ingestion import attach_and_extract
    from core.services.admin.patients import get_patient, seed_demo_patients
    from core.services.workbench import open_workbench
    from domain.settings import Settings

    wb = open_workbench(Settings(data_dir=data_dir))
    try:
        seed_demo_patients(wb)
        ids = []
        for mrn, filename, doc_type, data in documents:
            patient = get_patient(wb, mrn=mrn)
            attached = attach_and_extract(wb, patient_id=patient["id"], source=filename, data=data,
                                          filename=filename, doc_type=doc_type, by="system:crash-test")
            ids.append(attached.document["id"])
        return ids
    finally:
        wb.close()


# --- the worker in a child process ----------------------------------------------------------

MAX_ATTEMPTS = os.environ.get("WORKBENCH_MAX_ATTEMPTS", "3")


def worker_env(data_dir: Path) -> dict[str, str]:
    # The worker as it runs for a clinic: its idle sleep, job process and stale window (120 s:
    # reclaiming must not wait for it) at their defaults; only the attempts can be raised.
    kept = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    return {**kept, "WORKBENCH_DATA_DIR": str(data_dir), "WORKBENCH_MAX_ATTEMPTS": MAX_ATTEMPTS,
            "PYTHONUNBUFFERED": "1"}


def start_worker(data_dir: Path, log: Path) -> subprocess.Popen:
    with open(log, "ab") as out:
        return subprocess.Popen([sys.executable, "-m", "core", "worker"], cwd=ROOT, env=worker_env(data_dir),
                                stdout=subprocess.DEVNULL, stderr=out)


def read_beat(data_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((data_dir / "worker-heartbeat.json").read_text())
    except (OSError, ValueError):
        return {}


@dataclass
class KillRun:
    kills: int = 0
    kills_mid_job: int = 0
    stalls: list[float] = field(default_factory=list)  # kill -> the same job running again (s)
    killed_jobs: dict[int, int] = field(default_factory=dict)  # job id -> kills while it ran
    restarts: int = 0
    drain_seconds: float = 0.0
    sigterm_exit_seconds: float = 0.0
    sigterm_exit_code: int | None = None


def _watch(proc: subprocess.Popen, data_dir: Path, until: float, waiting: dict[int, float], run: KillRun, *,
           want=None, stop_when_drained: bool = False) -> int | None:
    """Poll the heartbeat file of ``proc`` until ``until``, until ``want(beat)`` holds, or
    (when asked) until the queue is drained and the vectors indexed; returns the job it
    holds at the end. Records a stall when a job killed earlier is running again."""
    current, idle_beats = None, set()
    while time.monotonic() < until and proc.poll() is None:
        beat = read_beat(data_dir)
        if beat.get("pid") == proc.pid:
            current = beat.get("current_job_id")
            if current in waiting:
                run.stalls.append(time.monotonic() - waiting.pop(current))
            if want is not None and want(beat):
                return current
            if stop_when_drained and _drained(beat):
                # Idle beats after draining: a later one follows an idle pass that embedded
                # the last facts (the worker indexes vectors before it beats idle).
                idle_beats.add(beat.get("heartbeat_at"))
                if len(idle_beats) >= 3:
                    return None
            else:
                idle_beats.clear()
        time.sleep(0.03)
    return current


def _drained(beat: dict[str, Any]) -> bool:
    queue = beat.get("queue") or {}
    return not queue.get("pending") and not queue.get("running") and beat.get("status") == "idle"


def run_with_kills(data_dir: Path, *, kills: int, rng: random.Random, anytime: float = 0.25,
                   per_job: int = 2, timeout: float = 900.0) -> KillRun:
    """Start the worker and SIGKILL it, ``kills`` times; then run it until the queue is
    drained and stop it with SIGTERM.

    A share ``anytime`` of the kills land at a random moment of the worker's life (start-up,
    idle, reading, writing); the others wait for a job in flight and land 0-1 s into it, on a
    job killed fewer than ``per_job`` times, so the kills spread over the whole queue instead
    of all hitting the one slow document (a scan) the worker restarts on."""
    run, log = KillRun(), data_dir / "worker-stderr.log"
    waiting: dict[int, float] = {}  # job id -> when its worker was killed
    deadline = time.monotonic() + timeout

    def fresh_job(beat: dict[str, Any]) -> bool:
        job = beat.get("current_job_id")
        return (job is not None and run.killed_jobs.get(job, 0) < per_job) or _drained(beat)

    for _ in range(kills):
        proc = start_worker(data_dir, log)
        run.restarts += 1
        if rng.random() < anytime:
            held = _watch(proc, data_dir, time.monotonic() + rng.uniform(0.3, 4.0), waiting, run)
        else:
            _watch(proc, data_dir, deadline, waiting, run, want=fresh_job)
            held = _watch(proc, data_dir, time.monotonic() + rng.uniform(0.0, 1.0), waiting, run)
        if proc.poll() is not None:
            raise RuntimeError(f"the worker exited by itself (code {proc.returncode}); see {log}")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        run.kills += 1
        if held is not None:
            run.kills_mid_job += 1
            run.killed_jobs[held] = run.killed_jobs.get(held, 0) + 1
            waiting[held] = time.monotonic()
        if time.monotonic() > deadline:
            raise RuntimeError("the kill rounds ran out of time")
    proc = start_worker(data_dir, log)
    run.restarts += 1
    started = time.monotonic()
    _watch(proc, data_dir, deadline, waiting, run, stop_when_drained=True)
    run.drain_seconds = time.monotonic() - started
    if proc.poll() is not None:
        raise RuntimeError(f"the last worker exited early (code {proc.returncode}); see {log}")
    if time.monotonic() >= deadline:
        proc.kill()
        raise RuntimeError("the queue was not drained in time")
    asked = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    run.sigterm_exit_code = proc.wait(30)
    run.sigterm_exit_seconds = time.monotonic() - asked
    return run


# --- the checks -----------------------------------------------------------------------------

def database_state(data_dir: Path, document_ids: list[int]) -> dict[str, Any]:
    """Job outcomes, reclaims, and every duplicate found (all zero when crash safe)."""
    import duckdb

    from storage.vector_store import VectorStore

    con = duckdb.connect(str(data_dir / "workbench.duckdb"), read_only=True)
    try:
        def scalar(sql: str, params: list | None = None) -> int:
            return int(con.execute(sql, params or []).fetchone()[0] or 0)

        latest = dict(con.execute(
            """SELECT document_id, status FROM processing_jobs WHERE id IN (
                   SELECT max(id) FROM processing_jobs GROUP BY document_id)""").fetchall())
        outcomes: dict[str, int] = {}
        for doc_id in document_ids:
            status = latest.get(doc_id, "missing")
            outcomes[status] = outcomes.get(status, 0) + 1
        state = {
            "documents": len(document_ids),
            "outcomes": outcomes,
            "jobs_per_document_max": scalar("SELECT max(n) FROM (SELECT count(*) n FROM processing_jobs "
                                             "GROUP BY document_id)"),
            "left_running_or_pending": scalar("SELECT count(*) FROM processing_jobs "
                                              "WHERE status IN ('running', 'pending')"),
            "attempts_exhausted": scalar("SELECT count(*) FROM processing_jobs "
                                         "WHERE error_code = 'attempts_exhausted'"),
            "reclaims": scalar("SELECT sum(reclaims) FROM processing_jobs"),
            "reclaim_reasons": dict(con.execute(
                "SELECT reclaim_reason, count(*) FROM processing_jobs WHERE reclaim_reason IS NOT NULL "
                "GROUP BY 1").fetchall()),
            "facts": scalar("SELECT count(*) FROM document_facts"),
            "active_facts": scalar("SELECT count(*) FROM document_facts WHERE active"),
            "promotions": scalar("SELECT count(*) FROM promotions WHERE active"),
            "chart_rows": sum(scalar(f"SELECT count(*) FROM {t} WHERE active") for t in CHART_KEYS),
            "duplicate_facts": scalar(
                "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) n FROM document_facts "
                "GROUP BY document_id, fact_fingerprint)"),
            "duplicate_promotions": scalar(
                "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) n FROM promotions WHERE active "
                "GROUP BY fact_id)"),
            "duplicate_chart_rows": sum(scalar(
                f"SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) n FROM {t} WHERE active "
                f"GROUP BY patient_id, {', '.join(cols)})") for t, cols in CHART_KEYS.items()),
            "vector_marked_facts": scalar("SELECT count(*) FROM document_facts WHERE active AND "
                                          "vector_indexed_at IS NOT NULL"),
        }
    finally:
        con.close()
    fact_ids = VectorStore.for_data_dir(data_dir).patient_fact_ids()
    state["vectors"] = len(fact_ids)
    state["duplicate_vectors"] = len(fact_ids) - len(set(fact_ids))
    return state


# A chart row is a duplicate of another active row of the same patient with these values.
CHART_KEYS = {
    "chart_lab_results": ("test_name", "value", "unit", "collection_date"),
    "chart_allergies": ("substance", "reaction"),
    "chart_medications": ("name", "dose", "frequency"),
    "chart_problems": ("description", "code"),
}


def problems(state: dict[str, Any]) -> list[str]:
    """What makes a run unsafe, in words (empty when it is safe)."""
    out = []
    if set(state["outcomes"]) - {"succeeded", "failed"}:
        out.append(f"documents not finished: {state['outcomes']}")
    for key in ("left_running_or_pending", "duplicate_facts", "duplicate_promotions", "duplicate_chart_rows",
                "duplicate_vectors"):
        if state[key]:
            out.append(f"{key}: {state[key]}")
    if state["jobs_per_document_max"] > 1:
        out.append("a document got more than one job")
    if state["vectors"] != state["vector_marked_facts"]:
        out.append(f"vectors {state['vectors']} != facts marked as embedded {state['vector_marked_facts']}")
    return out


def reference_run(documents: list[tuple[str, str, str, bytes]], workdir: Path) -> dict[str, Any]:
    """The same queue read by one worker that is never killed."""
    data_dir = workdir / "reference"
    ids = queue_documents(data_dir, documents)
    run_with_kills(data_dir, kills=0, rng=random.Random(0))
    return database_state(data_dir, ids)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--documents", type=int, default=30)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--no-reference", action="store_true", help="skip the run without kills")
    parser.add_argument("--max-attempts", type=int, default=100,
                        help="attempts per job (high by default, so every document is read in the end and the "
                             "totals can be compared with the run without kills)")
    args = parser.parse_args()
    global MAX_ATTEMPTS
    MAX_ATTEMPTS = str(args.max_attempts)
    documents = corpus(args.documents)
    with tempfile.TemporaryDirectory(prefix="kill-worker-") as tmp:
        workdir = Path(tmp)
        data_dir = workdir / "killed"
        ids = queue_documents(data_dir, documents)
        started = time.monotonic()
        run = run_with_kills(data_dir, kills=args.kills, rng=random.Random(args.seed))
        elapsed = time.monotonic() - started
        state = database_state(data_dir, ids)
        reference = None if args.no_reference else reference_run(documents, workdir)
    found = problems(state)
    if reference is not None:
        for key in ("facts", "active_facts", "promotions", "chart_rows", "vectors"):
            if state[key] != reference[key] and not state["attempts_exhausted"]:
                found.append(f"{key}: {state[key]} with kills, {reference[key]} without")
    print(f"documents: {state['documents']} ({len({d[2] for d in documents})} doc types), outcomes {state['outcomes']}")
    print(f"kills (SIGKILL): {run.kills}, {run.kills_mid_job} with a job in flight, on {len(run.killed_jobs)} "
          f"different jobs; worker starts: {run.restarts}")
    print(f"reclaims recorded: {state['reclaims']} {state['reclaim_reasons']}; "
          f"attempts exhausted: {state['attempts_exhausted']}")
    longest = max(run.stalls) if run.stalls else 0.0
    # A stall includes the restart (imports, opening the database) and any kill during it.
    print(f"longest stall (kill -> same job running again): {longest:.1f} s over {len(run.stalls)} pick-ups "
          f"(median {sorted(run.stalls)[len(run.stalls) // 2] if run.stalls else 0:.1f} s)")
    print(f"left running or pending: {state['left_running_or_pending']}")
    print(f"duplicates: facts {state['duplicate_facts']}, promotions {state['duplicate_promotions']}, "
          f"chart rows {state['duplicate_chart_rows']}, vectors {state['duplicate_vectors']}")
    print(f"totals: facts {state['facts']}, active {state['active_facts']}, promotions {state['promotions']}, "
          f"chart rows {state['chart_rows']}, vectors {state['vectors']}")
    if reference is not None:
        print(f"without kills: facts {reference['facts']}, active {reference['active_facts']}, promotions "
              f"{reference['promotions']}, chart rows {reference['chart_rows']}, vectors {reference['vectors']}")
    print(f"last worker: drained in {run.drain_seconds:.1f} s, exited {run.sigterm_exit_seconds:.2f} s after SIGTERM "
          f"(code {run.sigterm_exit_code}); whole run {elapsed:.0f} s")
    print("RESULT:", "crash safe" if not found else "PROBLEMS: " + "; ".join(found))
    return 0 if not found else 1


if __name__ == "__main__":
    sys.exit(main())
