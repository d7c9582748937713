"""Who may do what: roles, permissions, the account rules (names, password strength,
sign-in throttling per client, account lockout, idle timeout) and the mapping of an
identity provider's user to a role.

Pure rules, no storage: the accounts service applies them, the pages ask them what to
show. One home, so the UI's hidden buttons and the services' refusals cannot drift.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Iterable, Mapping

from zxcvbn import zxcvbn


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


# --- passwords ------------------------------------------------------------------------

MIN_PASSWORD_LENGTH = 12
MAX_PASSWORD_LENGTH = 1024  # hashing cost grows with length; nobody types more
# The strength estimator (zxcvbn, Dropbox's, ported to Python) scores 0-4 by the guesses
# an attacker with lists of common passwords, words, names, keyboard patterns, dates and
# this context would need; 3 is "safely unguessable" (about 10^8 guesses and up).
MIN_PASSWORD_SCORE = 3
# zxcvbn's own ceiling: its matching grows steeply with length (a 1,024-character
# password takes it most of a minute), so it judges the first 72 characters.
STRENGTH_CHARS = 72
# Words anyone guessing here would try first, besides the user's own name.
PASSWORD_CONTEXT_WORDS = ("clinical", "document", "review", "workbench", "clinic", "reviewer", "admin", "viewer",
                          "patient", "chart")


def password_problem(password: str, *, username: str, min_length: int = MIN_PASSWORD_LENGTH,
                     context: Iterable[str] = ()) -> str | None:
    """Why ``password`` may not be set for ``username``, in plain words; None when it may.

    Length first (at least ``min_length``), then the strength estimator: a password it
    scores below MIN_PASSWORD_SCORE is refused with its warning and suggestions."""
    if len(password) < min_length:
        return f"A password needs at least {min_length} characters."
    if len(password) > MAX_PASSWORD_LENGTH:
        return f"A password has at most {MAX_PASSWORD_LENGTH} characters."
    if password.strip().lower() == (username or "").strip().lower():
        return "A password must not be the user name."
    if len(set(password)) < 4:
        return "A password needs more than three different characters."
    words = _guess_words(username, context)
    # zxcvbn's Python port counts a separator between words as random characters, so
    # "admin-password" scored 3 and "test-password-123" 4; a guesser's rules join words
    # with "-", ".", "_" or a space as a matter of course. So the password is judged with
    # those separators taken out as well, and the lower score counts.
    typed = password[:STRENGTH_CHARS]
    joined = _SEPARATORS.sub("", typed)
    estimate = min((zxcvbn(p, user_inputs=words) for p in dict.fromkeys([typed, joined]) if p),
                   key=lambda e: e["score"])
    if estimate["score"] >= MIN_PASSWORD_SCORE:
        return None
    feedback = estimate.get("feedback") or {}
    hints = [feedback.get("warning") or "", *(feedback.get("suggestions") or [])]
    advice = " ".join(h.strip() for h in hints if h and h.strip())
    return "This password is too easy to guess. " + (advice or "Use a few unrelated words together.")


_SEPARATORS = re.compile(r"(?<=[^\W_])[-._ ]+(?=[^\W_])")  # between letters or digits


def _guess_words(username: str, context: Iterable[str]) -> list[str]:
    """The user name, joined and in parts ("dr.alice": "dralice", "dr", "alice"), and the
    context words."""
    name = (username or "").strip().lower()
    parts = [p for p in re.split(r"[._@-]+", name) if len(p) >= 2]
    joined = re.sub(r"[._@-]+", "", name)
    return [w for w in dict.fromkeys([name, joined, *parts, *PASSWORD_CONTEXT_WORDS, *(c.lower() for c in context)])
            if w]


# --- sign-in throttling and account lockout ---------------------------------------------
#
# Two counters, both over the last FAILURE_WINDOW_MINUTES (a sliding window):
#
# * per client (the browser's address): CLIENT_MAX_FAILURES failed sign-ins, whatever
#   account they named, and that client is refused until its failures age out of the
#   window. Every attempt it makes while refused counts as a failure too, so a guesser
#   who keeps going stays out; someone who waits gets back in.
# * per account: ACCOUNT_MAX_FAILURES wrong passwords lock it for ``lockout_minutes``
#   (an admin can unlock it). A refused client never reaches the password check, so one
#   client adds at most CLIENT_MAX_FAILURES to an account's window: locking an account
#   takes failures from several clients at once (a spread-out attack), never one guesser
#   alone. The legitimate user at another address signs in while a guesser is refused.

FAILURE_WINDOW_MINUTES = 15
CLIENT_MAX_FAILURES = 10
ACCOUNT_MAX_FAILURES = 25  # > 2 x CLIENT_MAX_FAILURES: at least three clients at once
NO_ADDRESS = "(no address)"  # every connection whose address is unknown shares one budget


def client_key(address: str | None) -> str:
    """Whose failure budget an address spends: an IPv4 address itself; an IPv6 address
    its /64 network (one household or host usually holds a whole /64, so stepping
    through it would otherwise buy fresh budgets); none (a local connection, or a proxy
    that does not pass the address on) one shared key."""
    text = (address or "").strip()
    if not text:
        return NO_ADDRESS
    try:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return text[:100]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))
    return str(ip)


def recent_failures(failures: Iterable[datetime], now: datetime,
                    window_minutes: float = FAILURE_WINDOW_MINUTES) -> list[datetime]:
    """The failures inside the window that ends at ``now``."""
    since = now - timedelta(minutes=window_minutes)
    return [t for t in failures if since < t <= now]


def client_throttled(failures: Iterable[datetime], now: datetime) -> bool:
    """A client with CLIENT_MAX_FAILURES failures in the window is refused."""
    return len(recent_failures(failures, now)) >= CLIENT_MAX_FAILURES


def lock_after_failure(failures: Iterable[datetime], now: datetime, lock_minutes: float) -> datetime | None:
    """When an account is locked until, given its failures in the window (this one
    included): ACCOUNT_MAX_FAILURES of them lock it for ``lock_minutes``."""
    if len(recent_failures(failures, now)) >= ACCOUNT_MAX_FAILURES:
        return now + timedelta(minutes=lock_minutes)
    return None


def is_locked(locked_until: datetime | None, now: datetime) -> bool:
    return locked_until is not None and now < locked_until


# --- idle timeout ------------------------------------------------------------------------


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
