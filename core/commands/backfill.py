"""``backfill MANIFEST.csv``: a clinic's documents read into the charts in one batch
(core.services.backfill; docs/backfill.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from core.commands.base import EXIT_JOB_FAILED, Context, actor
from domain.errors import BadInput


def cmd_backfill(ctx: Context, args) -> dict[str, Any]:
    from core.services.backfill.manifest import read_manifest
    from core.services.backfill.reading import Ceilings
    from core.services.backfill.run import run_backfill

    if args.address and args.engine != "ray":
        raise BadInput("--address joins a Ray cluster: use it with --engine ray.", code="address_needs_ray")
    rows = read_manifest(Path(args.manifest))
    ceilings = Ceilings.from_settings(ctx.wb.settings)
    if args.engine == "ray":
        from core.services.backfill.ray_engine import RayEngine  # imports Ray: only for this engine

        engine = RayEngine(ceilings, address=args.address)
    else:
        from core.services.backfill.local_engine import LocalEngine

        engine = LocalEngine(ceilings, jobs=args.jobs)
    try:
        report = run_backfill(ctx.wb, rows, engine, by=actor(ctx, args), progress=sys.stderr)
    finally:
        engine.close()
    if report["failed"]:
        report["_exit"] = EXIT_JOB_FAILED
        codes = ", ".join(f"{code} {n}" for code, n in sorted(report["failed_by_code"].items()))
        report["_error"] = f"{report['failed']} of {report['rows']} rows failed ({codes}); the report lists them by line"
    return report
