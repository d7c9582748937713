"""`WORKBENCH_DATE_ORDER` end to end: `core ingest` with the production settings (the job
read in the forkserver child) but for the setting under test. A UK lab report, written
for this test, prints its collection date as 01/12/2026 and nothing else that settles
day and month (the birth date is ISO): a day-first clinic charts it as 1 December. (Without
the setting it reads month first, as before: tests/extract/values/test_date_order.py.)"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.browser_support import make_run_env
from golden.drawing import placed_text_pdf
from tests.support.paths import REPO_ROOT

REPORT = placed_text_pdf([
    (50, 60, "Wessex Pathology Laboratory", 14),
    (50, 90, "Patient: HOLLINGWORTH, Beatrix     DOB: 1952-06-08     Hosp No: WX-300917"),
    (50, 108, "Specimen collected: 01/12/2026 08:40"),
    (50, 140, "Test"), (220, 140, "Result"), (300, 140, "Units"), (380, 140, "Reference"), (480, 140, "Flag"),
    (50, 158, "Sodium"), (220, 158, "136"), (300, 158, "mmol/L"), (380, 158, "133-146"),
    (50, 176, "Potassium"), (220, 176, "5.9"), (300, 176, "mmol/L"), (380, 176, "3.5-5.3"), (480, 176, "H"),
])


def _core(data, *args, date_order: str):
    env = {**make_run_env(data), "WORKBENCH_DATE_ORDER": date_order}
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def _collection_dates(tmp_path, cli_init, date_order: str) -> dict[str, str]:
    data = cli_init(tmp_path / "data")
    added = _core(data, "patient", "add", "--mrn", "WX-300917", "--first", "Beatrix", "--last", "Hollingworth",
                  "--dob", "1952-06-08", "--json", date_order=date_order)
    assert added.returncode == 0, added.stderr
    (tmp_path / "wessex.pdf").write_bytes(REPORT)
    proc = _core(data, "ingest", str(tmp_path / "wessex.pdf"), "--patient", "WX-300917", "--doc-type", "lab_pdf",
                 "--json", date_order=date_order)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["job"]["status"] == "succeeded" and out["identity"]["status"] == "identity_verified"
    return {f["structured_value"]["test_name"]: f["structured_value"]["collection_date"]
            for f in out["facts"] if f["fact_type"] == "lab_result"}


def test_a_day_first_clinic_charts_01_12_2026_as_the_first_of_december(tmp_path, cli_init):
    assert _collection_dates(tmp_path, cli_init, "day_first") == {"Sodium": "2026-12-01", "Potassium": "2026-12-01"}


def test_an_order_the_setting_cannot_take_is_one_line_naming_the_variable(tmp_path, cli_init):
    proc = _core(cli_init(tmp_path / "data"), "health", "--json", date_order="dd/mm/yyyy")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "bad_setting" in proc.stderr and "WORKBENCH_DATE_ORDER" in proc.stderr
