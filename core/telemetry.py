"""PHI-free JSONL telemetry under the data dir's ``logs/``.

Callers pass ``patient_id=`` and it is turned into a ``patient_ref``; every other
key goes through the allowlist in ``domain.policy.access.log_keys``.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from datetime import datetime, timezone
from typing import Any

from domain.policy.access.log_keys import patient_ref, scrub
from domain.settings import Settings, get_settings
from storage.private_files import make_private

_lock = threading.Lock()


def emit(event: str, *, settings: Settings | None = None, patient_id: int | None = None, **fields: Any) -> dict:
    settings = settings or get_settings()
    record: dict[str, Any] = {"event": event, "ts": datetime.now(timezone.utc).isoformat(timespec="milliseconds")}
    if patient_id is not None:
        record["patient_ref"] = patient_ref(patient_id, app_secret(settings))
    record.update(fields)
    clean = scrub(record)
    logs = settings.logs_dir
    logs.mkdir(parents=True, exist_ok=True, mode=0o700)
    line = json.dumps(clean, sort_keys=True) + "\n"
    path = logs / f"telemetry-{time.strftime('%Y%m%d')}.jsonl"
    with _lock:
        # Owner-only from creation, whatever the process umask (see storage.private_files).
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(line)
    return clean


def app_secret(settings: Settings) -> str:
    """The HMAC secret for patient_ref: from the environment, else generated once into
    the data dir so refs stay stable across restarts."""
    if settings.app_secret:
        return settings.app_secret
    path = settings.data_dir / ".app-secret"
    if path.exists():
        return path.read_text().strip()
    make_private(settings.data_dir)
    value = secrets.token_hex(32)
    tmp = path.with_suffix(".tmp")
    # Created 0600, not chmod-ed after: the secret is never readable by others, even briefly.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value)
    tmp.replace(path)
    return value
