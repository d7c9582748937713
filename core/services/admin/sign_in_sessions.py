"""Sign-ins held by a browser: the server side of the session cookie (docs/access.md).

Streamlit resumes any session whose id a WebSocket names, and that id is in every upload
URL (a proxy's access log holds it), so a signed-in session must also be bound to a
secret only the browser holds. After the password check the page receives a one-time
ticket (``issue_ticket``); the browser trades it at once at the app's own route for a
random session token in an HttpOnly cookie (``redeem_ticket``). Every script run then
checks that the connection's cookie names a live sign-in (``check``) of the account the
session belongs to.

Only hashes of tickets and tokens are kept, in this process's memory, with the account,
when it was created and last seen, and when and why it ended: signed out, idle, or the
account disabled. Streamlit's sessions live in the same memory, so a restart of the app
ends both. The idle limit (``domain.policy.access.permissions.idle_expired``) counts from the last
activity (``touch``); a check never moves it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from domain.clock import utcnow
from domain.policy.access import permissions as access
from core.services.admin import accounts
from core.services.admin.accounts import Account
from core.services.workbench import Workbench
from storage import access_repo

# Why a sign-in ended (SessionCheck.ended).
SIGNED_OUT, IDLE, INACTIVE = "signed_out", "idle", "inactive"
# The access audit's event for a connection that named a signed-in session's id without
# that sign-in's cookie: refused, it got a fresh session with the sign-in form.
SESSION_REFUSED = "session_refused"

_KEEP_ENDED = timedelta(hours=24)  # an ended sign-in is remembered this long, to say why it ended


def digest(secret: str) -> str:
    """What is stored of a ticket or token: its SHA-256 (both are 256-bit random)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass
class SignIn:
    digest: str
    user_id: int
    username: str
    created_at: datetime
    last_seen: datetime
    ended_at: datetime | None = None
    ended: str | None = None  # SIGNED_OUT | IDLE | INACTIVE


@dataclass(frozen=True)
class SessionCheck:
    """The sign-in a cookie names: live (``sign_in`` and ``account`` set), ended
    (``ended`` says why), or none at all (no cookie, or a token this server never issued)."""

    sign_in: SignIn | None = None
    account: Account | None = None
    ended: str | None = None


@dataclass
class _Ticket:
    user_id: int
    username: str
    issued_at: datetime


@dataclass
class _Store:
    lock: threading.Lock = field(default_factory=threading.Lock)
    sign_ins: dict[str, SignIn] = field(default_factory=dict)  # token digest -> sign-in
    tickets: dict[str, _Ticket] = field(default_factory=dict)  # ticket digest -> ticket


def _store(wb: Workbench) -> _Store:
    return wb.extras.setdefault("sign_in_sessions", _Store())


# --- signing in ----------------------------------------------------------------------


def issue_ticket(wb: Workbench, account: Account) -> str:
    """A one-time ticket for ``account``, whose password was just checked. It is good
    for ``access.SIGN_IN_TICKET_SECONDS`` and one use; the browser trades it for its
    session cookie at once (the app's sign-in route)."""
    ticket = secrets.token_urlsafe(32)
    now = utcnow()
    store = _store(wb)
    with store.lock:
        _prune(store, now, wb.settings.idle_timeout_minutes)
        store.tickets[digest(ticket)] = _Ticket(account.id, account.username, now)
    return ticket


def redeem_ticket(wb: Workbench, ticket: str) -> str | None:
    """The session token for an unused, unexpired ticket whose account is still active;
    else None. Spends the ticket either way."""
    now = utcnow()
    store = _store(wb)
    with store.lock:
        found = store.tickets.pop(digest(ticket or ""), None)
    if found is None or access.ticket_expired(found.issued_at, now):
        return None
    account = accounts.get_account(wb, found.username)
    if account is None or not account.active or account.id != found.user_id:
        return None
    return open_sign_in(wb, account)


def open_sign_in(wb: Workbench, account: Account) -> str:
    """A new sign-in for ``account``; returns its token (the cookie's value), which is
    not kept. ``redeem_ticket`` calls this; tests call it to stand for a browser that
    signed in."""
    token = secrets.token_urlsafe(32)
    now = utcnow()
    store = _store(wb)
    with store.lock:
        store.sign_ins[digest(token)] = SignIn(digest(token), account.id, account.username, now, now)
    return token


# --- every run -----------------------------------------------------------------------


def check(wb: Workbench, token: str | None) -> SessionCheck:
    """The sign-in ``token`` names, if it still holds: not signed out, not idle for the
    idle limit, its account active. An idle or disabled one is ended here (an idle one
    is written to the access audit once). Does not count as activity."""
    if not token:
        return SessionCheck()
    store = _store(wb)
    with store.lock:
        found = store.sign_ins.get(digest(token))
    if found is None:
        return SessionCheck()
    if found.ended:
        return SessionCheck(ended=found.ended)
    account = accounts.get_account(wb, found.username)
    if account is None or not account.active or account.id != found.user_id:
        _end(store, found, INACTIVE)
        return SessionCheck(ended=INACTIVE)
    if access.idle_expired(found.last_seen, utcnow(), wb.settings.idle_timeout_minutes):
        if _end(store, found, IDLE):
            accounts.sign_out(wb, found.username, idle=True)
        return SessionCheck(ended=IDLE)
    return SessionCheck(found, account)


def touch(wb: Workbench, token_digest: str) -> bool:
    """Activity of the sign-in whose token hashes to ``token_digest`` (a click, a page
    opened): its idle time starts again. A sign-in already past the idle limit is left
    for ``check`` to end; returns whether it was live."""
    now = utcnow()
    store = _store(wb)
    with store.lock:
        found = store.sign_ins.get(token_digest)
        if found is None or found.ended or access.idle_expired(found.last_seen, now,
                                                               wb.settings.idle_timeout_minutes):
            return False
        found.last_seen = now
    return True


def sign_out(wb: Workbench, token_digest: str) -> None:
    """The person signed out: the sign-in ends (in every tab of this browser) and the
    sign-out is written to the access audit."""
    store = _store(wb)
    with store.lock:
        found = store.sign_ins.get(token_digest)
    if found is not None and _end(store, found, SIGNED_OUT):
        accounts.sign_out(wb, found.username)


def record_refused(wb: Workbench, username: str, *, detail: str) -> None:
    """A connection that named ``username``'s signed-in session without its cookie was
    refused: written to the access audit (who was targeted; never the session id)."""
    account = accounts.get_account(wb, username)
    with wb.db.transaction() as cur:
        access_repo.add(cur, actor=username, event=SESSION_REFUSED, at=utcnow(),
                        user_id=account.id if account else None, channel="ui", detail=detail)


def same_digest(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(str(a), str(b))


# --- the store -----------------------------------------------------------------------


def _end(store: _Store, found: SignIn, why: str) -> bool:
    """End ``found`` for ``why``; False when it had already ended (someone else said so)."""
    with store.lock:
        if found.ended:
            return False
        found.ended, found.ended_at = why, utcnow()
    return True


def _prune(store: _Store, now: datetime, idle_minutes: float) -> None:
    # Called under the lock: tickets past their time, and sign-ins ended (or left idle
    # without anyone checking them) long ago.
    for key in [k for k, t in store.tickets.items() if access.ticket_expired(t.issued_at, now)]:
        del store.tickets[key]
    gone = now - _KEEP_ENDED
    for key in [k for k, s in store.sign_ins.items()
                if (s.ended_at or s.last_seen + timedelta(minutes=idle_minutes)) < gone]:
        del store.sign_ins[key]
