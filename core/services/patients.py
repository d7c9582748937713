"""Chart patients, including the demo patients ``init`` adds."""

from __future__ import annotations

from datetime import date
from typing import Any

from core.errors import BadInput, NotFound
from core.services.workbench import Workbench
from storage import patients_repo

# Invented people: any likeness to a real person is accidental.
DEMO_PATIENTS = (
    {"mrn": "DEMO-1001", "first": "Marisol", "last": "Quintero-Vale", "dob": date(1961, 3, 14), "sex": "F"},
    {"mrn": "DEMO-1002", "first": "Theodore", "last": "Brannigan", "dob": date(1948, 11, 2), "sex": "M"},
    {"mrn": "DEMO-1003", "first": "Ayesha", "last": "Okonkwo", "dob": date(1979, 7, 22), "sex": "F"},
    {"mrn": "DEMO-1004", "first": "Lucian", "last": "Featherstone", "dob": date(1990, 1, 5), "sex": "M"},
)


def add_patient(wb: Workbench, *, mrn: str, first: str, last: str, dob: date | str, sex: str = "U",
                middle: str | None = None) -> dict[str, Any]:
    mrn, first, last = mrn.strip(), first.strip(), last.strip()
    if not (mrn and first and last):
        raise BadInput("A patient needs an MRN, a first name and a last name.")
    if isinstance(dob, str):
        try:
            dob = date.fromisoformat(dob)
        except ValueError:
            raise BadInput(f"Date of birth must be YYYY-MM-DD, got {dob!r}.") from None
    if dob > date.today():
        raise BadInput("Date of birth is in the future.")
    sex = sex.upper()
    if sex not in ("F", "M", "U"):
        raise BadInput("Sex must be F, M or U.")
    with wb.db.cursor() as cur:
        if patients_repo.by_mrn(cur, mrn):
            raise BadInput(f"A patient with MRN {mrn} already exists.", code="duplicate_patient")
        return patients_repo.add(cur, mrn=mrn, first=first, last=last, dob=dob, sex=sex, middle=middle)


def seed_demo_patients(wb: Workbench) -> int:
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
