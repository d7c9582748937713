"""Synthetic lab reports and intake forms, drawn with PyMuPDF, with their ground truth.

Every patient, clinic and value here is invented. Each *layout* is a renderer that
draws a case in a visibly different way (fonts, column order, where units and flags
sit, line-based vs tabular, one or two pages); the case's ``results`` /
expected fields are what an extractor must find. Extractors never see these
objects, only the PDF bytes ``render_lab`` / ``render_intake`` return.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from typing import Callable

import pymupdf

# --------------------------------------------------------------------------- cases


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
    test_name: str
    value: str
    unit: str
    reference_range: str
    abnormal_flag: str
    printed_flag: str = ""  # what the report prints in its flag position ("" = nothing)


@dataclass(frozen=True)
class LabCase:
    name: str
    layout: str
    patient: Patient
    collection_date: str  # YYYY-MM-DD
    panels: tuple[tuple[str, tuple[ExpectedLab, ...]], ...]
    lab_name: str = "Sunrise Valley Laboratories"

    @property
    def results(self) -> list[ExpectedLab]:
        return [r for _, rows in self.panels for r in rows]


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


# --------------------------------------------------------------------------- drawing


class _Canvas:
    """A thin PyMuPDF wrapper: text at baseline points, right alignment, rules."""

    def __init__(self, width: float = 612, height: float = 792, font: str = "helv", size: float = 10):
        self.doc = pymupdf.open()
        self.width, self.height, self.font, self.size = width, height, font, size
        self.page = self.new_page()

    def new_page(self) -> pymupdf.Page:
        self.page = self.doc.new_page(width=self.width, height=self.height)
        return self.page

    def text(self, x: float, y: float, s: str, font: str | None = None, size: float | None = None) -> None:
        if s:
            self.page.insert_text((x, y), s, fontname=font or self.font, fontsize=size or self.size)

    def rtext(self, x_right: float, y: float, s: str, font: str | None = None, size: float | None = None) -> None:
        w = pymupdf.get_text_length(s, fontname=font or self.font, fontsize=size or self.size)
        self.text(x_right - w, y, s, font, size)

    def ctext(self, y: float, s: str, font: str | None = None, size: float | None = None) -> None:
        w = pymupdf.get_text_length(s, fontname=font or self.font, fontsize=size or self.size)
        self.text((self.width - w) / 2, y, s, font, size)

    def rule(self, y: float, x0: float = 40, x1: float | None = None) -> None:
        self.page.draw_line((x0, y), (x1 or self.width - 40, y), width=0.6)

    def box(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.page.draw_rect(pymupdf.Rect(x0, y0, x1, y1), width=0.8)

    def tobytes(self) -> bytes:
        data = self.doc.tobytes(garbage=1, deflate=True, no_new_id=True)
        self.doc.close()
        return data


def _us(iso: str, two_digit_year: bool = False) -> str:
    d = date.fromisoformat(iso)
    return f"{d.month}/{d.day}/{d.year % 100:02d}" if two_digit_year else f"{d.month:02d}/{d.day:02d}/{d.year}"


def _long(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d.strftime('%B')} {d.day}, {d.year}"


def _dmy(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d.day} {d.strftime('%B')} {d.year}"


def _dmon(iso: str) -> str:
    return date.fromisoformat(iso).strftime("%d-%b-%Y")


def _mon(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d.strftime('%b')} {d.day} {d.year}"


def _last_first(p: Patient) -> str:
    middle = f" {p.middle[0]}" if p.middle else ""
    return f"{p.last.upper()}, {p.first.upper()}{middle}"


def _first_last(p: Patient) -> str:
    middle = f" {p.middle[0]}." if p.middle else ""
    return f"{p.first}{middle} {p.last}"


# --------------------------------------------------------------------------- lab layouts


def _lab_classic(case: LabCase) -> bytes:
    """Letter, Helvetica: 5 columns Test | Result | Flag | Units | Reference Range."""
    c = _Canvas(font="helv", size=9.5)
    p = case.patient
    c.text(50, 52, case.lab_name, "hebo", 15)
    c.text(50, 66, "1200 Orchard Parkway, Suite 300, Fairview, OR 97024   Tel (503) 555-0142", size=8)
    c.text(50, 96, f"Patient: {_last_first(p)}")
    c.text(340, 96, f"Collected: {_us(case.collection_date)} 08:15")
    c.text(50, 110, f"DOB: {_us(p.dob)}")
    c.text(340, 110, f"Received: {_us(case.collection_date)} 11:02")
    c.text(50, 124, f"MRN: {p.mrn}")
    c.text(340, 124, "Reported: 04/12/2026")
    c.text(50, 138, f"Sex: {p.sex}")
    c.text(340, 138, "Ordering Physician: Dr. Imre Castellanos")
    c.rule(150, 45, 567)
    y = 166
    for x, label in ((50, "Test"), (230, "Result"), (290, "Flag"), (330, "Units"), (430, "Reference Range")):
        c.text(x, y, label, "hebo")
    c.rule(172, 45, 567)
    y += 22
    for panel, rows in case.panels:
        c.text(50, y, panel, "hebo", 9)
        y += 14
        for r in rows:
            c.text(58, y, r.test_name)
            c.text(230, y, r.value)
            c.text(292, y, r.printed_flag)
            c.text(330, y, r.unit)
            c.text(430, y, r.reference_range)
            y += 14
        y += 6
    c.text(50, y + 8, "Comment: Results reviewed by the laboratory director; no repeat testing needed.", size=8.5)
    c.text(50, 760, f"{case.lab_name} - CLIA 38D0000000", size=7.5)
    c.rtext(562, 760, "Page 1 of 1", size=7.5)
    return c.tobytes()


def _lab_split_range(case: LabCase) -> bytes:
    """A4, Times: Analyte | Reference Interval | In Range | Out of Range | Units.

    Out-of-range values carry an inline flag ("11.8 H") or none at all; rows that do
    not fit continue on page 2 under no repeated header.
    """
    c = _Canvas(width=595, height=842, font="tiro", size=10)
    p = case.patient
    c.ctext(50, case.lab_name, "tibo", 14)
    c.ctext(64, "Clinical Reference Laboratory Report", size=9)
    c.text(40, 96, f"Patient Name: {_first_last(p)}")
    c.text(320, 96, f"Date of Birth: {_long(p.dob)}")
    c.text(40, 110, f"Patient ID: {p.mrn}")
    c.text(320, 110, f"Date of Service: {case.collection_date}")
    c.rule(122, 36, 559)
    cols = {"Analyte": 40, "Reference Interval": 175, "In Range": 300, "Out of Range": 370, "Units": 465}
    for label, x in cols.items():
        c.text(x, 138, label, "tibo")
    c.rule(144, 36, 559)
    y, page_no, max_y = 160, 1, 330
    rows_total = [(panel, r) for panel, rows in case.panels for r in [None, *rows]]
    for panel, r in rows_total:
        if y > max_y:
            c.ctext(812, f"Page {page_no} of 2", size=8)
            c.new_page()
            page_no += 1
            y = 60
        if r is None:
            c.text(40, y, panel.title(), "tibo")
        else:
            c.text(48, y, r.test_name)
            c.text(175, y, r.reference_range)
            if r.abnormal_flag == "normal":
                c.text(300, y, r.value)
            else:
                c.text(370, y, f"{r.value} {r.printed_flag}".strip())
            c.text(465, y, r.unit)
        y += 15
    c.text(40, y + 10, "Interpretive note: reference intervals are specific to this laboratory.", "tiit", 9)
    c.ctext(812, f"Page {page_no} of 2", size=8)
    return c.tobytes()


def _lab_units_in_range(case: LabCase) -> bytes:
    """Letter, small Helvetica: Description | Value | Reference Range, units inside
    the range cell, inline flags glued to the value, "Date Collected: 22 July 2026"."""
    c = _Canvas(font="helv", size=8.5)
    p = case.patient
    c.text(45, 48, case.lab_name.upper(), "hebo", 12)
    c.text(400, 48, f"Date Collected: {_dmy(case.collection_date)}")
    c.text(400, 60, "Date Reported: 24 July 2026")
    c.text(45, 80, f"Name: {_first_last(p)}")
    c.text(45, 92, f"Birth Date: {_dmon(p.dob)}")
    c.text(45, 104, f"Acct #: {p.mrn}")
    c.text(250, 80, "Specimen: Serum / Whole blood")
    c.text(250, 92, "Fasting: Yes")
    c.rule(114, 40, 572)
    for x, label in ((45, "Description"), (262, "Value"), (345, "Reference Range")):
        c.text(x, 128, label, "hebo", 9)
    y = 146
    for i, (panel, rows) in enumerate(case.panels):
        c.text(45, y, panel.upper(), "hebo")
        y += 12
        for j, r in enumerate(rows):
            glue = "" if (i + j) % 2 else " "  # "11.8H" and "11.8 H" both occur
            c.text(52, y, r.test_name)
            c.text(262, y, f"{r.value}{glue}{r.printed_flag}" if r.printed_flag else r.value)
            c.text(345, y, f"{r.reference_range} {r.unit}".strip())
            y += 12
        y += 8
    c.text(45, y + 6, "Note: Values flagged H or L fall outside the reference range.", size=8)
    c.ctext(770, "Page 1 of 1", size=7)
    return c.tobytes()


def _lab_dotted(case: LabCase) -> bytes:
    """Letter, Courier: line-based report "WBC........ 11.8 x10E3/uL (3.4-10.8) H"."""
    c = _Canvas(font="cour", size=9.5)
    p = case.patient
    c.text(50, 50, case.lab_name.upper(), "cobo", 11)
    c.text(50, 76, f"PATIENT: {_last_first(p)}")
    c.text(360, 76, f"CHART #: {p.mrn}")
    c.text(50, 89, f"DOB: {_us(p.dob, two_digit_year=True)}")
    c.text(360, 89, f"SEX: {p.sex}")
    c.text(50, 102, f"Specimen collected: {_mon(case.collection_date)} 0815")
    c.text(50, 116, "-" * 80)
    y = 134
    for panel, rows in case.panels:
        c.text(50, y, panel.upper(), "cobo")
        y += 13
        for r in rows:
            name = (r.test_name + " ").ljust(24, ".")
            rng = f"({r.reference_range})" if r.reference_range else ""
            parts = [name, r.value, r.unit, rng, r.printed_flag]
            c.text(58, y, " ".join(s for s in parts if s))
            y += 13
        y += 8
    c.text(50, y, "NOTE: Specimen received at room temperature.")
    c.text(50, y + 13, "*** END OF REPORT ***")
    return c.tobytes()


def _lab_two_page(case: LabCase) -> bytes:
    """Letter, Helvetica, right-aligned values: Component | Value | Flag | Ref Range |
    Units | Lab, over two pages with repeated page header, table header and footer,
    panel headings and comment lines between panels."""
    c = _Canvas(font="helv", size=9)
    p = case.patient
    pages = 2
    cols = (("Component", 50, "l"), ("Value", 290, "r"), ("Flag", 305, "l"), ("Ref Range", 350, "l"),
            ("Units", 440, "l"), ("Lab", 530, "l"))

    def page_frame(n: int) -> float:
        c.text(50, 46, case.lab_name, "hebo", 13)
        c.text(50, 74, f"Patient Name: {_last_first(p)}")
        c.text(300, 74, f"Birth Date: {p.dob}")
        c.text(50, 87, f"Medical Record #: {p.mrn}")
        c.text(300, 87, f"Collection Date: {_us(case.collection_date)}")
        c.rule(96, 45, 567)
        for label, x, align in cols:
            (c.rtext if align == "r" else c.text)(x, 110, label, "hebo")
        c.rule(115, 45, 567)
        c.text(50, 752, f"{case.lab_name} | 4410 Alder Way, Suite 210, Bend, OR 97701", size=7.5)
        c.rtext(562, 752, f"Page {n} of {pages}", size=7.5)
        return 132

    y = page_frame(1)
    split = max(1, len(case.panels) // 2)
    for i, (panel, rows) in enumerate(case.panels):
        if i == split:
            c.new_page()
            y = page_frame(2)
        c.text(50, y, panel.upper(), "hebo", 9.5)
        y += 14
        for r in rows:
            c.text(58, y, r.test_name)
            c.rtext(290, y, r.value)
            c.text(305, y, r.printed_flag)
            c.text(350, y, r.reference_range)
            c.text(440, y, r.unit)
            c.text(530, y, "01")
            y += 14
        c.text(58, y, f"Comment: {panel.title()} reviewed; fasting specimen.", "helv", 8)
        y += 22
    return c.tobytes()


def _lab_landscape_courier(case: LabCase) -> bytes:
    """Landscape letter, Courier: Component | Your Value | Standard Range | Units.

    Added after the extractor was written, as a held-out check of its generality.
    """
    c = _Canvas(width=792, height=612, font="cour", size=9)
    p = case.patient
    c.text(40, 40, f"{case.lab_name} - Patient Results Summary", "cobo", 12)
    c.text(40, 62, f"Patient: {p.first} {p.last}")
    c.text(300, 62, f"DOB: {_us(p.dob)}")
    c.text(520, 62, f"MRN: {p.mrn}")
    c.text(40, 75, f"Date Collected: {_us(case.collection_date)}")
    c.text(300, 75, "Ordered by: N. Vasquez-Orr, NP")
    c.rule(84, 36, 756)
    for x, label in ((40, "Component"), (300, "Your Value"), (420, "Standard Range"), (580, "Units")):
        c.text(x, 98, label, "cobo", 9.5)
    c.rule(103, 36, 756)
    y = 118
    for panel, rows in case.panels:
        c.text(40, y, f"{panel}:", "cobo")
        y += 12
        for r in rows:
            c.text(50, y, r.test_name)
            c.text(300, y, f"{r.value} {r.printed_flag}".strip())
            c.text(420, y, r.reference_range)
            c.text(580, y, r.unit)
            y += 12
        y += 6
    c.text(40, 590, "This summary is provided for your records. Page 1 of 1", size=7.5)
    return c.tobytes()


LAB_LAYOUTS: dict[str, Callable[[LabCase], bytes]] = {
    "classic": _lab_classic,
    "split_range": _lab_split_range,
    "units_in_range": _lab_units_in_range,
    "dotted": _lab_dotted,
    "two_page": _lab_two_page,
    "landscape_courier": _lab_landscape_courier,  # added last: held-out check, extractor unchanged
}


def render_lab(case: LabCase) -> bytes:
    return LAB_LAYOUTS[case.layout](case)


# --------------------------------------------------------------------------- intake layouts


def _intake_two_column(case: IntakeCase) -> bytes:
    """Helvetica form, labels in a left column and answers in a right one, a Notes box."""
    c = _Canvas(font="helv", size=10)
    p = case.patient
    c.text(60, 52, "Riverbend Family Medicine", "hebo", 14)
    c.text(60, 68, "New Patient Intake Form - please print clearly", size=9)
    y = 100

    def section(title: str) -> None:
        nonlocal y
        y += 10
        c.text(60, y, title, "hebo", 11)
        y += 20

    def field_(label: str, lines: list[str] | tuple[str, ...]) -> None:
        nonlocal y
        c.text(60, y, label, "hebo")
        for line in lines or [""]:
            c.text(220, y, line)
            y += 14
        y += 6

    section("PATIENT INFORMATION")
    field_("Name:", [_first_last(p)])
    field_("Date of Birth:", [_us(p.dob)])
    c.text(60, y, "Sex:", "hebo")
    c.text(220, y, {"F": "Female", "M": "Male"}.get(p.sex, p.sex))
    c.text(330, y, "Phone:", "hebo")
    c.text(380, y, case.phone)
    y += 20
    field_("Address:", case.address)
    field_("MRN:", [p.mrn])
    section("MEDICAL INFORMATION")
    field_("Chief concern:", [case.chief_concern])
    field_("Current medications:", [m.printed for m in case.medications] or ["None"])
    allergy_y = y
    field_("Allergies:", [case.allergies_printed])
    if case.margin_note:
        c.text(470, allergy_y, case.margin_note, "tiit", 10)
    field_("Family history:", list(case.family_history))
    if case.past_history:
        field_("Past medical history:", [case.past_history])
    section("PREFERENCES")
    for label, answer in case.preferences:
        field_(f"{label}:", [answer])
    if case.notes:
        y += 6
        top = y - 12
        c.text(66, y, "Notes:", "hebo")
        y += 15
        for line in case.notes:
            c.text(66, y, line)
            y += 14
        c.box(56, top, 556, y)
    c.text(60, 740, "Patient signature: ______________________     Date: ____________", size=9)
    return c.tobytes()


def _intake_questions(case: IntakeCase) -> bytes:
    """Times, question-style: each question on its own line and the answer below it,
    with a margin note written to the right of the allergy answer."""
    c = _Canvas(font="tiro", size=11)
    p = case.patient
    c.ctext(54, "Welcome to Cedar Hollow Health", "tibo", 15)
    c.ctext(72, "Please answer the questions below before your visit.", "tiit", 10)
    y = 110

    def ask(question: str, answers: list[str] | tuple[str, ...], note: str | None = None) -> None:
        nonlocal y
        c.text(54, y, question, "tibo")
        y += 16
        for i, line in enumerate(answers or ["None"]):
            c.text(72, y, line)
            if note and i == 0:
                c.text(430, y - 2, note, "tiit", 11)
            y += 15
        y += 12

    ask("What is your full name?", [_first_last(p)])
    ask("Date of birth (MM/DD/YYYY):", [_us(p.dob)])
    c.text(54, y, "Sex:", "tibo")
    c.text(90, y, {"F": "Female", "M": "Male"}.get(p.sex, p.sex))
    y += 27
    ask("Medical record number (if known):", [p.mrn])
    ask("Phone number where we can reach you:", [case.phone])
    ask("What brings you in today?", [case.chief_concern])
    ask("Medicines you take now (name, dose, how often):", [m.printed for m in case.medications])
    ask("Drug allergies and reactions:", [case.allergies_printed], note=case.margin_note)
    ask("Does anyone in your family have heart disease, diabetes or cancer?", list(case.family_history))
    for label, answer in case.preferences:
        ask(label, [answer])
    if case.notes:
        ask("Anything else you want us to know?", list(case.notes))
    c.text(54, 760, "Thank you. Please return this form to the front desk.", "tiit", 9)
    return c.tobytes()


INTAKE_LAYOUTS: dict[str, Callable[[IntakeCase], bytes]] = {
    "two_column": _intake_two_column,
    "questions": _intake_questions,
}


def render_intake(case: IntakeCase) -> bytes:
    return INTAKE_LAYOUTS[case.layout](case)


# --------------------------------------------------------------------------- default cases

MARISOL = Patient("Marisol", "Quenneville", "1958-07-22", "QX-20417", middle="Teodora", sex="F")
TOBIAS = Patient("Tobias", "Ferreira-Lund", "1971-03-09", "884213", sex="M")
ODALYS = Patient("Odalys", "Brannigan", "1990-11-30", "A0031977", sex="F")
KASIMIR = Patient("Kasimir", "Oyelaran-Voss", "1946-01-05", "551-207-9", sex="M")
WREN = Patient("Wren", "Achterberg", "1983-09-14", "MR77120", sex="M")

L = ExpectedLab
CBC = ("Complete Blood Count", (
    L("WBC", "11.8", "x10E3/uL", "3.4-10.8", "high", "H"),
    L("RBC", "4.52", "x10E6/uL", "3.77-5.28", "normal"),
    L("Hemoglobin", "13.1", "g/dL", "11.1-15.9", "normal"),
    L("Hematocrit", "39.6", "%", "34.0-46.6", "normal"),
    L("Platelets", "142", "x10E3/uL", "150-450", "low", "L"),
))
CMP = ("Comprehensive Metabolic Panel", (
    L("Glucose", "105", "mg/dL", "65-99", "high", "H"),
    L("BUN", "18", "mg/dL", "6-24", "normal"),
    L("Creatinine", "0.91", "mg/dL", "0.57-1.00", "normal"),
    L("Sodium", "139", "mmol/L", "134-144", "normal"),
    L("Potassium", "6.8", "mmol/L", "3.5-5.2", "critical_high", "HH"),
    L("eGFR", ">60", "mL/min/1.73m2", ">59", "normal"),
))
LIPIDS = ("Lipid Panel", (
    L("Cholesterol, Total", "212", "mg/dL", "100-199", "high", "H"),
    L("LDL Cholesterol", "148", "mg/dL", "<100", "high", "H"),
    L("HDL Cholesterol", "38", "mg/dL", ">39", "low", "L"),
    L("Triglycerides", "131", "mg/dL", "0-149", "normal"),
))
A1C = ("Hemoglobin A1c", (L("Hemoglobin A1c", "7.9", "%", "<5.7", "high", "H"),))
URINE = ("Urinalysis", (
    L("Urine Protein", "Negative", "", "Negative", "normal"),
    L("Specific Gravity", "1.015", "", "1.005-1.030", "normal"),
    L("Urine Glucose", "Positive", "", "Negative", "abnormal", "A"),
))

LAB_CASES: list[LabCase] = [
    LabCase("classic_cbc_lipids", "classic", MARISOL, "2026-04-10", (CBC, LIPIDS, A1C)),
    LabCase("split_range_cmp", "split_range", TOBIAS, "2026-04-10", (CBC, CMP, LIPIDS, A1C),
            lab_name="Northgate Clinical Reference Lab"),
    LabCase("units_in_range_mixed", "units_in_range", ODALYS, "2026-07-22", (CMP, LIPIDS, URINE),
            lab_name="Meridian Diagnostics"),
    LabCase("dotted_cbc_urine", "dotted", KASIMIR, "2026-07-22", (CBC, A1C, URINE),
            lab_name="Lakeshore Community Hospital Laboratory"),
    LabCase("two_page_panels", "two_page", TOBIAS, "2026-04-10", (CMP, LIPIDS, CBC, A1C),
            lab_name="Cascade Regional Laboratory Services"),
    LabCase("landscape_courier_lipids", "landscape_courier", WREN, "2026-04-10", (LIPIDS, CMP, A1C),
            lab_name="Bayfront Outpatient Lab"),
]

# The units-in-range layout prints units only inside the range cell, so a result
# without a range cannot carry a unit there; its cases avoid such rows.

M = ExpectedMedication
INTAKE_CASES: list[IntakeCase] = [
    IntakeCase(
        name="two_column_pregnancy_note",
        layout="two_column",
        patient=ODALYS,
        phone="(541) 555-0199",
        address=("77 Larkspur Lane", "Bend, OR 97702"),
        chief_concern="Persistent cough and low-grade fever for 5 days",
        medications=(
            M("Metformin", "500 mg", "twice daily", "Metformin 500 mg twice daily"),
            M("Lisinopril", "10 mg", "once daily", "Lisinopril 10 mg once daily"),
            M("Vitamin D", "1000 IU", "daily", "Vitamin D 1000 IU daily"),
        ),
        allergies_printed="Penicillin (hives); Codeine - nausea",
        allergies=(ExpectedAllergy("Penicillin", "hives"), ExpectedAllergy("Codeine", "nausea")),
        family_history=("Mother - type 2 diabetes; Father - heart attack at 62",),
        preferences=(("Preferred appointment time", "Weekday mornings"), ("Preferred contact method", "Text message")),
        notes=("Thinks she might be pregnant, last period unsure.",),
        review_terms=("pregnant",),
        past_history="Type 2 diabetes, hypertension",
    ),
    IntakeCase(
        name="questions_margin_sulfa",
        layout="questions",
        patient=WREN,
        phone="541-555-0123",
        address=(),
        chief_concern="Chest pain when climbing stairs, started last week",
        medications=(
            M("Atorvastatin", "20 mg", "at bedtime", "Atorvastatin 20 mg at bedtime"),
            M("Aspirin", "81 mg", "daily", "Aspirin 81 mg daily"),
            M("Albuterol inhaler", "2 puffs", "as needed", "Albuterol inhaler 2 puffs as needed"),
        ),
        allergies_printed="NKDA",
        allergies=(),
        family_history=("Father - heart disease", "Sister - breast cancer"),
        preferences=(("When is the best time to reach you?", "After 5 pm on weekdays"),),
        margin_note="? sulfa",
        review_terms=("sulfa", "Chest pain"),
    ),
]


def lab_case(name: str) -> LabCase:
    return next(c for c in LAB_CASES if c.name == name)


def intake_case(name: str) -> IntakeCase:
    return next(c for c in INTAKE_CASES if c.name == name)


def with_layout(case: LabCase, layout: str) -> LabCase:
    """The same results drawn in another layout (layouts are interchangeable)."""
    return replace(case, name=f"{case.name}@{layout}", layout=layout)


def write_all(out_dir) -> list[str]:
    """Write every default case as a PDF into ``out_dir`` (for eyeballing and the eval)."""
    from pathlib import Path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for case in LAB_CASES:
        path = out / f"lab_{case.name}.pdf"
        path.write_bytes(render_lab(case))
        written.append(str(path))
    for case in INTAKE_CASES:
        path = out / f"intake_{case.name}.pdf"
        path.write_bytes(render_intake(case))
        written.append(str(path))
    return written


__all__ = [
    "Patient", "ExpectedLab", "LabCase", "ExpectedMedication", "ExpectedAllergy", "IntakeCase",
    "LAB_LAYOUTS", "INTAKE_LAYOUTS", "LAB_CASES", "INTAKE_CASES", "render_lab", "render_intake",
    "lab_case", "intake_case", "with_layout", "write_all",
]
