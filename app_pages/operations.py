"""Operations: jobs (retry a failed one), queue depth, worker heartbeat, supervisor
handoffs and stage latency. PHI-free: ids, codes and timings only, never names or text."""

import pandas as pd
import streamlit as st

from core.errors import WorkbenchError
from core.services import operations
from core.services.health import health
from ui import labels
from ui.inert import md_text
from ui.runtime import workbench

wb = workbench()
st.title("Operations")
TIME = st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm:ss")


def _retry(job_id: int) -> None:
    try:
        operations.retry_job(wb, job_id, by=wb.settings.user)
    except WorkbenchError as exc:
        st.session_state["ops_notice"] = ("error", exc.message)
    else:
        st.session_state["ops_notice"] = ("success", f"Job {job_id} is back in the queue; the worker will read it again.")


@st.fragment(run_every=3.0)
def status_panel() -> None:
    report = health(wb.settings, db=wb.db)
    depth = operations.queue_depth(wb)
    workers = operations.workers(wb)
    live = workers[0] if workers else None
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Health", {"ok": "ok", "degraded": "degraded", "error": "down"}.get(report["status"], report["status"]),
              help=labels.code_hint(*(k for k, ok in report["checks"].items() if not ok)) if report["status"] != "ok"
              else "database, schema and worker all fine")
    c2.metric("Waiting in the queue", depth["pending"])
    c3.metric("Being read now", depth["running"])
    c4.metric("Failed", depth["failed"], help="Failed jobs can be retried from the table below.")
    if live is None:
        st.warning("No worker has written a heartbeat yet: uploads wait in the queue until one runs "
                   "(`python -m core worker`).")
    else:
        text = (f"Worker {live['worker_id']}: {labels.worker_state(live['state'])}, {labels.seen_ago(live['age_seconds'])}"
                f" · {live['processed']} read, {live['failed']} failed")
        if live["fresh"]:
            st.success(text, icon=":material/favorite:")
        else:
            st.warning(f"{text}. Stale: no heartbeat within {live['stale_after_seconds']:.0f} s.",
                       icon=":material/heart_broken:")
        if len(workers) > 1:
            with st.expander(f"All workers ({len(workers)})"):
                st.dataframe([{"worker": w["worker_id"], "state": labels.worker_state(w["state"]),
                               "last seen": labels.seen_ago(w["age_seconds"]), "fresh": w["fresh"],
                               "read": w["processed"], "failed": w["failed"]} for w in workers],
                             hide_index=True, width="stretch")
    with st.expander("Health report (raw)"):
        st.json(report, expanded=False)


@st.fragment(run_every=5.0)
def jobs_panel() -> None:
    notice = st.session_state.pop("ops_notice", None)
    if notice:
        getattr(st, notice[0])(notice[1])
    st.subheader("Jobs")
    only = st.segmented_control("Show", ["all", "failed", "pending", "running", "succeeded"], default="all",
                                key="ops_status", format_func=lambda s: "all" if s == "all" else labels.job_status(s))
    found = operations.jobs(wb, status=None if only in (None, "all") else only)
    if not found:
        st.caption("No jobs.")
        return
    table = pd.DataFrame([{
        "job": j["id"], "document": j["document_id"], "type": labels.doc_type(j["doc_type"]),
        "status": labels.job_status(j["status"]), "attempts": j["attempts"], "created": j["created_at"],
        "started": j["started_at"], "finished": j["finished_at"],
        **{stage: j["timings"].get(stage) for stage in operations.TIMING_COLUMNS},
        "error": labels.error_code(j["error_code"]) if j["error_code"] else "", "message": j["error_message"] or "",
    } for j in found])
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={"created": TIME, "started": TIME, "finished": TIME,
                                **{s: st.column_config.NumberColumn(s, help=f"{s} time (ms)", format="%.0f")
                                   for s in operations.TIMING_COLUMNS}})
    failed = [j for j in found if j["status"] == "failed"]
    if failed:
        st.markdown("**Failed jobs**")
    for j in failed:
        with st.container(border=True):
            text, button = st.columns([5, 1], vertical_alignment="center")
            text.markdown(f"Job {j['id']} (document {j['document_id']}, {labels.doc_type(j['doc_type'])}): "
                          f"{md_text(j['error_message'] or labels.error_code(j['error_code']))}",
                          help=labels.code_hint(j["error_code"]))
            deleted = j["document_deleted"]
            button.button("Retry", key=f"retry-{j['id']}", on_click=_retry, args=(j["id"],), disabled=deleted,
                          help="The document was deleted" if deleted else "Read this document again")


@st.fragment(run_every=10.0)
def flow_panel() -> None:
    st.subheader("Time per stage")
    latency = operations.stage_latency(wb)
    if latency:
        frame = pd.DataFrame([{"stage": f"{r['stage']} ({'answer' if r['kind'] == 'answer' else 'job'})",
                               "median (p50) ms": r["p50_ms"], "slow (p95) ms": r["p95_ms"]} for r in latency])
        st.bar_chart(frame, x="stage", y=["median (p50) ms", "slow (p95) ms"], stack=False, horizontal=True,
                     sort=False, x_label="stage", y_label="milliseconds")
        st.caption("From the latest finished jobs and chat answers; n = " +
                   ", ".join(f"{r['stage']} {r['n']}" for r in latency))
    else:
        st.caption("No finished jobs or answers yet.")
    st.subheader("Recent supervisor handoffs")
    handoffs = operations.recent_handoffs(wb)
    if not handoffs:
        st.caption("None yet.")
        return
    st.dataframe([{"at": h["at"], "from": h["source"], "to": h["destination"], "task": h["task"].replace("_", " "),
                   "reason": h["reason"], "outcome": (h["outcome"] or "").replace("_", " "),
                   "latency ms": h["latency_ms"], "error": labels.error_code(h["error"]) if h["error"] else "",
                   "job": h["job_id"]} for h in handoffs],
                 hide_index=True, width="stretch", column_config={"at": TIME})


status_panel()
jobs_panel()
flow_panel()
