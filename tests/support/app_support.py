"""AppTest sign-in helpers: a session as the real sign-in leaves it, so page tests start
signed in without typing a password (and without an argon2 hash per test).

A signed-in session belongs to a sign-in the browser holds in a cookie (ui/auth.py,
ui/session_cookie.py), and AppTest has neither a browser nor a connection: each AppTest
here gets a simulated cookie jar, read through ``ui.auth.connection_cookies`` (the seam
ui/auth.py names for this). ``sign_in_session`` opens a sign-in and puts its cookie in
the jar; ``set_cookies`` lets a test hold another cookie, or none; ``follow_sign_in``
does what the browser does after the password check (trades the ticket for the cookie).
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
# Each AppTest's browser: its cookies, by the AppTest's SessionState object (the one its
# runs' st.session_state stands on), kept with that object so the id stays its own.
_JARS: dict[int, tuple[object, dict[str, str]]] = {}
_TOKENS: dict[str, str] = {}  # token digest -> token, for the sign-ins opened here


def _browser_cookies():
    """``ui.auth.connection_cookies`` in AppTest: the cookies of the AppTest running."""
    import streamlit as st
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    from ui.session_cookie import COOKIE_NAME

    ctx = get_script_run_ctx()
    jar = _jar(ctx.session_state._state) if ctx is not None else None
    if jar is not None:
        return dict(jar)
    # A session a test put in session_state by hand (session_for): its browser holds its cookie.
    held = st.session_state.get("auth")
    token = _TOKENS.get(held.get("sign_in", "")) if isinstance(held, dict) else None
    return {COOKIE_NAME: token} if token else {}


def install_browser() -> None:
    """Give every AppTest in this process a simulated browser (idempotent)."""
    import ui.auth
    import ui.session_cookie

    ui.auth.connection_cookies = _browser_cookies
    ui.auth.connection_address = lambda: None  # AppTest's browser is on loopback: one shared budget
    ui.session_cookie._installed = True  # the sign-in route: follow_sign_in stands for it


def set_cookies(at: AppTest, cookies: dict[str, str]) -> AppTest:
    """What ``at``'s browser sends from now on: ``{}`` for a client without a cookie."""
    install_browser()
    state = at._session_state._state
    _JARS[id(state)] = (state, dict(cookies))
    return at


def _jar(state) -> dict[str, str] | None:
    found = _JARS.get(id(state))
    return found[1] if found is not None and found[0] is state else None


def browser_token(at: AppTest) -> str | None:
    """The session token ``at``'s browser holds, if any."""
    from ui.session_cookie import COOKIE_NAME

    return (_jar(at._session_state._state) or {}).get(COOKIE_NAME)


def cookie_for(token: str) -> dict[str, str]:
    from ui.session_cookie import COOKIE_NAME

    return {COOKIE_NAME: token}


def follow_sign_in(at: AppTest) -> AppTest:
    """After a right password the page hands the browser a one-time ticket to post to
    the sign-in route: trade it for the cookie as the route does, and run again (the
    page the browser comes back to). Not run when no ticket was handed over."""
    from core.services.admin.sign_in_sessions import redeem_ticket

    scripts = [h.proto.body for h in at.get("html") if "ticket" in h.proto.body]
    if not scripts:
        return at
    ticket = re.search(r"\['ticket', \"([^\"]+)\"\]", scripts[-1]).group(1)
    token = redeem_ticket(app_workbench(), ticket)
    assert token, "the ticket the page handed over was refused"
    set_cookies(at, cookie_for(token))
    return at.run()


def app_workbench():
    """The workbench of the app's runtime, where its sign-ins are held."""
    from ui.runtime import start

    return start().wb


def _account(wb, username: str):
    from core.services.admin.accounts import get_account

    account = get_account(wb, username)
    if account is None:  # a data dir the `wb` fixture did not seed (e.g. an empty one)
        from tests.support.accounts import TEST_ACCOUNTS, seed_test_accounts

        assert username in TEST_ACCOUNTS, f"{username} is not a test account"
        seed_test_accounts(wb)
        account = get_account(wb, username)
    return account


def open_sign_in(username: str = "dr.reviewer", *, idle_minutes: float = 0.0, wb=None) -> str:
    """A sign-in for ``username`` as the sign-in route opens one, last active
    ``idle_minutes`` ago; returns its token (the cookie's value)."""
    from core.services.admin import sign_in_sessions

    # Held by the app's own runtime (start(), which the AppTest run then uses too; a test
    # fixture has reset it): the sign-ins live in its memory, whichever ``wb`` a test has.
    app_wb = app_workbench()
    token = sign_in_sessions.open_sign_in(app_wb, _account(wb or app_wb, username))
    found = sign_in_sessions.check(app_wb, token).sign_in
    found.last_seen -= timedelta(minutes=idle_minutes)
    _TOKENS[found.digest] = token
    return token


def session_for(username: str = "dr.reviewer", *, idle_minutes: float = 0.0, wb=None) -> dict:
    """``st.session_state["auth"]`` for ``username`` signed in ``idle_minutes`` ago, as the
    gate leaves it; its AppTest's browser holds the sign-in's cookie."""
    from core.services.admin.sign_in_sessions import digest

    install_browser()
    token = open_sign_in(username, idle_minutes=idle_minutes, wb=wb)
    account = _account(wb or app_workbench(), username)
    return {"username": account.username, "role": account.role.value, "user_id": account.id,
            "sign_in": digest(token)}


def sign_in_session(at: AppTest, username: str = "dr.reviewer", *, idle_minutes: float = 0.0, wb=None) -> AppTest:
    """Put a signed-in session for ``username`` into ``at`` (before its first run), with
    its cookie in ``at``'s browser."""
    at.session_state["auth"] = held = session_for(username, idle_minutes=idle_minutes, wb=wb)
    return set_cookies(at, cookie_for(_TOKENS[held["sign_in"]]))


def fresh_app_runtime(monkeypatch) -> None:
    """A Streamlit runtime (AppTest) opened on this test's data dir: no worker thread and
    no CLI endpoint (the table above the ``data_dir`` fixture in tests/conftest.py says
    why), settings re-read, and nothing cached from another test's data dir."""
    import streamlit as st

    from core.services.review import document_view
    from domain.settings import reload_settings

    monkeypatch.setenv("WORKBENCH_START_WORKER", "false")
    monkeypatch.setenv("WORKBENCH_START_CLI_ENDPOINT", "false")  # no CLI beside these apps
    reload_settings()
    st.cache_resource.clear()
    st.cache_data.clear()
    document_view.clear_caches()
    monkeypatch.setattr("ui.runtime._STARTED", None)  # one runtime per test data dir
    # AppTest has no browser: each AppTest gets a simulated one holding the sign-in cookie,
    # also when a test builds its AppTest by hand.
    install_browser()


def app(page: str | None = None, *, user: str | None = "dr.reviewer", timeout: float = 60, **query) -> AppTest:
    """An AppTest on Home.py (or on ``page`` run on its own, e.g. "app_pages/evals.py"),
    signed in as ``user`` (None: signed out), with ``query`` in the URL. Not yet run."""
    install_browser()
    at = AppTest.from_file(str(ROOT / (page or "Home.py")), default_timeout=timeout)
    for k, v in query.items():
        at.query_params[k] = str(v)
    if user is not None:
        sign_in_session(at, user)
    return at


def run_home(*, user: str = "dr.reviewer", **session) -> AppTest:
    """Home.py signed in as ``user`` (a reviewer by default), with ``session`` state; run."""
    at = app(user=user)
    for k, v in session.items():
        at.session_state[k] = v
    return at.run()


def home(*, user: str = "dr.reviewer", **query) -> AppTest:
    """Home.py signed in as ``user`` (a reviewer by default), ``query`` in the URL; run."""
    return app(user=user, **query).run()


def documents_page(patient_id: int, *, user: str = "dr.reviewer", **query) -> AppTest:
    """The Documents page of ``patient_id``'s chart, reached from Home as a person does."""
    at = app(user=user, **query)
    at.session_state["patient_id"] = patient_id
    at.run()
    at.switch_page("app_pages/documents.py").run()
    assert not at.exception, at.exception
    return at


def clinician_markdown(at: AppTest) -> list[str]:
    """The page's Markdown a clinician reads: all of it but the "Details for support"
    expander, which holds the internal words on purpose (ui/glossary.py)."""
    support = {m.value for e in at.expander if e.label == "Details for support" for m in e.markdown}
    return [m.value for m in at.markdown if m.value not in support]


def document_picker(at: AppTest):
    """The Documents page's "Document" select."""
    return next(s for s in at.selectbox if s.label == "Document")


def document_metrics(at: AppTest) -> dict[str, str]:
    """The Documents page's status line: "**Status**  \nread" -> {"Status": "read"}."""
    out = {}
    for m in at.markdown:
        head, sep, value = m.value.partition("  \n")
        if sep and head in ("**Status**", "**Patient match**", "**What happened**"):
            out[head.strip("*")] = value
    return out


def operations_page() -> AppTest:
    """The Operations page, opened by an admin (it is theirs only)."""
    at = home(user="dr.ops")
    at.switch_page("app_pages/operations.py").run()
    assert not at.exception, at.exception
    return at


def failed_job(wb, patient_id: int) -> dict:
    """A lab job that ran and failed (its file is not a readable PDF)."""
    from core.services.ingest.ingestion import attach_and_extract
    from core.services.ingest.worker import Worker

    attached = attach_and_extract(wb, patient_id=patient_id, source="bad.pdf", data=b"%PDF-1.4 not parsed",
                                  filename="bad.pdf", doc_type="lab_pdf", by="dr.alice")
    return Worker(wb, worker_id="intake-extractor:test").run_specific(attached.job["id"])


def open_queue(patient_id: int):
    """The Review queue page, opened from Home with ``patient_id``'s chart chosen."""
    at = run_home(patient_id=patient_id)
    at.switch_page("app_pages/review_queue.py").run()
    assert not at.exception, at.exception
    return at
