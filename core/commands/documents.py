"""Chart and document commands: patients, ingest, delete-document, chart and retry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.commands.base import EXIT_JOB_FAILED, Context, actor
from domain.errors import BadInput


def cmd_patient_add(ctx: Context, args) -> dict[str, Any]:
    from core.services.admin.patients import add_patient

    p = add_patient(ctx.wb, mrn=args.mrn, first=args.first, last=args.last, dob=args.dob, sex=args.sex,
                    by=actor(ctx, args))
    return {"patient_id": p["id"], "mrn": p["mrn"], "first_name": p["first_name"], "last_name": p["last_name"],
            "dob": str(p["dob"]), "sex": p["sex"]}


def cmd_patient_list(ctx: Context, args) -> dict[str, Any]:
    from core.services.admin.patients import list_patients

    found = list_patients(ctx.wb)
    return {"patients": [{"patient_id": p["id"], "mrn": p["mrn"], "first_name": p["first_name"],
                          "last_name": p["last_name"], "dob": str(p["dob"]), "sex": p["sex"]} for p in found]}


def cmd_ingest(ctx: Context, args) -> dict[str, Any]:
    from core.services.ingest.ingestion import ingest_now
    from core.services.admin.patients import get_patient

    if ctx.upload is None:
        raise BadInput("ingest needs the file's content.", code="file_missing")
    patient = get_patient(ctx.wb, mrn=args.patient)
    # In the app, its own worker may have claimed a job first: ingest_now then waits for it.
    ingested = ingest_now(ctx.wb, patient_id=patient["id"], source=args.file, doc_type=args.doc_type,
                          category=args.category, by=actor(ctx, args), data=ctx.upload,
                          filename=Path(args.file).name, in_app=ctx.in_app)
    report = ingested.report  # a batch read in parts: merged, with "parts"
    job = report["job"]
    if job and job["status"] == "failed":
        where = "a part of document" if ingested.attached.parts else "document"
        report["_exit"] = EXIT_JOB_FAILED
        report["_error"] = f"{job['error_code']}: {job['error_message']} ({where} {report['document_id']} is stored)"
    return report


def cmd_delete_document(ctx: Context, args) -> dict[str, Any]:
    from core.services.review.retraction import delete_document

    return delete_document(ctx.wb, args.document_id, by=actor(ctx, args),
                           reason=args.reason or "source document deleted")


def cmd_chart(ctx: Context, args) -> dict[str, Any]:
    from core.services.admin.access_audit import VIEW_CHART, record_view
    from core.services.review.facts import chart_view
    from core.services.admin.patients import get_patient

    patient_id = get_patient(ctx.wb, mrn=args.patient)["id"]
    chart = chart_view(ctx.wb, patient_id)
    record_view(ctx.wb, ctx.os_user, VIEW_CHART, patient_id=patient_id, object_type="chart", channel="cli")
    return chart


def cmd_retry(ctx: Context, args) -> dict[str, Any]:
    from core.services.ingest.ingestion import run_jobs_now
    from core.services.ingest.operations import retry_job
    from storage import jobs_repo

    job = retry_job(ctx.wb, args.job_id, by=actor(ctx, args))
    if not args.queue:
        run_jobs_now(ctx.wb, [job], in_app=ctx.in_app)
    with ctx.wb.db.cursor() as cur:
        job = jobs_repo.by_id(cur, job["id"]).to_dict()
    out = {"job_id": job["id"], "document_id": job["document_id"], "status": job["status"],
           "attempts": job["attempts"], "error_code": job["error_code"], "error_message": job["error_message"]}
    if job["status"] == "failed":
        out["_exit"] = EXIT_JOB_FAILED
        out["_error"] = f"{job['error_code']}: {job['error_message']} (job {job['id']} failed again; the original is kept)"
    return out
