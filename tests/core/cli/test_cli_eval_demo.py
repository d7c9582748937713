"""`core eval` and `core demo` drive golden's programs as child processes (the product never
imports golden/): the gate's JSON and exit status are passed on and its run is recorded from
the artifact it wrote; the demo is uploaded from the directory its generator wrote.

Run in this process (``core.__main__.main``) with stand-in programs, so each test takes a
second; the real gate behind `core eval` is tests/golden/test_eval_gate.py's and
`make test`'s, the real demo generator tests/core/ingest/test_demo.py's.
"""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from core.__main__ import main
from tests.support.eval_fixtures import FAILING_CASE, make_run

FAKE_GATE = r"""
import json, pathlib, sys
args = sys.argv[1:]
results = pathlib.Path(args[args.index("--results-dir") + 1])
cases = [args[i + 1] for i, a in enumerate(args) if a == "--case"]
if "zzz" in cases:
    sys.stderr.write("error: unknown_case: no golden case named zzz\n")
    sys.exit(2)
pathlib.Path(%(argv)r).write_text(json.dumps(args))
run = json.loads(pathlib.Path(%(artifact)r).read_text())
results.mkdir(parents=True, exist_ok=True)
(results / (run["run_id"] + ".json")).write_text(json.dumps(run))
sys.stderr.write("gate chatter: case 1 of 5\n")
print(json.dumps({k: run[k] for k in ("run_id", "verdict", "cases", "rubrics", "failed_cases", "seconds", "gate")}))
if run["verdict"] != "pass":
    sys.stderr.write("error: the eval gate failed: as the gate says\n")
    sys.exit(1)
"""

# The demo generator's stand-in: one HL7 result for a demo patient, and its manifest.
FAKE_DEMO = r"""
import json, pathlib, sys
out = pathlib.Path(sys.argv[sys.argv.index("--write") + 1])
(out / "demo-potassium.hl7").write_text(
    "MSH|^~\\&|LAB|HARBOUR LAB|EHR|CLINIC|20261020101500||ORU^R01^ORU_R01|DEMO0001|P|2.5.1\r"
    "PID|1||DEMO-1001^^^CLINIC^MR||QUINTERO-VALE^MARISOL||19610314|F\r"
    "OBR|1|ORD1|FIL1|80048^Basic metabolic panel^C4|||20261020083000|||||||||||||||20261020101000|||F\r"
    "OBX|1|NM|2823-3^Potassium^LN||6.8|mmol/L|3.5-5.1|HH|||F|||20261020083000\r")
(out / "manifest.json").write_text(json.dumps({"documents": [
    {"patient_mrn": "DEMO-1001", "filename": "demo-potassium.hl7", "doc_type": "hl7v2_message",
     "file": "demo-potassium.hl7"}]}))
"""


@pytest.fixture
def data(settings, workbench_template):
    """A migrated, seeded data dir that nothing holds open (the command opens it)."""
    shutil.copytree(workbench_template, settings.data_dir, dirs_exist_ok=True)
    return settings


@pytest.fixture
def gate(monkeypatch, tmp_path):
    """Replace the gate program; returns a function that sets the run it writes."""
    import core.services.evals.runs as runs

    def use(run: dict) -> dict:
        artifact = tmp_path / f"{run['run_id']}-source.json"
        artifact.write_text(json.dumps(run))
        argv = tmp_path / "gate-argv.json"
        script = FAKE_GATE % {"artifact": str(artifact), "argv": str(argv)}
        monkeypatch.setattr(runs, "GATE_COMMAND", (sys.executable, "-c", script))
        return {"argv": argv}

    return use


def _recorded(settings) -> list[str]:
    from core.services.evals.records import list_runs
    from core.services.workbench import open_workbench

    wb = open_workbench(settings)
    try:
        return [r["run_id"] for r in list_runs(wb)]
    finally:
        wb.close()


def test_eval_passes_on_the_gates_json_and_exit_status_and_records_the_run(data, gate, capsys):
    run = make_run()  # a failing run: one case fails two rubrics
    seen = gate(run)
    code = main(["eval", "--json", "--case", FAILING_CASE, "--jobs", "1", "--progress", str(data.data_dir / "p.json")])
    out, err = capsys.readouterr()
    assert code == 1  # the gate's verdict, passed on
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert len(lines) == 1
    payload = json.loads(lines[0])
    assert {"run_id", "verdict", "cases", "rubrics", "failed_cases", "seconds"} <= set(payload)
    assert (payload["run_id"], payload["verdict"], payload["failed_cases"]) == (run["run_id"], "fail", [FAILING_CASE])
    assert "gate chatter: case 1 of 5" in err  # the gate's own stderr comes through as it runs
    assert err.count("error: ") == 1 and "error: the eval gate failed: " in err  # said once, by core
    argv = json.loads(seen["argv"].read_text())
    assert argv[:3] == ["--json", "--results-dir", str(data.eval_results_dir.resolve())]
    assert ["--case", FAILING_CASE] == argv[3:5] and "--jobs" in argv and "--progress" in argv
    assert _recorded(data) == [run["run_id"]]  # recorded from the artifact the gate wrote


def test_eval_no_record_and_the_text_summary_from_the_artifact(data, gate, capsys):
    gate(make_run())
    assert main(["eval", "--no-record"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("eval 20261201-143500-ab12cd: FAIL - 5 cases in 41.7 s")
    assert "  promotion_expectations" in out and "threshold 95%  baseline 100%" in out
    assert "latency (ms, p50/p95): normalize 12/40" in out and "bottleneck: ocr" in out
    assert f"FAILED {FAILING_CASE}: promotion_expectations: " in out and "  gate: " in out
    assert err.count("error: ") == 1
    assert _recorded(data) == []  # --no-record: the JSON artifact only


def test_eval_passing_run_exits_zero(data, gate, capsys):
    run = make_run(verdict="pass")
    gate(run)
    assert main(["eval", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["verdict"] == "pass" and "error" not in err
    assert _recorded(data) == [run["run_id"]]


def test_eval_unknown_case_is_bad_input_as_before(data, gate, capsys):
    gate(make_run())
    assert main(["eval", "--case", "zzz", "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == "error: unknown_case: no golden case named zzz"


def test_eval_a_gate_that_stops_without_a_run_is_an_error(data, monkeypatch, capsys):
    import core.services.evals.runs as runs

    monkeypatch.setattr(runs, "GATE_COMMAND", (sys.executable, "-c", "import sys; sys.exit(3)"))
    assert main(["eval", "--json"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "error: eval_gate_crashed: the eval gate stopped (exit code 3)" in err


def _demo_command(monkeypatch, script: str) -> None:
    import core.services.ingest.demo as demo

    monkeypatch.setattr(demo, "DEMO_COMMAND", (sys.executable, "-c", script))


def test_demo_uploads_what_the_generator_wrote_once(data, monkeypatch, capsys):
    _demo_command(monkeypatch, FAKE_DEMO)
    assert main(["demo", "--queue", "--json"]) == 0
    (doc,) = json.loads(capsys.readouterr().out)["documents"]
    assert {"document_id", "patient_mrn", "doc_type", "job"} <= set(doc)
    assert (doc["patient_mrn"], doc["doc_type"], doc["loaded"], doc["job"]["status"]) == (
        "DEMO-1001", "hl7v2_message", True, "pending")
    assert main(["demo", "--queue", "--json"]) == 0  # idempotent
    (again,) = json.loads(capsys.readouterr().out)["documents"]
    assert again["document_id"] == doc["document_id"] and again["loaded"] is False


def test_demo_auto_decides_to_skip_before_building(data, monkeypatch, capsys):
    # A generator that would fail: --auto must skip before it is ever run.
    _demo_command(monkeypatch, "import sys; sys.stderr.write('should not run\\n'); sys.exit(1)")
    monkeypatch.setenv("WORKBENCH_LOAD_DEMO", "false")
    from domain.settings import reload_settings

    reload_settings()
    assert main(["demo", "--auto", "--queue", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"documents": [], "skipped": "WORKBENCH_LOAD_DEMO is off"}
    monkeypatch.setenv("WORKBENCH_LOAD_DEMO", "true")
    reload_settings()
    assert main(["demo", "--auto", "--queue", "--json"]) == 1  # empty data dir: it builds, and says it failed
    out, err = capsys.readouterr()
    assert out == "" and "error: demo_build_failed: the demo documents could not be built (exit code 1): " \
                         "should not run" in err
    _demo_command(monkeypatch, FAKE_DEMO)
    assert main(["demo", "--queue", "--json"]) == 0
    capsys.readouterr()
    _demo_command(monkeypatch, "import sys; sys.exit(1)")
    assert main(["demo", "--auto", "--queue", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["skipped"] == "the data dir already holds documents"
