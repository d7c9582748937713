"""The command line: ``python -m core <command>`` (DESIGN §9).

A thin shell over the services. With ``--json`` exactly one JSON object goes to
stdout (anything a library prints is sent to stderr meanwhile); errors are one
line on stderr and a non-zero exit. ``WorkbenchError`` is translated here, in one
place; anything else is a defect and prints its type and code locations.

stderr ends up in logs (cron, systemd, `make run`), so an error line never carries
a patient identifier or a file name: the values given for --patient, --mrn, the
names, the date of birth and the file are replaced by the option's name, and a
defect's message (which may quote a value) is not printed.

Who acts (issue 12): a changing command acts for ``--by USER``, an active account with
the role for it; without ``--by``, the setup and housekeeping commands (ingest,
delete-document, patient add, user) act as the operating-system user at the shell
(``os:<login>``), who owns the data dir anyway. Review decisions always name an account.
Read-only commands need no ``--by`` and record their patient views as ``os:<login>``.
Passwords are read from a prompt or stdin, never from an argument.

Beside the running app (issue 13): the app holds the database, so a command whose body
takes a workbench (``Context``) and is marked ``handover`` is sent to the app's loopback
endpoint (core.services.app_endpoint) when the database is held and the app's endpoint
file is live; the app runs the same body on its workbench (``serve_request``) and the
caller prints its stdout, stderr and exit code verbatim. ``ingest`` reads and checks its
file here and sends the bytes. The others (init, worker, mllp, demo, eval, index-corpus,
and the user commands that read a password) fail at once with a sentence saying what to do.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import getpass
import io
import json
import os
import signal
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from core.errors import BadInput, Forbidden, WorkbenchError
from core.settings import get_settings

EXIT_BAD_INPUT = 2
EXIT_JOB_FAILED = 3


APP_RUNNING = ("The workbench app is running and holds the database, and this command is not one it runs for the "
               "CLI; stop it (Ctrl-C in the terminal running `make run`) or use the app, then run this again.")
INLINE_WORKER = "intake-extractor:cli"


@dataclass(frozen=True)
class Context:
    """What a command body runs with: the workbench (this process's, or the app's when
    the command was handed over), who is at the shell, and an upload read beforehand."""

    wb: Any  # core.services.workbench.Workbench
    os_user: str  # os:<login>: the actor when there is no --by, and the viewer of reads
    in_app: bool = False  # run inside the app for a CLI beside it (issue 13)
    upload: bytes | None = None  # ingest: the file's bytes, read and checked by the caller


def _workbench():
    """This process's workbench. When another process holds the database the error says
    what to do (for the commands the app runs for the CLI, see ``_here_or_in_app``)."""
    from core.errors import DatabaseBusy
    from core.services.workbench import open_workbench

    try:
        return open_workbench(get_settings())
    except DatabaseBusy as exc:
        raise _busy_error(exc) from None


def _busy_error(exc):
    """The sentence for a held database: the app is running (its endpoint file is live),
    or some other process holds it (storage.db says so, and what to do)."""
    from core.errors import DatabaseBusy
    from core.services.app_endpoint import live_endpoint

    return DatabaseBusy(APP_RUNNING) if live_endpoint(get_settings()) is not None else exc


def _actor(ctx: Context, args) -> str:
    """``--by`` when given, else the shell operator (``os:<login>``)."""
    return getattr(args, "by", None) or ctx.os_user


def cmd_init(args) -> dict[str, Any]:
    from core.services.accounts import INITIAL_ADMIN, ensure_initial_admin
    from core.services.corpus import index_guideline_corpus
    from core.services.patients import seed_demo_patients
    from storage.migrations import LATEST_VERSION

    wb = _workbench()
    try:
        added = seed_demo_patients(wb)
        corpus = index_guideline_corpus(wb)
        password_file = ensure_initial_admin(wb)
    finally:
        wb.close()
    settings = get_settings()
    out = {"ok": True, "data_dir": str(settings.data_dir.resolve()), "schema_version": LATEST_VERSION,
           "demo_patients_added": added, "corpus": corpus,
           "initial_admin_password_file": str(password_file) if password_file else None}
    if not args.json:
        lines = [f"data dir ready: {out['data_dir']} (schema {LATEST_VERSION}, {added} demo patients added)"]
        if password_file:
            # Shown on every `make run` until the first sign-in replaces the one-time password.
            lines.append(f"first sign-in: user '{INITIAL_ADMIN}', one-time password in {password_file} "
                         "(readable only by you); signing in asks for a new password")
        out["_text"] = "\n".join(lines)
    return out


def cmd_patient_add(ctx: Context, args) -> dict[str, Any]:
    from core.services.patients import add_patient

    p = add_patient(ctx.wb, mrn=args.mrn, first=args.first, last=args.last, dob=args.dob, sex=args.sex,
                    by=_actor(ctx, args))
    return {"patient_id": p["id"], "mrn": p["mrn"], "first_name": p["first_name"], "last_name": p["last_name"],
            "dob": str(p["dob"]), "sex": p["sex"]}


def cmd_patient_list(ctx: Context, args) -> dict[str, Any]:
    from core.services.patients import list_patients

    found = list_patients(ctx.wb)
    return {"patients": [{"patient_id": p["id"], "mrn": p["mrn"], "first_name": p["first_name"],
                          "last_name": p["last_name"], "dob": str(p["dob"]), "sex": p["sex"]} for p in found]}


def _read_ingest_file(args) -> bytes:
    """The file of ``ingest``, read and checked here, by the caller: a command handed to
    the app sends these bytes, so the app never opens a path someone else gave."""
    from core.services.ingestion import read_upload_file

    return read_upload_file(Path(args.file), get_settings().upload_max_bytes)


def _run_job_now(ctx: Context, job_id: int) -> None:
    from core.services.fact_vectors import index_pending
    from core.services.worker import Worker

    worker = Worker(ctx.wb, worker_id=INLINE_WORKER, heartbeat_file=not ctx.in_app)
    worker.run_now(job_id)  # in the app, its own loop may have claimed the job first: then it waits
    index_pending(ctx.wb)
    worker.beat("stopped")  # an inline run is not a live worker


def cmd_ingest(ctx: Context, args) -> dict[str, Any]:
    from core.services.facts import document_report
    from core.services.ingestion import attach_and_extract
    from core.services.patients import get_patient

    if ctx.upload is None:
        raise BadInput("ingest needs the file's content.", code="file_missing")
    wb = ctx.wb
    patient = get_patient(wb, mrn=args.patient)
    attached = attach_and_extract(wb, patient_id=patient["id"], source=args.file, doc_type=args.doc_type,
                                  category=args.category, by=_actor(ctx, args), data=ctx.upload,
                                  filename=Path(args.file).name)
    for queued in attached.jobs:  # a batch read in parts: every part, in message order
        _run_job_now(ctx, queued["id"])
    report = document_report(wb, attached.document["id"])  # a batch read in parts: merged, with "parts"
    job = report["job"]
    if job and job["status"] == "failed":
        where = "a part of document" if attached.parts else "document"
        report["_exit"] = EXIT_JOB_FAILED
        report["_error"] = f"{job['error_code']}: {job['error_message']} ({where} {report['document_id']} is stored)"
    return report


def cmd_delete_document(ctx: Context, args) -> dict[str, Any]:
    from core.services.retraction import delete_document

    return delete_document(ctx.wb, args.document_id, by=_actor(ctx, args),
                           reason=args.reason or "source document deleted")


def cmd_review(ctx: Context, args) -> dict[str, Any]:
    from core.services.review import check_for_document, review

    wb = ctx.wb
    if args.action == "correct-fact":
        from core.services.corrections import correct_fact

        if args.fact is None or args.check is not None or args.document is not None:
            raise BadInput("correct-fact corrects a finding: use --fact ID.", code="bad_item")
        return correct_fact(wb, args.fact, by=args.by, value=args.value, unit=args.unit,
                            collection_date=args.date, abnormal_flag=args.flag, reason=args.reason or "")
    if args.action == "undo-identity":
        from core.services.identity_review import undo_identity_decision

        if args.fact is not None or (args.check is None) == (args.document is None):
            raise BadInput("undo-identity undoes an identity decision: use --check ID or --document ID.",
                           code="bad_item")
        check = args.check if args.check is not None else check_for_document(wb, args.document)
        return undo_identity_decision(wb, check, by=args.by, reason=args.reason or "")
    return review(wb, args.action, check_id=args.check, document_id=args.document, fact_id=args.fact,
                  by=args.by, reason=args.reason)


def cmd_chart(ctx: Context, args) -> dict[str, Any]:
    from core.services.access_audit import VIEW_CHART, record_view
    from core.services.facts import chart_view
    from core.services.patients import get_patient

    patient_id = get_patient(ctx.wb, mrn=args.patient)["id"]
    chart = chart_view(ctx.wb, patient_id)
    record_view(ctx.wb, ctx.os_user, VIEW_CHART, patient_id=patient_id, object_type="chart", channel="cli")
    return chart


def cmd_worker(args) -> dict[str, Any]:
    from core.services.worker import Worker

    wb = _workbench()
    worker = Worker(wb, worker_id="intake-extractor:cli")
    if args.once:
        try:
            job = worker.run_once()
            worker.beat("stopped")
            return {"ran": job is not None, "job_id": job["id"] if job else None,
                    "status": job["status"] if job else None}
        finally:
            wb.close()
    # The loop runs in a thread so that SIGTERM or Ctrl-C is answered here at once, even in
    # the middle of a document: the worker finishes it within a short grace or hands it
    # back to the queue, and the process is gone within 5 s.
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print("intake-extractor worker running; Ctrl-C to stop", file=sys.stderr)
    thread = worker.start_thread()
    while thread.is_alive() and not stop.wait(0.5):
        pass
    if worker.shutdown():
        wb.close()
    else:
        # Still inside a document whose job is pending again: closing the database under
        # that thread, or waiting for it, is worse than ending the process now.
        atexit.register(_exit_now)
    return {"stopped": True, "processed": worker.processed, "failed": worker.failed}


def _exit_now() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def cmd_retry(ctx: Context, args) -> dict[str, Any]:
    from core.services.operations import retry_job
    from storage import jobs_repo

    job = retry_job(ctx.wb, args.job_id, by=_actor(ctx, args))
    if not args.queue:
        _run_job_now(ctx, job["id"])
    with ctx.wb.db.cursor() as cur:
        job = jobs_repo.by_id(cur, job["id"]).to_dict()
    out = {"job_id": job["id"], "document_id": job["document_id"], "status": job["status"],
           "attempts": job["attempts"], "error_code": job["error_code"], "error_message": job["error_message"]}
    if job["status"] == "failed":
        out["_exit"] = EXIT_JOB_FAILED
        out["_error"] = f"{job['error_code']}: {job['error_message']} (job {job['id']} failed again; the original is kept)"
    return out


def cmd_mllp(args) -> dict[str, Any]:
    """Listen for HL7 v2 over MLLP until SIGTERM or Ctrl-C (DESIGN §9). This process owns
    the database meanwhile: with `make run` holding it, set WORKBENCH_START_MLLP instead."""
    import threading

    from core.services.mllp import MllpListener

    wb = _workbench()
    try:
        listener = MllpListener(wb, host=args.host, port=get_settings().mllp_port if args.port is None else args.port)
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        listener.start_thread()
        host, port = listener.address
        print(f"mllp listening on {host}:{port}; Ctrl-C to stop", file=sys.stderr, flush=True)
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        listener.stop()
        return {"stopped": True, "received": listener.received}
    finally:
        wb.close()


def cmd_health(args) -> dict[str, Any]:
    from core.services.health import health

    report = health(get_settings())
    if report["status"] == "error":
        report["_exit"] = 1
        report["_error"] = "database unavailable"
    return report


def cmd_index_corpus(ctx: Context, args) -> dict[str, Any]:
    from core.services.corpus import index_guideline_corpus

    return {"ok": True, **index_guideline_corpus(ctx.wb, force=args.force)}


def cmd_search_guidelines(ctx: Context, args) -> dict[str, Any]:
    from core.services.guidelines import search_guidelines

    return search_guidelines(ctx.wb, args.query, k=args.k)


def cmd_ask(ctx: Context, args) -> dict[str, Any]:
    from core.policy.questions import parse_question
    from core.services.access_audit import VIEW_ANSWER, record_view
    from core.services.answering import ask
    from core.services.patients import get_patient

    patient = get_patient(ctx.wb, mrn=args.patient)
    previous = None
    for earlier in args.previous or []:  # replay the conversation so follow-ups ground
        previous = parse_question(earlier, previous)
    payload = ask(ctx.wb, patient["id"], args.question, previous=previous, drafter=_drafter()).payload
    record_view(ctx.wb, ctx.os_user, VIEW_ANSWER, patient_id=patient["id"], object_type="answer",
                object_id=payload.get("request_id"), channel="cli")
    return payload


def cmd_demo(args) -> dict[str, Any]:
    from core.services.demo import has_documents, load_demo
    from core.services.patients import seed_demo_patients
    from golden.demo import DOCUMENTS

    settings = get_settings()
    wb = _workbench()
    try:
        if args.auto and (not settings.load_demo or has_documents(wb)):
            why = "WORKBENCH_LOAD_DEMO is off" if not settings.load_demo else "the data dir already holds documents"
            return {"documents": [], "skipped": why}
        seed_demo_patients(wb)
        return {"documents": load_demo(wb, DOCUMENTS, process=not args.queue)}
    finally:
        wb.close()


def cmd_eval(args) -> dict[str, Any]:
    from golden.gate import run_gate, summary

    settings = get_settings()
    progress = Path(args.progress) if args.progress else None
    if args.case:
        from golden.cases import load_cases

        try:
            load_cases(only=args.case)
        except KeyError as exc:
            raise BadInput(str(exc.args[0]), code="unknown_case") from None
    run = run_gate(case_ids=args.case or None, results_dir=settings.eval_results_dir,
                   update_baseline=args.update_baseline, jobs=args.jobs, progress_path=progress)
    if not args.no_record:
        _record_eval(run)
    out = summary(run)
    if not args.json:
        out["_text"] = _eval_text(run)
    if run["verdict"] != "pass":
        out["_exit"] = 1
        out["_error"] = "the eval gate failed: " + "; ".join(g["message"] for g in run["gate"][:5])
    return out


def _record_eval(run: dict[str, Any]) -> None:
    """Store the run in the database too; when the UI owns the database the JSON file is
    enough (the Evals page imports it)."""
    from core.services.evals import record_run

    try:
        wb = _workbench()
    except WorkbenchError as exc:
        print(f"note: run kept as JSON only ({exc.message})", file=sys.stderr)
        return
    try:
        record_run(wb, run)
    finally:
        wb.close()


def _eval_text(run: dict[str, Any]) -> str:
    lines = [f"eval {run['run_id']}: {run['verdict'].upper()} - {run['cases']} cases in {run['seconds']:.1f} s"]
    width = max(len(n) for n in run["rubrics"]) if run["rubrics"] else 0
    for name, rate in run["rubrics"].items():
        limit = run["thresholds"].get(name)
        base = run["baseline"].get(name)
        lines.append(f"  {name:<{width}}  {rate:6.1%}  threshold {limit if limit is None else f'{limit:.0%}'}"
                     f"  baseline {base if base is None else f'{base:.0%}'}")
    stages = run["latency"]["stages"]
    if stages:
        lines.append("  latency (ms, p50/p95): " + ", ".join(f"{s} {v['p50']:.0f}/{v['p95']:.0f}"
                                                           for s, v in stages.items()))
        lines.append(f"  bottleneck: {run['latency']['bottleneck']}")
    for r in run["results"]:
        if r["case_id"] in run["failed_cases"]:
            why = r["error"] or "; ".join(f"{k}: {v['reason']}" for k, v in r["rubrics"].items() if not v["passed"])
            lines.append(f"  FAILED {r['case_id']}: {why}")
    for g in run["gate"]:
        lines.append(f"  gate: {g['message']}")
    return "\n".join(lines)


def _read_password(confirm: bool = True) -> str:
    """The first line of stdin when it is not a terminal (scripts), else a hidden prompt,
    asked twice. Never an argument: arguments show in `ps` and the shell history."""
    if not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\r\n")
    password = getpass.getpass("Password: ")
    if confirm and getpass.getpass("Password again: ") != password:
        raise BadInput("The two passwords differ.", code="password_mismatch")
    return password


def _account_json(account) -> dict[str, Any]:
    return {"user_id": account.id, "username": account.username, "role": account.role.value,
            "active": account.active, "must_change_password": account.must_change_password,
            "auth_source": account.auth_source, "locked_until": account.locked_until,
            "last_sign_in_at": account.last_sign_in_at, "created_at": account.created_at,
            "created_by": account.created_by}


def _user_command(change: Callable[..., Any]) -> Callable[[Context, argparse.Namespace], dict[str, Any]]:
    """A ``user`` subcommand: apply ``change(wb, args, by)``, answer the account."""
    def run(ctx: Context, args) -> dict[str, Any]:
        return _account_json(change(ctx.wb, args, _actor(ctx, args)))
    return run


def _user_add(wb, args, by):
    from core.services.accounts import add_user

    return add_user(wb, username=args.username, role=args.role, password=_read_password(), by=by)


def _user_disable(wb, args, by):
    from core.services.accounts import disable_user

    return disable_user(wb, args.username, by=by)


def _user_enable(wb, args, by):
    from core.services.accounts import enable_user

    return enable_user(wb, args.username, by=by)


def _user_reset_password(wb, args, by):
    from core.services.accounts import reset_password

    return reset_password(wb, args.username, password=_read_password(), by=by)


def cmd_user_list(ctx: Context, args) -> dict[str, Any]:
    from core.policy.access import Permission
    from core.services.accounts import authorize, list_users

    authorize(ctx.wb, _actor(ctx, args), Permission.MANAGE_USERS)
    users = [_account_json(a) for a in list_users(ctx.wb)]
    out: dict[str, Any] = {"users": users}
    if not args.json:
        out["_text"] = "\n".join(
            [f"{'user':<24} {'role':<9} {'state':<9} source"]
            + [f"{u['username']:<24} {u['role']:<9} {'active' if u['active'] else 'disabled':<9} {u['auth_source']}"
               for u in users])
    return out


def cmd_category_list(ctx: Context, args) -> dict[str, Any]:
    from core.services.ingestion import list_categories

    cats = [{"category": c["name"], "doc_type": c["doc_type"]} for c in list_categories(ctx.wb)]
    out: dict[str, Any] = {"categories": cats}
    if not args.json:
        out["_text"] = "\n".join(f"{c['category']:<32} {c['doc_type'] or '(stored only)'}" for c in cats)
    return out


def cmd_category_map(ctx: Context, args) -> dict[str, Any]:
    from core.services.categories import map_category

    doc_type = None if args.doc_type.lower() in ("none", "") else args.doc_type
    cat = map_category(ctx.wb, args.name, doc_type, by=_actor(ctx, args))
    out: dict[str, Any] = {"category": cat["name"], "doc_type": cat["doc_type"]}
    if not args.json:
        out["_text"] = f"{cat['name']} -> {cat['doc_type'] or '(stored only)'}"
    return out


def _drafter():
    from core.services.drafting import drafter_for

    return drafter_for(get_settings())


def build_parser(parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser = parser_class(prog="python -m core", description="Clinical document review workbench")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, fn: Callable, help_text: str, *, takes_wb: bool = False,
            handover: bool = False) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
        p.set_defaults(fn=fn, takes_wb=takes_wb or handover, handover=handover)
        return p

    add("init", cmd_init, "create or upgrade the data dir, schema, demo patients and corpus index")
    patient = sub.add_parser("patient", help="chart patients").add_subparsers(dest="patient_command", required=True)
    p = patient.add_parser("add", help="add a chart patient")
    p.add_argument("--mrn", required=True)
    p.add_argument("--first", required=True)
    p.add_argument("--last", required=True)
    p.add_argument("--dob", required=True, help="YYYY-MM-DD")
    p.add_argument("--sex", default="U", choices=["F", "M", "U"])
    p.add_argument("--by", default=None, help=_BY_OPTIONAL)
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_patient_add, takes_wb=True, handover=True)
    p = patient.add_parser("list", help="list chart patients")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_patient_list, takes_wb=True, handover=True)

    p = add("ingest", cmd_ingest, "attach a document and extract it now", handover=True)
    p.add_argument("file")
    p.add_argument("--patient", required=True, help="patient MRN")
    p.add_argument("--doc-type", dest="doc_type")
    p.add_argument("--category")
    p.add_argument("--by", default=None, help=_BY_OPTIONAL)

    p = add("delete-document", cmd_delete_document, "delete a document and retract everything derived from it",
            handover=True)
    p.add_argument("document_id", type=int)
    p.add_argument("--by", default=None, help=_BY_OPTIONAL)
    p.add_argument("--reason")

    p = add("review", cmd_review, "record a review decision", handover=True)
    p.add_argument("action", choices=["approve-identity", "reject-identity", "approve-fact", "reject-fact",
                                      "correct-fact", "undo-identity"])
    p.add_argument("--check", type=int, help="identity check id (identity actions)")
    p.add_argument("--document", type=int,
                   help="document id (identity actions; refused when the document has several checks)")
    p.add_argument("--fact", type=int, help="fact id (approve-fact / reject-fact / correct-fact)")
    p.add_argument("--by", required=True, help="the deciding account (an active reviewer or admin)")
    p.add_argument("--reason", help="required to approve a document that names another patient, to correct a "
                                    "finding and to undo an identity decision")
    p.add_argument("--value", help="correct-fact: the value as it should read (e.g. 7.9)")
    p.add_argument("--unit", help="correct-fact: the unit")
    p.add_argument("--date", help="correct-fact: the collection date, YYYY-MM-DD")
    p.add_argument("--flag", help="correct-fact: normal, high, low, critical_high, critical_low, abnormal or unknown")

    p = add("chart", cmd_chart, "the patient's active chart rows with their supporting documents",
            handover=True)
    p.add_argument("--patient", required=True, help="patient MRN")

    p = add("worker", cmd_worker, "run the intake-extractor loop headless")
    p.add_argument("--once", action="store_true")

    p = add("retry", cmd_retry, "retry a failed job (attempts reset, audited) and process it now",
            handover=True)
    p.add_argument("job_id", type=int)
    p.add_argument("--queue", action="store_true", help="only put it back in the queue (a running worker reads it)")
    p.add_argument("--by", default=None, help=_BY_OPTIONAL)

    p = add("mllp", cmd_mllp, "receive HL7 v2 messages over MLLP; each is acknowledged once it is stored")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: loopback only)")
    p.add_argument("--port", type=int, default=None, help="default: WORKBENCH_MLLP_PORT (2575); 0 picks a free one")

    add("health", cmd_health, "database, worker heartbeat and queue")
    p = add("index-corpus", cmd_index_corpus, "index the guideline corpus (idempotent)", takes_wb=True)
    p.add_argument("--force", action="store_true")

    p = add("ask", cmd_ask, "answer a question about a patient with cited evidence, or refuse",
            handover=True)
    p.add_argument("question")
    p.add_argument("--patient", required=True, help="patient MRN")
    p.add_argument("--previous", action="append", help="an earlier question of this conversation (repeatable)")

    p = add("search-guidelines", cmd_search_guidelines, "hybrid guideline retrieval", handover=True)
    p.add_argument("query")
    p.add_argument("--k", type=int, default=5)

    p = add("demo", cmd_demo, "load the demo documents for the demo patients through the normal upload path")
    p.add_argument("--queue", action="store_true", help="only queue the jobs (a running worker processes them)")
    p.add_argument("--auto", action="store_true",
                   help="skip when WORKBENCH_LOAD_DEMO is off or the data dir already holds documents")

    p = add("eval", cmd_eval, "run the golden eval gate (exit 1 when it fails)")
    p.add_argument("--case", action="append", help="run only this case (repeatable)")
    p.add_argument("--update-baseline", action="store_true", help="write this run's pass rates as the baseline")
    p.add_argument("--jobs", type=int, default=None, help="cases run at once (default: one per core, at most 4)")
    p.add_argument("--progress", help="rewrite this JSON file after every case (for the Evals page)")
    p.add_argument("--no-record", action="store_true", help="write the JSON artifact only, not the database")

    users = sub.add_parser("user", help="local accounts (passwords from a prompt or stdin)").add_subparsers(
        dest="user_command", required=True)
    for name, fn, help_text in (
            ("add", _user_command(_user_add), "add an account; the password is read from stdin or a prompt"),
            ("list", cmd_user_list, "list the accounts"),
            ("disable", _user_command(_user_disable), "disable an account (it is kept, never deleted)"),
            ("enable", _user_command(_user_enable), "enable a disabled account; also clears a lockout"),
            ("reset-password", _user_command(_user_reset_password),
             "set a temporary password (stdin or a prompt); the user must change it at the next sign-in")):
        p = users.add_parser(name, help=help_text)
        if name == "add":
            p.add_argument("--username", required=True)
            p.add_argument("--role", required=True, choices=["viewer", "reviewer", "admin"])
        elif name != "list":
            p.add_argument("username")
        p.add_argument("--by", default=None, help="an admin account (default: the operating-system user)")
        p.add_argument("--json", action="store_true")
        # A password is typed at this terminal: the app cannot ask for it.
        p.set_defaults(fn=fn, takes_wb=True, handover=name not in ("add", "reset-password"))

    categories = sub.add_parser("category", help="document categories and the doc type each is read as")
    categories = categories.add_subparsers(dest="category_command", required=True)
    p = categories.add_parser("list", help="categories with their doc types")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_category_list, takes_wb=True, handover=True)
    p = categories.add_parser("map", help="map a category (created when new) to a doc type, or none (admin)")
    p.add_argument("name")
    p.add_argument("--doc-type", dest="doc_type", required=True, help="a doc type, or none: stored without extraction")
    p.add_argument("--by", default=None, help="an admin account (default: the operating-system user)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_category_map, takes_wb=True, handover=True)

    return parser


_BY_OPTIONAL = "the acting account (default: the operating-system user, os:<login>)"

# Arguments that carry patient identifiers or a file name; see the module docstring.
_PRIVATE_ARGS = {"patient": "--patient", "mrn": "--mrn", "first": "--first", "last": "--last", "dob": "--dob",
                 "file": "file"}


def _redact(message: str, args: argparse.Namespace) -> str:
    """``message`` with every private argument value (and a file's path and base name)
    named by its option instead. Longest first, so a file name that contains the MRN
    goes as a whole. Values shorter than 3 characters are left: they would match
    ordinary words, and identify no one."""
    values: dict[str, str] = {}
    for key, label in _PRIVATE_ARGS.items():
        value = getattr(args, key, None)
        if isinstance(value, str):
            texts = (value, str(Path(value)), Path(value).name) if key == "file" else (value,)
            values.update({text: f"<{label}>" for text in texts if len(text) >= 3})
    for text in sorted(values, key=len, reverse=True):
        message = message.replace(text, values[text])
    return message


@dataclass(frozen=True)
class Reply:
    """A command's answer from the app, to be printed as it is."""

    stdout: str
    stderr: str
    exit: int


def main(argv: list[str] | None = None) -> int:
    from storage.private_files import restrict_new_files

    restrict_new_files()  # everything this command writes in the data dir is the owner's only
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    if getattr(args, "takes_wb", False):
        run = lambda: _here_or_in_app(args, argv)  # noqa: E731
    else:
        run = lambda: args.fn(args)  # noqa: E731
    return execute(args, run, sys.stdout, sys.stderr, quiet_libraries=True)


def execute(args: argparse.Namespace, run: Callable[[], Any], stdout, stderr, *, quiet_libraries: bool) -> int:
    """Run a command body and write its answer: one JSON object (or text) on ``stdout``,
    errors as one line on ``stderr``; returns the exit code. The direct run and a run
    handed to the app (``serve_request``) both come through here."""
    as_json = getattr(args, "json", False)
    try:
        # Keep stdout for the single JSON object; chatter from libraries goes to stderr. Not
        # in the app: sys.stdout is the whole server's, shared by its threads.
        with contextlib.redirect_stdout(stderr) if as_json and quiet_libraries else contextlib.nullcontext():
            result = run()
    except WorkbenchError as exc:
        print(f"error: {exc.code}: {_redact(exc.message, args)}", file=stderr)
        # A refused role is bad input too: the command named the wrong account.
        return EXIT_BAD_INPUT if isinstance(exc, (BadInput, Forbidden)) or exc.code.startswith("unknown") else 1
    except Exception as exc:  # a defect: its message may quote a value, so print type and locations only
        print(f"error: internal_error: unexpected {type(exc).__name__} in `{args.command}`"
              " (code locations follow; the message is withheld because it may quote patient data)",
              file=stderr)
        traceback.print_tb(exc.__traceback__, file=stderr)
        return 1
    if isinstance(result, Reply):  # the app ran it: its answer, verbatim
        stdout.write(result.stdout)
        stderr.write(result.stderr)
        return result.exit
    exit_code = result.pop("_exit", 0) if isinstance(result, dict) else 0
    error = result.pop("_error", None) if isinstance(result, dict) else None
    if as_json:
        stdout.write(json.dumps(result, default=str) + "\n")
    else:
        stdout.write(_human(result) + "\n")
    if error:
        print(f"error: {_redact(error, args)}", file=stderr)
    return exit_code


def _here_or_in_app(args: argparse.Namespace, argv: list[str]) -> dict[str, Any] | Reply:
    """Open the workbench and run the command here; when the running app holds the
    database and runs this command for the CLI, hand it over (issue 13)."""
    from core.errors import DatabaseBusy
    from core.services.access_audit import shell_user
    from core.services.app_endpoint import live_endpoint, send
    from core.services.workbench import open_workbench

    settings = get_settings()
    upload = _read_ingest_file(args) if args.fn is cmd_ingest else None
    try:
        wb = open_workbench(settings)
    except DatabaseBusy as exc:
        endpoint = live_endpoint(settings) if args.handover else None
        if endpoint is None:
            raise _busy_error(exc) from None
        # The app's answer comes once the command is done: an ingest may wait for the app's
        # worker to finish the job it holds, then run its own, each within the job ceiling.
        reply = send(endpoint, argv, os_user=shell_user(), upload=upload,
                     timeout=2 * settings.job_timeout_seconds + 60)
        return Reply(reply["stdout"], reply["stderr"], reply["exit"])
    try:
        return args.fn(Context(wb, shell_user(), upload=upload), args)
    finally:
        wb.close()


class _AppParser(argparse.ArgumentParser):
    """The parser as the app uses it for a handed-over command line: a mistake goes back
    to the caller as an error instead of ending (or printing in) the server process."""

    def error(self, message: str):
        raise BadInput(f"{self.prog}: {message}", code="bad_arguments")

    def exit(self, status: int = 0, message: str | None = None):
        raise BadInput("The app runs commands only, not --help.", code="bad_arguments")

    def _print_message(self, message: str, file=None) -> None:
        pass


def serve_request(wb, request) -> dict[str, Any]:
    """Run one command that a CLI beside the app handed over (``request``: a
    core.services.app_endpoint.Request) on the app's workbench ``wb``: the same command
    body as a direct run, its stdout, stderr and exit code captured for the caller."""
    out, err = io.StringIO(), io.StringIO()
    try:
        args = build_parser(_AppParser).parse_args(request.argv)
    except BadInput as exc:
        return {"stdout": "", "stderr": f"error: {exc.code}: {exc.message}\n", "exit": EXIT_BAD_INPUT}
    if not getattr(args, "handover", False):
        return {"stdout": "", "stderr": f"error: not_handed_over: {APP_RUNNING}\n", "exit": EXIT_BAD_INPUT}
    if request.upload is not None and args.fn is not cmd_ingest:
        return {"stdout": "", "stderr": "error: bad_request: only ingest sends a file.\n", "exit": EXIT_BAD_INPUT}
    ctx = Context(wb, request.os_user, in_app=True, upload=request.upload)
    code = execute(args, lambda: args.fn(ctx, args), out, err, quiet_libraries=False)
    if code not in (0, EXIT_BAD_INPUT, EXIT_JOB_FAILED):
        # For the app's operator: which command, never its arguments (an MRN, a file name).
        print(f"[app-endpoint] `{args.command}` for the CLI ended with exit {code}", file=sys.stderr)
    return {"stdout": out.getvalue(), "stderr": err.getvalue(), "exit": code}


def _human(result: Any) -> str:
    if isinstance(result, dict) and "_text" in result:
        return result["_text"]
    return json.dumps(result, default=str, indent=2)


if __name__ == "__main__":
    sys.exit(main())
