"""Operations (admins): jobs (retry a failed one), queue depth, worker heartbeat,
supervisor handoffs and stage latency; user accounts; the access audit.

Jobs and timings are PHI-free: ids, codes and timings only, never names or text. The
access audit names a patient by MRN only, because answering "who opened this chart"
is what it is for."""

import pandas as pd
import streamlit as st

from domain.errors import WorkbenchError
from domain.policy.access import permissions as access
from domain.policy.access.permissions import Permission, Role
from core.services.admin import access_audit
from core.services.admin import accounts
from core.services.ingest import operations
from domain.models import DocType
from core.services.ingest.categories import map_category
from core.services.admin.health import health
from core.services.ingest.job_health import failing_jobs
from core.services.ingest.ingestion import list_categories
from core.services.admin.patients import list_patients
from ui import auth, glossary, labels
from ui.media import download_button
from ui.inert import md_text, plain, plain_text
from ui.runtime import workbench

me = auth.require(Permission.OPERATIONS)
wb = workbench()
st.title("Operations")
TIME = st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm:ss")
ALL = "All"


def _retry(job_id: int) -> None:
    try:
        operations.retry_job(wb, job_id, by=auth.username())
    except WorkbenchError as exc:
        st.session_state["ops_notice"] = ("error", exc.message)
    else:
        st.session_state["ops_notice"] = ("success", f"Job {job_id} is back in the queue; the worker will read it again.")


@st.fragment(run_every=3.0)
def status_panel() -> None:
    report = health(wb.settings, db=wb.db)
    failing = failing_jobs(wb)
    depth = operations.queue_depth(wb)
    workers = operations.workers(wb)
    live = workers[0] if workers else None
    c1, c2, c3, c4 = st.columns(4)
    said = {"ok": "ok", "degraded": "degraded", "error": "down"}.get(report["status"], report["status"])
    if failing["failing"]:
        said = "jobs failing" if report["status"] == "ok" else f"{said}, jobs failing"
    c1.metric("Health", said,
              help=labels.code_hint(*(k for k, ok in report["checks"].items() if not ok)) if report["status"] != "ok"
              else "database, schema and worker all fine")
    if failing["failing"]:
        rule = failing["rule"]
        st.error(f"Jobs keep failing: {failing['failed']} of the last {failing['of']} finished jobs failed (red at "
                 f"{rule['failed']} of {rule['last']}). Their reasons are in the failed jobs below.",
                 icon=":material/heart_broken:")
    c2.metric("Waiting in the queue", depth["pending"])
    c3.metric("Being read now", depth["running"])
    c4.metric("Failed", depth["failed"], help="Failed jobs can be retried from the table below.")
    beat = report["components"].get("worker") or {}
    dead = beat.get("status") == "dead"  # its process is gone, however recent its last heartbeat
    if dead:
        st.error(f"The worker is not running: {beat.get('detail')}. Uploads wait in the queue until a worker runs "
                 "again (restart `make run`, or `python -m core worker`).", icon=":material/heart_broken:")
    if live is None:
        st.warning("No worker has written a heartbeat yet: uploads wait in the queue until one runs "
                   "(`python -m core worker`).")
    else:
        text = (f"Worker {live['worker_id']}: {labels.worker_state(live['state'])}, {labels.seen_ago(live['age_seconds'])}"
                f" · {live['processed']} read, {live['failed']} failed")
        if dead and live["worker_id"] == beat.get("worker_id"):
            st.caption(text)  # its last word, not a green "fresh": the error above says it is gone
        elif live["fresh"]:
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
    with st.expander("Details for support (the health report)"):
        st.json(report, expanded=False)


@st.fragment(run_every=5.0)
def jobs_panel() -> None:
    notice = st.session_state.pop("ops_notice", None)
    if notice:
        getattr(st, notice[0])(md_text(notice[1]))
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
        **{glossary.stage(stage): j["timings"].get(stage) for stage in operations.TIMING_COLUMNS},
        "error": labels.error_code(j["error_code"]) if j["error_code"] else "", "message": j["error_message"] or "",
    } for j in found])
    st.dataframe(plain(table), hide_index=True, width="stretch",
                 column_config={"created": TIME, "started": TIME, "finished": TIME,
                                **{glossary.stage(s): st.column_config.NumberColumn(
                                    glossary.stage(s), help=f"time spent {glossary.stage(s)} (ms; stage {s})",
                                    format="%.0f") for s in operations.TIMING_COLUMNS}})
    reclaimed_panel()
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


RECLAIM_WORDS = {"worker_gone": "its worker's process had stopped",
                 "heartbeat_stopped": "its worker stopped sending heartbeats",
                 "released_at_shutdown": "handed back when its worker was shut down"}


def reclaimed_panel() -> None:
    """Jobs taken back from a worker that stopped (ids and reason codes only)."""
    found = operations.reclaimed_jobs(wb)
    if not found:
        return
    with st.expander(f"Reclaimed after the worker stopped ({len(found)})", icon=":material/restart_alt:"):
        st.dataframe([{"job": r["id"], "document": r["document_id"], "type": labels.doc_type(r["doc_type"]),
                       "status now": labels.job_status(r["status"]), "times reclaimed": r["reclaims"],
                       "last": r["reclaimed_at"], "why": RECLAIM_WORDS.get(r["reclaim_reason"], r["reclaim_reason"])}
                      for r in found], hide_index=True, width="stretch", column_config={"last": TIME},
                     key="reclaimed_table")


@st.fragment(run_every=10.0)
def flow_panel() -> None:
    st.subheader("Time per stage")
    latency = operations.stage_latency(wb)
    if latency:
        frame = pd.DataFrame([{"stage": glossary.stage(r["stage"], r["kind"]),
                               "median (p50) ms": r["p50_ms"], "slow (p95) ms": r["p95_ms"]} for r in latency])
        st.bar_chart(frame, x="stage", y=["median (p50) ms", "slow (p95) ms"], stack=False, horizontal=True,
                     sort=False, x_label="stage", y_label="milliseconds")
        st.caption("From the latest finished jobs and chat answers; how many timed: " +
                   ", ".join(f"{glossary.stage(r['stage'])} {r['n']}" for r in latency))
    else:
        st.caption("No finished jobs or answers yet.")
    st.subheader("Recent steps of the work (supervisor handoffs)")
    handoffs = operations.recent_handoffs(wb)
    if not handoffs:
        st.caption("None yet.")
        return
    st.dataframe(plain([{"at": h["at"], "from": h["source"], "to": h["destination"],
                         "task": h["task"].replace("_", " "), "reason": h["reason"],
                         "outcome": (h["outcome"] or "").replace("_", " "), "latency ms": h["latency_ms"],
                         "error": labels.error_code(h["error"]) if h["error"] else "", "job": h["job_id"]}
                        for h in handoffs]),
                 hide_index=True, width="stretch", column_config={"at": TIME})


# ----------------------------------------------------------------------------- users


def _account_action(action, username: str, done: str, **kwargs) -> None:
    try:
        action(wb, username, by=auth.username(), **kwargs)
    except WorkbenchError as exc:
        st.session_state["users_notice"] = ("error", exc.message)
    else:
        st.session_state["users_notice"] = ("success", done)


@st.fragment
def users_panel() -> None:
    if notice := st.session_state.pop("users_notice", None):
        getattr(st, notice[0])(md_text(notice[1]))
    now = auth.utcnow()
    people = accounts.list_users(wb)
    st.dataframe(plain([{"user": a.username, "role": a.role.value, "active": a.active,
                         "locked": access.is_locked(a.locked_until, now),
                         "must change password": a.must_change_password,
                         "sign-in": "organisation" if a.auth_source == "oidc" else "password",
                         "last sign-in": a.last_sign_in_at, "added by": a.created_by or ""} for a in people]),
                 hide_index=True, width="stretch", key="users_table", column_config={"last sign-in": TIME})

    with st.expander("Add an account"), st.form("add_user", clear_on_submit=True):
        name = st.text_input("User name", help="Lower-case letters, digits, '.', '_', '-' or '@'.")
        role = st.selectbox("Role", [r.value for r in Role], index=1, format_func=labels.role)
        password = st.text_input("Temporary password", type="password",
                                 help="Tell it to the person; they choose their own at the first sign-in.")
        if st.form_submit_button("Add account"):
            try:
                accounts.add_user(wb, username=name, role=role, password=password, by=auth.username(),
                                  must_change_password=True)
            except WorkbenchError as exc:
                st.error(md_text(exc.message))
            else:
                st.session_state["users_notice"] = ("success", f"Account {name.strip().lower()} added as {role}; "
                                                               "they change the password at the first sign-in.")
                st.rerun()

    if not people:
        return
    by_name = {a.username: a for a in people}
    st.markdown("**Change an account**")
    pick, act = st.columns([2, 3], vertical_alignment="bottom")
    chosen = by_name[pick.selectbox("Account", list(by_name), key="users_pick", format_func=plain_text)]
    with act:
        if not chosen.active:
            st.button("Enable account", key="users_enable", on_click=_account_action,
                      args=(accounts.enable_user, chosen.username, f"{chosen.username} can sign in again."))
        else:
            if access.is_locked(chosen.locked_until, now):
                st.button("Unlock", key="users_unlock", on_click=_account_action,
                          args=(accounts.enable_user, chosen.username, f"{chosen.username} is unlocked."))
            st.button("Disable account", key="users_disable", disabled=chosen.username == me.username,
                      help="You cannot disable your own account." if chosen.username == me.username else None,
                      on_click=_account_action,
                      args=(accounts.disable_user, chosen.username, f"{chosen.username} can no longer sign in."))
    if chosen.auth_source == "local":
        with st.form("reset_password", clear_on_submit=True):
            new = st.text_input(f"New temporary password for {md_text(chosen.username)}", type="password")
            if st.form_submit_button("Reset password"):
                _account_action(accounts.reset_password, chosen.username,
                                f"{chosen.username}'s password was reset; they choose a new one at the next sign-in.",
                                password=new)
                st.rerun()


# ----------------------------------------------------------------------------- access audit


@st.fragment
def access_panel() -> None:
    st.caption("Sign-ins, sign-outs, failed sign-ins, account changes and every view of a patient's chart, "
               "document or answer, newest first. Rows are never changed or removed.")
    patients = {p["id"]: p for p in list_patients(wb)}
    f1, f2 = st.columns(2)
    who = f1.selectbox("User", [ALL, *access_audit.actors(wb)], key="access_who", format_func=plain_text)
    patient_id = f2.selectbox("Patient", [ALL, *patients], key="access_patient",
                              format_func=lambda i: i if i == ALL
                              else plain_text(f"MRN {patients[i]['mrn']} (patient {i})"))
    rows = access_audit.events(wb, actor=None if who == ALL else who,
                               patient_id=None if patient_id == ALL else patient_id)
    if not rows:
        st.info("No access events match.")
        return
    st.dataframe(plain([{"when": r["occurred_at"], "who": r["actor"], "user id": r["user_id"],
                         "what": labels.access_event(r["event"]),
                         "patient": f"MRN {r['patient_mrn']}" if r.get("patient_mrn") else "",
                         "object": f"{r['object_type']} {r['object_id']}" if r.get("object_type") else "",
                         "where": labels.channel(r["channel"]), "detail": r["detail"] or ""} for r in rows]),
                 hide_index=True, width="stretch", key="access_table", column_config={"when": TIME})
    # MRNs: built when clicked, never left at a /media address (ui/media.py).
    download_button("Download access audit (CSV)", lambda: access_audit.events_csv(rows),
                    file_name="access-audit.csv", mime="text/csv", key="access_csv")


# ----------------------------------------------------------------------------- categories


@st.fragment
def categories_panel() -> None:
    st.caption("What the clinic calls its documents, and how each is read. An upload in a category that is "
               "not read is stored as it is, with no extraction. Changes apply to new uploads.")
    if notice := st.session_state.pop("categories_notice", None):
        getattr(st, notice[0])(md_text(notice[1]))
    cats = list_categories(wb)
    st.dataframe(plain([{"category": c["name"], "read as": labels.doc_type(c["doc_type"]) if c["doc_type"]
                         else "not read (stored only)"} for c in cats]), hide_index=True, width="stretch",
                 key="categories_table")
    with st.form("map_category", clear_on_submit=True):
        name = st.text_input("Category", help="An existing category's name, or a new one.")
        kind = st.selectbox("Read as", [None, *(t.value for t in DocType)],
                            format_func=lambda t: "not read (stored only)" if t is None else labels.doc_type(t))
        if st.form_submit_button("Save mapping"):
            try:
                cat = map_category(wb, name, kind, by=auth.username())
            except WorkbenchError as exc:
                st.error(md_text(exc.message))
            else:
                read_as = labels.doc_type(cat["doc_type"]) if cat["doc_type"] else "not read (stored only)"
                st.session_state["categories_notice"] = ("success", f"{cat['name']}: {read_as}.")
                st.rerun()


tab_work, tab_users, tab_access, tab_categories = st.tabs(["Jobs and workers", "Users", "Access audit",
                                                            "Document categories"])
with tab_work:
    status_panel()
    jobs_panel()
    flow_panel()
for tab, title, permission, panel in ((tab_users, "Users", Permission.MANAGE_USERS, users_panel),
                                      (tab_access, "Access audit", Permission.OPERATIONS, access_panel),
                                      (tab_categories, "Document categories", Permission.MANAGE_CATEGORIES,
                                       categories_panel)):
    with tab:
        st.subheader(title)
        if auth.can(permission):
            panel()
        else:
            st.caption(auth.refusal(me, permission))
