"""The sign-in gate, the role checks pages make, and the view audit (docs/access.md).

Home.py calls ``require_sign_in`` before it builds the navigation; every page calls
``require`` at its top, so a page run on its own (AppTest, a stale URL) shows nothing of
a patient either. The rules (roles, idle time, lockout) are domain.policy.access.permissions's; the
accounts service checks passwords and writes the access audit; this module keeps the
browser session: ``st.session_state["auth"] = {"username", "role", "user_id", ...}``.

A local account's sign-in is held by the browser, not by the session: the password
check ends with a one-time ticket the browser trades for an HttpOnly cookie
(ui.session_cookie), whose sign-in lives server-side (core.services.admin.sign_in_sessions)
with its idle time; the session records which sign-in it belongs to (``"sign_in"``, the
token's hash), and every run checks that the connection's cookie names that very
sign-in. A client that knows only the session id (it is in upload URLs) gets the form.
The cookie is the sign-in: a reload or a new tab of that browser stays signed in.
With the identity provider (``WORKBENCH_AUTH=oidc``) Streamlit's own signed cookie binds
the session to the user, and the session keeps ``"last_seen"`` (ISO-8601 UTC) itself.

A signed-in page checks every few seconds, without a click, that its sign-in still
holds (``_watch_session``): after the idle limit, a sign-out in another tab or the
account disabled, only the sign-in form is left on screen.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Mapping

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from domain.clock import utcnow
from domain.errors import WorkbenchError
from domain.policy.access import permissions as access
from domain.policy.access.permissions import Permission
from core.services.admin import access_audit
from core.services.admin import accounts
from core.services.admin import sign_in_sessions
from core.services.admin.accounts import Account
from core.services.admin.sign_in_sessions import SessionCheck, same_digest
from ui import session_cookie
from ui.inert import md_text
from ui.runtime import workbench

SESSION_KEY = "auth"
NOTICE_KEY = "auth_notice"
TOLD_KEY = "auth_ended_told"  # the ended sign-in (token hash) whose reason was shown: once is enough
VIEWS_KEY = "auth_views"  # slot -> the view last written to the access audit from it
APP_TITLE = "Clinical Document Review Workbench"


# --- the session ---------------------------------------------------------------------


def connection_cookies() -> Mapping[str, str] | None:
    """The cookies of the request that opened the WebSocket this run answers; None when
    no browser is connected to the session (a run going on after its tab went away).

    The one place the sign-in reads the browser's cookie. ``st.context`` follows the
    connection of the moment: a client that reconnects to a session id brings its own
    request's cookies (tests/ui/test_session_binding.py checks that in Streamlit itself).
    AppTest runs a script with no connection at all, so there every run would look
    disconnected: the AppTest helpers (tests/support/app_support.py) replace this function with
    one that returns the cookie their simulated browser holds."""
    if not st.context.headers:  # every real connection has headers (Host at least)
        return None
    return st.context.cookies


def connection_address() -> str | None:
    """The address the connection of this run came from (None on loopback, where
    Streamlit names none); behind the proxy, the browser's, from X-Forwarded-For. The one
    place the sign-in reads it; the AppTest helpers replace it as they do the cookies."""
    address = st.context.ip_address
    return address if isinstance(address, str) else None


_NOT_CONNECTED = object()


def _browser_token() -> Any:
    """The session token the connection's cookie carries (None without one), or
    _NOT_CONNECTED."""
    cookies = connection_cookies()
    if cookies is None:
        return _NOT_CONNECTED
    return cookies.get(session_cookie.COOKIE_NAME) or None


def _session_id() -> str | None:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else None


def _parse_time(value: Any) -> datetime | None:
    """last_seen as naive UTC (the database's convention); None when unreadable."""
    try:
        when = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    except (TypeError, ValueError):
        return None
    return when.astimezone(timezone.utc).replace(tzinfo=None) if when.tzinfo else when


def _iso(when: datetime) -> str:
    return when.replace(tzinfo=timezone.utc).isoformat()


def _start_session(account: Account, **held: Any) -> None:
    # A new person at this browser starts from nothing the previous one left behind.
    st.session_state.clear()
    st.session_state[SESSION_KEY] = {"username": account.username, "role": account.role.value,
                                     "user_id": account.id, **held}


def _end_session(notice: str | None = None, *, told: str | None = None) -> None:
    # Everything goes: chat answers, the open review item and the viewer state are PHI.
    st.session_state.clear()
    if (session_id := _session_id()) is not None:
        session_cookie.unbind(session_id)
    if notice:
        st.session_state[NOTICE_KEY] = notice
    if told:  # the sign-in (token hash) whose end this notice announces
        st.session_state[TOLD_KEY] = told


def _ended_notice(why: str | None) -> str | None:
    minutes = workbench().settings.idle_timeout_minutes
    return {sign_in_sessions.IDLE: f"Signed out after {minutes:g} minutes without activity.",
            sign_in_sessions.INACTIVE: "Your account is no longer active; ask an administrator.",
            sign_in_sessions.SIGNED_OUT: "Signed out."}.get(why or "")


def _held() -> dict | None:
    held = st.session_state.get(SESSION_KEY)
    return held if isinstance(held, dict) and held.get("username") else None


def _belongs(held: dict | None, check: SessionCheck) -> bool:
    """Whether the session's sign-in is the live one the connection's cookie names."""
    return held is not None and check.sign_in is not None and same_digest(held.get("sign_in"), check.sign_in.digest)


def _session_account() -> tuple[Account | None, str | None]:
    """The identity-provider session's account, re-read from the database (a disabled
    account or a changed role counts at once), and why there is none when a session was
    there."""
    session = _held()
    if session is None:
        return None, None
    account = accounts.get_account(workbench(), session["username"])
    if account is None or not account.active:
        return None, "Your account is no longer active; ask an administrator."
    return account, None


def current_user() -> Account | None:
    """The signed-in, active account whose sign-in still holds (not idle, not signed
    out, and for a local account named by this connection's cookie); else None. A
    session that holds no sign-in yet is the cookie's (the gate adopts it in this run:
    Home.py asks before the gate, to show the page list). Never counts as activity."""
    wb = workbench()
    if wb.settings.auth == "oidc":
        account, _ = _session_account()
        if account is None:
            return None
        last_seen = _parse_time(st.session_state[SESSION_KEY].get("last_seen"))
        return None if access.idle_expired(last_seen, utcnow(), wb.settings.idle_timeout_minutes) else account
    token = _browser_token()
    if token is _NOT_CONNECTED:
        return None
    check = sign_in_sessions.check(wb, token)
    held = _held()
    return check.account if (held is None and check.sign_in is not None) or _belongs(held, check) else None


def can(permission: Permission) -> bool:
    account = current_user()
    return account is not None and account.can(permission)


def username() -> str | None:
    """The signed-in user's name, passed as ``by=`` to every changing service call."""
    account = current_user()
    return account.username if account else None


# --- the gate ------------------------------------------------------------------------


def require_sign_in() -> Account:
    """Return the signed-in account, or show only the sign-in (or change-password) form
    and stop the run. Each run checks the sign-in and counts as activity."""
    wb = workbench()
    if wb.settings.auth == "oidc":
        account = _oidc_account()
    else:
        account = _local_account()
    if account.must_change_password and account.auth_source == "local":
        _change_password_form(account)
    _open_last_patient(account)
    _sidebar(account)
    return account


LAST_PATIENT_KEY = "auth_last_patient_opened"


def _open_last_patient(account: Account) -> None:
    """Once per session: open the chart this user viewed last (the access audit says
    which), unless the URL names one. With no earlier view no chart is opened, so no
    view is logged that nobody chose."""
    if st.session_state.get(LAST_PATIENT_KEY) or "patient_id" in st.session_state:
        return
    st.session_state[LAST_PATIENT_KEY] = True
    if str(st.query_params.get("patient", "")).isdigit():
        return  # a link or a reload names the chart: the picker takes it from the URL
    last = last_viewed_patient(account.username)
    if last is not None:
        st.session_state["patient_id"] = last


def last_viewed_patient(username: str) -> int | None:
    """The patient of this user's latest view of patient data (chart, document, answer)."""
    for event in access_audit.events(workbench(), actor=username, limit=200):
        if event["event"] in access_audit.VIEW_EVENTS and event.get("patient_id") is not None:
            return int(event["patient_id"])
    return None


def _local_account() -> Account:
    wb = workbench()
    token = _browser_token()
    if token is _NOT_CONNECTED:
        st.stop()  # no browser on this session: nothing to show it, nothing to decide
    check = sign_in_sessions.check(wb, token)  # ends an idle sign-in or a disabled account's
    held = _held()
    if held is not None and not _belongs(held, check):
        # This session was signed in, but the connection does not hold that sign-in's
        # cookie: another client naming the session id, or the sign-in is over (idle,
        # signed out in another tab, the account disabled). Nothing of it is kept.
        if check.sign_in is None and check.ended is None and held.get("sign_in"):
            sign_in_sessions.record_refused(wb, held["username"], detail="a run without this sign-in's cookie")
        _end_session(_ended_notice(check.ended), told=sign_in_sessions.digest(token) if token else None)
        held = None
    if check.sign_in is None or check.account is None:
        told = sign_in_sessions.digest(token) if token else None
        if check.ended and told != st.session_state.get(TOLD_KEY):  # e.g. a reload after the idle limit: say why, once
            st.session_state[TOLD_KEY] = told
            st.session_state.setdefault(NOTICE_KEY, _ended_notice(check.ended))
        _sign_in_form()
    if held is None:  # the cookie is the sign-in: the browser just signed in, reloaded, or opened a tab
        _start_session(check.account, sign_in=check.sign_in.digest)
    sign_in_sessions.touch(wb, check.sign_in.digest)
    if (session_id := _session_id()) is not None:
        session_cookie.bind(session_id, check.sign_in.digest, check.account.username)
    st.session_state[SESSION_KEY].update(role=check.account.role.value, user_id=check.account.id)
    return check.account


def _first_admin_hint() -> None:
    wb = workbench()
    path = accounts.initial_password_path(wb)
    if path.exists():
        st.caption(f"First sign-in: the user name is `{accounts.INITIAL_ADMIN}` and its one-time password is in "
                   f"`{path.name}` in the workbench's data directory (readable only by the account that runs it).")


def _sign_in_form() -> None:
    """Only the form: no sidebar patient, no navigation, nothing of a patient."""
    wb = workbench()
    st.title(APP_TITLE)
    if notice := st.session_state.pop(NOTICE_KEY, None):
        st.info(notice)
    if not session_cookie.installed():
        st.error("This server cannot keep a sign-in: start the workbench with `make run` (`python -m ui.serve`) "
                 "or `streamlit run app.py`, not `streamlit run Home.py`.")
        st.stop()
    with st.form("sign_in"):
        st.subheader("Sign in")
        name = st.text_input("User name", autocomplete="username")
        password = st.text_input("Password", type="password", autocomplete="current-password")
        submitted = st.form_submit_button("Sign in", type="primary")
    if submitted:
        # Failed sign-ins are budgeted per client address too (docs/access.md); behind the
        # proxy, Streamlit's server takes it from X-Forwarded-For.
        result = accounts.sign_in(wb, name, password, client=connection_address())
        if result.ok and result.account is not None:
            _hand_over(sign_in_sessions.issue_ticket(wb, result.account))
        st.error(result.message)
    _first_admin_hint()
    st.stop()


def _hand_over(ticket: str) -> None:
    """The password was right: the browser posts the one-time ticket, top-level, to the
    sign-in route (a POST keeps it out of addresses and access logs), which sets the
    session cookie and sends it back to this page with its query; the new page load is
    signed in by the cookie. One click for the person: Sign in."""
    st.caption("Signing in…")
    st.html("<script>(() => {"
            "const form = document.createElement('form');"
            f"form.method = 'post'; form.action = {json.dumps(session_cookie.sign_in_path())};"
            f"for (const [name, value] of [['ticket', {json.dumps(ticket)}],"
            " ['next', window.location.pathname + window.location.search]]) {"
            "const field = document.createElement('input');"
            "field.type = 'hidden'; field.name = name; field.value = value; form.appendChild(field); }"
            "document.body.appendChild(form); form.submit(); })();</script>",
            unsafe_allow_javascript=True)
    st.stop()


def _change_password_form(account: Account) -> None:
    wb = workbench()
    st.title("Change your password")
    st.info("This password was set for you and works only until you choose your own.")
    minimum = max(access.MIN_PASSWORD_LENGTH, wb.settings.password_min_length)
    with st.form("change_password"):
        current = st.text_input("Current password", type="password", autocomplete="current-password")
        new = st.text_input("New password", type="password", autocomplete="new-password",
                            help=f"At least {minimum} characters, and not easy to guess: a few unrelated "
                                 "words work well.")
        again = st.text_input("New password again", type="password", autocomplete="new-password")
        submitted = st.form_submit_button("Change password", type="primary")
    if submitted:
        if new != again:
            st.error("The two new passwords are not the same.")
        else:
            try:
                accounts.change_password(wb, account.username, current=current, new=new)
            except WorkbenchError as exc:
                st.error(exc.message)
            else:
                st.session_state[NOTICE_KEY] = "Password changed."
                st.rerun()
    _sidebar(account)
    st.stop()


def _oidc_account() -> Account:
    """Streamlit's own OIDC sign-in (st.login, configured in .streamlit/secrets.toml); the
    identity provider's user is mapped to a role by ``settings.oidc_roles``."""
    wb = workbench()
    if not st.user.get("is_logged_in"):
        st.title(APP_TITLE)
        if notice := st.session_state.pop(NOTICE_KEY, None):
            st.info(notice)
        st.button("Sign in with your organisation's account", type="primary", on_click=st.login)
        st.stop()
    claims = st.user.to_dict()
    email = accounts.oidc_username(claims)
    session = st.session_state.get(SESSION_KEY)
    if not isinstance(session, dict) or session.get("username") != email:
        result = accounts.oidc_account(wb, claims)
        if not result.ok or result.account is None:
            st.title(APP_TITLE)
            st.error(result.message)
            st.button("Sign out", on_click=st.logout)
            st.stop()
        _start_session(result.account, last_seen=_iso(utcnow()))
    account, why = _session_account()
    now = utcnow()
    minutes = wb.settings.idle_timeout_minutes
    if account is None or access.idle_expired(_parse_time(st.session_state[SESSION_KEY].get("last_seen")), now,
                                              minutes):
        if account is not None:
            accounts.sign_out(wb, account.username, idle=True)
        _end_session()
        st.logout()  # the provider's cookie would sign them straight back in
        st.stop()
    st.session_state[SESSION_KEY].update(role=account.role.value, user_id=account.id, last_seen=_iso(now))
    return account


def _sidebar(account: Account) -> None:
    st.sidebar.markdown(f"Signed in as **{md_text(account.username)}** ({account.role.value})")
    if st.sidebar.button("Sign out", key="auth_sign_out"):
        held = _held() or {}
        if held.get("sign_in"):
            sign_in_sessions.sign_out(workbench(), held["sign_in"])  # every tab of this browser, audited
        else:
            accounts.sign_out(workbench(), account.username)
        _end_session("Signed out.", told=held.get("sign_in"))
        if account.auth_source == "oidc":
            st.logout()
        st.rerun()
    if notice := st.session_state.pop(NOTICE_KEY, None):
        st.sidebar.success(notice)
    _watch_session()


def _watch_session() -> None:
    """Every few seconds, without a click, a run of only this fragment checks that the
    sign-in still holds (``current_user``, which never counts as activity); when it does
    not, a whole-page run ends the session and leaves only the sign-in form on screen."""

    def session_watch() -> None:
        if current_user() is None:
            st.rerun(scope="app")

    every = access.session_check_seconds(workbench().settings.idle_timeout_minutes)
    with st.sidebar:
        st.fragment(session_watch, run_every=every)()


# --- page and control guards ---------------------------------------------------------


def require(permission: Permission = Permission.READ) -> Account:
    """A page's first line: nothing below it runs without a signed-in account holding
    ``permission``. Without a session (a page run on its own) it shows the sign-in form."""
    account = current_user()
    if account is None:
        account = require_sign_in()  # shows the form (or the idle notice) and stops
    if not account.can(permission):
        st.warning(refusal(account, permission), icon=":material/lock:")
        st.stop()
    return account


def refusal(account: Account, permission: Permission) -> str:
    need = access.least_role(permission).value
    return (f"Your role ({account.role.value}) cannot {access.PERMISSION_WORDS[permission]}; that needs the "
            f"{need} role" + (" or admin." if need != "admin" else "."))


# --- the view audit ------------------------------------------------------------------


def log_view(event: str, patient_id: int | None, object_type: str | None = None, object_id: Any = None, *,
             slot: str | None = None) -> None:
    """Write one view of patient data to the access audit, once per view: a rerun showing
    the same thing in the same place (``slot``, the event by default) writes nothing; a
    different patient or object there writes a new row."""
    account = current_user()
    if account is None:
        return
    view = (event, patient_id, object_type, None if object_id is None else str(object_id))
    seen = st.session_state.setdefault(VIEWS_KEY, {})
    place = slot or event
    if seen.get(place) == view:
        return
    access_audit.record_view(workbench(), account.username, event, patient_id=patient_id, object_type=object_type,
                             object_id=object_id, channel="ui")
    seen[place] = view


def forget_view(slot: str) -> None:
    """The view in ``slot`` was closed: opening it again is a new view."""
    st.session_state.get(VIEWS_KEY, {}).pop(slot, None)
