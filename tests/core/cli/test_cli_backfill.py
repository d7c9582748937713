"""``python -m core backfill`` as a user runs it, with the production defaults (each
reading in a forkserver child under the job's ceilings): killed outright midway and run
again, it stores nothing twice, reads only what was not finished, and leaves one
document per original and every fact once."""

import os
import re
import signal
import subprocess
import sys

from tests.support.backfill_set import add_patients, write_set
from tests.support.browser_support import make_run_env
from tests.support.cli_support import as_json, cli
from tests.support.paths import REPO_ROOT

# Killed at the first progress line: the bar writes at most a line a second (and the
# last one), so on a fast machine the second line may already say 8/8.
KILL_AFTER = 1
PROGRESS = re.compile(r"(\d+)/(\d+) documents read")


def _open(data_dir, monkeypatch):
    from core.services.workbench import open_workbench
    from domain.settings import reload_settings

    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(data_dir))
    return open_workbench(reload_settings())


def _state(data_dir, monkeypatch) -> dict:
    wb = _open(data_dir, monkeypatch)
    try:
        with wb.db.cursor() as cur:
            one = lambda sql: cur.execute(sql).fetchone()  # noqa: E731
            return {
                "documents": one("SELECT count(*), count(DISTINCT sha256) FROM documents"),
                "finished": one("SELECT count(*) FROM processing_jobs WHERE status IN ('succeeded', 'failed')")[0],
                "jobs": one("SELECT count(*) FROM processing_jobs")[0],
                "facts": one("SELECT count(*), count(DISTINCT fact_fingerprint) FROM document_facts"),
                "promoted_twice": one("SELECT count(*) FROM (SELECT fact_id FROM promotions WHERE outcome = "
                                      "'promoted' GROUP BY fact_id HAVING count(*) > 1)")[0],
            }
    finally:
        wb.close()


def test_killed_midway_and_run_again_it_finishes_without_duplicates(tmp_path, monkeypatch):
    data = tmp_path / "data"
    found = write_set(tmp_path / "set", labs=8, odd_rows=False)
    wb = _open(data, monkeypatch)
    add_patients(wb, found.patients)
    wb.close()

    proc = subprocess.Popen([sys.executable, "-m", "core", "backfill", str(found.manifest), "--json"], cwd=REPO_ROOT,
                            env=make_run_env(data), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in proc.stderr:  # not a terminal: plain progress lines
        seen.append(line)
        match = PROGRESS.search(line)
        if match and int(match.group(1)) >= KILL_AFTER:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(60)
    assert proc.returncode == -signal.SIGKILL, "".join(seen)
    killed = _state(data, monkeypatch)
    # Every original was stored before the first reading; the kill left some unread.
    assert killed["documents"] == (8, 8) and killed["jobs"] == 8
    assert KILL_AFTER <= killed["finished"] < 8

    again = cli(data, "backfill", str(found.manifest), "--json")
    report = as_json(again)
    assert report["stored"] == 0 and report["skipped"] == killed["finished"]
    assert report["succeeded"] == 8 - killed["finished"] and report["failed"] == 0 and report["rows"] == 8
    after = _state(data, monkeypatch)
    assert after["documents"] == (8, 8) and after["jobs"] == after["finished"] == 8
    assert after["facts"][0] == after["facts"][1] > killed["facts"][0]  # new facts, each once
    assert after["promoted_twice"] == 0
    # The progress and any error line carry counts, never a patient or a path.
    logs = "".join(seen) + again.stderr
    assert "documents/s" in again.stderr
    for p in found.patients:
        assert p.mrn not in logs and p.last not in logs
    assert str(tmp_path) not in logs
