"""PHI log policy: an allowlist of keys and value shapes.

Anything not on the list is dropped, not redacted: a log line cannot leak what it
never carries. Strings are limited to short code-like tokens so that a quote or a
name smuggled into an allowed key (say ``status``) is dropped as well.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any

ALLOWED_KEYS = frozenset(
    {
        "event", "ts", "job_id", "patient_ref", "document_id", "doc_type", "worker",
        "status", "counts", "latency_ms", "model", "tokens", "cost", "error_code",
        "attempt", "request_id", "node", "source_node", "destination_node", "task_type",
        "outcome", "engine", "pages", "fact_count", "identity_status", "corpus_version",
        "embedding_model", "reranker", "refused", "version", "verdict", "case_count",
        # Staff accounts may be named in logs (issue 12); patients only as patient_ref.
        "user", "user_id", "role", "channel",
    }
)
# Keys whose value is a flat mapping of name -> number (stage latencies, counts).
NUMERIC_MAPS = frozenset({"counts", "latency_ms", "tokens"})
_TOKEN = re.compile(r"^[A-Za-z0-9_.:+\-^/]{1,80}$")


def patient_ref(patient_id: int | str, secret: str) -> str:
    digest = hmac.new(secret.encode(), str(patient_id).encode(), hashlib.sha256).hexdigest()
    return f"patient:{digest[:12]}"


def _safe_scalar(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | float):
        return True
    return isinstance(value, str) and bool(_TOKEN.match(value))


def scrub(event: dict[str, Any]) -> dict[str, Any]:
    """Return only the allowlisted, safely shaped parts of ``event``."""
    clean: dict[str, Any] = {}
    for key, value in event.items():
        if key not in ALLOWED_KEYS:
            continue
        if key in NUMERIC_MAPS and isinstance(value, dict):
            nums = {
                k: v
                for k, v in value.items()
                if isinstance(k, str) and _TOKEN.match(k) and isinstance(v, int | float)
                and not isinstance(v, bool)
            }
            clean[key] = nums
        elif _safe_scalar(value):
            clean[key] = value
    return clean
