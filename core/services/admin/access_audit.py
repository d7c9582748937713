"""The access audit: who viewed which patient's chart, document or answer, and every
sign-in. Append-only; read by an admin on the Operations page (filter, CSV)."""

from __future__ import annotations

import csv
import getpass
import io
from typing import Any

from domain.clock import utcnow
from domain.policy.access.permissions import shell_actor
from core.services.workbench import Workbench
from storage import access_repo

VIEW_CHART, VIEW_DOCUMENT, VIEW_ANSWER = "view_chart", "view_document", "view_answer"
# The patient a held interface message names (not yet on any chart): object_type
# "inbound_message", the message id, no patient_id.
VIEW_MESSAGE = "view_message"
VIEW_EVENTS = (VIEW_CHART, VIEW_DOCUMENT, VIEW_ANSWER, VIEW_MESSAGE)


def shell_user() -> str:
    """The operating-system user running a CLI command, as the audit names them."""
    try:
        login = getpass.getuser()
    except Exception:  # no login name in this environment (a bare container)
        login = "unknown"
    return shell_actor(login)


def record_view(wb: Workbench, actor: str, event: str, *, patient_id: int | None, object_type: str | None = None,
                object_id: str | int | None = None, channel: str = "ui") -> None:
    """Append one view. ``actor`` is an account name or ``os:<login>``; the account's id
    is resolved as the row is written."""
    with wb.db.transaction() as cur:
        cur.execute("SELECT id FROM users WHERE username = ?", [actor])
        found = cur.fetchone()
        access_repo.add(cur, actor=actor, event=event, at=utcnow(), user_id=found[0] if found else None,
                        patient_id=patient_id, object_type=object_type,
                        object_id=None if object_id is None else str(object_id), channel=channel)


def events(wb: Workbench, *, actor: str | None = None, patient_id: int | None = None, event: str | None = None,
           limit: int = 5000) -> list[dict[str, Any]]:
    """Newest first."""
    with wb.db.cursor() as cur:
        return access_repo.events(cur, actor=actor, patient_id=patient_id, event=event, limit=limit)


def actors(wb: Workbench) -> list[str]:
    with wb.db.cursor() as cur:
        return access_repo.actors(cur)


CSV_COLUMNS = ("occurred_at", "actor", "user_id", "event", "patient_id", "patient_mrn", "object_type", "object_id",
               "channel", "detail")


def events_csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: row.get(k) for k in CSV_COLUMNS})
    return out.getvalue()
