"""The brief command: the cited patient brief within its token budget (DESIGN §9)."""

from __future__ import annotations

from typing import Any

from core.commands.base import Context


def cmd_brief(ctx: Context, args) -> dict[str, Any]:
    from core.services.admin.access_audit import VIEW_CHART, record_view
    from core.services.admin.patients import get_patient
    from core.services.brief.brief import patient_brief
    from domain.policy.answers.brief_budget import DEFAULT_BUDGET_TOKENS

    patient_id = get_patient(ctx.wb, mrn=args.patient)["id"]
    budget = DEFAULT_BUDGET_TOKENS if args.budget_tokens is None else args.budget_tokens
    brief = patient_brief(ctx.wb, patient_id=patient_id, budget_tokens=budget)
    record_view(ctx.wb, ctx.os_user, VIEW_CHART, patient_id=patient_id, object_type="brief", channel="cli")
    payload = brief.payload()
    return payload | {"_text": payload["text"]}
