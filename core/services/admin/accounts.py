"""Accounts, sign-in and the role check every changing service call makes.

Local accounts keep an argon2id hash (argon2-cffi's defaults: 64 MiB, 3 passes); a
clinic with an identity provider signs in through Streamlit's ``st.login`` and its users
are mapped to the same roles (``oidc_account``). The rules (roles, password strength,
sign-in throttling, lockout, idle time) live in ``domain.policy.access.permissions``; this module
applies them, keeps the recent failures they read (``SignInFailures``) and writes the
access audit.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Mapping

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from core import telemetry
from domain.clock import utcnow
from domain.errors import BadInput, Forbidden
from domain.policy.access import permissions as access
from domain.policy.access.permissions import Permission, Role
from core.services.workbench import Workbench
from storage import access_repo, users_repo

_HASHER = PasswordHasher()  # argon2id
# Verified against when the user name is unknown, so a wrong name costs the same time
# as a wrong password and the answer does not tell which it was.
_DUMMY_HASH = _HASHER.hash("not a real password, only a timing decoy")
INITIAL_ADMIN = "admin"
INITIAL_PASSWORD_FILE = "initial-admin-password.txt"

# What an access event is called in the audit.
SIGN_IN, SIGN_IN_FAILED, SIGN_IN_LOCKED, ACCOUNT_LOCKED = "sign_in", "sign_in_failed", "sign_in_locked", "account_locked"
SIGN_IN_THROTTLED = "sign_in_throttled"  # refused before any check: too many failures from that client
SIGN_OUT, IDLE_TIMEOUT, PASSWORD_CHANGED = "sign_out", "idle_timeout", "password_changed"
USER_ADDED, USER_DISABLED, USER_ENABLED, PASSWORD_RESET = "user_added", "user_disabled", "user_enabled", "password_reset"


@dataclass(frozen=True)
class Account:
    id: int
    username: str
    role: Role
    active: bool
    must_change_password: bool
    auth_source: str
    failed_attempts: int
    locked_until: datetime | None
    last_sign_in_at: datetime | None
    created_at: datetime
    created_by: str | None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "Account":
        return cls(id=row["id"], username=row["username"], role=Role(row["role"]), active=row["active"],
                   must_change_password=row["must_change_password"], auth_source=row["auth_source"],
                   failed_attempts=row["failed_attempts"], locked_until=row["locked_until"],
                   last_sign_in_at=row["last_sign_in_at"], created_at=row["created_at"],
                   created_by=row["created_by"])

    def can(self, permission: Permission) -> bool:
        return self.active and access.can(self.role, permission)


@dataclass(frozen=True)
class Actor:
    """Who a changing call acts for: an account, the operating-system user at the shell
    (``os:<login>``, CLI only), or the system itself (``system:<name>``, e.g. the demo)."""

    name: str
    kind: str  # account | shell | system
    user_id: int | None = None
    role: Role | None = None


@dataclass(frozen=True)
class SignInResult:
    ok: bool
    message: str  # plain words for the person at the form; one text for every refusal
    account: Account | None = None


# --- the role check ------------------------------------------------------------------

# The shell operator owns the data dir (0700), so they can already do anything the files
# allow; they may run the setup and housekeeping commands without an account. Review
# decisions always name an account, and the system (demo, interfaces) may only upload.
_SHELL_MAY = frozenset({Permission.READ, Permission.UPLOAD, Permission.DELETE_DOCUMENT, Permission.ADD_PATIENT,
                        Permission.RETRY_JOB, Permission.MANAGE_USERS, Permission.MANAGE_CATEGORIES,
                        Permission.RUN_EVAL, Permission.OPERATIONS})
_SYSTEM_MAY = frozenset({Permission.READ, Permission.UPLOAD})


def authorize(wb: Workbench, by: str | None, permission: Permission) -> Actor:
    """The actor ``by`` names, if it may do ``permission``.

    Raises BadInput (``missing_user`` / ``unknown_user`` / ``inactive_user``) when ``by``
    names no active account, and Forbidden when the account's role lacks the permission.
    """
    name = (by or "").strip()
    what = access.PERMISSION_WORDS[permission]
    if not name:
        raise BadInput(f"To {what} a signed-in user is needed (--by an existing account).", code="missing_user")
    if name.startswith(access.SHELL_PREFIX) or name.startswith(access.SYSTEM_PREFIX):
        shell = name.startswith(access.SHELL_PREFIX)
        if permission not in (_SHELL_MAY if shell else _SYSTEM_MAY):
            raise Forbidden(f"To {what} name an account with --by; {name} may not.")
        return Actor(name=name, kind="shell" if shell else "system")
    with wb.db.cursor() as cur:
        row = users_repo.by_username(cur, name)
    if row is None:
        raise BadInput(f"No account is named {name!r}; see `python -m core user list`.", code="unknown_user")
    account = Account.from_row(row)
    if not account.active:
        raise BadInput(f"The account {name!r} is disabled.", code="inactive_user")
    if not access.can(account.role, permission):
        need = access.least_role(permission)
        who = "an admin" if need is Role.ADMIN else f"a {need.value} or an admin"
        article = "an" if account.role is Role.ADMIN else "a"
        raise Forbidden(f"{name} is {article} {account.role.value}; only {who} may {what}.")
    return Actor(name=account.username, kind="account", user_id=account.id, role=account.role)


# --- accounts ------------------------------------------------------------------------


def get_account(wb: Workbench, username: str) -> Account | None:
    with wb.db.cursor() as cur:
        row = users_repo.by_username(cur, (username or "").strip().lower())
    return Account.from_row(row) if row else None


def list_users(wb: Workbench) -> list[Account]:
    with wb.db.cursor() as cur:
        return [Account.from_row(r) for r in users_repo.all_users(cur)]


def _min_password_length(wb: Workbench) -> int:
    return max(access.MIN_PASSWORD_LENGTH, wb.settings.password_min_length)


def _check_new_password(wb: Workbench, password: str, username: str) -> None:
    """Every password set anywhere (add, reset, change, the first admin's) passes here."""
    problem = access.password_problem(password or "", username=username, min_length=_min_password_length(wb))
    if problem:
        raise BadInput(problem, code="weak_password")


def add_user(wb: Workbench, *, username: str, role: str, password: str | None, by: str,
             must_change_password: bool = True, auth_source: str = "local") -> Account:
    """A new account. A local account's password is a temporary one: whoever set it knows
    it, so the person must choose their own at the first sign-in, whichever way the account
    was made (``user add``, Operations → Users, a script). ``must_change_password`` stays
    a keyword for callers that say so; it cannot be turned off for a local account."""
    if auth_source == "local" and not must_change_password:
        raise ValueError("a local account always changes its temporary password at the first sign-in")
    actor = authorize(wb, by, Permission.MANAGE_USERS)
    username = (username or "").strip().lower()
    problem = access.username_problem(username)
    if problem:
        raise BadInput(problem, code="bad_username")
    if access.as_role(role) is None:
        raise BadInput(f"A role is viewer, reviewer or admin, not {role!r}.", code="bad_role")
    if auth_source == "local":
        _check_new_password(wb, password or "", username)
    password_hash = _HASHER.hash(password) if password else None
    now = utcnow()
    with wb.db.transaction() as cur:
        if users_repo.by_username(cur, username):
            raise BadInput(f"An account named {username!r} already exists.", code="duplicate_user")
        row = users_repo.add(cur, username=username, role=str(role), password_hash=password_hash,
                             auth_source=auth_source, must_change_password=auth_source == "local",
                             created_by=actor.name, now=now)
        _event(cur, actor, USER_ADDED, now, object_type="user", object_id=username, detail=str(role))
    return Account.from_row(row)


def _set_active(wb: Workbench, username: str, *, active: bool, by: str) -> Account:
    actor = authorize(wb, by, Permission.MANAGE_USERS)
    now = utcnow()
    with wb.db.transaction() as cur:
        row = users_repo.by_username(cur, (username or "").strip().lower())
        if row is None:
            raise BadInput(f"No account is named {username!r}; see `python -m core user list`.",
                           code="unknown_user")
        if not active and row["active"]:
            if actor.name == row["username"]:
                raise BadInput("You cannot disable your own account.", code="self_disable")
            if row["role"] == Role.ADMIN and _active_admins(cur) <= 1:
                raise BadInput("This is the last active admin; add another admin first.", code="last_admin")
        row = users_repo.update(cur, row["id"], active=active, disabled_at=None if active else now,
                                disabled_by=None if active else actor.name,
                                **({"failed_attempts": 0, "locked_until": None} if active else {}))
        _event(cur, actor, USER_ENABLED if active else USER_DISABLED, now, object_type="user",
               object_id=row["username"])
    if active:
        _failures(wb).forget_account(row["username"])  # unlocked: its failures so far count no more
    return Account.from_row(row)


def disable_user(wb: Workbench, username: str, *, by: str) -> Account:
    return _set_active(wb, username, active=False, by=by)


def enable_user(wb: Workbench, username: str, *, by: str) -> Account:
    """Re-enable a disabled account; also clears a lockout."""
    return _set_active(wb, username, active=True, by=by)


def reset_password(wb: Workbench, username: str, *, password: str, by: str) -> Account:
    """An admin sets a temporary password; the user must change it at the next sign-in."""
    actor = authorize(wb, by, Permission.MANAGE_USERS)
    username = (username or "").strip().lower()
    _check_new_password(wb, password, username)
    now = utcnow()
    with wb.db.transaction() as cur:
        row = users_repo.by_username(cur, username)
        if row is None:
            raise BadInput(f"No account is named {username!r}; see `python -m core user list`.",
                           code="unknown_user")
        row = users_repo.update(cur, row["id"], password_hash=_HASHER.hash(password), must_change_password=True,
                                password_changed_at=now, failed_attempts=0, locked_until=None)
        _event(cur, actor, PASSWORD_RESET, now, object_type="user", object_id=username)
    _failures(wb).forget_account(username)
    return Account.from_row(row)


def _active_admins(cur) -> int:
    cur.execute("SELECT count(*) FROM users WHERE active AND role = ?", [Role.ADMIN.value])
    return int(cur.fetchone()[0])


# --- sign-in -------------------------------------------------------------------------

# Every refused sign-in gets these words, whatever the reason (unknown name, wrong
# password, locked, disabled, not a local account, too many failures from this client):
# the form tells nobody which names exist or what state an account is in. The reason is
# in the access audit, which only admins read.
SIGN_IN_REFUSED = ("Wrong user name or password, or this account cannot sign in now. "
                   "Try again in a few minutes, or ask an administrator.")


class SignInFailures:
    """Recent failed sign-ins per client and per account, kept in this process's memory
    (docs/access.md says why not in the database). The rules that read them are
    ``domain.policy.access.permissions``'s. Locked: Streamlit runs each browser session in a thread.

    Only the newest CLIENT_MAX_FAILURES times of a client and ACCOUNT_MAX_FAILURES of an
    account are kept (all the rules look at), and a client unseen for a window is
    dropped, so memory follows the clients active in the last minutes; past MAX_CLIENTS
    the longest-quiet go first."""

    MAX_CLIENTS = 20_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: OrderedDict[str, deque[datetime]] = OrderedDict()  # least recently active first
        self._accounts: dict[str, deque[datetime]] = {}

    def admit(self, client: str, now: datetime) -> bool:
        """Whether ``client`` is refused (over its budget), and this attempt counted as one
        of its failures: it stays one unless ``succeeded`` takes it back. Counting before
        the check, in one step, keeps simultaneous attempts from slipping past the budget."""
        with self._lock:
            times = self._clients.pop(client, None) or deque(maxlen=access.CLIENT_MAX_FAILURES)
            throttled = access.client_throttled(times, now)
            times.append(now)
            self._clients[client] = times
            self._drop_quiet(now)
            return throttled

    def succeeded(self, client: str, at: datetime) -> None:
        """The attempt ``admit`` counted at ``at`` signed in: it is no failure. The client's
        earlier failures stay (signing in to one's own account buys no new guesses)."""
        with self._lock:
            times = self._clients.get(client)
            if times is not None and at in times:
                times.remove(at)

    def account_failed(self, username: str, now: datetime) -> list[datetime]:
        """Count a wrong password on ``username``; its recent failures, this one included."""
        with self._lock:
            times = self._accounts.setdefault(username, deque(maxlen=access.ACCOUNT_MAX_FAILURES))
            times.append(now)
            return list(times)

    def forget_account(self, username: str) -> None:
        with self._lock:
            self._accounts.pop(username, None)

    def _drop_quiet(self, now: datetime) -> None:
        quiet = now - timedelta(minutes=access.FAILURE_WINDOW_MINUTES)
        while self._clients:
            oldest = next(iter(self._clients.values()))
            if len(self._clients) <= self.MAX_CLIENTS and oldest and oldest[-1] > quiet:
                break
            self._clients.popitem(last=False)


def _failures(wb: Workbench) -> SignInFailures:
    """The workbench's failure counters: one per open database, so one per app process."""
    return wb.extras.setdefault("sign_in_failures", SignInFailures())


def sign_in(wb: Workbench, username: str, password: str, *, channel: str = "ui",
            client: str | None = None) -> SignInResult:
    """Check a local account's password. ``client`` is the address the attempt came from
    (the app passes ``st.context.ip_address``; None where it is unknown).

    A client over its failure budget is refused whatever it sends; wrong passwords lock
    an account only when they come from more clients than one (``domain.policy.access.permissions``).
    Every refusal gives the same SignInResult and costs one argon2 verification, like a
    success, so neither the answer nor its time tells an unknown name, a wrong password,
    a locked, disabled or identity-provider account, or a refused client apart. The
    access audit tells them apart: sign_in, sign_in_failed (detail: unknown user, not a
    local account, disabled, attempt N), sign_in_locked (tried while locked),
    account_locked (the failure that locked it) and sign_in_throttled; each row names the
    client when known."""
    name = (username or "").strip().lower()
    now = utcnow()
    lock_minutes = wb.settings.lockout_minutes
    failures = _failures(wb)
    who = access.client_key(client)
    throttled = failures.admit(who, now)
    where = {"object_type": "client", "object_id": str(client)[:100]} if client else {}
    with wb.db.transaction() as cur:
        row = users_repo.by_username(cur, name) if name else None
        local = row is not None and row["auth_source"] == "local" and bool(row["password_hash"])
        # One verification on every path, before any branch: the same time for every answer.
        ok, rehash = _verify(row["password_hash"] if local else _DUMMY_HASH, password)
        if row is None:
            actor = Actor(name=name or "(blank)", kind="unknown")
        else:
            actor = Actor(name=row["username"], kind="account", user_id=row["id"], role=Role(row["role"]))
        if throttled:
            _event(cur, actor, SIGN_IN_THROTTLED, now, channel=channel, **where,
                   detail=f"{access.CLIENT_MAX_FAILURES} failed sign-ins from this client within "
                          f"{access.FAILURE_WINDOW_MINUTES} minutes")
            return SignInResult(False, SIGN_IN_REFUSED)
        if not local:
            _event(cur, actor, SIGN_IN_FAILED, now, channel=channel, **where,
                   detail="unknown user" if row is None else "not a local account")
            return SignInResult(False, SIGN_IN_REFUSED)
        if access.is_locked(row["locked_until"], now):
            _event(cur, actor, SIGN_IN_LOCKED, now, channel=channel, **where)
            return SignInResult(False, SIGN_IN_REFUSED)
        if not row["active"]:
            _event(cur, actor, SIGN_IN_FAILED, now, channel=channel, **where, detail="disabled")
            return SignInResult(False, SIGN_IN_REFUSED)
        if not ok:
            failed = int(row["failed_attempts"]) + 1
            until = access.lock_after_failure(failures.account_failed(row["username"], now), now, lock_minutes)
            users_repo.update(cur, row["id"], failed_attempts=failed, locked_until=until)
            _event(cur, actor, SIGN_IN_FAILED, now, channel=channel, **where, detail=f"attempt {failed}")
            if until is not None:
                _event(cur, actor, ACCOUNT_LOCKED, now, channel=channel, **where, detail=f"{lock_minutes:g} minutes")
            return SignInResult(False, SIGN_IN_REFUSED)
        updates: dict[str, Any] = {"failed_attempts": 0, "locked_until": None, "last_sign_in_at": now}
        if rehash:
            updates["password_hash"] = _HASHER.hash(password)
        row = users_repo.update(cur, row["id"], **updates)
        _event(cur, actor, SIGN_IN, now, channel=channel, **where)
    failures.succeeded(who, now)
    telemetry.emit("sign_in", settings=wb.settings, user=row["username"], role=row["role"], channel=channel)
    return SignInResult(True, "Signed in.", account=Account.from_row(row))


def _verify(password_hash: str, password: str) -> tuple[bool, bool]:
    """(matches, needs rehash with the current parameters)."""
    too_long = len(password or "") > access.MAX_PASSWORD_LENGTH
    try:
        # A password too long to be one is refused, after one verification like any other.
        _HASHER.verify(password_hash, "" if too_long else password or "")
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False, False
    return not too_long, _HASHER.check_needs_rehash(password_hash)


def sign_out(wb: Workbench, username: str, *, idle: bool = False, channel: str = "ui") -> None:
    """Record the end of a session: signed out by the user, or after the idle timeout."""
    with wb.db.transaction() as cur:
        row = users_repo.by_username(cur, username)
        actor = Actor(name=username, kind="account", user_id=row["id"] if row else None)
        _event(cur, actor, IDLE_TIMEOUT if idle else SIGN_OUT, utcnow(), channel=channel)


def change_password(wb: Workbench, username: str, *, current: str, new: str) -> Account:
    """The user changes their own password (required after a one-time or reset password)."""
    name = (username or "").strip().lower()
    with wb.db.cursor() as cur:
        row = users_repo.by_username(cur, name)
    if row is None or not row["active"] or row["auth_source"] != "local":
        raise BadInput("This account cannot change a password here.", code="bad_account")
    if not _verify(row["password_hash"], current)[0]:
        raise BadInput("The current password is wrong.", code="wrong_password")
    if new == current:
        raise BadInput("Choose a new password, not the current one.", code="weak_password")
    _check_new_password(wb, new, name)
    now = utcnow()
    with wb.db.transaction() as cur:
        row = users_repo.update(cur, row["id"], password_hash=_HASHER.hash(new), must_change_password=False,
                                password_changed_at=now)
        _event(cur, Actor(name=name, kind="account", user_id=row["id"]), PASSWORD_CHANGED, now)
    one_time = initial_password_path(wb)
    if name == INITIAL_ADMIN and one_time.exists():
        one_time.unlink()  # spent: the one-time password no longer opens anything
    return Account.from_row(row)


# --- the first admin -----------------------------------------------------------------


def initial_password_path(wb: Workbench) -> Path:
    return wb.settings.data_dir / INITIAL_PASSWORD_FILE


def ensure_initial_admin(wb: Workbench) -> Path | None:
    """On a data dir without accounts, create ``admin`` with a one-time password written
    to a file only the owner can read; the first sign-in must change it.

    Returns the file while that password is still unchanged (so ``make run`` can say
    where it is), else None."""
    path = initial_password_path(wb)
    with wb.db.cursor() as cur:
        existing = users_repo.count(cur)
    if existing:
        admin = get_account(wb, INITIAL_ADMIN)
        return path if path.exists() and admin is not None and admin.must_change_password else None
    password = _one_time_password(wb)
    _add_initial(wb, password)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(f"user: {INITIAL_ADMIN}\npassword: {password}\n"
                 "This password works once: the first sign-in asks for a new one, and this file is then removed.\n")
    tmp.replace(path)
    return path


def _one_time_password(wb: Workbench) -> str:
    """A random password (at least 24 characters, and the minimum length) that passes the
    same rules as any other; random ones this long always do, the check makes it certain."""
    for _ in range(10):
        password = secrets.token_urlsafe(max(18, _min_password_length(wb)))
        if access.password_problem(password, username=INITIAL_ADMIN, min_length=_min_password_length(wb)) is None:
            return password
    raise RuntimeError("could not make a one-time password that passes the password rules")


def _add_initial(wb: Workbench, password: str) -> None:
    # Bootstrapping: no account exists yet to authorise the first one.
    _check_new_password(wb, password, INITIAL_ADMIN)
    now = utcnow()
    with wb.db.transaction() as cur:
        if users_repo.count(cur):
            return
        users_repo.add(cur, username=INITIAL_ADMIN, role=Role.ADMIN.value, password_hash=_HASHER.hash(password),
                       must_change_password=True, created_by="system:init", now=now)
        _event(cur, Actor(name="system:init", kind="system"), USER_ADDED, now, channel="cli",
               object_type="user", object_id=INITIAL_ADMIN, detail=Role.ADMIN.value)


# --- identity provider ---------------------------------------------------------------


def oidc_username(claims: Mapping[str, Any]) -> str:
    """The account name of an identity-provider user: their email, else the provider's
    user name, else its subject id (lower case)."""
    return str(claims.get("email") or claims.get("preferred_username") or claims.get("sub") or "").strip().lower()


def oidc_account(wb: Workbench, claims: Mapping[str, Any]) -> SignInResult:
    """The account of a user the identity provider signed in (``st.user``'s claims),
    created or brought up to date with the role ``settings.oidc_roles`` maps them to.

    Refused when the mapping gives no role, when the name belongs to a local account
    (an account name means one kind of thing), or when the account was disabled here."""
    now = utcnow()
    name = oidc_username(claims)
    role = access.oidc_role(claims, wb.settings.oidc_roles)
    with wb.db.transaction() as cur:
        if not name or access.username_problem(name) or role is None:
            _event(cur, Actor(name=name or "(blank)", kind="unknown"), SIGN_IN_FAILED, now, channel="oidc",
                   detail="no role mapped" if name else "no user name")
            return SignInResult(False, "Your sign-in worked, but this workbench has no role for you; "
                                       "ask an administrator.")
        row = users_repo.by_username(cur, name)
        if row is not None and row["auth_source"] != "oidc":
            _event(cur, Actor(name=name, kind="account", user_id=row["id"]), SIGN_IN_FAILED, now, channel="oidc",
                   detail="name belongs to a local account")
            return SignInResult(False, "This name belongs to a local account; ask an administrator.")
        if row is not None and not row["active"]:
            _event(cur, Actor(name=name, kind="account", user_id=row["id"]), SIGN_IN_FAILED, now, channel="oidc",
                   detail="disabled")
            return SignInResult(False, "This account is disabled; ask an administrator.")
        if row is None:
            row = users_repo.add(cur, username=name, role=role.value, password_hash=None, auth_source="oidc",
                                 created_by="system:oidc", now=now)
        row = users_repo.update(cur, row["id"], role=role.value, last_sign_in_at=now)
        _event(cur, Actor(name=name, kind="account", user_id=row["id"]), SIGN_IN, now, channel="oidc")
    return SignInResult(True, "Signed in.", account=Account.from_row(row))


# --- the access audit ----------------------------------------------------------------


def _event(cur, actor: Actor, event: str, at: datetime, *, channel: str = "ui", patient_id: int | None = None,
           object_type: str | None = None, object_id: str | None = None, detail: str | None = None) -> None:
    access_repo.add(cur, actor=actor.name, event=event, at=at, user_id=actor.user_id, patient_id=patient_id,
                    object_type=object_type, object_id=object_id, channel=channel, detail=detail)
