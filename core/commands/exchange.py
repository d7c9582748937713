"""Exchange commands: ``export-fhir`` (the patient's trusted chart as a FHIR R4 Bundle)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.commands.base import Context
from domain.errors import BadInput


def cmd_export_fhir(ctx: Context, args) -> dict[str, Any]:
    from core.services.exchange.fhir_export import export_fhir, write_bundle

    if args.out and ctx.in_app:  # the caller writes the file (core.__main__._export_fhir_in_app)
        raise BadInput("The app does not write files for the CLI: run export-fhir --out from the shell.",
                       code="out_not_in_app")
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
