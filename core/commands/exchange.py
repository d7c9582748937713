"""Exchange commands: ``export-fhir`` (the patient's trusted chart as a FHIR R4 Bundle)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.commands.base import Context


def cmd_export_fhir(ctx: Context, args) -> dict[str, Any]:
    from core.services.exchange.fhir_export import export_fhir, write_bundle

    export = export_fhir(ctx.wb, mrn=args.patient, include_review=args.include_review, bundle_id=args.bundle_id,
                         by=ctx.os_user, channel="cli")
    out = export.summary()
    if args.out:
        out["out"] = str(write_bundle(export, Path(args.out)))
    elif args.json:
        out["out"] = None
        out["bundle"] = export.bundle  # no file: the bundle travels in the one JSON answer
    else:
        out = {"_text": json.dumps(export.bundle, indent=2, ensure_ascii=False)}
    return out
