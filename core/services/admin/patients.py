"""Chart patients, including the demo patients ``init`` adds."""

from __future__ import annotations

from datetime import date
from typing import Any

from domain.errors import BadInput, NotFound
from domain.policy.access.permissions import Permission
from core.services.admin.accounts import authorize
from core.services.workbench import Workbench
from storage import documents_repo, jobs_repo, patients_repo
from storage.rows import JobRow

# Invented people: any likeness to a real person is accidental.
DEMO_PATIENTS = (
    {"mrn": "DEMO-1001", "first": "Marisol", "last": "Quintero-Vale", "dob": date(1961, 3, 14), "sex": "F"},
    {"mrn": "DEMO-1002", "first": "Theodore", "last": "Brannigan", "dob": date(1948, 11, 2), "sex": "M"},
    {"mrn": "DEMO-1003", "first": "Ayesha", "last": "Okonkwo", "dob": date(1979, 7, 22), "sex": "F"},
    {"mrn": "DEMO-1004", "first": "Lucian", "last": "Featherstone", "dob": date(1990, 1, 5), "sex": "M"},
)


def add_patient(wb: Workbench, *, mrn: str, first: str, last: str, dob: date | str | None, by: str,
                sex: str = "U", middle: str | None = None) -> dict[str, Any]:
    """``by``: an account that may add patients, or the shell operator (``os:<login>``)."""
    authorize(wb, by, Permission.ADD_PATIENT)
    mrn, first, last = (mrn or "").strip(), (first or "").strip(), (last or "").strip()
    missing = [label for label, value in (("an MRN", mrn), ("a first name", first), ("a last name", last))
               if not value]
    if missing:
        raise BadInput(f"A patient needs {', '.join(missing)}.", code="missing_field")
    if dob is None or dob == "":
        raise BadInput("A patient needs a date of birth.", code="bad_date")
    if isinstance(dob, str):
        try:
            dob = date.fromisoformat(dob.strip())
        except ValueError:
            raise BadInput(f"Date of birth must be YYYY-MM-DD, got {dob!r}.", code="bad_date") from None
    if dob > date.today():
        raise BadInput("Date of birth is in the future.", code="bad_date")
    if dob.year < 1900:
        raise BadInput("Date of birth is before 1900; check the year.", code="bad_date")
    sex = (sex or "U").upper()
    if sex not in ("F", "M", "U"):
        raise BadInput("Sex must be F, M or U.", code="bad_sex")
    with wb.db.cursor() as cur:
        if patients_repo.by_mrn(cur, mrn):
            raise BadInput(f"A patient with MRN {mrn} already exists.", code="duplicate_patient")
        return patients_repo.add(cur, mrn=mrn, first=first, last=last, dob=dob, sex=sex, middle=middle)


def seed_demo_patients(wb: Workbench) -> int:
    """Setup ``init`` runs (the invented demo patients), not a person's action: no actor."""
    added = 0
    with wb.db.cursor() as cur:
        for p in DEMO_PATIENTS:
            if not patients_repo.by_mrn(cur, p["mrn"]):
                patients_repo.add(cur, mrn=p["mrn"], first=p["first"], last=p["last"], dob=p["dob"], sex=p["sex"])
                added += 1
    return added


def get_patient(wb: Workbench, *, mrn: str | None = None, patient_id: int | None = None) -> dict[str, Any]:
    with wb.db.cursor() as cur:
        found = patients_repo.by_mrn(cur, mrn) if mrn is not None else patients_repo.by_id(cur, int(patient_id))
    if not found:
        raise NotFound(f"No patient with {'MRN ' + mrn if mrn is not None else 'id ' + str(patient_id)}.",
                       code="unknown_patient")
    return found


def list_patients(wb: Workbench) -> list[dict[str, Any]]:
    with wb.db.cursor() as cur:
        return patients_repo.all_patients(cur)


def display_name(patient: dict[str, Any]) -> str:
    return f"{patient['last_name']}, {patient['first_name']} ({patient['mrn']})"


def chart_documents(wb: Workbench, patient_id: int) -> list[dict[str, Any]]:
    """The patient's live documents, newest first, each with its latest job's ``counts``
    and ``warnings``, and ``found_nothing`` (see ``found_nothing``)."""
    with wb.db.cursor() as cur:
        docs = documents_repo.for_patient(cur, patient_id)
        latest = jobs_repo.latest_for_documents(cur, [d["id"] for d in docs])
    out = []
    for d in docs:
        job = latest.get(d["id"])
        out.append(d | {"counts": (job.counts if job else None) or {},
                        "warnings": (job.warnings if job else None) or [], "found_nothing": found_nothing(job)})
    return out


def found_nothing(job: JobRow | None) -> bool:
    """A job read its document without error but kept not one fact: a reviewer must see
    that as a warning rather than a success."""
    if job is None:
        return False
    counts = job.counts or {}
    return job.status == "succeeded" and not (counts.get("stored") or counts.get("unchanged"))
