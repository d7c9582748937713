"""Commands handed over by a CLI beside the running app (issue 13): the app runs the same
command body on its own workbench and captures its stdout, stderr and exit code for the
caller. The app's endpoint (core.services.interfaces.app_endpoint) is given ``serve_request`` as its
handler by the app (ui.runtime), so neither the endpoint nor the UI imports the CLI."""

from __future__ import annotations

import argparse
import io
import sys
from typing import Any

from core.commands import documents
from core.commands.base import APP_RUNNING, EXIT_BAD_INPUT, EXIT_JOB_FAILED, Context
from core.commands.output import execute
from core.commands.parser import build_parser
from domain.errors import BadInput


class _AppParser(argparse.ArgumentParser):
    """The parser as the app uses it for a handed-over command line: a mistake goes back
    to the caller as an error instead of ending (or printing in) the server process."""

    def error(self, message: str):
        raise BadInput(f"{self.prog}: {message}", code="bad_arguments")

    def exit(self, status: int = 0, message: str | None = None):
        raise BadInput("The app runs commands only, not --help.", code="bad_arguments")

    # --help and a usage line would print in the server process; the caller gets the error.
    def print_help(self, file=None) -> None:
        pass

    def print_usage(self, file=None) -> None:
        pass


def serve_request(wb, request) -> dict[str, Any]:
    """Run one command that a CLI beside the app handed over (``request``: a
    core.services.interfaces.app_endpoint.Request) on the app's workbench ``wb``: the same command
    body as a direct run, its stdout, stderr and exit code captured for the caller."""
    out, err = io.StringIO(), io.StringIO()
    try:
        args = build_parser(_AppParser).parse_args(request.argv)
    except BadInput as exc:
        return {"stdout": "", "stderr": f"error: {exc.code}: {exc.message}\n", "exit": EXIT_BAD_INPUT}
    if not getattr(args, "handover", False):
        return {"stdout": "", "stderr": f"error: not_handed_over: {APP_RUNNING}\n", "exit": EXIT_BAD_INPUT}
    if request.upload is not None and args.fn is not documents.cmd_ingest:
        return {"stdout": "", "stderr": "error: bad_request: only ingest sends a file.\n", "exit": EXIT_BAD_INPUT}
    ctx = Context(wb, request.os_user, in_app=True, upload=request.upload)
    code = execute(args, lambda: args.fn(ctx, args), out, err, quiet_libraries=False)
    if code not in (0, EXIT_BAD_INPUT, EXIT_JOB_FAILED):
        # For the app's operator: which command, never its arguments (an MRN, a file name).
        print(f"[app-endpoint] `{args.command}` for the CLI ended with exit {code}", file=sys.stderr)
    return {"stdout": out.getvalue(), "stderr": err.getvalue(), "exit": code}
