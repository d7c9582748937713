"""AppTest sign-in helpers: a session as the real sign-in form leaves it, so page tests
start signed in without typing a password (and without an argon2 hash per test)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent


def _account(wb, username: str):
    from core.services.accounts import get_account

    account = get_account(wb, username)
    if account is None:  # a data dir the `wb` fixture did not seed (e.g. an empty one)
        from tests.conftest import TEST_ACCOUNTS, seed_test_accounts

        assert username in TEST_ACCOUNTS, f"{username} is not a test account"
        seed_test_accounts(wb)
        account = get_account(wb, username)
    return account


def session_for(username: str = "dr.reviewer", *, idle_minutes: float = 0.0, wb=None) -> dict:
    """``st.session_state["auth"]`` for ``username``, last seen ``idle_minutes`` ago."""
    from ui.runtime import start

    # start(): the runtime the AppTest run then uses too (a test fixture has reset it).
    account = _account(wb or start().wb, username)
    seen = datetime.now(timezone.utc) - timedelta(minutes=idle_minutes)
    return {"username": account.username, "role": account.role.value, "user_id": account.id,
            "last_seen": seen.isoformat()}


def sign_in_session(at: AppTest, username: str = "dr.reviewer", *, idle_minutes: float = 0.0, wb=None) -> AppTest:
    """Put a signed-in session for ``username`` into ``at`` (before its first run)."""
    at.session_state["auth"] = session_for(username, idle_minutes=idle_minutes, wb=wb)
    return at


def app(page: str | None = None, *, user: str | None = "dr.reviewer", timeout: float = 60, **query) -> AppTest:
    """An AppTest on Home.py (or on ``page`` run on its own, e.g. "app_pages/evals.py"),
    signed in as ``user`` (None: signed out), with ``query`` in the URL. Not yet run."""
    at = AppTest.from_file(str(ROOT / (page or "Home.py")), default_timeout=timeout)
    for k, v in query.items():
        at.query_params[k] = str(v)
    if user is not None:
        sign_in_session(at, user)
    return at
