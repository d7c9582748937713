"""The ground truth of the synthetic fixtures: who a fixture is about and what an
extractor must find in it.

One set of expected-fact types serves every fixture family (PDF lab reports and intake
forms, DOCX letters, XLSX workbooks, faxes); the case types say how a lab report or an
intake form is drawn. Every patient and value is invented.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Patient:
    first: str
    last: str
    dob: str  # YYYY-MM-DD
    mrn: str
    middle: str = ""
    sex: str = "F"


@dataclass(frozen=True)
class ExpectedLab:
    """A lab result a fixture prints (shared by the PDF lab reports and the workbooks)."""

    test_name: str
    value: str
    unit: str
    reference_range: str
    abnormal_flag: str
    printed_flag: str = ""  # what the report prints in its flag position ("" = nothing)
    # The result's own date where the fixture prints one per row (workbooks); a PDF lab
    # report prints one date for all its results (LabCase.collection_date), so None there.
    collection_date: str | None = None
    flag_derived: bool = False  # the flag comes from the range, the fixture prints none


@dataclass(frozen=True)
class LabCase:
    name: str
    layout: str
    patient: Patient
    collection_date: str  # YYYY-MM-DD
    panels: tuple[tuple[str, tuple[ExpectedLab, ...]], ...]
    lab_name: str = "Sunrise Valley Laboratories"
    # Results the report states in one sentence of running text ("HbA1c 7.9% on 03/02
    # and 8.4% on 06/01"), one test, its values in order; read as review items.
    inline: tuple[ExpectedLab, ...] = ()

    @property
    def results(self) -> list[ExpectedLab]:
        """The table results; a cumulative report's carry their own collection_date."""
        return [r for _, rows in self.panels for r in rows]

    def date_of(self, r: ExpectedLab) -> str:
        return r.collection_date or self.collection_date


@dataclass(frozen=True)
class ExpectedMedication:
    """A medication a fixture prints (shared by the PDF and Office fixtures)."""

    name: str
    dose: str | None
    frequency: str | None
    printed: str = ""  # the line as the form prints it, where a layout needs it
    needs_review: bool = False


@dataclass(frozen=True)
class ExpectedAllergy:
    substance: str
    reaction: str | None
    needs_review: bool = False


@dataclass(frozen=True)
class IntakeCase:
    name: str
    layout: str
    patient: Patient
    phone: str
    address: tuple[str, ...]
    chief_concern: str
    medications: tuple[ExpectedMedication, ...]
    allergies_printed: str  # as written in the allergies field
    allergies: tuple[ExpectedAllergy, ...]  # empty when NKDA / none
    family_history: tuple[str, ...]
    preferences: tuple[tuple[str, str], ...]  # (label, answer)
    margin_note: str | None = None  # written to the right of the allergies answer
    notes: tuple[str, ...] = ()  # lines in a Notes box
    # Words that must appear in some fact flagged wants_review (and nowhere else
    # as a trusted fact): margin notes, uncertain wording, red flags.
    review_terms: tuple[str, ...] = ()
    past_history: str = ""
