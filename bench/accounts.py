"""The account a bench acts as: created by the operator at the shell (as `user add`
would) with a random temporary password, changed at once to another random one (as its
person would at the first sign-in: the app shows nothing else until then), and signed in
to an AppTest session. Nobody is shown either password."""

from __future__ import annotations

import secrets

BENCH_REVIEWER = "bench.reviewer"


def bench_reviewer(wb):
    from core.services.admin.access_audit import shell_user
    from core.services.admin.accounts import add_user, change_password

    temporary = secrets.token_urlsafe(18)
    add_user(wb, username=BENCH_REVIEWER, role="reviewer", password=temporary, by=shell_user())
    return change_password(wb, BENCH_REVIEWER, current=temporary, new=secrets.token_urlsafe(18))


def sign_in(at, account) -> None:
    """Put the account in the session the way the sign-in gate does, with its sign-in's
    cookie in the AppTest's simulated browser (the tests' helper: a signed-in session
    belongs to a browser's cookie, and AppTest has no browser)."""
    from tests.support.app_support import sign_in_session

    sign_in_session(at, account.username)
