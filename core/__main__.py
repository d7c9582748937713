"""The command line: ``python -m core <command>`` (DESIGN §9). The entry point only:
the commands, their parser and how an answer is written live in core.commands.

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
endpoint (core.services.interfaces.app_endpoint) when the database is held and the app's endpoint
file is live; the app runs the same body on its workbench (``serve_request``) and the
caller prints its stdout, stderr and exit code verbatim. ``ingest`` reads and checks its
file here and sends the bytes; ``export-fhir --out`` writes its file here from the app's
answer. The others (init, worker, mllp, demo, eval, index-corpus,
and the user commands that read a password) fail at once with a sentence saying what to do.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.commands import documents, exchange
from core.commands.base import Context, Reply, busy_error
from core.commands.output import execute
from core.commands.parser import build_parser
from domain.settings import get_settings


def main(argv: list[str] | None = None, *, own_process: bool = False) -> int:
    """Run one command; its exit code. ``own_process``: this process runs only this command
    (``python -m core``), so a command that reads a few documents may start its jobs'
    forkserver cold. The forkserver is one per process: a caller that goes on (a test
    calling ``main``) keeps its warm one."""
    from storage.private_files import restrict_new_files

    restrict_new_files()  # everything this command writes in the data dir is the owner's only
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    if own_process and getattr(args, "reads_once", False):
        from core.services.ingest.sandbox import read_lazily

        read_lazily()  # this process reads its documents and ends: no reader warmed up front
    if getattr(args, "takes_wb", False):
        run = lambda: _here_or_in_app(args, argv)  # noqa: E731
    else:
        run = lambda: args.fn(args)  # noqa: E731
    return execute(args, run, sys.stdout, sys.stderr, quiet_libraries=True)


def _here_or_in_app(args: argparse.Namespace, argv: list[str]) -> dict[str, Any] | Reply:
    """Open the workbench and run the command here; when the running app holds the
    database and runs this command for the CLI, hand it over (issue 13)."""
    from domain.errors import DatabaseBusy
    from core.services.admin.access_audit import shell_user
    from core.services.interfaces.app_endpoint import live_endpoint, send
    from core.services.workbench import open_workbench

    settings = get_settings()
    upload = _read_ingest_file(args) if args.fn is documents.cmd_ingest else None
    try:
        wb = open_workbench(settings)
    except DatabaseBusy as exc:
        endpoint = live_endpoint(settings) if args.handover else None
        if endpoint is None:
            raise busy_error(exc) from None
        if args.fn is exchange.cmd_export_fhir and args.out:
            return _export_fhir_in_app(endpoint, argv, args)
        # The app's answer comes once the command is done: an ingest may wait for the app's
        # worker to finish the job it holds, then run its own, each within the job ceiling.
        reply = send(endpoint, argv, os_user=shell_user(), upload=upload,
                     timeout=2 * settings.job_timeout_seconds + 60)
        return Reply(reply["stdout"], reply["stderr"], reply["exit"])
    try:
        return args.fn(Context(wb, shell_user(), upload=upload), args)
    finally:
        wb.close()


def _export_fhir_in_app(endpoint, argv: list[str], args: argparse.Namespace) -> dict[str, Any] | Reply:
    """``export-fhir --out FILE`` beside the app: the app builds, validates and records the
    bundle and answers with it; this process writes FILE, as ``ingest`` reads its file
    here: the app never opens a path a caller gave."""
    from core.services.admin.access_audit import shell_user
    from core.services.exchange.fhir_export import write_bundle_json
    from core.services.interfaces.app_endpoint import send

    sent, skip = [], False
    for arg in argv:
        if skip or arg == "--out" or arg.startswith("--out="):
            skip = arg == "--out"
            continue
        sent.append(arg)
    reply = send(endpoint, [*sent, *([] if "--json" in sent else ["--json"])], os_user=shell_user(), upload=None,
                 timeout=get_settings().job_timeout_seconds + 60)
    if reply["exit"] != 0:
        return Reply(reply["stdout"], reply["stderr"], reply["exit"])
    answer = json.loads(reply["stdout"])
    answer["out"] = str(write_bundle_json(answer.pop("bundle"), Path(args.out)))
    return answer


def _read_ingest_file(args) -> bytes:
    """The file of ``ingest``, read and checked here, by the caller: a command handed to
    the app sends these bytes, so the app never opens a path someone else gave."""
    from core.services.ingest.ingestion import read_upload_file

    return read_upload_file(Path(args.file), get_settings().upload_max_bytes)


if __name__ == "__main__":
    sys.exit(main(own_process=True))
