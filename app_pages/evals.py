"""Evals: runs of the test set of sample documents (the golden gate) for reviewers. Why a
case failed comes first."""

from __future__ import annotations

import json
from pathlib import Path

import altair as alt
import pandas as pd
import streamlit as st

from domain.errors import WorkbenchError
from domain.policy.access.permissions import Permission
from core.services.evals import report as eval_report
from core.services.evals.expectations import expectation_rows
from core.services.evals import runs as eval_runs
from core.services.evals import sources as eval_sources
from core.services.evals import records as evals
from ui import auth, labels
from ui.media import download_button
from ui.inert import md_text, plain, plain_text
from ui.runtime import workbench
from ui.viewer import render_page_image
from ui.widgets import show_citation

auth.require(Permission.READ)
wb = workbench()
st.title("Evals")
st.caption("Each run reads the test set of sample documents (the golden gate) through the workbench and scores "
           "every case with yes/no checks. "
           "A run fails when a check's pass rate is below its threshold, or more than "
           f"{eval_report.REGRESSION_POINTS:.0f} points below the baseline, or a case cannot run.")


def _took(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    return f"{seconds:.1f} s" if seconds < 90 else f"{int(seconds // 60)} min {int(seconds % 60)} s"


def _n(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _pct(rate: float | None) -> str:
    return "—" if rate is None else f"{rate:.0%}"


@st.cache_data(show_spinner="Reading the fixture document…", max_entries=64)
def _cited(results_dir: str, case_id: str, kept_json: str, doc_key: str,
           citation_json: str) -> eval_sources.FixtureSource:
    """The cited place in a document the run kept (``kept_json``: the case's ``kept_documents``)."""
    reader = eval_sources.kept_documents(Path(results_dir), {"kept_documents": json.loads(kept_json)})
    return eval_sources.cited_source(case_id, doc_key, json.loads(citation_json), builder=reader)


# --- run the gate in the background -------------------------------------------------------

def _start() -> None:
    if not auth.can(Permission.RUN_EVAL):  # the button is hidden too; a stale click is refused here
        return
    try:
        st.session_state["eval_handle"] = eval_runs.start_run(wb.settings, st.session_state.get("eval_cases") or None)
    except OSError as exc:
        st.session_state["eval_outcome"] = {"state": "crashed", "error": f"could not start the gate: {exc}"}
    else:
        st.session_state.pop("eval_outcome", None)


@st.fragment(run_every=1.0)
def _progress() -> None:
    handle = st.session_state.get("eval_handle")
    if handle is None:
        return
    report = eval_runs.collect_run(wb, handle)
    if report["state"] in ("starting", "running"):
        if report["total"]:
            last = f" — last finished: {report['case_id']}" if report["case_id"] else ""
            text = f"Running the gate: {report['done']} of {report['total']} cases done{last}"
        else:
            text = "Starting the gate (building the case template)…"
        st.progress(report["fraction"], text=text)
        return
    st.session_state.pop("eval_handle", None)
    st.session_state["eval_outcome"] = report
    if report.get("run_id"):
        st.session_state["eval_show_next"] = report["run_id"]  # the run picker is set on the full rerun
    st.rerun()


running = st.session_state.get("eval_handle") is not None
if not auth.can(Permission.RUN_EVAL):
    st.caption("Running the gate needs the admin role; the runs below can be read by everyone signed in.")
else:
    with st.container(border=True):
        left, right = st.columns([4, 1], vertical_alignment="bottom")
        left.multiselect("Only these cases (leave empty to run the whole golden set)", eval_runs.golden_case_ids(),
                         key="eval_cases", disabled=running)
        right.button("Run the gate", type="primary", on_click=_start, disabled=running, width="stretch")
        if running:
            _progress()
        outcome = st.session_state.get("eval_outcome")
        if outcome and outcome["state"] == "finished":
            summary = outcome.get("summary") or {}
            st.success(f"Run {outcome['run_id']} finished: {eval_report.verdict_label(summary.get('verdict'))}. "
                       "It is selected below.")
        elif outcome:
            st.error(f"The gate stopped before it finished: {md_text(outcome['error'])}")

skipped: list[tuple[str, str]] = []
evals.sync_runs(wb, skipped)
if skipped:
    with st.expander(f"Files in eval-results that are not runs ({len(skipped)})"):
        for name, why in skipped:
            st.markdown(f"- {md_text(name)}: {md_text(why)}")

runs = evals.list_runs(wb)
if not runs:
    if running:  # the bar above says what happens; the run is listed here when it finishes
        st.caption("The run will be listed here when it finishes.")
    else:
        st.info("No eval runs yet. Press **Run the gate**, or run `python -m core eval` in a terminal "
                "while the workbench is stopped.")
    st.stop()

# --- runs -----------------------------------------------------------------------------------

by_id = {r["run_id"]: r for r in runs}
if st.session_state.get("eval_show_next") in by_id:
    st.session_state["eval_run_select"] = st.session_state.pop("eval_show_next")
if st.session_state.get("eval_run_select") not in by_id:
    st.session_state["eval_run_select"] = runs[0]["run_id"]


def _run_choice(run_id: str) -> str:
    r = by_id[run_id]
    failed = f"{r['failed_cases']} of {_n(r['cases'], 'case')} failed" if r["failed_cases"] else _n(r["cases"], "case")
    return f"{r['started_at']:%Y-%m-%d %H:%M} UTC · {r['verdict_label']} · {failed} · {r['run_id']}"


st.subheader("Runs")
st.dataframe(pd.DataFrame([{
    "Verdict": r["verdict_label"], "Started (UTC)": f"{r['started_at']:%Y-%m-%d %H:%M}", "Took": _took(r["seconds"]),
    "Cases": r["cases"], "Failed cases": r["failed_cases"],
    "Run of": evals.SOME_CASES if r["selection"] else evals.WHOLE_SET,  # the trend's two series
    "Commit": r["commit"] or "—", "Run": r["run_id"],
} for r in runs]), hide_index=True, width="stretch", height="auto" if len(runs) <= 6 else 250)
run_id = st.selectbox("Show run", list(by_id), format_func=_run_choice, key="eval_run_select")

try:
    run = evals.load_run(wb, run_id)
except WorkbenchError as exc:
    st.error(md_text(exc.message))
    st.stop()

# --- the selected run: verdict and why --------------------------------------------------------

failures = eval_report.failure_rows(run)
failed_ids = list(dict.fromkeys(f["case_id"] for f in failures))
checks = eval_report.rubric_table(run)
bad_checks = [c for c in checks if not c["ok"]]
head, download = st.columns([4, 1], vertical_alignment="center")
if run["verdict"] == "pass":
    head.success(f"**Passed** — {_n(run['cases'], 'case')}; every check meets its threshold.")
else:
    head.error(f"**Failed** — {len(failed_ids)} of {_n(run['cases'], 'case')} failed; "
               f"{len(bad_checks)} of {_n(len(checks), 'check')} below threshold or regressed.")
with download:  # built when clicked, never left at a /media address (ui/media.py)
    download_button("Download run (JSON)", lambda: json.dumps(run, indent=2, default=str),
                    file_name=f"eval-run-{run_id}.json", mime="application/json", key=f"eval_json_{run_id}",
                    width="stretch")
selection = run.get("selection")
st.caption(f"Run {run_id} · started {by_id[run_id]['started_at']:%Y-%m-%d %H:%M} UTC · "
           f"took {_took(run.get('seconds'))} · "
           f"commit {run.get('commit') or 'unknown'} · "
           + (f"only the cases {', '.join(selection)}" if selection else "the whole golden set"))
if run.get("from_database"):
    st.warning("The run file is gone from eval-results; showing what the database kept "
               "(verdict, checks and reasons; no expected/actual details).")

reasons = eval_report.gate_reasons(run)
if reasons:
    st.markdown("**Why the gate failed**\n\n" + "\n".join(f"- **{md_text(r['subject'])}:** {md_text(r['reasons'])}"
                                                          for r in reasons))

st.subheader(f"Failed cases ({len(failed_ids)})")
if not failed_ids:
    st.success("Every case passed every check.")
CASE_KEY = f"eval_case_{run_id}"


def _open_case(case_id: str) -> None:
    st.session_state[CASE_KEY] = case_id


for case_id in failed_ids:
    rows = [f for f in failures if f["case_id"] == case_id]
    with st.container(border=True):
        title, jump = st.columns([5, 1], vertical_alignment="center")
        title.markdown(f"**{md_text(case_id)}** — {md_text(rows[0]['title'])}")
        jump.button("Show details", key=f"eval_open_{run_id}_{case_id}", on_click=_open_case, args=(case_id,),
                    type="tertiary", help="Open this case in Case details below")
        st.markdown("\n".join(f"- **{md_text(r['check'])}:** {md_text(r['reason'])}" for r in rows))

st.subheader("Checks against thresholds and the baseline")
checks_df = pd.DataFrame([{
    "Status": c["status"], "Check": c["label"], "Pass rate": _pct(c["pass_rate"]), "Threshold": _pct(c["threshold"]),
    "Baseline": _pct(c["baseline"]),
    "Change": "—" if c["change_points"] is None else (
        "no change" if c["change_points"] == 0 else f"{c['change_points']:+.1f} points"),
} for c in checks])
st.dataframe(checks_df.style.map(lambda v: "color: #b42318; font-weight: 600" if v != "Meets threshold" else "",
                                 subset=["Status"]),
             hide_index=True, width="stretch", height=35 * (len(checks_df) + 1) + 3,
             column_config={"Status": st.column_config.TextColumn(width="medium"),
                            "Check": st.column_config.TextColumn(width="large"),
                            "Change": st.column_config.TextColumn("Change vs baseline")})

guard_lines = eval_report.coverage_guard_lines(run.get("coverage_guard"))
if guard_lines:
    st.subheader("Results that were not read (the coverage guard)")
    st.markdown("\n".join(f"- {md_text(line.strip())}" for line in guard_lines))

# --- one case in detail -------------------------------------------------------------------

st.subheader("Case details")
cases = eval_report.ordered_cases(run)
case_by_id = {c["case_id"]: c for c in cases}
if not cases:
    st.info("This run has no case results.")
else:
    def _case_choice(case_id: str) -> str:
        c = case_by_id[case_id]
        mark = "FAILED" if eval_report.case_failed(c) else "passed"
        return plain_text(f"{mark} · {case_id}" + (f" — {c['title']}" if c.get("title") else ""))

    if st.session_state.get(CASE_KEY) not in case_by_id:
        st.session_state[CASE_KEY] = next(iter(case_by_id))
    case_id = st.selectbox("Case (failed cases first)", list(case_by_id), format_func=_case_choice, key=CASE_KEY)
    case = case_by_id[case_id]
    meta = [", ".join(t.replace("_", " ") for t in case.get("doc_types") or []), ", ".join(case.get("scenarios") or []),
            _took(case.get("seconds")) if case.get("seconds") is not None else ""]
    st.caption(" · ".join(m for m in meta if m))
    if case.get("status") == "error":
        st.error(f"The case could not run: {md_text(case.get('error') or 'no reason recorded')}")
    else:
        for rubric, outcome in (case.get("rubrics") or {}).items():
            if not outcome.get("passed"):
                st.error(f"**{md_text(eval_report.rubric_label(rubric))}** — "
                         f"{md_text(outcome.get('reason') or 'no reason recorded')}")
        passed = [(r, o) for r, o in (case.get("rubrics") or {}).items() if o.get("passed")]
        with st.expander(f"Checks this case passed ({len(passed)})"):
            st.markdown("\n".join(f"- {md_text(eval_report.rubric_label(r))}: {md_text(o.get('reason') or '')}"
                                   for r, o in passed) or "None.")

    actual = case.get("actual") or {}
    expected_col, actual_col = st.columns(2)
    with expected_col:
        st.markdown("**Expected** (what the case file asks for)")
        expected_rows = expectation_rows(case.get("expected"))
        if expected_rows:
            # A static table: each expectation wraps and reads whole, not cut at a cell's edge.
            st.table(plain(pd.DataFrame(expected_rows)), hide_index=True, border="horizontal")
        else:
            st.caption("The case file expects nothing in particular.")
        with st.expander("As written in the case file"):
            st.json(plain(case.get("expected") or {}), expanded=False)
    with actual_col:
        st.markdown("**Actual**")
        documents = actual.get("documents") or {}
        if documents:
            st.dataframe(plain(pd.DataFrame([{
                "Document": name, "Type": d.get("doc_type"), "Job": d.get("job_status"),
                "Error": d.get("error_code") or "", "Identity": (d.get("identity") or "").replace("_", " "),
                "Deleted": "yes" if d.get("deleted") else "no",
            } for name, d in documents.items()])), hide_index=True, width="stretch")
        facts = eval_report.ordered_facts(case)
        if facts:
            st.dataframe(plain(pd.DataFrame([{
                "Finding": f.get("fact_text"), "Reading": labels.certainty(f.get("certainty")),
                "Chart": labels.promotion(f.get("promotion_status")), "Document": f.get("document"),
                "Where": labels.location(f.get("citation") or {}, f),
            } for f in facts])), hide_index=True, width="stretch")
        elif case.get("actual") is not None:
            st.caption("No facts.")
        chart = actual.get("chart") or {}
        if any(any(rows for rows in sections.values()) for sections in chart.values()):
            with st.expander("Chart after the case"):
                st.json(plain(chart), expanded=True)

    def _show_source(doc_key: str | None, citation: dict, key: str) -> None:
        if citation.get("source_type") == "guideline":
            show_citation(wb, citation, key=f"eval-g-{key}")
            return
        if doc_key is None:
            st.caption(f"{md_text(citation.get('source_id'))} · {md_text(citation.get('page_or_section'))}: "
                       f"“{md_text(citation.get('quote_or_value'))}”")
            return
        kept = json.dumps(case.get("kept_documents"), sort_keys=True)
        view = _cited(str(wb.settings.eval_results_dir), case_id, kept, doc_key, json.dumps(citation, sort_keys=True))
        if view.page_png:
            # The same viewer as the Documents page: the fixture page with the cited box.
            st.caption(f"{md_text(view.title)} · {md_text(view.location)}"
                       + (": the cited place is boxed in red" if view.box else ""))
            boxes = [{"fact_id": -1, "box": dict(view.box), "box_class": "cited", "label": "the cited place"}] \
                if view.box else []
            render_page_image(view.page_png, boxes, key=key, emphasised=-1)
        elif view.source_text:
            st.markdown(f"**{md_text(view.title)}** · {md_text(view.location)}")
            st.code(view.source_text, language=None, wrap_lines=True)
        st.caption(f"Quote: “{md_text(view.quote)}”" + (f" · {md_text(view.note)}" if view.note else ""))

    if facts:
        st.markdown("**Cited source of a finding**")
        pick_col, source_col = st.columns([2, 3])
        choices = [plain_text(f"{f.get('fact_text')} — {labels.certainty(f.get('certainty'))}, "
                              f"{labels.location(f.get('citation') or {}, f)} of {f.get('document')}")
                  for f in facts]
        with pick_col:
            pick = st.selectbox("Fact (those a failing reason quotes first)", range(len(facts)),
                                format_func=choices.__getitem__, key=f"eval_fact_{run_id}_{case_id}")
            fact = facts[pick]
            cit = fact.get("citation") or {}
            st.markdown(f"**{md_text(fact.get('fact_text'))}**\n\n"
                        f"- kind: {labels.fact_type(fact.get('fact_type'))}\n"
                        f"- reading: {labels.certainty(fact.get('certainty'))}\n"
                        f"- chart: {labels.promotion(fact.get('promotion_status'))}\n"
                        f"- cited: {md_text(labels.location(cit, fact))}"
                        + (f"\n- why it waits for review: {md_text(labels.review_reason(fact['review_reason']))}"
                           if fact.get("review_reason") else ""))
        with source_col:
            _show_source(fact.get("document"), cit, key=f"eval-page-{run_id}-{case_id}-{pick}")

    for answer in actual.get("answers") or []:
        with st.container(border=True):
            verdict = "Refused" if answer.get("refused") else "Answered"
            st.markdown(f"**Step {answer.get('step')}: “{md_text(answer.get('question'))}”** — {verdict}")
            for section, items in (answer.get("sections") or {}).items():
                if not items:
                    continue
                st.markdown(f"*{eval_report.SECTION_LABELS.get(section, section.replace('_', ' '))}*")
                for n, item in enumerate(items):
                    cites = item.get("citations") or []
                    where = "; ".join(f"{md_text(c.get('page_or_section'))} “{md_text(c.get('quote_or_value'))}”"
                                      + (f" ({md_text(eval_sources.document_key_for(case, c))})"
                                         if eval_sources.document_key_for(case, c) else "") for c in cites)
                    st.markdown(f"- {md_text(item.get('text'))}" + (f" — cited: {where}" if where else " — no citation"))
                    for m, c in enumerate(cites):
                        toggle_key = f"eval-a-{run_id}-{case_id}-{answer.get('step')}-{section}-{n}-{m}"
                        if c.get("source_type") == "guideline":
                            _show_source(None, c, key=toggle_key)
                        elif c.get("page") is not None and st.toggle("Show on the page", key=toggle_key):
                            _show_source(eval_sources.document_key_for(case, c), c, key=f"{toggle_key}-page")

# --- trends and latency -------------------------------------------------------------------

st.subheader("Pass rate of every check across runs")
trend = pd.DataFrame(evals.rubric_trend(wb))
if trend.empty:
    st.caption("No pass rates recorded yet.")
else:
    # x is the run's start time, so several runs on one day are separate points; whole-set
    # runs and runs of chosen cases are separate series (their rates are over different cases).
    trend["Started"] = pd.to_datetime(trend["started_at"])
    trend["When"] = trend["Started"].dt.strftime("%Y-%m-%d %H:%M:%S")
    failing_here = [c["label"] for c in bad_checks]
    trend["Check"] = trend["label"].map(lambda label: f"{label} (fails)" if label in failing_here
                                        else label)
    checks_in_order = [f"{label} (fails)" for label in failing_here] + \
        sorted(set(trend["Check"]) - {f"{label} (fails)" for label in failing_here})
    series = [evals.WHOLE_SET, evals.SOME_CASES]
    low = min(0.5, float(trend["pass_rate"].min()))
    st.caption("One small chart per check, oldest run on the left; each point is one run. Blue: runs of the "
               "whole golden set; orange: runs of chosen cases only (not comparable with the whole set). "
               "Checks that fail in the selected run come first, marked (fails).")
    st.altair_chart(
        alt.Chart(trend).mark_line(point=alt.OverlayMarkDef(size=45, filled=True), strokeWidth=2.2).encode(
            x=alt.X("Started:T", title=None, axis=alt.Axis(format="%b %d %H:%M", labelAngle=0, labelOverlap=True,
                                                           tickCount=4)),
            y=alt.Y("pass_rate:Q", title=None, axis=alt.Axis(format="%", tickCount=3),
                    scale=alt.Scale(domain=[low, 1])),
            color=alt.Color("series:N", title=None, scale=alt.Scale(domain=series, range=["#1f77b4", "#ef6c00"]),
                            legend=alt.Legend(orient="top")),
            strokeDash=alt.StrokeDash("series:N", scale=alt.Scale(domain=series, range=[[1, 0], [5, 3]]),
                                      legend=None),
            detail="series:N",
            tooltip=[alt.Tooltip("label:N", title="Check"), alt.Tooltip("When:N", title="Started (UTC)"),
                     alt.Tooltip("series:N", title="Run of"), alt.Tooltip("cases:Q", title="Cases"),
                     alt.Tooltip("pass_rate:Q", title="Pass rate", format=".0%"),
                     alt.Tooltip("run_id:N", title="Run id")],
        ).properties(width=250, height=90).facet(
            facet=alt.Facet("Check:N", sort=checks_in_order, title=None,
                            header=alt.Header(labelLimit=280, labelFontSize=12, labelAnchor="start")),
            columns=3, spacing={"row": 18, "column": 24},
        ),
    )

st.subheader("Time per stage in this run")
stages = evals.stage_latency(run)
if not stages:
    st.caption("This run recorded no stage timings.")
else:
    slowest = next((s for s in stages if s["bottleneck"]), None)
    if slowest:
        total = f" ({slowest['total'] / 1000:.1f} s over {_n(slowest['n'], 'call')})" if slowest.get("total") else ""
        st.markdown(f"Bottleneck: **{slowest['label']}** — the stage that took the most time in total{total}.")
    order = [f"{s['label']} (bottleneck)" if s["bottleneck"] else s["label"] for s in stages]
    latency = pd.DataFrame([{"Stage": name, "Measure": measure, "Milliseconds": s[key]}
                            for s, name in zip(stages, order)
                            for measure, key in (("median (p50)", "p50"), ("slow calls (p95)", "p95"))])
    st.altair_chart(
        alt.Chart(latency).mark_bar().encode(
            y=alt.Y("Stage:N", sort=order, title=None, axis=alt.Axis(labelLimit=300)),
            yOffset=alt.YOffset("Measure:N"),
            x=alt.X("Milliseconds:Q", title="Milliseconds per call"),
            color=alt.Color("Measure:N", title=None, legend=alt.Legend(orient="top")),
            tooltip=["Stage", "Measure", alt.Tooltip("Milliseconds:Q", format=",.1f")],
        ).properties(height=max(160, 34 * len(stages))),
        width="stretch",
    )
