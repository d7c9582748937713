"""What every command body shares: its ``Context``, the exit codes, the app's answer
(``Reply``) and opening this process's workbench."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from domain.settings import get_settings

EXIT_BAD_INPUT = 2
EXIT_JOB_FAILED = 3

APP_RUNNING = ("The workbench app is running and holds the database, and this command is not one it runs for the "
               "CLI; stop it (Ctrl-C in the terminal running `make run`) or use the app, then run this again.")


@dataclass(frozen=True)
class Context:
    """What a command body runs with: the workbench (this process's, or the app's when
    the command was handed over), who is at the shell, and an upload read beforehand."""

    wb: Any  # core.services.workbench.Workbench
    os_user: str  # os:<login>: the actor when there is no --by, and the viewer of reads
    in_app: bool = False  # run inside the app for a CLI beside it (issue 13)
    upload: bytes | None = None  # ingest: the file's bytes, read and checked by the caller


@dataclass(frozen=True)
class Reply:
    """A command's answer from the app, to be printed as it is."""

    stdout: str
    stderr: str
    exit: int


def open_here():
    """This process's workbench. When another process holds the database the error says
    what to do (for the commands the app runs for the CLI, see ``core.__main__``)."""
    from domain.errors import DatabaseBusy
    from core.services.workbench import open_workbench

    try:
        return open_workbench(get_settings())
    except DatabaseBusy as exc:
        raise busy_error(exc) from None


def busy_error(exc):
    """The sentence for a held database: the app is running (its endpoint file is live),
    or some other process holds it (storage.db says so, and what to do)."""
    from domain.errors import DatabaseBusy
    from core.services.interfaces.app_endpoint import live_endpoint

    return DatabaseBusy(APP_RUNNING) if live_endpoint(get_settings()) is not None else exc


def actor(ctx: Context, args) -> str:
    """``--by`` when given, else the shell operator (``os:<login>``)."""
    return getattr(args, "by", None) or ctx.os_user
