"""PHI-free JSONL telemetry under the data dir's ``logs/``.

Callers pass ``patient_id=`` and it is turned into a ``patient_ref``; every other
key goes through the allowlist in ``core.policy.telemetry``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from datetime import datetime, timezone
from typing import Any

from core.policy.telemetry import patient_ref, scrub
from core.settings import Settings, get_settings

_lock = threading.Lock()


def emit(event: str, *, settings: Settings | None = None, patient_id: int | None = None, **fields: Any) -> dict:
    settings = settings or get_settings()
    record: dict[str, Any] = {"event": event, "ts": datetime.now(timezone.utc).isoformat(timespec="milliseconds")}
    if patient_id is not None:
        record["patient_ref"] = patient_ref(patient_id, settings.secret())
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
