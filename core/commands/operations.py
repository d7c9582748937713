"""Setup and housekeeping commands: init, worker, mllp, health, index-corpus and demo.
None is run by the app for a CLI beside it: each opens this process's workbench (or,
index-corpus, is given the one opened for it; health only reads)."""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from typing import Any

from core.commands.base import Context, open_here
from domain.settings import get_settings


def cmd_init(args) -> dict[str, Any]:
    from core.services.admin.accounts import INITIAL_ADMIN, ensure_initial_admin
    from core.services.answer.corpus import index_guideline_corpus
    from core.services.admin.patients import seed_demo_patients
    from storage.migrations import LATEST_VERSION

    wb = open_here()
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


def cmd_worker(args) -> dict[str, Any]:
    from core.services.ingest.worker import Worker

    wb = open_here()
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
    from core.collector import settle_for_serving

    settle_for_serving()  # a worker serves for long, as the app does (its jobs are the app's)
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


def cmd_mllp(args) -> dict[str, Any]:
    """Listen for HL7 v2 over MLLP until SIGTERM or Ctrl-C (DESIGN §9). This process owns
    the database meanwhile: with `make run` holding it, set WORKBENCH_START_MLLP instead."""
    import threading

    from core.collector import settle_for_serving
    from core.services.interfaces.mllp import MllpListener, listener_access_for

    # Off loopback the allow-lists are required: refused here, before the database is opened.
    access = listener_access_for(get_settings(), args.host)
    wb = open_here()
    try:
        listener = MllpListener(wb, host=args.host, port=get_settings().mllp_port if args.port is None else args.port,
                                access=access)
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        listener.start_thread()
        settle_for_serving()  # a listener serves for long, as the app does
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
    from core.services.admin.health import health

    report = health(get_settings())
    if report["status"] == "error":
        report["_exit"] = 1
        report["_error"] = "database unavailable"
    return report


def cmd_index_corpus(ctx: Context, args) -> dict[str, Any]:
    from core.services.answer.corpus import index_guideline_corpus

    return {"ok": True, **index_guideline_corpus(ctx.wb, force=args.force)}


def cmd_demo(args) -> dict[str, Any]:
    """Load the demo documents: built by the demo generator (``python -m golden.demo``, a
    child process) into a private temporary directory, then uploaded from there. With
    ``--auto`` the skip is decided first, before anything is built."""
    import tempfile
    from pathlib import Path

    from core.services.ingest.demo import build_demo_documents, has_documents, load_demo, read_demo_dir
    from core.services.admin.patients import seed_demo_patients

    settings = get_settings()
    wb = open_here()
    try:
        if args.auto and (not settings.load_demo or has_documents(wb)):
            why = "WORKBENCH_LOAD_DEMO is off" if not settings.load_demo else "the data dir already holds documents"
            return {"documents": [], "skipped": why}
        seed_demo_patients(wb)
        with tempfile.TemporaryDirectory(prefix="workbench-demo-") as tmp:
            documents = read_demo_dir(build_demo_documents(Path(tmp)))
            return {"documents": load_demo(wb, documents, process=not args.queue)}
    finally:
        wb.close()
