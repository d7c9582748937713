"""The account a bench acts as: created by the operator at the shell (as `user add`
would), with a random password nobody is shown, and signed in to an AppTest session."""

from __future__ import annotations

import secrets
from datetime import datetime, timezone

BENCH_REVIEWER = "bench.reviewer"


def bench_reviewer(wb):
    from core.services.access_audit import shell_user
    from core.services.accounts import add_user

    return add_user(wb, username=BENCH_REVIEWER, role="reviewer", password=secrets.token_urlsafe(18),
                    by=shell_user())


def sign_in(at, account) -> None:
    """Put the account in the session the way the sign-in gate does."""
    at.session_state["auth"] = {"username": account.username, "role": account.role.value, "user_id": account.id,
                                "last_seen": datetime.now(timezone.utc).isoformat()}
