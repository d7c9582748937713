"""The gate's latency report: per-stage p50/p95 over a run's telemetry samples and the
bottleneck. How an event's timings are read, and the percentile, are the product's
(``domain.latency``), shared with the Operations page."""

from __future__ import annotations

from typing import Any

from domain.latency import STAGES, percentile


def summarize(samples: dict[str, list[float]]) -> dict[str, Any]:
    stages = {s: {"p50": percentile(v, 50), "p95": percentile(v, 95), "n": len(v), "total": round(sum(v), 1)}
              for s in STAGES if (v := samples.get(s))}
    bottleneck = max(stages, key=lambda s: stages[s]["total"]) if stages else None
    return {"stages": stages, "bottleneck": bottleneck}
