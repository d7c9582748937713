"""The account a bench acts as: created by the operator at the shell (as `user add`
would) with a random temporary password, changed at once to another random one (as its
person would at the first sign-in: the app shows nothing else until then), and signed in
to an AppTest session. Nobody is shown either password."""

from __future__ import annotations

import secrets
from datetime import datetime, timezone

BENCH_REVIEWER = "bench.reviewer"


def bench_reviewer(wb):
    from core.services.access_audit import shell_user
    from core.services.accounts import add_user, change_password

    temporary = secrets.token_urlsafe(18)
    add_user(wb, username=BENCH_REVIEWER, role="reviewer", password=temporary, by=shell_user())
    return change_password(wb, BENCH_REVIEWER, current=temporary, new=secrets.token_urlsafe(18))


def sign_in(at, account) -> None:
    """Put the account in the session the way the sign-in gate does."""
    at.session_state["auth"] = {"username": account.username, "role": account.role.value, "user_id": account.id,
                                "last_seen": datetime.now(timezone.utc).isoformat()}
