"""Account and category commands: ``user add/list/disable/enable/reset-password`` and
``category list/map``. Passwords are read from a prompt or stdin, never an argument."""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any, Callable

from core.commands.base import Context, actor
from domain.errors import BadInput


def _read_password(confirm: bool = True) -> str:
    """The first line of stdin when it is not a terminal (scripts), else a hidden prompt,
    asked twice. Never an argument: arguments show in `ps` and the shell history."""
    if not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\r\n")
    password = getpass.getpass("Password: ")
    if confirm and getpass.getpass("Password again: ") != password:
        raise BadInput("The two passwords differ.", code="password_mismatch")
    return password


def _account_json(account) -> dict[str, Any]:
    return {"user_id": account.id, "username": account.username, "role": account.role.value,
            "active": account.active, "must_change_password": account.must_change_password,
            "auth_source": account.auth_source, "locked_until": account.locked_until,
            "last_sign_in_at": account.last_sign_in_at, "created_at": account.created_at,
            "created_by": account.created_by}


def user_command(change: Callable[..., Any]) -> Callable[[Context, argparse.Namespace], dict[str, Any]]:
    """A ``user`` subcommand: apply ``change(wb, args, by)``, answer the account."""
    def run(ctx: Context, args) -> dict[str, Any]:
        return _account_json(change(ctx.wb, args, actor(ctx, args)))
    return run


def user_add(wb, args, by):
    from core.services.admin.accounts import add_user

    return add_user(wb, username=args.username, role=args.role, password=_read_password(), by=by)


def user_disable(wb, args, by):
    from core.services.admin.accounts import disable_user

    return disable_user(wb, args.username, by=by)


def user_enable(wb, args, by):
    from core.services.admin.accounts import enable_user

    return enable_user(wb, args.username, by=by)


def user_reset_password(wb, args, by):
    from core.services.admin.accounts import reset_password

    return reset_password(wb, args.username, password=_read_password(), by=by)


def cmd_user_list(ctx: Context, args) -> dict[str, Any]:
    from domain.policy.access.permissions import Permission
    from core.services.admin.accounts import authorize, list_users

    authorize(ctx.wb, actor(ctx, args), Permission.MANAGE_USERS)
    users = [_account_json(a) for a in list_users(ctx.wb)]
    out: dict[str, Any] = {"users": users}
    if not args.json:
        out["_text"] = "\n".join(
            [f"{'user':<24} {'role':<9} {'state':<9} source"]
            + [f"{u['username']:<24} {u['role']:<9} {'active' if u['active'] else 'disabled':<9} {u['auth_source']}"
               for u in users])
    return out


def cmd_category_list(ctx: Context, args) -> dict[str, Any]:
    from core.services.ingest.ingestion import list_categories

    cats = [{"category": c["name"], "doc_type": c["doc_type"]} for c in list_categories(ctx.wb)]
    out: dict[str, Any] = {"categories": cats}
    if not args.json:
        out["_text"] = "\n".join(f"{c['category']:<32} {c['doc_type'] or '(stored only)'}" for c in cats)
    return out


def cmd_category_map(ctx: Context, args) -> dict[str, Any]:
    from core.services.ingest.categories import map_category

    doc_type = None if args.doc_type.lower() in ("none", "") else args.doc_type
    cat = map_category(ctx.wb, args.name, doc_type, by=actor(ctx, args))
    out: dict[str, Any] = {"category": cat["name"], "doc_type": cat["doc_type"]}
    if not args.json:
        out["_text"] = f"{cat['name']} -> {cat['doc_type'] or '(stored only)'}"
    return out
