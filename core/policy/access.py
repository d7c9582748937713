"""Who may do what: roles, permissions, the account rules (names, passwords, lockout,
idle timeout) and the mapping of an identity provider's user to a role.

Pure rules, no storage: the accounts service applies them, the pages ask them what to
show. One home, so the UI's hidden buttons and the services' refusals cannot drift.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Mapping


class Role(StrEnum):
    VIEWER = "viewer"
    REVIEWER = "reviewer"
    ADMIN = "admin"


class Permission(StrEnum):
    READ = "read"  # charts, documents, answers, evals
    UPLOAD = "upload"
    DECIDE = "decide"  # identity and finding decisions, corrections, boxes, undo
    DELETE_DOCUMENT = "delete_document"
    ADD_PATIENT = "add_patient"
    RETRY_JOB = "retry_job"
    MANAGE_USERS = "manage_users"
    MANAGE_CATEGORIES = "manage_categories"
    RUN_EVAL = "run_eval"
    OPERATIONS = "operations"  # the Operations page and the access audit


_VIEWER = frozenset({Permission.READ})
_REVIEWER = _VIEWER | {Permission.UPLOAD, Permission.DECIDE, Permission.DELETE_DOCUMENT, Permission.ADD_PATIENT,
                       Permission.RETRY_JOB}
ROLE_PERMISSIONS: dict[Role, frozenset[Permission]] = {
    Role.VIEWER: _VIEWER,
    Role.REVIEWER: frozenset(_REVIEWER),
    Role.ADMIN: frozenset(Permission),
}

# What a refusal says the action needs, in words.
PERMISSION_WORDS: dict[Permission, str] = {
    Permission.READ: "read patient data",
    Permission.UPLOAD: "upload documents",
    Permission.DECIDE: "make review decisions",
    Permission.DELETE_DOCUMENT: "delete documents",
    Permission.ADD_PATIENT: "add patients",
    Permission.RETRY_JOB: "retry failed jobs",
    Permission.MANAGE_USERS: "manage user accounts",
    Permission.MANAGE_CATEGORIES: "change category mappings",
    Permission.RUN_EVAL: "run the eval gate",
    Permission.OPERATIONS: "see operations and the access audit",
}


def as_role(role: Role | str | None) -> Role | None:
    try:
        return Role(role) if role is not None else None
    except ValueError:
        return None


def can(role: Role | str | None, permission: Permission) -> bool:
    """Unknown or missing roles can do nothing (fail closed)."""
    known = as_role(role)
    return known is not None and permission in ROLE_PERMISSIONS[known]


def least_role(permission: Permission) -> Role:
    """The smallest role that holds ``permission`` (for "needs the reviewer role")."""
    return next(r for r in (Role.VIEWER, Role.REVIEWER, Role.ADMIN) if permission in ROLE_PERMISSIONS[r])


# --- account names --------------------------------------------------------------------

# Lower case, no colon: "os:<login>" (the shell operator) and "system:<name>" can never
# be mistaken for an account, so an actor name means one kind of thing.
_USERNAME = re.compile(r"^[a-z0-9][a-z0-9._@-]{1,63}$")
SHELL_PREFIX = "os:"
SYSTEM_PREFIX = "system:"


def username_problem(username: str) -> str | None:
    if not _USERNAME.fullmatch(username or ""):
        return ("A user name is 2-64 characters: lower-case letters, digits, '.', '_', '-' or '@', "
                "starting with a letter or digit.")
    return None


def shell_actor(login: str) -> str:
    """The operating-system user at the shell, as the audit names them."""
    return f"{SHELL_PREFIX}{login}"


def is_account_name(actor: str) -> bool:
    return bool(actor) and not actor.startswith((SHELL_PREFIX, SYSTEM_PREFIX))


# --- passwords, lockout, idle --------------------------------------------------------

MIN_PASSWORD_LENGTH = 12
MAX_PASSWORD_LENGTH = 1024  # hashing cost grows with length; nobody types more
MAX_FAILED_SIGN_INS = 5


def password_problem(password: str, *, username: str, min_length: int = MIN_PASSWORD_LENGTH) -> str | None:
    if len(password) < min_length:
        return f"A password needs at least {min_length} characters."
    if len(password) > MAX_PASSWORD_LENGTH:
        return f"A password has at most {MAX_PASSWORD_LENGTH} characters."
    if password.strip().lower() == (username or "").strip().lower():
        return "A password must not be the user name."
    if len(set(password)) < 4:
        return "A password needs more than three different characters."
    return None


def lock_after_failure(failed_attempts: int, now: datetime, lock_minutes: float) -> datetime | None:
    """After the fifth failed attempt in a row the account is locked for ``lock_minutes``."""
    if failed_attempts >= MAX_FAILED_SIGN_INS:
        return now + timedelta(minutes=lock_minutes)
    return None


def is_locked(locked_until: datetime | None, now: datetime) -> bool:
    return locked_until is not None and now < locked_until


def idle_expired(last_seen: datetime | None, now: datetime, timeout_minutes: float) -> bool:
    """A session unseen for ``timeout_minutes`` is over; one never seen is too (fail closed)."""
    return last_seen is None or now - last_seen >= timedelta(minutes=timeout_minutes)


# A sign-in in the browser (docs/access.md): the password check hands the browser a
# one-time ticket, which it trades within this many seconds for its session cookie.
SIGN_IN_TICKET_SECONDS = 60


def ticket_expired(issued_at: datetime, now: datetime) -> bool:
    return now - issued_at >= timedelta(seconds=SIGN_IN_TICKET_SECONDS)


def session_check_seconds(timeout_minutes: float) -> float:
    """How often an open page checks, without a click, that its sign-in still holds (the
    idle limit, a disabled account, a sign-out elsewhere): a tenth of the idle limit,
    between 1 and 10 seconds, so the page is blanked at most that long after it ends."""
    return min(10.0, max(1.0, timeout_minutes * 60 / 10))


# --- identity provider (OIDC) --------------------------------------------------------


def oidc_role(claims: Mapping[str, Any], mapping: Mapping[str, Any]) -> Role | None:
    """The role of a user signed in through the clinic's identity provider.

    ``mapping`` comes from the settings: ``{"claim": "groups", "roles": {"<group>": "reviewer", ...},
    "users": {"<email>": "admin"}}``. A user named in ``users`` gets that role; otherwise the
    highest role any of the claim's values maps to. No match, an unverified email, or an
    unknown role gives None: the user is not let in (fail closed).
    """
    if claims.get("email_verified") is False:
        return None
    found: list[Role] = []
    users = {str(k).lower(): v for k, v in (mapping.get("users") or {}).items()}
    email = str(claims.get("email") or "").lower()
    if email and email in users:
        role = as_role(users[email])
        return role
    values = claims.get(str(mapping.get("claim") or "groups"))
    if isinstance(values, str):
        values = [values]
    roles = mapping.get("roles") or {}
    for value in values or []:
        role = as_role(roles.get(str(value)))
        if role is not None:
            found.append(role)
    order = [Role.VIEWER, Role.REVIEWER, Role.ADMIN]
    return max(found, key=order.index) if found else None
