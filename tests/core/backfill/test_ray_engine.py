"""The Ray engine: the same readings as Ray tasks on a local Ray of 2 CPUs (no
dashboard), each in the worker's own job child under the job's ceilings; and Ray is
never imported by the local path. Few tests: a Ray start costs seconds."""

import subprocess
import sys

import pytest

from core.services.backfill.manifest import read_manifest
from core.services.backfill.reading import Ceilings
from core.services.backfill.run import run_backfill
from tests.support.backfill_set import OPERATOR, add_patients, write_set
from tests.support.paths import REPO_ROOT


@pytest.fixture(scope="module")
def ray_engine():
    from core.services.backfill.ray_engine import RayEngine

    # Readings in the Ray worker itself here, for speed (as unit tests read); the ceiling
    # test below sets the production job process, a forkserver child per reading.
    engine = RayEngine(Ceilings(600.0, 2048, "off"), num_cpus=2)
    yield engine
    engine.close()


def test_ray_tasks_read_the_set_and_the_one_writer_persists_it(wb, tmp_path, ray_engine):
    found = write_set(tmp_path / "set", labs=2)
    add_patients(wb, found.patients)
    report = run_backfill(wb, read_manifest(found.manifest), ray_engine, by=OPERATOR)
    assert report["engine"] == "ray" and report["readers"] == 2 and report["documents_read"] == 4
    failures = {f["row"]: f["code"] for f in report["failures"]}
    assert report["succeeded"] == 2 and [h["row"] for h in report["held"]] == found.lines("held_for_identity")
    [broken] = found.lines("job_failed")
    assert failures[broken] not in (None, "task_lost", "internal_error")
    assert all(failures[line] == code for code in ("type_mismatch", "file_not_found", "unknown_patient",
                                                    "unknown_category", "bad_row") for line in found.lines(code))
    with wb.db.cursor() as cur:
        cur.execute("SELECT count(*), count(DISTINCT sha256) FROM documents")
        assert cur.fetchone() == (4, 4)
        cur.execute("SELECT count(*) FROM document_facts WHERE active")
        assert cur.fetchone()[0] > 0


def test_a_ray_task_reads_in_the_jobs_child_under_its_memory_ceiling(wb, tmp_path, ray_engine):
    # A scanned page is rendered to an image of megabytes before OCR: never read in 1 MB
    # more than the child starts with. (A small typed page may be: its few allocations
    # can fit in heap the forkserver child already has mapped, as on CI.)
    found = write_set(tmp_path / "set", labs=1, scanned=True, odd_rows=False)
    add_patients(wb, found.patients)
    ray_engine.ceilings = Ceilings(600.0, 1, "forkserver")
    try:
        report = run_backfill(wb, read_manifest(found.manifest), ray_engine, by=OPERATOR)
    finally:
        ray_engine.ceilings = Ceilings(600.0, 2048, "off")
    [scanned] = found.lines("scanned")
    failures = {f["row"]: f for f in report["failures"]}
    assert set(report["failed_by_code"]) == {"resource_limit"}, report["failed_by_code"]
    assert failures[scanned]["code"] == "resource_limit", failures
    assert "1 MB" in failures[scanned]["message"] and failures[scanned]["document_id"] is not None


def test_the_cli_and_the_local_engine_do_not_import_ray():
    code = ("import sys; import core.__main__, core.commands.parser, core.commands.backfill, "
            "core.services.backfill.run, core.services.backfill.local_engine; "
            "sys.exit(1 if 'ray' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT).returncode == 0
