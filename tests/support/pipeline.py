"""Documents read end to end on a test workbench, for the pipeline, chart-safety, review
and page tests: a golden fixture patient put on a chart, a document read at once
(``ingest_now``: attach, run its job, report), and the review situations several test
modules start from."""

from __future__ import annotations

import dataclasses
from datetime import date

from golden.fixtures import INTAKE_CASES, LAB_CASES, render_lab

CASE = LAB_CASES[0]  # CBC, lipids and HbA1c, typed


def chart_patient(wb, fixture_patient):
    """``fixture_patient`` (a golden fixture's patient) added to the workbench's charts."""
    from core.services.admin.patients import add_patient

    return add_patient(wb, mrn=fixture_patient.mrn, first=fixture_patient.first, last=fixture_patient.last,
                       dob=date.fromisoformat(fixture_patient.dob), sex=fixture_patient.sex, by="dr.reviewer")


def ingest(wb, patient, data: bytes, doc_type: str, name: str = "doc.pdf") -> dict:
    """``data`` attached to ``patient``'s chart and read now; its report (the job succeeded)."""
    from core.services.ingest.ingestion import ingest_now

    report = ingest_now(wb, patient_id=patient["id"], source=name, data=data, filename=name,
                        doc_type=doc_type, by="dr.reviewer").report
    job = report["job"]
    assert job["status"] == "succeeded", (job["error_code"], job["error_message"])
    return report


def count(wb, sql):
    with wb.db.cursor() as cur:
        return cur.execute(sql).fetchone()[0]


def hedged_intake():
    """The first intake form with a hedged allergy ("shellfish?") beside a plain one."""
    return dataclasses.replace(INTAKE_CASES[0], allergies_printed="Penicillin (hives); shellfish?")


def name_only_lab(case=CASE) -> bytes:
    """The lab report printing the patient's name and nothing else of their identity
    (a layout whose birth date and record number lines may stay blank)."""
    blank = dataclasses.replace(case.patient, dob="", mrn="")
    return render_lab(dataclasses.replace(case, layout="two_page", patient=blank))


def ambiguous(wb, doc_type: str = "lab_pdf", case=CASE, data: bytes | None = None):
    """A document whose identity needs review: only the patient's name is read from it,
    and (for the default lab report) only the name is printed: a printed DOB or MRN that
    no reader took would be "printed but not read", whose approval needs a reason."""
    from domain.models import DocType, IdentifierKind
    from extract import registry as formats

    patient = chart_patient(wb, case.patient)
    table, original = formats.EXTRACTORS, formats.extractor_for(DocType(doc_type))

    def name_only(content, source_id):
        result = original(content, source_id)
        return result.model_copy(update={"identifiers": [i for i in result.identifiers
                                                         if i.kind is IdentifierKind.NAME]})

    formats.EXTRACTORS = {**table, DocType(doc_type): name_only}
    try:
        report = ingest(wb, patient, data or name_only_lab(case), doc_type)
    finally:
        formats.EXTRACTORS = table
    assert report["identity"]["status"] == "identity_ambiguous_needs_review"
    return patient, report


def repeat_with_changed_value(wb, value="12.9"):
    """The chart patient's report, then a repeat of it whose first result reads ``value``:
    that result conflicts with the chart row the first report made."""
    patient = chart_patient(wb, CASE.patient)
    ingest(wb, patient, render_lab(CASE), "lab_pdf", "first.pdf")
    panel, rows = CASE.panels[0]
    changed = dataclasses.replace(CASE, panels=((panel, (dataclasses.replace(rows[0], value=value), *rows[1:])),
                                                *CASE.panels[1:]))
    return patient, rows[0], ingest(wb, patient, render_lab(changed), "lab_pdf", "repeat.pdf")


def abbreviated_identity_lab(case=CASE) -> bytes:
    """The chart patient's own report under "Pt:" and "Hosp#" labels, its birth date
    under "Geb.-Dat." (golden.identity_layouts): the lab reader reads the name and the
    number, and leaves the birth date under a label it does not know to the identity
    sweep, which reports it as printed but not read."""
    from golden.identity_layouts import LAYOUTS

    return LAYOUTS["unknown_birth_label"](case)
