"""The sign-in gate, the role checks pages make, and the view audit (docs/access.md).

Home.py calls ``require_sign_in`` before it builds the navigation; every page calls
``require`` at its top, so a page run on its own (AppTest, a stale URL) shows nothing of
a patient either. The rules (roles, idle time, lockout) are core.policy.access's; the
accounts service checks passwords and writes the access audit; this module only keeps
the browser session: ``st.session_state["auth"] = {"username", "role", "user_id",
"last_seen"}`` (last_seen ISO-8601 UTC).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import streamlit as st

from core.clock import utcnow
from core.errors import WorkbenchError
from core.policy import access
from core.policy.access import Permission
from core.services import access_audit, accounts
from core.services.accounts import Account
from ui.inert import md_text
from ui.runtime import workbench

SESSION_KEY = "auth"
NOTICE_KEY = "auth_notice"
VIEWS_KEY = "auth_views"  # slot -> the view last written to the access audit from it
APP_TITLE = "Clinical Document Review Workbench"


# --- the session ---------------------------------------------------------------------


def _parse_time(value: Any) -> datetime | None:
    """last_seen as naive UTC (the database's convention); None when unreadable."""
    try:
        when = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    except (TypeError, ValueError):
        return None
    return when.astimezone(timezone.utc).replace(tzinfo=None) if when.tzinfo else when


def _iso(when: datetime) -> str:
    return when.replace(tzinfo=timezone.utc).isoformat()


def _start_session(account: Account) -> None:
    # A new person at this browser starts from nothing the previous one left behind.
    st.session_state.clear()
    st.session_state[SESSION_KEY] = {"username": account.username, "role": account.role.value,
                                     "user_id": account.id, "last_seen": _iso(utcnow())}


def _end_session(notice: str | None = None) -> None:
    # Everything goes: chat answers, the open review item and the viewer state are PHI.
    st.session_state.clear()
    if notice:
        st.session_state[NOTICE_KEY] = notice


def _session_account() -> tuple[Account | None, str | None]:
    """The signed-in account, re-read from the database (a disabled account or a changed
    role counts at once), and why there is none when a session was there."""
    session = st.session_state.get(SESSION_KEY)
    if not isinstance(session, dict) or not session.get("username"):
        return None, None
    account = accounts.get_account(workbench(), session["username"])
    if account is None or not account.active:
        return None, "Your account is no longer active; ask an administrator."
    return account, None


def current_user() -> Account | None:
    """The signed-in, active account whose session has not gone idle; else None."""
    account, _ = _session_account()
    if account is None:
        return None
    last_seen = _parse_time(st.session_state[SESSION_KEY].get("last_seen"))
    if access.idle_expired(last_seen, utcnow(), workbench().settings.idle_timeout_minutes):
        return None
    return account


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
    and stop the run. Each run checks the idle time and moves last_seen on."""
    wb = workbench()
    if wb.settings.auth == "oidc":
        account = _oidc_account()
    else:
        account = _local_account()
    if account.must_change_password and account.auth_source == "local":
        _change_password_form(account)
    _sidebar(account)
    return account


def _local_account() -> Account:
    wb = workbench()
    account, why = _session_account()
    if why:
        _end_session(why)
    if account is None:
        _sign_in_form()
    now = utcnow()
    session = st.session_state[SESSION_KEY]
    minutes = wb.settings.idle_timeout_minutes
    if access.idle_expired(_parse_time(session.get("last_seen")), now, minutes):
        accounts.sign_out(wb, account.username, idle=True)
        _end_session(f"Signed out after {minutes:g} minutes without activity.")
        _sign_in_form()
    session.update(role=account.role.value, user_id=account.id, last_seen=_iso(now))
    return account


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
    with st.form("sign_in"):
        st.subheader("Sign in")
        name = st.text_input("User name", autocomplete="username")
        password = st.text_input("Password", type="password", autocomplete="current-password")
        submitted = st.form_submit_button("Sign in", type="primary")
    if submitted:
        result = accounts.sign_in(wb, name, password)
        if result.ok and result.account is not None:
            _start_session(result.account)
            st.rerun()
        st.error(result.message)
    _first_admin_hint()
    st.stop()


def _change_password_form(account: Account) -> None:
    wb = workbench()
    st.title("Change your password")
    st.info("This password was set for you and works only until you choose your own.")
    minimum = max(access.MIN_PASSWORD_LENGTH, wb.settings.password_min_length)
    with st.form("change_password"):
        current = st.text_input("Current password", type="password", autocomplete="current-password")
        new = st.text_input("New password", type="password", autocomplete="new-password",
                            help=f"At least {minimum} characters.")
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
        _start_session(result.account)
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
        accounts.sign_out(workbench(), account.username)
        _end_session("Signed out.")
        if account.auth_source == "oidc":
            st.logout()
        st.rerun()
    if notice := st.session_state.pop(NOTICE_KEY, None):
        st.sidebar.success(notice)


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
