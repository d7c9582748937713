"""Review and question commands: review decisions, ask and search-guidelines."""

from __future__ import annotations

from typing import Any

from core.commands.base import Context
from domain.errors import BadInput
from domain.settings import get_settings


def cmd_review(ctx: Context, args) -> dict[str, Any]:
    from core.services.review.decisions import check_for_document, review

    wb = ctx.wb
    if args.action in ("alerts", "acknowledge-alert"):
        return _alerts(ctx, args)
    if not args.by:
        raise BadInput(f"review {args.action} needs --by naming the deciding account.", code="missing_user")
    if args.action == "correct-fact":
        from core.services.review.corrections import correct_fact

        if args.fact is None or args.check is not None or args.document is not None:
            raise BadInput("correct-fact corrects a finding: use --fact ID.", code="bad_item")
        return correct_fact(wb, args.fact, by=args.by, value=args.value, unit=args.unit,
                            collection_date=args.date, abnormal_flag=args.flag, test_name=args.analyte,
                            reference_range=args.reference_range, reason=args.reason or "",
                            resolution=args.resolution)
    if args.action == "undo":
        from core.services.review.undo import undo_decision

        if args.decision is None or any(v is not None for v in (args.fact, args.check, args.document)):
            raise BadInput("undo takes the decision to undo: use --decision N (the id the audit shows).",
                           code="bad_item")
        return undo_decision(wb, args.decision, by=args.by, reason=args.reason)
    if args.action == "undo-identity":
        from core.services.review.identity_review import undo_identity_decision

        if args.fact is not None or (args.check is None) == (args.document is None):
            raise BadInput("undo-identity undoes an identity decision: use --check ID or --document ID.",
                           code="bad_item")
        check = args.check if args.check is not None else check_for_document(wb, args.document)
        return undo_identity_decision(wb, check, by=args.by, reason=args.reason or "")
    if args.resolution is not None and args.action != "approve-fact":
        raise BadInput("--resolution goes with approve-fact or correct-fact.", code="bad_item")
    return review(wb, args.action, check_id=args.check, document_id=args.document, fact_id=args.fact,
                  by=args.by, reason=args.reason, resolution=args.resolution)


def _alerts(ctx: Context, args) -> dict[str, Any]:
    """The chart checks' alerts of a patient (``alerts --patient MRN``), or one
    acknowledged (``acknowledge-alert --alert ID --note ... --by ACCOUNT``)."""
    from core.services.admin.access_audit import VIEW_CHART, record_view
    from core.services.admin.patients import get_patient
    from core.services.checks.alerts import acknowledge_alert, patient_alerts

    if args.action == "acknowledge-alert":
        if args.alert is None:
            raise BadInput("acknowledge-alert needs --alert ID (see review alerts --patient MRN).", code="bad_item")
        return acknowledge_alert(ctx.wb, args.alert, by=args.by, note=args.note)
    if not args.patient:
        raise BadInput("review alerts needs --patient MRN.", code="bad_item")
    patient_id = get_patient(ctx.wb, mrn=args.patient)["id"]
    alerts = patient_alerts(ctx.wb, patient_id, include_withdrawn=args.all)
    record_view(ctx.wb, ctx.os_user, VIEW_CHART, patient_id=patient_id, object_type="alerts", channel="cli")
    return {"patient": args.patient, "alerts": alerts,
            "unacknowledged": sum(1 for a in alerts if a["status"] == "open" and not a["acknowledged"])}


def cmd_search_guidelines(ctx: Context, args) -> dict[str, Any]:
    from core.services.answer.guidelines import search_guidelines

    return search_guidelines(ctx.wb, args.query, k=args.k)


def cmd_ask(ctx: Context, args) -> dict[str, Any]:
    from domain.policy.questions.intent import parse_question
    from core.services.admin.access_audit import VIEW_ANSWER, record_view
    from core.services.answer.answering import ask
    from core.services.admin.patients import get_patient

    patient = get_patient(ctx.wb, mrn=args.patient)
    previous = None
    for earlier in args.previous or []:  # replay the conversation so follow-ups ground
        previous = parse_question(earlier, previous)
    payload = ask(ctx.wb, patient["id"], args.question, previous=previous, drafter=_drafter()).payload
    record_view(ctx.wb, ctx.os_user, VIEW_ANSWER, patient_id=patient["id"], object_type="answer",
                object_id=payload.get("request_id"), channel="cli")
    return payload


def _drafter():
    from core.services.answer.drafting import drafter_for

    return drafter_for(get_settings())
