"""The CLI beside the running app (issue 13): a loopback endpoint owned by the app.

DuckDB lets one process open the file for writing, and `make run` holds it. So the app
process (ui.runtime.start) also listens on 127.0.0.1 at a port the OS picks, and writes
``<data dir>/app-endpoint.json`` (0600, in the 0700 data dir) with that port, its process
and a random token. A CLI command that finds the database held and this file live sends
its command line there; the app runs the same command code on its own workbench and
answers the command's stdout, stderr and exit code, which the CLI prints verbatim.

Only someone who can read the token file (the data dir's owner, or root) can send. A
request is bounded in size (an upload at the limit, base64-encoded, plus a margin) and
checked before its body is read. Log lines name a status code only: the command line can
carry an MRN or a file name.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hmac
import http.client
import json
import os
import re
import secrets
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator

from domain.errors import WorkbenchError
from domain.settings import Settings
from storage.heartbeat import process_gone, process_token

ENDPOINT_FILE = "app-endpoint.json"
LOOPBACK = "127.0.0.1"
PATH = "/cli"
REQUEST_MARGIN = 1024 * 1024  # the command line and JSON around an upload at the limit
READ_TIMEOUT = 30.0  # seconds a client may take to send its request
MAX_ARGS = 200
_LOGIN = re.compile(r"^os:[!-~]{1,64}$")  # os:<login>, printable ASCII

# handle(request) -> {"stdout": str, "stderr": str, "exit": int}
Handler = Callable[["Request"], dict[str, Any]]


@dataclass(frozen=True)
class Endpoint:
    port: int
    token: str
    process: str  # storage.heartbeat.process_token of the app


@dataclass(frozen=True)
class Request:
    """One handed-over command, checked for form (not yet for meaning: the CLI's parser
    and the services do that in the app as they do in a direct run)."""

    argv: list[str]
    os_user: str  # the caller's os:<login>, the actor when the command has no --by
    upload: bytes | None  # ingest: the file's bytes, read and checked by the caller


class EndpointError(WorkbenchError):
    code = "app_endpoint"


def endpoint_path(settings: Settings) -> Path:
    return settings.data_dir / ENDPOINT_FILE


def max_request_bytes(settings: Settings) -> int:
    return 4 * (settings.upload_max_bytes // 3 + 1) + REQUEST_MARGIN


def live_endpoint(settings: Settings) -> Endpoint | None:
    """The running app's endpoint, or None when there is no file or it names a process
    that is gone (a crash left it; the next app start replaces it)."""
    try:
        raw = json.loads(endpoint_path(settings).read_text())
        endpoint = Endpoint(port=int(raw["port"]), token=str(raw["token"]), process=str(raw["process"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return None if process_gone(endpoint.process) else endpoint


# ============================================================================ the app's side


class AppEndpoint:
    """The server thread in the app process; ``handle`` runs one request."""

    def __init__(self, settings: Settings, handle: Handler):
        self._file = endpoint_path(settings)
        self._server = _Server((LOOPBACK, 0), handle, secrets.token_urlsafe(32), max_request_bytes(settings))
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> "AppEndpoint":
        self._thread = threading.Thread(target=self._server.serve_forever, name="app-endpoint", daemon=True)
        self._thread.start()
        body = json.dumps({"port": self.port, "pid": os.getpid(), "process": process_token(),
                           "token": self._server.token})
        # Written whole under a temporary name, then renamed: a CLI never reads half a file,
        # and a stale one (its app gone) is simply replaced.
        tmp = self._file.with_name(f".{ENDPOINT_FILE}.{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(body)
        os.replace(tmp, self._file)
        return self

    def stop(self, grace: float = 1.0) -> bool:
        """Remove the file, stop accepting, and wait up to ``grace`` seconds for commands
        under way (short: the app is gone within 5 s of SIGTERM). False when one is still
        running (an ingest inside a document): the caller then leaves the database open for
        the process's end, as for the worker; that job is reclaimed at the next start, since
        its process is gone, and the caller is told the app stopped answering."""
        self._remove_file()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
        idle = self._server.drain(grace)
        self._server.server_close()
        return idle

    def _remove_file(self) -> None:
        # Only our own: a newer app on the same data dir may have written it since.
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            if json.loads(self._file.read_text())["token"] == self._server.token:
                self._file.unlink()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, handle: Handler, token: str, max_bytes: int):
        self.handle_request_body = handle
        self.token = token
        self.max_bytes = max_bytes
        self._busy = 0
        self._state = threading.Condition()
        super().__init__(address, _RequestHandler)

    @contextlib.contextmanager
    def working(self) -> Iterator[None]:
        with self._state:
            self._busy += 1
        try:
            yield
        finally:
            with self._state:
                self._busy -= 1
                self._state.notify_all()

    def drain(self, timeout: float) -> bool:
        with self._state:
            return self._state.wait_for(lambda: self._busy == 0, timeout=timeout)


class _RequestHandler(BaseHTTPRequestHandler):
    server: _Server
    timeout = READ_TIMEOUT
    protocol_version = "HTTP/1.0"
    server_version = "workbench-app-endpoint"
    sys_version = ""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        if self.path != PATH:
            return self._refuse(404, "not_found", "Unknown path.")
        given = self.headers.get("Authorization", "")
        expected = f"Bearer {self.server.token}"
        if not hmac.compare_digest(given.encode(), expected.encode()):
            return self._refuse(403, "bad_token", "The token does not match this app's endpoint file.")
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            return self._refuse(411, "no_length", "A request needs a Content-Length.")
        if length < 0 or length > self.server.max_bytes:
            return self._refuse(413, "too_large", "The request is larger than the upload limit allows.")
        try:
            request = parse_request(self.rfile.read(length))
        except EndpointError as exc:
            return self._refuse(400, exc.code, exc.message)
        with self.server.working():
            reply = self.server.handle_request_body(request)
        self._answer(200, reply)

    def do_GET(self) -> None:  # noqa: N802
        self._refuse(405, "post_only", "Send a POST.")

    def _refuse(self, status: int, code: str, message: str) -> None:
        self._answer(status, {"error": code, "message": message})

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(OSError):  # the caller went away; nothing to tell it
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        pass  # the request line is fixed (/cli); status codes are logged in log_request

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        if str(code) != "200":  # refusals only; no argument values, ever
            print(f"[app-endpoint] refused a request: {code}", file=sys.stderr)


def parse_request(body: bytes) -> Request:
    """A request's JSON, checked for form: ``{"argv": [str], "os_user": "os:<login>",
    "upload": base64 | null}``."""
    try:
        raw = json.loads(body)
    except ValueError:
        raise EndpointError("The request is not JSON.", code="bad_request") from None
    if not isinstance(raw, dict):
        raise EndpointError("The request is not a JSON object.", code="bad_request")
    argv, os_user, upload = raw.get("argv"), raw.get("os_user"), raw.get("upload")
    if not (isinstance(argv, list) and 0 < len(argv) <= MAX_ARGS and all(isinstance(a, str) for a in argv)):
        raise EndpointError("argv must be a non-empty list of strings.", code="bad_request")
    if not (isinstance(os_user, str) and _LOGIN.match(os_user)):
        raise EndpointError("os_user must be os:<login>.", code="bad_request")
    data = None
    if upload is not None:
        if not isinstance(upload, str):
            raise EndpointError("upload must be base64 text.", code="bad_request")
        try:
            data = base64.b64decode(upload, validate=True)
        except (binascii.Error, ValueError):
            raise EndpointError("upload is not valid base64.", code="bad_request") from None
    return Request(argv=argv, os_user=os_user, upload=data)


# ============================================================================ the caller's side


def send(endpoint: Endpoint, argv: list[str], *, os_user: str, upload: bytes | None,
         timeout: float) -> dict[str, Any]:
    """Hand a command line to the app; its ``{"stdout", "stderr", "exit"}``.

    Raises EndpointError when the app refuses the request or cannot be reached."""
    body = json.dumps({"argv": argv, "os_user": os_user,
                       "upload": None if upload is None else base64.b64encode(upload).decode()}).encode()
    conn = http.client.HTTPConnection(LOOPBACK, endpoint.port, timeout=timeout)
    try:
        conn.request("POST", PATH, body=body, headers={"Authorization": f"Bearer {endpoint.token}",
                                                        "Content-Type": "application/json"})
        response = conn.getresponse()
        payload = response.read()
    except ConnectionRefusedError:
        raise EndpointError("The workbench app holds the database but its endpoint does not answer; "
                            "stop the app (Ctrl-C in the terminal running `make run`), then run this again.",
                            code="app_unreachable") from None
    except (OSError, http.client.HTTPException) as exc:
        raise EndpointError(f"The workbench app stopped answering this command ({type(exc).__name__}); "
                            "check the app, then run it again (a document already attached is kept).",
                            code="app_unreachable") from None
    finally:
        conn.close()
    try:
        reply = json.loads(payload)
    except ValueError:
        reply = {}
    if response.status != 200:
        raise EndpointError(f"The workbench app refused this command: {reply.get('message', response.status)}",
                            code=str(reply.get("error") or "app_refused"))
    if not (isinstance(reply.get("stdout"), str) and isinstance(reply.get("stderr"), str)
            and isinstance(reply.get("exit"), int)):
        raise EndpointError("The workbench app answered something this CLI cannot read; restart the app.",
                            code="app_refused")
    return reply
