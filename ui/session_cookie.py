"""The browser's half of a sign-in: the HttpOnly session cookie, the route that sets it,
and the guard that keeps a signed-in Streamlit session to the browser holding it
(docs/access.md, "The session cookie").

Streamlit resumes any session whose id a WebSocket names (the third entry of its
``Sec-WebSocket-Protocol`` list), and that id is in every upload URL
(``/_stcore/upload_file/<session id>/…``), so a proxy's access log holds it. So:

- after the password check the page posts a one-time ticket to ``SIGN_IN_ROUTE``
  (``routes``), which sets the cookie (a random token; the server keeps its hash,
  ``core.services.admin.sign_in_sessions``) and sends the browser back to the page it was on;
- ``ui.auth`` checks on every run that the connection's cookie names the sign-in the
  session belongs to, and ``bind``s the session id to that sign-in here;
- ``SessionGuard`` (``middleware``) refuses a WebSocket that names a bound session id
  without the cookie of its sign-in: the id is dropped from the handshake and Streamlit
  opens a fresh session, which shows the sign-in form; the session it named is left as
  it was. An upload to a bound session needs the cookie too. A click (a rerun the
  browser asks for, not a timer's) counts as activity of the cookie's sign-in, also
  inside a fragment that reruns on its own.

``app.py`` (what ``make run`` serves) mounts the route and the guard on Home.py.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlparse

from streamlit import config as streamlit_config
from streamlit.url_util import make_url_path

from core.services.admin import sign_in_sessions
from ui import runtime

COOKIE_NAME = "workbench_session"
SIGN_IN_ROUTE = "_workbench/sign-in"
_STREAM = "/_stcore/stream"
_UPLOAD = re.compile(r"/_stcore/upload_file/([^/]+)(?:/|$)")
_MAX_FORM_BYTES = 4096
# s: a binding no run has renewed for a day is dropped. A signed-in session renews it on
# every whole-page run, or ends (idle) within minutes; a disconnected one is dropped by
# Streamlit after server.disconnectedSessionTTL (120 s by default).
_BINDING_TTL = 24 * 3600
_LOG = logging.getLogger(__name__)

_installed = False


def installed() -> bool:
    """Whether this server serves the sign-in route (started as ``app.py``): a bare
    ``streamlit run Home.py`` does not, and could never set the cookie."""
    return _installed


def sign_in_path() -> str:
    return make_url_path(str(streamlit_config.get_option("server.baseUrlPath") or ""), SIGN_IN_ROUTE)


# --- which sign-in each signed-in Streamlit session belongs to -----------------------

_bindings: dict[str, tuple[str, str, float]] = {}  # session id -> (token digest, user name, bound at)
_bindings_lock = threading.Lock()


def bind(session_id: str, token_digest: str, username: str) -> None:
    """The session ``session_id`` is signed in with the token hashing to ``token_digest``
    (renewed on every run)."""
    now = time.monotonic()
    with _bindings_lock:
        _bindings[session_id] = (token_digest, username, now)
        for stale in [k for k, (_, _, at) in _bindings.items() if now - at > _BINDING_TTL]:
            del _bindings[stale]


def unbind(session_id: str) -> None:
    """The session holds no sign-in any more (its state was cleared)."""
    with _bindings_lock:
        _bindings.pop(session_id, None)


def bound(session_id: str) -> tuple[str, str] | None:
    """(token digest, user name) of the sign-in ``session_id`` holds, if any."""
    with _bindings_lock:
        found = _bindings.get(session_id)
    return (found[0], found[1]) if found else None


def cookie_token(cookie_header: str | None) -> str | None:
    """The session token in a ``Cookie`` header, if there is one."""
    if not cookie_header:
        return None
    jar = SimpleCookie()
    try:
        jar.load(cookie_header)
    except Exception:  # a malformed header names no token
        return None
    morsel = jar.get(COOKIE_NAME)
    return morsel.value if morsel is not None and morsel.value else None


def may_use(session_id: str | None, token: str | None) -> bool:
    """Whether a request carrying ``token`` may act in the session ``session_id``: any
    session that holds no sign-in, and a signed-in one only with its sign-in's cookie."""
    held = bound(session_id) if session_id else None
    return held is None or sign_in_sessions.same_digest(held[0], sign_in_sessions.digest(token) if token else None)


# --- the route that sets the cookie --------------------------------------------------


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers") or []:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _is_https(request) -> bool:
    forwarded = (request.headers.get("x-forwarded-proto") or "").split(",")[0].strip().lower()
    return request.url.scheme == "https" or forwarded == "https"


def _same_origin(request) -> bool:
    """A sign-in is posted by the app's own page: its Origin is this server's (as the
    browser reached it, directly or through the proxy), so another site cannot sign a
    visitor's browser in to an account of its choosing."""
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site != "same-origin":
        return False
    origin = request.headers.get("origin")
    if origin is None:  # browsers send Origin with every POST; a client without one acts for itself
        return True
    if origin == "null" and fetch_site == "same-origin":
        # A page under `Referrer-Policy: no-referrer` (a proxy may set it) posts with an
        # opaque Origin; Sec-Fetch-Site, which no page can set, still says it is ours.
        return True
    parsed = urlparse(origin)
    if not parsed.netloc:
        return False
    allowed = streamlit_config.get_option("server.corsAllowedOrigins") or []
    for host in (request.headers.get("host"), request.headers.get("x-forwarded-host")):
        if not host:
            continue
        if host == parsed.netloc:
            return True
        named = urlparse(f"//{host}")
        # nginx's `proxy_set_header Host $host` drops the port the browser used
        if named.port is None and named.hostname and named.hostname == parsed.hostname:
            return True
    return origin in allowed


def safe_next(value: str | None) -> str:
    """Where to send the browser after signing in: a path on this server (the page it
    was on, with its query), never another site."""
    home = make_url_path(str(streamlit_config.get_option("server.baseUrlPath") or ""), "")
    if not value or len(value) > 2048 or not value.startswith("/") or value.startswith(("//", "/\\")):
        return home
    if any(ord(c) < 0x20 or c == "\\" for c in value) or urlparse(value).netloc:
        return home
    return value


async def _sign_in(request):
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import PlainTextResponse, RedirectResponse

    if not _same_origin(request):
        return PlainTextResponse("A sign-in must come from the workbench's own page.", status_code=403)
    body = b""
    async for chunk in request.stream():  # a ticket and a path: a few hundred bytes
        body += chunk
        if len(body) > _MAX_FORM_BYTES:
            return PlainTextResponse("Too large.", status_code=413)
    form = parse_qs(body.decode("utf-8", "replace"), max_num_fields=4)
    ticket = (form.get("ticket") or [""])[0]
    response = RedirectResponse(safe_next((form.get("next") or [""])[0]), status_code=303)
    response.headers["Cache-Control"] = "no-store"
    started = runtime.started()
    token = await run_in_threadpool(sign_in_sessions.redeem_ticket, started.wb, ticket) if started else None
    if token:  # else (spent, expired, account disabled meanwhile) the page shows the form again
        response.set_cookie(COOKIE_NAME, token, httponly=True, samesite="strict", path="/",
                            secure=_is_https(request))
    return response


def routes() -> list:
    """The sign-in route, for ``st.App(routes=…)``."""
    from starlette.routing import Route

    global _installed
    _installed = True
    return [Route(sign_in_path(), _sign_in, methods=["POST"])]


# --- the guard -----------------------------------------------------------------------


def _user_rerun(frame: bytes) -> bool:
    """Whether a message from the browser asks for a run a person caused (a click, a
    page opened), rather than a fragment's timer (``is_auto_rerun``)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    message = BackMsg()
    try:
        message.ParseFromString(frame)
    except Exception:
        return False  # Streamlit refuses it itself
    return message.WhichOneof("type") == "rerun_script" and not message.rerun_script.is_auto_rerun


class SessionGuard:
    """ASGI middleware in front of Streamlit's own routes (see the module docstring)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        path = scope.get("path") or ""
        if scope["type"] == "websocket" and path.endswith(_STREAM):
            token = cookie_token(_header(scope, b"cookie"))
            scope = await self._handshake(scope, token)
            if token:
                receive = self._noting_activity(receive, sign_in_sessions.digest(token))
        elif scope["type"] == "http" and (upload := _UPLOAD.search(path)):
            if not may_use(upload.group(1), cookie_token(_header(scope, b"cookie"))):
                from starlette.responses import PlainTextResponse

                await PlainTextResponse("Not your session.", status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    async def _handshake(self, scope, token: str | None):
        offered = _header(scope, b"sec-websocket-protocol")
        entries = [e.strip() for e in offered.split(",")] if offered else []
        session_id = entries[2] if len(entries) >= 3 and entries[2] else None
        held = bound(session_id) if session_id else None
        if held is None or may_use(session_id, token):
            return scope
        username = held[1]
        _LOG.warning("A connection without the sign-in cookie of %s named that signed-in session; it gets a new "
                     "session instead.", username)
        started = runtime.started()
        if started is not None:
            from starlette.concurrency import run_in_threadpool

            await run_in_threadpool(sign_in_sessions.record_refused, started.wb, username,
                                    detail="a connection without this sign-in's cookie named its session")
        kept = ", ".join(entries[:2]).encode("latin-1")
        headers = [(k, kept if k.lower() == b"sec-websocket-protocol" else v) for k, v in scope["headers"]]
        return {**scope, "headers": headers, "subprotocols": entries[:2]}

    @staticmethod
    def _noting_activity(receive, token_digest: str):
        async def receive_and_note():
            message = await receive()
            frame = message.get("bytes") if message.get("type") == "websocket.receive" else None
            if frame and _user_rerun(frame) and (started := runtime.started()) is not None:
                sign_in_sessions.touch(started.wb, token_digest)
            return message

        return receive_and_note


def middleware() -> list:
    """The guard, for ``st.App(middleware=…)``."""
    from starlette.middleware import Middleware

    return [Middleware(SessionGuard)]
