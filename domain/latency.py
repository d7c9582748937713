"""Stage latency, read from telemetry events: which stage of ingestion or answering is slow.

Stages, in pipeline order. Ingestion: normalize, ocr, extract, verify, identity,
persist, promote, embed. Answers: retrieve, rerank, compose, draft (answer verification
is reported as ``verify`` beside the citation check of ingestion).

Pure functions over event dictionaries and numbers: the Operations page
(``core.services.ingest.operations``) and the eval gate's latency report read a job's
timings the same way.
"""

from __future__ import annotations

import math
from typing import Any

STAGES = ("normalize", "ocr", "extract", "verify", "identity", "persist", "promote", "embed", "retrieve", "rerank",
          "compose", "draft")

# Which telemetry events carry which stages in their latency_ms map.
_EVENT_STAGES = {
    "job_finished": ("normalize", "ocr", "extract", "verify", "identity", "persist", "promote"),
    "facts_embedded": ("embed",),
    "answer": ("retrieve", "rerank", "compose", "verify", "draft"),
}


def stages_of_event(event: dict[str, Any]) -> dict[str, float]:
    stages = _EVENT_STAGES.get(event.get("event", ""))
    timings = event.get("latency_ms")
    if not stages or not isinstance(timings, dict):
        return {}
    out = {s: float(timings[s]) for s in stages if isinstance(timings.get(s), int | float)}
    if event.get("event") == "job_finished" and not timings.get("ocr"):
        out.pop("ocr", None)  # a job without OCR says nothing about OCR speed
    return out


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return round(ordered[rank - 1], 2)
