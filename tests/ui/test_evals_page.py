"""The Evals page through AppTest, on a seeded run artifact with a failing case."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.support.kept_runs import write_kept_run as write_run
from tests.support.app_support import app
from tests.support.eval_fixtures import DOC_FACT_REASON, FAILING_CASE, FAILING_REASON, make_run
from tests.support.eval_fixtures import write_run as write_run_without_documents

ROOT = Path(__file__).resolve().parents[2]
OLD = dict(run_id="20261130-091500-0a0a0a", verdict="pass", started_at="2026-11-30T09:15:00Z",
           finished_at="2026-11-30T09:15:39Z", commit="bb944d4")


def run_page(user: str = "dr.ops") -> AppTest:
    """The page on its own, signed in as an admin (only an admin runs the gate)."""
    return app("app_pages/evals.py", user=user).run()


def _text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [e.value for e in at.error] + [s.value for s in at.success]
    parts += [c.value for c in at.caption] + [w.value for w in at.warning]
    return "\n".join(parts)


def _overlay(at: AppTest) -> dict:
    (element,) = at.get("bidi_component")
    assert element.proto.component_name == "cdw_page_overlay"
    return json.loads(element.proto.json)


def test_empty_data_dir_says_how_to_get_a_run(app_env):
    at = run_page()
    assert not at.exception, at.exception
    assert any("No eval runs yet" in i.value for i in at.info)
    assert any(b.label == "Run the gate" for b in at.button)


def test_a_viewer_or_reviewer_reads_runs_but_cannot_run_the_gate(app_env, data_dir):
    write_run(data_dir)
    for user in ("dr.viewer", "dr.reviewer"):
        at = run_page(user)
        assert not at.exception, at.exception
        assert not any(b.label == "Run the gate" for b in at.button)
        assert any("Running the gate needs the admin role" in c.value for c in at.caption)
        assert at.selectbox(key="eval_run_select").value == "20261201-143500-ab12cd"  # the runs are readable


def test_a_failing_run_shows_why_first(app_env, data_dir):
    write_run(data_dir, **OLD)
    write_run(data_dir)
    at = run_page()
    assert not at.exception, at.exception
    text = _text(at)
    # the newest run is selected; its verdict in plain words
    assert at.selectbox(key="eval_run_select").value == "20261201-143500-ab12cd"
    assert any(e.value.startswith("**Failed** — 1 of 5 cases failed") for e in at.error)
    # the failing case and its failing rubrics' reasons, in words, near the top
    assert f"**{FAILING_CASE}**" in text
    assert f"**The right facts reach the chart, nothing else:** {FAILING_REASON}" in text
    assert DOC_FACT_REASON in text
    assert ("- **The right facts reach the chart, nothing else:** Below its threshold (pass rate 80% is below the "
            "threshold 95%); worse than the baseline") in text
    assert "promotion_expectations:" not in text  # no bare rubric codes as headings
    # runs table: both runs, verdicts in words
    runs = at.dataframe[0].value
    assert list(runs["Verdict"]) == ["Failed", "Passed"] and list(runs["Commit"]) == ["c110ede", "bb944d4"]
    assert list(runs["Failed cases"]) == [1, 0]
    # checks table: pass rate against threshold and baseline with a plain status
    checks = at.dataframe[1].value
    row = checks[checks["Check"] == "The right facts reach the chart, nothing else"].iloc[0]
    assert (row["Pass rate"], row["Threshold"], row["Baseline"]) == ("80%", "95%", "100%")
    assert row["Status"] == "Below threshold, regressed" and row["Change"] == "-20.0 points"
    assert checks.iloc[-1]["Status"] == "Meets threshold" and checks.iloc[-1]["Change"] == "no change"
    assert "Rubric" not in checks.columns  # plain words only
    # case drill-down opens on the failing case with its reasons, expected and actual
    case_box = at.selectbox(key="eval_case_20261201-143500-ab12cd")
    assert case_box.value == FAILING_CASE
    assert any(FAILING_REASON in e.value for e in at.error)
    assert any("Expected" in m.value for m in at.markdown) and at.json
    # the fact the failing reason quotes is shown first, its page drawn with the box
    assert at.selectbox(key=f"eval_fact_20261201-143500-ab12cd_{FAILING_CASE}").value == 0
    assert any(m.value.startswith("**Allergy: sulfa**") and "chart: added to the chart" in m.value for m in at.markdown)
    assert any(c.value.startswith("Quote: “? sulfa”") for c in at.caption)
    # drawn by the viewer's page component (as on the Documents page): the page and one red box
    drawn = _overlay(at)
    assert drawn["src"].startswith("data:image/png;base64,")
    (box,) = drawn["boxes"]
    assert box["cls"] == "cited" and box["selected"]
    case = next(c for c in make_run()["results"] if c["case_id"] == FAILING_CASE)
    cited = next(f for f in case["actual"]["facts"] if f["fact_text"] == "Allergy: sulfa")["citation"]["bounding_box"]
    assert (box["x"], box["y"], box["w"], box["h"]) == (cited["x"], cited["y"], cited["width"], cited["height"])
    assert not at.get("image")  # no flat image with a burnt-in box any more
    # an answer's citation opens the same component on its page
    next(t for t in at.toggle if t.label == "Show on the page").set_value(True).run()
    assert not at.exception, at.exception
    pages = [json.loads(e.proto.json) for e in at.get("bidi_component")]
    assert len(pages) == 2 and [b["cls"] for b in pages[1]["boxes"]] == ["cited"]
    assert any("Step 3: “Does she have any drug allergies?”" in m.value for m in at.markdown)
    # download and charts
    assert [b.label for b in at.get("download_button")] == ["Download run (JSON)"]
    assert len(at.get("vega_lite_chart")) == 2
    assert any("Bottleneck: **OCR**" in m.value for m in at.markdown)


def test_show_details_opens_a_failed_case(app_env, data_dir):
    run = make_run()
    run["results"][0]["rubrics"]["box_on_words"] = {"passed": False, "reason": "the A1c box misses its words"}
    write_run(data_dir, run)
    at = run_page()
    key = "eval_case_20261201-143500-ab12cd"
    assert at.selectbox(key=key).value == "lab-classic-clean"  # run order among the failed
    at.button(key=f"eval_open_20261201-143500-ab12cd_{FAILING_CASE}").click().run()
    assert not at.exception, at.exception
    assert at.selectbox(key=key).value == FAILING_CASE
    assert any(FAILING_REASON in e.value for e in at.error)


def test_a_run_that_kept_no_documents_says_so_where_the_page_would_be(app_env, data_dir):
    write_run_without_documents(data_dir)  # e.g. a run from before the gate kept its documents
    at = run_page()
    assert not at.exception, at.exception
    assert at.selectbox(key="eval_case_20261201-143500-ab12cd").value == FAILING_CASE
    assert not at.get("bidi_component")  # no page to draw
    assert any(c.value.startswith("Quote: “? sulfa” · this run did not keep its documents") for c in at.caption)
    assert FAILING_REASON in _text(at)  # the rest of the case reads as before


def test_an_hl7_fact_shows_its_segment(app_env, data_dir):
    write_run(data_dir)
    at = run_page()
    at.selectbox(key="eval_case_20261201-143500-ab12cd").set_value("hl7-oru-potassium").run()
    assert not at.exception, at.exception
    assert any(c.value.startswith("OBX|1|NM|2823-3^Potassium^LN||5.9") for c in at.code)
    assert any(c.value.startswith("Quote: “5.9”") for c in at.caption)


def test_a_run_whose_file_is_gone_still_shows_its_reasons(app_env, data_dir):
    from core.services.evals.records import sync_runs

    path = write_run(data_dir)
    sync_runs(app_env)
    path.unlink()
    at = run_page()
    assert not at.exception, at.exception
    assert any("The run file is gone" in w.value for w in at.warning)
    assert FAILING_REASON in _text(at)


FAKE_GATE = r"""
import json, os, pathlib, shutil, sys
args = sys.argv[1:]
progress = pathlib.Path(args[args.index("--progress") + 1])
progress.write_text(json.dumps({"run_id": "20261202-080000-c0ffee", "done": 1, "total": 1,
                                "case_id": "lab-classic-clean", "finished": True}))
shutil.copy(%r, pathlib.Path(os.environ["WORKBENCH_DATA_DIR"]) / "eval-results" / "20261202-080000-c0ffee.json")
print(json.dumps({"run_id": "20261202-080000-c0ffee", "verdict": "pass", "cases": 1}))
"""


def test_run_the_gate_starts_a_background_run_and_imports_it(app_env, data_dir, tmp_path, monkeypatch):
    from core.services.evals import runs as eval_runs

    write_run(data_dir)
    artifact = tmp_path / "new-run.json"
    artifact.write_text(json.dumps(make_run(run_id="20261202-080000-c0ffee", verdict="pass",
                                            started_at="2026-12-02T08:00:00Z", finished_at="2026-12-02T08:00:40Z")))
    real_start = eval_runs.start_run
    started = []

    def fake_start(settings, case_ids=None, **kw):
        started.append(case_ids)
        return real_start(settings, case_ids, command=[sys.executable, "-c", FAKE_GATE % str(artifact)])

    monkeypatch.setattr(eval_runs, "start_run", fake_start)
    at = run_page()
    next(b for b in at.button if b.label == "Run the gate").click().run()
    assert not at.exception, at.exception
    assert started == [None]
    deadline = time.time() + 30
    while time.time() < deadline and not any("finished" in s.value for s in at.success):
        time.sleep(0.3)
        at.run()
        assert not at.exception, at.exception
    assert any(s.value.startswith("Run 20261202-080000-c0ffee finished: Passed") for s in at.success)
    assert at.selectbox(key="eval_run_select").value == "20261202-080000-c0ffee"
    assert list(at.dataframe[0].value["Run"])[0] == "20261202-080000-c0ffee"


def test_a_run_shows_the_coverage_guards_figures(app_env, data_dir):
    run = make_run(verdict="pass") | {"coverage_guard": {
        "precision": 0.993, "alarms": 407, "real_alarms": 404, "recall": 0.987, "dropped": 391, "caught": 386,
        "missed_results": 28, "missed_results_caught": 28, "missed_share_caught": 1.0, "regions": 1,
        "expected_regions": 0, "unread_regions": [{"document": "case-a/report", "where": "paragraph 3",
                                                   "text": "Her CRP was 31 mg/L last week.", "expected": False}]}}
    write_run_without_documents(data_dir, run)
    at = run_page()
    assert not at.exception, at.exception
    assert any(s.value == "Results that were not read (the coverage guard)" for s in at.subheader)
    text = _text(at)
    assert "precision 99.3% (404 of 407" in text and "recall 98.7% (386 of 391" in text
    assert "case-a/report · paragraph 3: Her CRP was 31 mg/L last week." in text


def test_expected_reads_as_a_table_not_json(app_env, data_dir):
    write_run(data_dir)
    at = run_page()
    at.selectbox(key="eval_case_20261201-143500-ab12cd").set_value(FAILING_CASE).run()
    assert not at.exception, at.exception
    expected = next(t.value for t in at.table if list(t.value.columns) == ["Expected", "Of", "What"])
    assert len(expected) >= 1 and not expected["What"].str.contains("{", regex=False).any()
    assert any(e.label == "As written in the case file" for e in at.expander)  # the JSON, folded


def _trend(at: AppTest):
    """The trend chart's spec and its rows (Streamlit sends the data beside the spec, as Arrow)."""
    import pyarrow as pa

    chart = next(c for c in at.get("vega_lite_chart") if "facet" in json.loads(c.proto.spec))
    (data,) = chart.proto.datasets
    return json.loads(chart.proto.spec), pa.ipc.open_stream(data.data.data).read_pandas()


def test_the_trend_keeps_whole_set_and_chosen_case_runs_apart_and_each_run_a_point(app_env, data_dir):
    write_run(data_dir, **OLD)
    write_run(data_dir, run=make_run(run_id="20261201-080000-aaaaaa", started_at="2026-12-01T08:00:00Z",
                                     finished_at="2026-12-01T08:00:40Z") | {"selection": [FAILING_CASE]})
    write_run(data_dir)
    at = run_page()
    assert not at.exception, at.exception
    spec, rows = _trend(at)
    encoding = spec["spec"]["encoding"]
    assert encoding["x"]["field"] == "Started" and encoding["x"]["type"] == "temporal"  # a time, not a day
    assert encoding["color"]["field"] == "series"
    assert encoding["color"]["scale"]["domain"] == ["Whole golden set", "Chosen cases only"]
    promo = [(r.run_id, r.series) for r in rows.itertuples() if r.rubric == "promotion_expectations"]
    assert list(at.dataframe[0].value["Run of"]) == ["Whole golden set", "Chosen cases only", "Whole golden set"]
    assert promo == [("20261130-091500-0a0a0a", "Whole golden set"), ("20261201-080000-aaaaaa", "Chosen cases only"),
                     ("20261201-143500-ab12cd", "Whole golden set")]


def test_no_runs_yet_is_not_said_under_a_running_bar(app_env, data_dir, monkeypatch):
    from core.services.evals import runs as eval_runs

    monkeypatch.setattr(eval_runs, "collect_run", lambda wb, handle: {
        "state": "running", "total": 3, "done": 1, "case_id": "lab-classic-clean", "fraction": 1 / 3})
    at = app("app_pages/evals.py", user="dr.ops")
    at.session_state["eval_handle"] = object()
    at.run()
    assert not at.exception, at.exception
    assert any("1 of 3 cases done" in p.proto.text for p in at.get("progress"))
    assert not any("No eval runs yet" in i.value for i in at.info)
    assert any(c.value == "The run will be listed here when it finishes." for c in at.caption)
