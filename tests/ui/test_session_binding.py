"""A signed-in session is bound to the browser's sign-in cookie (issue 21, items 1 and 6):
the sign-ins kept server-side (core.services.admin.sign_in_sessions), the route that trades a
ticket for the cookie and the guard in front of Streamlit (ui.session_cookie), and the
Streamlit behaviour the per-run check rests on. The served app end to end, with a real
browser and a client that knows only a session id, is in test_browser_sign_in.py."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from datetime import timedelta

import pytest

from core.services.admin import access_audit
from core.services.admin import accounts
from core.services.admin import sign_in_sessions
from core.services.admin.sign_in_sessions import IDLE, INACTIVE, SESSION_REFUSED, SIGNED_OUT, digest
from tests.support.browser_support import ROOT, free_port, wait_healthy


@pytest.fixture
def reviewer(wb):
    return accounts.get_account(wb, "dr.reviewer")


# --- the sign-ins --------------------------------------------------------------------------


def test_a_ticket_is_good_once_and_for_a_minute(wb, reviewer, monkeypatch):
    ticket = sign_in_sessions.issue_ticket(wb, reviewer)
    token = sign_in_sessions.redeem_ticket(wb, ticket)
    assert token and sign_in_sessions.check(wb, token).account == reviewer
    assert sign_in_sessions.redeem_ticket(wb, ticket) is None  # spent
    assert sign_in_sessions.redeem_ticket(wb, "made-up") is None
    late = sign_in_sessions.issue_ticket(wb, reviewer)
    later = sign_in_sessions.utcnow() + timedelta(seconds=61)
    monkeypatch.setattr(sign_in_sessions, "utcnow", lambda: later)
    assert sign_in_sessions.redeem_ticket(wb, late) is None


def test_a_disabled_accounts_ticket_and_sign_in_are_refused(wb, reviewer):
    ticket = sign_in_sessions.issue_ticket(wb, reviewer)
    token = sign_in_sessions.open_sign_in(wb, reviewer)
    accounts.disable_user(wb, "dr.reviewer", by="dr.admin")
    assert sign_in_sessions.redeem_ticket(wb, ticket) is None
    assert sign_in_sessions.check(wb, token) == sign_in_sessions.SessionCheck(ended=INACTIVE)
    accounts.enable_user(wb, "dr.reviewer", by="dr.admin")
    assert sign_in_sessions.check(wb, token).ended == INACTIVE  # ended stays ended


def test_only_the_hash_of_a_token_is_kept(wb, reviewer):
    token = sign_in_sessions.open_sign_in(wb, reviewer)
    store = wb.extras["sign_in_sessions"]
    assert list(store.sign_ins) == [digest(token)] and token not in repr(store)


def test_a_check_never_counts_as_activity_and_the_idle_end_is_audited_once(wb, reviewer, monkeypatch):
    token = sign_in_sessions.open_sign_in(wb, reviewer)
    held = sign_in_sessions.check(wb, token).sign_in
    start = held.last_seen
    now = [start + timedelta(minutes=14)]
    monkeypatch.setattr(sign_in_sessions, "utcnow", lambda: now[0])
    for _ in range(3):  # a page's timer checking
        assert sign_in_sessions.check(wb, token).sign_in is held
    assert held.last_seen == start
    assert sign_in_sessions.touch(wb, held.digest) and held.last_seen == now[0]  # a click
    now[0] += timedelta(minutes=15)
    assert not sign_in_sessions.touch(wb, held.digest)  # too late: a click does not revive it
    assert sign_in_sessions.check(wb, token).ended == IDLE
    assert sign_in_sessions.check(wb, token).ended == IDLE
    assert len(access_audit.events(wb, event=accounts.IDLE_TIMEOUT, actor="dr.reviewer")) == 1


def test_an_open_page_checks_its_sign_in_every_tenth_of_the_idle_limit_within_1_to_10_seconds():
    from domain.policy.access.permissions import session_check_seconds

    assert [session_check_seconds(m) for m in (15, 1, 0.1, 0.01)] == [10.0, 6.0, 1.0, 1.0]


def test_sign_out_ends_the_sign_in_for_every_tab(wb, reviewer):
    token = sign_in_sessions.open_sign_in(wb, reviewer)
    other = sign_in_sessions.open_sign_in(wb, reviewer)  # another browser of the same person
    sign_in_sessions.sign_out(wb, digest(token))
    sign_in_sessions.sign_out(wb, digest(token))
    assert sign_in_sessions.check(wb, token).ended == SIGNED_OUT
    assert sign_in_sessions.check(wb, other).account == reviewer
    assert len(access_audit.events(wb, event=accounts.SIGN_OUT, actor="dr.reviewer")) == 1


# --- the route -------------------------------------------------------------------------------


@pytest.fixture
def route(wb, reviewer, monkeypatch):
    """The sign-in route on a bare Starlette app, over this test's workbench."""
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from ui import runtime, session_cookie

    monkeypatch.setattr(runtime, "_STARTED", runtime.Runtime(wb, worker=None))
    client = TestClient(Starlette(routes=session_cookie.routes()), base_url="http://workbench.test",
                        follow_redirects=False)
    return client, lambda: sign_in_sessions.issue_ticket(wb, reviewer)


def test_the_route_trades_a_ticket_for_an_http_only_cookie_and_goes_back(route, wb):
    client, ticket = route
    answer = client.post("/_workbench/sign-in", data={"ticket": ticket(), "next": "/documents?patient=3"},
                         headers={"Origin": "http://workbench.test"})
    assert answer.status_code == 303 and answer.headers["location"] == "/documents?patient=3"
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith("workbench_session=") and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert "Path=/" in cookie and "Secure" not in cookie
    token = cookie.split(";")[0].split("=", 1)[1]
    assert sign_in_sessions.check(wb, token).account.username == "dr.reviewer"
    # behind the TLS proxy the cookie is Secure
    answer = client.post("/_workbench/sign-in", data={"ticket": ticket(), "next": "/"},
                         headers={"Origin": "https://workbench.test", "X-Forwarded-Proto": "https",
                                  "X-Forwarded-Host": "workbench.test"})
    assert "Secure" in answer.headers["set-cookie"]
    # nginx's `Host $host` drops the port the browser used (https://workbench.test:8443)
    answer = client.post("/_workbench/sign-in", data={"ticket": ticket(), "next": "/"},
                         headers={"Origin": "https://workbench.test:8443", "Host": "workbench.test",
                                  "X-Forwarded-Proto": "https"})
    assert answer.status_code == 303 and "set-cookie" in answer.headers
    # a page under `Referrer-Policy: no-referrer` posts `Origin: null`; the browser's
    # Sec-Fetch-Site still says the post came from this origin (seen through nginx)
    answer = client.post("/_workbench/sign-in", data={"ticket": ticket(), "next": "/"},
                         headers={"Origin": "null", "Sec-Fetch-Site": "same-origin"})
    assert answer.status_code == 303 and "set-cookie" in answer.headers
    for site in ("cross-site", "same-site", "none"):
        answer = client.post("/_workbench/sign-in", data={"ticket": ticket(), "next": "/"},
                             headers={"Origin": "null", "Sec-Fetch-Site": site})
        assert answer.status_code == 403, site


def test_the_route_sets_nothing_for_a_spent_ticket_another_site_or_a_foreign_next(route):
    client, ticket = route
    spent = ticket()
    client.post("/_workbench/sign-in", data={"ticket": spent, "next": "/"})
    again = client.post("/_workbench/sign-in", data={"ticket": spent, "next": "/"})
    assert again.status_code == 303 and "set-cookie" not in again.headers
    for origin in ("https://evil.example", "https://workbench.test.evil.example", "null"):
        cross = client.post("/_workbench/sign-in", data={"ticket": ticket(), "next": "/"},
                            headers={"Origin": origin})
        assert cross.status_code == 403 and "set-cookie" not in cross.headers, origin
    cross = client.post("/_workbench/sign-in", data={"ticket": ticket(), "next": "/"},
                        headers={"Sec-Fetch-Site": "cross-site"})
    assert cross.status_code == 403
    for foreign in ("https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)"):
        answer = client.post("/_workbench/sign-in", data={"ticket": ticket(), "next": foreign})
        assert answer.headers["location"] == "/", foreign
    assert client.get("/_workbench/sign-in").status_code == 405  # a ticket never travels in an address
    assert client.post("/_workbench/sign-in", content=b"ticket=" + b"x" * 5000).status_code == 413


# --- the guard --------------------------------------------------------------------------------


def _handshake(session_id: str | None, cookie: str | None = None) -> dict:
    offered = ", ".join(["streamlit", "xsrf-token"] + ([session_id] if session_id else []))
    headers = [(b"host", b"workbench.test"), (b"sec-websocket-protocol", offered.encode())]
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    return {"type": "websocket", "path": "/_stcore/stream", "headers": headers,
            "subprotocols": offered.split(", ")}


def _through_guard(scope: dict, messages: list[dict] | None = None) -> tuple[dict | None, list[dict]]:
    """What Streamlit behind the guard is handed: the scope, and the messages it reads."""
    from ui.session_cookie import SessionGuard

    seen: dict = {}
    queue = list(messages or [])

    async def streamlit(scope, receive, send):
        seen["scope"] = scope
        seen["read"] = [await receive() for _ in range(len(queue))]

    async def receive():
        return queue.pop(0)

    async def send(message):
        seen.setdefault("sent", []).append(message)

    asyncio.run(SessionGuard(streamlit)(scope, receive, send))
    return seen.get("scope"), seen.get("sent", [])


@pytest.fixture
def bound(wb, reviewer, monkeypatch):
    """A session 'victim-session' signed in with a sign-in whose cookie we hold."""
    from ui import runtime, session_cookie

    monkeypatch.setattr(runtime, "_STARTED", runtime.Runtime(wb, worker=None))
    token = sign_in_sessions.open_sign_in(wb, reviewer)
    session_cookie.bind("victim-session", digest(token), reviewer.username)
    yield token
    session_cookie.unbind("victim-session")


def test_a_connection_naming_a_signed_in_session_without_its_cookie_gets_a_new_session(bound, wb):
    for cookie in (None, "workbench_session=not-a-token", "other=1",
                   f"workbench_session={sign_in_sessions.open_sign_in(wb, accounts.get_account(wb, 'dr.viewer'))}"):
        scope, _ = _through_guard(_handshake("victim-session", cookie))
        assert dict(scope["headers"])[b"sec-websocket-protocol"] == b"streamlit, xsrf-token", cookie
        assert scope["subprotocols"] == ["streamlit", "xsrf-token"]
    refused = access_audit.events(wb, event=SESSION_REFUSED, actor="dr.reviewer")
    assert len(refused) == 4 and "cookie" in refused[0]["detail"]


def test_the_browser_holding_the_cookie_resumes_its_session_and_unbound_sessions_are_left_alone(bound):
    scope, _ = _through_guard(_handshake("victim-session", f"a=b; workbench_session={bound}"))
    assert dict(scope["headers"])[b"sec-websocket-protocol"].endswith(b", victim-session")
    scope, _ = _through_guard(_handshake("a-session-nobody-signed-in"))
    assert scope["subprotocols"] == ["streamlit", "xsrf-token", "a-session-nobody-signed-in"]
    scope, _ = _through_guard(_handshake(None))
    assert scope["subprotocols"] == ["streamlit", "xsrf-token"]


def test_an_upload_into_a_signed_in_session_needs_its_cookie(bound):
    def put(cookie: str | None):
        headers = [(b"cookie", cookie.encode())] if cookie else []
        return _through_guard({"type": "http", "method": "PUT", "path": "/_stcore/upload_file/victim-session/f1",
                               "headers": headers, "query_string": b""})

    scope, sent = put(None)
    assert scope is None and sent[0]["status"] == 403
    scope, sent = put(f"workbench_session={bound}")
    assert scope is not None and not sent


def test_a_click_counts_as_activity_and_a_timer_does_not(bound, wb):
    from streamlit.proto.BackMsg_pb2 import BackMsg

    def rerun(auto: bool) -> dict:
        message = BackMsg()
        message.rerun_script.is_auto_rerun = auto
        message.rerun_script.fragment_id = "a-fragment"
        return {"type": "websocket.receive", "bytes": message.SerializeToString()}

    held = sign_in_sessions.check(wb, bound).sign_in
    held.last_seen -= timedelta(minutes=5)
    before = held.last_seen
    _through_guard(_handshake("victim-session", f"workbench_session={bound}"), [rerun(True), rerun(True)])
    assert held.last_seen == before  # a fragment's timer (run_every), like the page's own check
    _through_guard(_handshake("victim-session", f"workbench_session={bound}"), [rerun(False)])
    assert held.last_seen > before  # a click, also one inside a fragment


# --- what the per-run check rests on -------------------------------------------------------------


@pytest.mark.slow
def test_st_context_follows_the_connection_that_resumed_a_session(tmp_path):
    """Streamlit resumes a session for whoever names its id, keeping its session_state;
    st.context.cookies then are the new connection's, not the first one's. ui/auth.py's
    check on every run relies on that (and the guard keeps strangers out before it)."""
    from tests.support.stream_client import run_page

    (tmp_path / "page.py").write_text(textwrap.dedent("""
        import streamlit as st
        st.session_state["runs"] = st.session_state.get("runs", 0) + 1
        st.write(f"cookie={st.context.cookies.get('probe')} runs={st.session_state['runs']}")
    """))
    (tmp_path / "launch.py").write_text("import streamlit as st\napp = st.App('page.py')\n")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "launch.py", "--server.port", str(port),
                               "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        assert wait_healthy(url), "the probe app never answered"
        first = run_page(url, cookie="probe=first")
        assert "cookie=first runs=1" in first.text
        second = run_page(url, session_id=first.session_id, cookie="probe=second")
        assert second.session_id == first.session_id and "cookie=second runs=2" in second.text
        third = run_page(url, session_id=first.session_id)
        assert third.session_id == first.session_id and "cookie=None runs=3" in third.text
    finally:
        server.terminate()
        server.wait(20)


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_make_runs_server_still_stops_its_worker_and_endpoint_on_a_signal(tmp_path, stop):
    """`make run` now serves app.py, which uvicorn runs, and uvicorn ends the process on
    the signal it raises again after its shutdown: ui.serve must still get to stop the
    worker and remove the CLI's endpoint file, and exit 0."""
    port = free_port()
    env = {**os.environ, "WORKBENCH_DATA_DIR": str(tmp_path / "data"), "STREAMLIT_SERVER_PORT": str(port),
           "STREAMLIT_SERVER_ADDRESS": "127.0.0.1"}
    server = subprocess.Popen([sys.executable, "-m", "ui.serve"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    endpoint = tmp_path / "data" / "app-endpoint.json"
    try:
        deadline = time.time() + 90
        while time.time() < deadline and not endpoint.exists():
            time.sleep(0.3)
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.3)
        assert endpoint.exists(), server.stderr.read().decode()[-2000:] if server.poll() is not None else ""
        server.send_signal(stop)
        assert server.wait(20) == 0, server.stderr.read().decode()[-2000:]
        assert not endpoint.exists(), "ui.serve did not get to stop_worker"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(20)
