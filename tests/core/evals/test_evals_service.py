"""Eval runs: stored once, imported from run files, read back, and started in the background."""

from __future__ import annotations

import json
import sys
import time

import pytest

from domain.errors import BadInput, NotFound
from core.services.evals import report as eval_report
from core.services.evals import runs as eval_runs
from core.services.evals import sources as eval_sources
from core.services.evals import records as evals
from tests.support.kept_runs import keep_fixture_documents
from tests.support.eval_fixtures import (DOC_FACT_REASON, FAILING_CASE, FAILING_REASON, FAILING_RUBRIC, fixture_document,
                                 make_run, write_run)

OLD = dict(run_id="20261130-091500-0a0a0a", verdict="pass", started_at="2026-11-30T09:15:00Z",
           finished_at="2026-11-30T09:15:39Z", commit="bb944d4")


def _count(wb, table: str) -> int:
    with wb.db.cursor() as cur:
        return cur.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_record_run_is_idempotent(wb):
    run = make_run()
    assert evals.record_run(wb, run) is True
    runs, rows = _count(wb, "eval_runs"), _count(wb, "eval_case_results")
    assert runs == 1
    assert rows == sum(len(c["rubrics"]) for c in run["results"])
    assert evals.record_run(wb, json.loads(json.dumps(run))) is False
    assert (_count(wb, "eval_runs"), _count(wb, "eval_case_results")) == (1, rows)


def test_record_run_rejects_what_is_not_a_run(wb):
    with pytest.raises(BadInput, match="verdict"):
        evals.record_run(wb, make_run() | {"verdict": "maybe"})
    with pytest.raises(BadInput, match="run_id"):
        evals.record_run(wb, make_run() | {"run_id": "../escape"})
    with pytest.raises(BadInput, match="rubrics"):
        evals.record_run(wb, make_run() | {"rubrics": {"schema_valid": 1.5}})
    assert _count(wb, "eval_runs") == 0


def test_sync_imports_run_files_and_skips_progress_and_malformed_ones(wb, data_dir):
    write_run(data_dir)
    write_run(data_dir, **OLD)
    results = data_dir / "eval-results"
    (results / "run-x.progress.json").write_text(json.dumps({"run_id": None, "done": 1, "total": 5,
                                                             "case_id": "a", "finished": False}))
    (results / "broken.json").write_text("{ not json")
    (results / "other.json").write_text(json.dumps({"hello": "world"}))
    skipped: list[tuple[str, str]] = []
    assert evals.sync_runs(wb, skipped) == 2
    reasons = dict(skipped)
    assert set(reasons) == {"broken.json", "other.json"}  # the progress file is not even considered
    assert "not readable as JSON" in reasons["broken.json"]
    assert "not a run file" in reasons["other.json"] and "run_id" in reasons["other.json"]
    assert evals.sync_runs(wb) == 0  # nothing new the second time
    assert _count(wb, "eval_runs") == 2


def test_a_run_recorded_by_the_cli_is_not_imported_again(wb, data_dir):
    run = make_run()
    write_run(data_dir, run)
    evals.record_run(wb, run)
    assert evals.sync_runs(wb) == 0
    assert _count(wb, "eval_runs") == 1


def test_list_runs_newest_first_with_failed_cases(wb, data_dir):
    write_run(data_dir, **OLD)
    write_run(data_dir)
    evals.sync_runs(wb)
    runs = evals.list_runs(wb)
    assert [r["run_id"] for r in runs] == ["20261201-143500-ab12cd", OLD["run_id"]]
    newest = runs[0]
    assert newest["verdict_label"] == "Failed" and runs[1]["verdict_label"] == "Passed"
    assert newest["commit"] == "c110ede" and newest["cases"] == 5 and newest["seconds"] == 41.7
    assert newest["failed_cases"] == 1 and newest["failed_case_ids"] == [FAILING_CASE]
    assert runs[1]["failed_cases"] == 0


def test_load_run_reads_the_file_and_falls_back_to_the_database(wb, data_dir):
    path = write_run(data_dir)
    evals.sync_runs(wb)
    run = evals.load_run(wb, "20261201-143500-ab12cd")
    assert run == json.loads(path.read_text())
    path.unlink()
    kept = evals.load_run(wb, "20261201-143500-ab12cd")
    assert kept["from_database"] is True and kept["verdict"] == "fail" and kept["commit"] == "c110ede"
    failing = next(c for c in kept["results"] if c["case_id"] == FAILING_CASE)
    assert failing["rubrics"][FAILING_RUBRIC] == {"passed": False, "reason": FAILING_REASON}
    assert eval_report.failure_rows(kept)[0]["case_id"] == FAILING_CASE
    with pytest.raises(NotFound):
        evals.load_run(wb, "20990101-000000-ffffff")
    with pytest.raises(BadInput):
        evals.load_run(wb, "../../etc/passwd")


def test_rubric_trend_has_every_rubric_of_every_run(wb, data_dir):
    write_run(data_dir, **OLD)
    write_run(data_dir)
    evals.sync_runs(wb)
    trend = evals.rubric_trend(wb)
    assert len(trend) == 2 * len(make_run()["rubrics"])
    promo = [(t["run_id"], t["pass_rate"]) for t in trend if t["rubric"] == FAILING_RUBRIC]
    assert promo == [(OLD["run_id"], 1.0), ("20261201-143500-ab12cd", 0.8)]  # oldest first
    assert all(t["label"] and "_" not in t["label"] for t in trend)


def test_whole_set_and_chosen_case_runs_are_separate_series_and_each_run_its_own_point(wb, data_dir):
    write_run(data_dir, **OLD)
    # Two more runs on one day, one of them of chosen cases only.
    write_run(data_dir, run=make_run(run_id="20261201-080000-aaaaaa", started_at="2026-12-01T08:00:00Z",
                                     finished_at="2026-12-01T08:00:40Z") | {"selection": ["lab-classic-clean"]})
    write_run(data_dir)  # 2026-12-01 14:35, the whole set
    evals.sync_runs(wb)
    promo = [(t["run_id"], t["series"], str(t["started_at"]), t["cases"]) for t in evals.rubric_trend(wb)
             if t["rubric"] == FAILING_RUBRIC]
    assert promo == [(OLD["run_id"], evals.WHOLE_SET, "2026-11-30 09:15:00", 5),
                     ("20261201-080000-aaaaaa", evals.SOME_CASES, "2026-12-01 08:00:00", 1),
                     ("20261201-143500-ab12cd", evals.WHOLE_SET, "2026-12-01 14:35:00", 5)]


def test_a_cases_expectations_read_as_rows_in_words():
    from core.services.evals.expectations import expectation_rows

    rows = expectation_rows({
        "documents": {"report": {"job_status": "succeeded", "identity": "identity_verified"}},
        "facts": [{"document": "report", "fact_type": "lab_result", "where": {"test_name": "LDL cholesterol",
                                                                             "value": "3.4"}, "certainty": "verified"}],
        "fact_counts": {"report": {"lab_result": [3, 5]}},
        "chart": {"oskar": {"medications": [{"name": "Metformin"}]}},
        "answers": [{"step": 2, "refused": False, "contains": ["7.9"], "not_contains": ["LDL"]}],
        "step_errors": {"1": "empty_file"},
        "something_new": {"a": 1},
    })
    assert rows == [
        {"Expected": "Document", "Of": "report", "What": "job: succeeded; identity: identity verified"},
        {"Expected": "Fact found", "Of": "report",
         "What": "kind: lab result; with: test name “LDL cholesterol”, value “3.4”; certainty: verified"},
        {"Expected": "Number of facts", "Of": "report", "What": "lab result: 3 to 5"},
        {"Expected": "On the chart", "Of": "oskar · medications", "What": "name “Metformin”"},
        {"Expected": "Answer", "Of": "step 2", "What": "refused: no; says: “7.9”; does not say: “LDL”"},
        {"Expected": "Step ends in an error", "Of": "step 1", "What": "empty file"},
        {"Expected": "Something new", "Of": "a", "What": "1"},
    ]
    assert expectation_rows(None) == []


def test_stage_latency_orders_stages_and_names_the_bottleneck():
    rows = evals.stage_latency(make_run())
    assert [r["stage"] for r in rows][:3] == ["normalize", "ocr", "extract"]  # pipeline order
    slowest = [r for r in rows if r["bottleneck"]]
    assert [(r["stage"], r["label"], r["p95"]) for r in slowest] == [("ocr", "OCR", 1480.5)]
    assert next(r for r in rows if r["stage"] == "verify")["label"] == "Verify citations"
    assert evals.stage_latency({"latency": {}}) == []


def test_what_a_reviewer_reads_first():
    run = make_run()
    assert eval_report.ordered_cases(run)[0]["case_id"] == FAILING_CASE
    rows = eval_report.failure_rows(run)
    assert {(r["case_id"], r["rubric"], r["reason"]) for r in rows} == {
        (FAILING_CASE, FAILING_RUBRIC, FAILING_REASON),
        (FAILING_CASE, "document_fact_expectations", DOC_FACT_REASON)}
    table = {r["rubric"]: r for r in eval_report.rubric_table(run)}
    promo = table[FAILING_RUBRIC]
    assert promo["threshold"] == 0.95 and promo["baseline"] == 1.0 and promo["change_points"] == -20.0
    assert promo["status"] == "Below threshold, regressed" and not promo["ok"]
    assert table["schema_valid"]["status"] == "Meets threshold" and table["schema_valid"]["ok"]
    assert list(table)[:2] == ["document_fact_expectations", "promotion_expectations"]  # worst first
    reasons = eval_report.gate_reasons(run)
    assert {"subject": "Review findings and document facts are as expected",
            "reasons": "Below its threshold (pass rate 80% is below the threshold 95%); worse than the baseline "
                       "(pass rate fell 20.0 points from the baseline 100%)"} in reasons
    assert len(reasons) == 2  # one line per rubric
    case_gate = eval_report.gate_reasons({"gate": [{"kind": "case_error", "rubric": None, "case_id": "x",
                                              "message": "worker died"}]})
    assert case_gate == [{"subject": "case x", "reasons": "A case could not run (worker died)"}]


def test_an_errored_case_fails_with_its_error():
    run = make_run()
    case = run["results"][2]
    case.update(status="error", error="SharedDataMissing: real sample not found",
                rubrics={r: {"passed": False, "reason": "the case could not run"} for r in case["rubrics"]})
    rows = eval_report.failure_rows(run)
    errored = [r for r in rows if r["case_id"] == case["case_id"]]
    assert errored == [{"case_id": case["case_id"], "title": case["title"], "rubric": "case_error",
                        "check": "The case ran to the end", "reason": "SharedDataMissing: real sample not found"}]


def test_cited_source_draws_a_paged_page_and_reads_a_segment():
    run = make_run()
    case = next(c for c in run["results"] if c["case_id"] == FAILING_CASE)
    fact = case["actual"]["facts"][1]
    view = eval_sources.cited_source(FAILING_CASE, fact["document"], fact["citation"], builder=fixture_document)
    assert view.title == "intake.pdf" and view.location == "page 1" and view.quote == "? sulfa"
    assert view.page_png.startswith(b"\x89PNG") and view.box == fact["citation"]["bounding_box"]
    hl7 = next(c for c in run["results"] if c["case_id"] == "hl7-oru-potassium")["actual"]["facts"][0]
    view = eval_sources.cited_source("hl7-oru-potassium", "oru", hl7["citation"], builder=fixture_document)
    assert view.page_png is None and view.source_text.startswith("OBX|1|NM|2823-3^Potassium^LN||5.9")
    missing = eval_sources.cited_source("x", "nope", hl7["citation"],
                                 builder=lambda c, d: (_ for _ in ()).throw(NotFound("no such document")))
    assert missing.page_png is None and "could not be read" in missing.note
    assert eval_sources.document_key_for(case, fact["citation"]) == "intake"


def test_the_cited_source_is_read_from_the_documents_the_run_kept(data_dir):
    results_dir = data_dir / "eval-results"
    run = keep_fixture_documents(data_dir, make_run())
    case = next(c for c in run["results"] if c["case_id"] == FAILING_CASE)
    ref = case["kept_documents"]["intake"]
    data, _ = fixture_document(FAILING_CASE, "intake")
    assert ref["filename"] == "intake.pdf" and (results_dir / "documents" / ref["sha256"]).read_bytes() == data
    # kept once: the same bytes kept again (another case, another run) write nothing new
    assert eval_sources.keep_document(results_dir, data, "again.pdf")["sha256"] == ref["sha256"]
    assert len(list((results_dir / "documents").iterdir())) == 3  # intake, lab, oru
    fact = next(f for f in case["actual"]["facts"] if f["fact_text"] == "Allergy: sulfa")
    view = eval_sources.cited_source(FAILING_CASE, "intake", fact["citation"],
                                     builder=eval_sources.kept_documents(results_dir, case))
    assert view.title == "intake.pdf" and view.page_png.startswith(b"\x89PNG") and view.note is None
    hl7_case = next(c for c in run["results"] if c["case_id"] == "hl7-oru-potassium")
    view = eval_sources.cited_source("hl7-oru-potassium", "oru", hl7_case["actual"]["facts"][0]["citation"],
                                     builder=eval_sources.kept_documents(results_dir, hl7_case))
    assert view.source_text.startswith("OBX|1|NM|2823-3^Potassium^LN||5.9")


def test_a_run_without_kept_documents_says_so_instead_of_failing(data_dir):
    results_dir = data_dir / "eval-results"
    case = next(c for c in make_run()["results"] if c["case_id"] == FAILING_CASE)  # no kept_documents
    citation = case["actual"]["facts"][1]["citation"]
    view = eval_sources.cited_source(FAILING_CASE, "intake", citation,
                                     builder=eval_sources.kept_documents(results_dir, case))
    assert view.page_png is None and view.note == "this run did not keep its documents"
    # kept, but the file is gone or was changed: said in words, never drawn from other bytes
    kept = keep_fixture_documents(data_dir, make_run())
    case = next(c for c in kept["results"] if c["case_id"] == FAILING_CASE)
    stored = results_dir / "documents" / case["kept_documents"]["intake"]["sha256"]
    stored.write_bytes(b"%PDF-1.4 something else")
    view = eval_sources.cited_source(FAILING_CASE, "intake", citation,
                                     builder=eval_sources.kept_documents(results_dir, case))
    assert view.page_png is None and "does not match its checksum" in view.note
    stored.unlink()
    view = eval_sources.cited_source(FAILING_CASE, "intake", citation,
                                     builder=eval_sources.kept_documents(results_dir, case))
    assert "is gone" in view.note
    case["kept_documents"]["intake"]["sha256"] = "../../etc/passwd"
    view = eval_sources.cited_source(FAILING_CASE, "intake", citation,
                                     builder=eval_sources.kept_documents(results_dir, case))
    assert "kept no document intake" in view.note


def test_the_case_ids_offered_are_the_gates_case_files(tmp_path):
    from golden.cases import load_cases  # a test may read the gate; the product reads its files only

    assert eval_runs.golden_case_ids() == sorted(c.id for c in load_cases())
    assert eval_runs.golden_case_ids(tmp_path / "none") == []


FAKE_GATE = r"""
import json, sys, time, pathlib
args = sys.argv[1:]
progress = pathlib.Path(args[args.index("--progress") + 1])
cases = [args[i + 1] for i, a in enumerate(args) if a == "--case"] or ["a", "b", "c"]
for n, case in enumerate(cases, 1):
    tmp = progress.with_suffix(".tmp")
    tmp.write_text(json.dumps({"run_id": "20261201-000000-fake00", "done": n, "total": len(cases),
                               "case_id": case, "finished": n == len(cases)}))
    tmp.replace(progress)
    time.sleep(0.2)
print(json.dumps({"run_id": "20261201-000000-fake00", "verdict": "pass", "cases": len(cases)}))
"""


def _wait(handle, timeout=30.0):
    deadline = time.time() + timeout
    seen = []
    while time.time() < deadline:
        report = eval_runs.run_progress(handle)
        seen.append((report["state"], report["done"]))
        if report["state"] in ("finished", "crashed"):
            return report, seen
        time.sleep(0.05)
    raise AssertionError(f"run did not finish: {seen[-5:]}")


def test_start_run_and_poll_its_progress(settings):
    handle = eval_runs.start_run(settings, ["lab-classic-clean", FAILING_CASE],
                                 command=[sys.executable, "-c", FAKE_GATE])
    assert handle.progress_path.parent == settings.eval_results_dir
    assert handle.progress_path.name.endswith(".progress.json")
    report, seen = _wait(handle)
    assert report["state"] == "finished" and report["exit_code"] == 0
    assert report["run_id"] == "20261201-000000-fake00" and report["summary"]["verdict"] == "pass"
    assert (report["done"], report["total"], report["case_id"], report["fraction"]) == (2, 2, FAILING_CASE, 1.0)
    assert any(state == "running" and done == 1 for state, done in seen)
    by_path = eval_runs.run_progress(handle.progress_path)  # another session knows only the file
    assert by_path["state"] == "finished" and by_path["done"] == 2


def test_a_crashed_run_reports_its_last_error_line(settings):
    handle = eval_runs.start_run(settings, command=[sys.executable, "-c",
                                                "import sys; sys.stderr.write('no golden case named zzz\\n'); "
                                                "sys.exit(2)"])
    report, _ = _wait(handle)
    assert report["state"] == "crashed" and report["exit_code"] == 2
    assert report["error"] == "no golden case named zzz"


def test_collect_run_imports_the_finished_run_and_tidies_up(wb, data_dir, tmp_path):
    # The fake gate writes its run file into the data dir it was given, like the real one.
    artifact = tmp_path / "artifact.json"
    artifact.write_text(json.dumps(make_run(run_id="20261201-000000-fake00")))
    script = FAKE_GATE.replace("print(json.dumps(", (
        "import os, shutil\n"
        "shutil.copy(%r, pathlib.Path(os.environ['WORKBENCH_DATA_DIR']) / 'eval-results' / "
        "'20261201-000000-fake00.json')\nprint(json.dumps(") % str(artifact))
    handle = eval_runs.start_run(wb.settings, ["a"], command=[sys.executable, "-c", script])
    _wait(handle)
    report = eval_runs.collect_run(wb, handle)
    assert report["state"] == "finished" and report["imported"] == 1 and report["skipped"] == []
    assert not handle.progress_path.exists() and not handle.stdout_path.exists()
    assert [r["run_id"] for r in evals.list_runs(wb)] == ["20261201-000000-fake00"]
