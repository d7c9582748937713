"""The accounts every test workbench holds (issue 12: changing services act for a named
account), all with one password, and how they are put in a workbench. The ``wb`` fixture
(tests/conftest.py) seeds them; a test that fills a data dir of its own calls
``seed_test_accounts`` itself."""

from __future__ import annotations

import functools

TEST_PASSWORD = "quartz-meadow-lantern-31"  # strong: it passes the password rules like any other
TEST_ACCOUNTS: dict[str, str] = {
    "dr.alice": "reviewer", "dr.reviewer": "reviewer", "dr.bob": "reviewer", "dr.a": "reviewer",
    "dr.carol": "reviewer", "clinician": "reviewer",
    "dr.ops": "admin", "dr.admin": "admin",
    "dr.viewer": "viewer",
}


@functools.cache
def hashed_test_password() -> str:
    """The argon2 hash of TEST_PASSWORD, computed once per process: at 64 MiB per hash,
    one per account per test would cost seconds."""
    from argon2 import PasswordHasher

    return PasswordHasher().hash(TEST_PASSWORD)


def seed_test_accounts(bench) -> None:
    """Insert TEST_ACCOUNTS straight into ``users`` (no per-account hashing or audit rows)."""
    from domain.clock import utcnow
    from storage import users_repo

    now = utcnow()
    with bench.db.transaction() as cur:
        for username, role in TEST_ACCOUNTS.items():
            if users_repo.by_username(cur, username) is None:
                users_repo.add(cur, username=username, role=role, password_hash=hashed_test_password(),
                               created_by="system:tests", now=now)
