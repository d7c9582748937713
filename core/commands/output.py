"""How a command's answer is written: one JSON object (or text) on stdout, errors as one
line on stderr with private values redacted, and the exit code (DESIGN §9; see
``core.__main__`` for why an error line never carries a patient identifier)."""

from __future__ import annotations

import argparse
import contextlib
import json
import traceback
from pathlib import Path
from typing import Any, Callable

from core.commands.base import EXIT_BAD_INPUT, Reply
from domain.errors import BadInput, Forbidden, WorkbenchError

# Arguments that carry patient identifiers or a file name; see core.__main__.
_PRIVATE_ARGS = {"patient": "--patient", "mrn": "--mrn", "first": "--first", "last": "--last", "dob": "--dob",
                 "file": "file"}


def redact(message: str, args: argparse.Namespace) -> str:
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
        print(f"error: {exc.code}: {redact(exc.message, args)}", file=stderr)
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
        print(f"error: {redact(error, args)}", file=stderr)
    return exit_code


def _human(result: Any) -> str:
    if isinstance(result, dict) and "_text" in result:
        return result["_text"]
    return json.dumps(result, default=str, indent=2)
