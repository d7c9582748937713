"""More intake form layouts, drawn with PyMuPDF, with their ground truth.

The layouts of ``golden.fixtures`` put one field per line with a colon after each
label. Forms in the wild do neither, so these draw the same kind of content in ways
those do not:

* ``one_line`` - a typed registration slip: several "Label: value" fields run on
  one line with ordinary spacing ("DOB: 07/22/1958  Chart #: QX-20417  Sex: F"),
  and an emergency contact and a policy holder whose names and dates sit on the
  same kind of line;
* ``label_table`` - a ruled two-column table: everyday label wordings without
  colons down the left ("Birthday", "Patient No.", "Meds you take"), answers in a
  column far to the right (some over several lines), then a "person to call in an
  emergency" section with its own name and birthday rows;
* ``boxed_grid`` - boxes in a grid, a small label at the top of each box and the
  answer under it, three boxes to a row, and a next-of-kin row of the same boxes.
  This one was drawn only after the reading rules were written, to see whether
  they carry over (it showed that labels above their answers were not read);
* ``leader_lines`` - labels with dot leaders and the answer on the same line, two
  fields to a line, headings that are questions; drawn after the fix above, as a
  second check;
* ``spaced_colons`` - Courier, "Label : answer" with the colon standing apart;
* ``caps_underlined`` - labels in small bold capitals, each above its answer, the
  answer written on a rule; two fields side by side, a pregnancy question;
* ``bilingual_ticks`` - Spanish / English labels ("Fecha de nacimiento / DOB"),
  day-first dates, and tick boxes ("[ ] Ninguna / None  [X] Sí / Yes: ...").
  These two were drawn after the reading rules were reviewed, to check them on
  layouts they were not written against.

Every person, number and clinic here is invented. Extractors never see these
objects, only the PDF bytes ``render`` returns. The cases drawn with these layouts are
``golden.intake_layout_cases``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pymupdf

from golden.drawing import Canvas, day_month_year, long_date, us_date
from golden.ground_truth import ExpectedAllergy, ExpectedMedication, Patient


@dataclass(frozen=True)
class OtherPerson:
    """Someone else the form asks about; nothing of theirs may identify the patient."""

    role: str  # as the form names the block ("Emergency contact", "Policy holder")
    first: str
    last: str
    dob: str  # YYYY-MM-DD
    relation: str = ""


@dataclass(frozen=True)
class LayoutCase:
    name: str
    layout: str
    patient: Patient
    phone: str
    chief_concern: str
    medications: tuple[ExpectedMedication, ...]
    allergies_printed: str
    allergies: tuple[ExpectedAllergy, ...]  # needs_review marks a hedged one; empty for NKDA
    others: tuple[OtherPerson, ...]
    doctor: str = ""  # the patient's own doctor, printed as a name
    pregnant: str = ""  # the answer to a pregnancy question, where the layout asks one

    @property
    def nkda(self) -> bool:
        return not self.allergies


# --------------------------------------------------------------------------- layouts


def _one_line(case: LayoutCase) -> bytes:
    """A typed slip in Helvetica 9.5: fields run on one line separated by two spaces."""
    c = Canvas(font="helv", size=9.5)
    p = case.patient
    c.text(48, 50, "Harbourview Walk-in Clinic", "hebo", 13)
    c.text(48, 64, "Registration slip (staff to complete at the front desk)", size=8.5)
    contact, holder = case.others[0], case.others[1]
    lines = [
        f"Patient name: {p.first} {p.middle[:1] + '. ' if p.middle else ''}{p.last}",
        f"DOB: {us_date(p.dob)}  Chart #: {p.mrn}  Sex: {p.sex}",
        f"Home phone: {case.phone}  Email: {p.first.lower()}.{p.last.lower()}@example.org",
        f"Emergency contact: {contact.first} {contact.last} ({contact.relation})  DOB: {us_date(contact.dob)}"
        f"  Phone: (541) 555-0178",
        f"Insurance: Cascade Mutual  Policy holder: {holder.first} {holder.last}  Date of birth: {us_date(holder.dob)}",
        f"Family doctor: {case.doctor}",
        f"Reason for visit: {case.chief_concern}",
    ]
    y = 96
    for line in lines:
        c.text(48, y, line)
        y += 17
    meds = "; ".join(m.printed for m in case.medications)
    c.text(48, y, f"Medications: {meds}")
    y += 17
    c.text(48, y, f"Allergies: {case.allergies_printed}")
    y += 40
    c.rule(y - 12, 48, 560)
    c.text(48, y, "Staff initials: ____   Date: __________", size=8.5)
    return c.tobytes()


def _label_table(case: LayoutCase) -> bytes:
    """A ruled table: labels without colons at the left, answers 230 points to the right."""
    c = Canvas(font="tiro", size=10.5)
    p = case.patient
    c.ctext(52, "Saltmarsh Community Health", "tibo", 15)
    c.ctext(68, "About you - please fill in the right-hand column", "tiit", 10)
    left, mid, right = 50, 250, 562
    pitch, line = 26, 13
    y = 100

    def table(title: str, rows: list[tuple[str, list[str]]]) -> None:
        nonlocal y
        c.text(left, y, title, "tibo", 11)
        y += 8
        top = y
        c.rule(y, left, right)
        for label, answers in rows:
            answers = answers or [""]
            baseline = y + 17
            c.text(left + 6, baseline, label)
            for k, answer in enumerate(answers):
                c.text(mid + 8, baseline + k * line, answer)
            y += pitch + line * (len(answers) - 1)
            c.rule(y, left, right)
        for x in (left, mid, right):
            c.page.draw_line((x, top), (x, y), width=0.6)
        y += 30

    table("YOUR DETAILS", [
        ("Your name", [f"{p.first} {p.last}"]),
        ("Birthday", [day_month_year(p.dob)]),
        ("Patient No.", [p.mrn]),
        ("Best phone number", [case.phone]),
        ("Family doctor", [case.doctor]),
    ])
    table("YOUR HEALTH", [
        ("What brings you in today", [case.chief_concern]),
        ("Meds you take", [m.printed for m in case.medications] or ["none"]),
        ("Anything you're allergic to?", [case.allergies_printed]),
    ])
    for person in case.others:
        table(f"{person.role.upper()}", [
            ("Name", [f"{person.first} {person.last}"]),
            ("Date you were born", [day_month_year(person.dob)]),
            ("Relationship to you", [person.relation]),
        ])
    c.text(left, 770, "Thank you - hand this sheet to reception.", "tiit", 9)
    return c.tobytes()


def _boxed_grid(case: LayoutCase) -> bytes:
    """Boxes in a grid, each with a small label at its top and the answer written
    below it; several boxes share a row. (Drawn after the reading rules were written,
    to check that they carry over to a layout they were not built against.)"""
    c = Canvas(font="cour", size=10)
    p = case.patient
    c.text(40, 46, "NORTHFIELD URGENT CARE - ATTENDANCE FORM", "cobo", 12)
    y = [70]

    def row(boxes: list[tuple[float, float, str, list[str]]], height: float = 40) -> None:
        top = y[0]
        for x0, x1, label, answers in boxes:
            c.box(x0, top, x1, top + height)
            c.text(x0 + 4, top + 10, label, "helv", 7)
            for k, answer in enumerate(answers):
                c.text(x0 + 6, top + 25 + 12 * k, answer)
        y[0] = top + height + 6

    def heading(title: str) -> None:
        y[0] += 10
        c.text(40, y[0], title, "cobo", 10)
        y[0] += 8

    heading("PATIENT")
    row([(40, 230, "Surname", [p.last.upper()]), (230, 420, "Given name(s)", [p.first]),
         (420, 572, "D.O.B. (dd/mm/yyyy)", [date_dmy(p.dob)])])
    row([(40, 230, "Hospital no.", [p.mrn]), (230, 420, "Telephone", [case.phone]),
         (420, 572, "GP", [case.doctor])])
    for person in case.others:
        heading(person.role.upper())
        row([(40, 230, "Full name", [f"{person.first} {person.last}"]),
             (230, 420, "Date of birth", [date_dmy(person.dob)]),
             (420, 572, "Relationship", [person.relation])])
    heading("TODAY")
    meds = [m.printed for m in case.medications] or ["none"]
    row([(40, 572, "Reason for attending", [case.chief_concern])])
    row([(40, 572, "Current medicines (name, strength, how often)", meds)], height=24 + 12 * len(meds))
    row([(40, 572, "Known allergies / reactions", [case.allergies_printed])])
    return c.tobytes()


def _leader_lines(case: LayoutCase) -> bytes:
    """Times, labels followed by dot leaders and the answer written on the same line,
    sections as questions to the reader, two fields to a line where they are short,
    and a contact section ("Who should we contact?"). Drawn after the boxed grid
    had been used to fix the rules: the second unseen check."""
    c = Canvas(font="tiro", size=11)
    p = case.patient
    c.text(56, 50, "Wyndham Lane Practice", "tibo", 16)
    c.text(56, 66, "Registration questionnaire", "tiit", 11)
    y = [96]

    def dots(x0: float, label: str, answer: str, x_answer: float) -> None:
        c.text(x0, y[0], label)
        start = x0 + pymupdf.get_text_length(label + " ", fontname="tiro", fontsize=11)
        n = max(3, int((x_answer - 6 - start) / pymupdf.get_text_length(".", fontname="tiro", fontsize=11)))
        c.text(start, y[0], "." * n)
        c.text(x_answer, y[0], answer, "tiit")

    def line(*fields: tuple[str, str]) -> None:
        x0 = 56
        for k, (label, answer) in enumerate(fields):
            dots(x0 + 270 * k, label, answer, x0 + 270 * k + 130)
        y[0] += 22

    def section(title: str) -> None:
        y[0] += 8
        c.text(56, y[0], title, "tibo", 12)
        y[0] += 20

    section("About you")
    line(("Surname", p.last), ("First name", p.first))
    line(("Born on", day_month_year(p.dob)), ("Record no.", p.mrn))
    line(("Mobile", case.phone))
    section("Your GP")
    line(("Name", case.doctor))
    for person in case.others:
        section("Who should we contact if we need to?")
        line(("Name", f"{person.first} {person.last}"), ("Relationship", person.relation))
        line(("Their date of birth", day_month_year(person.dob)))
    section("Your health")
    line(("Why have you come today?", case.chief_concern))
    c.text(56, y[0], "Tablets or medicines you take (one per line)")
    y[0] += 18
    for m in case.medications:
        c.text(80, y[0], m.printed, "tiit")
        y[0] += 16
    y[0] += 6
    line(("Allergies or bad reactions", case.allergies_printed))
    return c.tobytes()


def _spaced_colons(case: LayoutCase) -> bytes:
    """Courier, "Label : answer" with the colon standing apart, ISO dates, numbered
    medication lines, a parent/guardian section between the patient's details and
    the clinical questions. Drawn last, after every rule above, as a final check."""
    c = Canvas(font="cour", size=10)
    p = case.patient
    c.text(50, 48, "ST. OSWIN'S MINOR INJURIES UNIT", "cobo", 12)
    y = [80]

    def put(text: str, x: float = 50, font: str = "cour") -> None:
        c.text(x, y[0], text, font)
        y[0] += 15

    put("PATIENT", font="cobo")
    put(f"Name         : {p.first} {p.last}")
    put(f"DOB          : {p.dob}")
    put(f"Hosp #       : {p.mrn}")
    put(f"Phone        : {case.phone}")
    y[0] += 10
    for person in case.others:
        put("PARENT / GUARDIAN", font="cobo")
        put(f"Name         : {person.first} {person.last}")
        put(f"DOB          : {person.dob}")
        put(f"Relationship : {person.relation}")
        y[0] += 10
    put("CLINICAL", font="cobo")
    put(f"Presenting complaint : {case.chief_concern}")
    put("Regular medication   :")
    for k, m in enumerate(case.medications, start=1):
        put(f"{k}. {m.printed}", x=80)
    put(f"Allergies            : {case.allergies_printed}")
    return c.tobytes()


def _caps_underlined(case: LayoutCase) -> bytes:
    """Helvetica: each label in small bold capitals above its answer, the answer on
    a rule; two fields side by side; section titles in larger bold capitals."""
    c = Canvas(font="helv", size=10.5)
    p = case.patient
    c.text(50, 48, "Riverside Family Medicine", "hebo", 15)
    c.text(50, 63, "New patient registration - please print clearly", size=9)
    y = [96]

    def fields(*pairs: tuple[str, list[str]]) -> None:
        """Fields side by side: label, then each answer line on its own rule."""
        width = 500 / len(pairs)
        lines = max(len(answers) or 1 for _, answers in pairs)
        for k, (label, answers) in enumerate(pairs):
            x = 50 + k * (width + 12)
            c.text(x, y[0], label.upper(), "hebo", 7)
            for n in range(lines):
                base = y[0] + 15 + 16 * n
                c.text(x + 3, base, answers[n] if n < len(answers) else "")
                c.rule(base + 3, x, x + width)
        y[0] += 15 + 16 * lines + 12

    def section(title: str) -> None:
        y[0] += 6
        c.text(50, y[0], title, "hebo", 11)
        y[0] += 20

    section("PATIENT")
    fields(("Last name", [p.last]), ("First name", [p.first]))
    fields(("Date of birth (MM/DD/YYYY)", [us_date(p.dob)]), ("Medical record number", [p.mrn]))
    fields(("Home phone", [case.phone]), ("Primary care physician", [case.doctor]))
    for person in case.others:
        section(person.role.upper())
        fields(("Name", [f"{person.first} {person.last}"]), ("Relationship to patient", [person.relation]))
        fields(("Date of birth", [us_date(person.dob)]), ("Phone", ["(608) 555-0190"]))
    section("YOUR HEALTH")
    fields(("Reason for today's visit", [case.chief_concern]))
    fields(("Current medications (name, dose, how often)", [m.printed for m in case.medications] or ["none"]))
    fields(("Allergies and reactions", [case.allergies_printed]))
    fields(("Could you be pregnant?", [case.pregnant]))
    return c.tobytes()


def _bilingual_ticks(case: LayoutCase) -> bytes:
    """Spanish / English labels, two to a line, day-first dates, and questions
    answered by ticking "[X]" one of several "[ ]" boxes; a listed answer follows
    the box it belongs to ("[X] Sí / Yes: ...") or the lines under the question."""
    c = Canvas(font="helv", size=10)
    p = case.patient
    c.text(48, 50, "Clínica Puente Verde", "hebo", 14)
    c.text(48, 65, "Registro de paciente / Patient registration", size=9)
    y = [96]

    def put(*parts: tuple[float, str], font: str = "helv", gap: float = 18) -> None:
        for x, text in parts:
            c.text(x, y[0], text, font)
        y[0] += gap

    def ticks(*options: tuple[bool, str]) -> str:
        return "   ".join(f"[{'X' if ticked else ' '}] {text}" for ticked, text in options)

    put((48, f"Apellidos / Last name: {p.last.upper()}"), (320, f"Nombre / First name: {p.first}"))
    put((48, f"Fecha de nacimiento / DOB (dd/mm/aaaa): {date_dmy(p.dob)}"),
        (320, f"Nº de expediente / Chart #: {p.mrn}"))
    put((48, "Sexo / Sex:  " + ticks((p.sex == "M", "M"), (p.sex == "F", "F"))))
    put((48, f"Teléfono / Phone: {case.phone}"), gap=28)
    for person in case.others:
        put((48, f"{person.role}"), font="hebo")
        put((48, f"Nombre / Name: {person.first} {person.last}"),
            (320, f"Parentesco / Relationship: {person.relation}"))
        put((48, f"Fecha de nacimiento / DOB: {date_dmy(person.dob)}"), gap=28)
    put((48, f"Motivo de la consulta / Reason for visit: {case.chief_concern}"))
    put((48, "¿Toma medicamentos? / Do you take any medicines?  "
         + ticks((not case.medications, "No"), (bool(case.medications), "Sí / Yes - lista / list:"))))
    for m in case.medications:
        put((72, m.printed), gap=15)
    y[0] += 4
    if case.nkda:  # the "none" box is ticked, worded as the case prints it
        allergies = ticks((True, case.allergies_printed), (False, "Sí / Yes:"))
    else:
        allergies = ticks((False, "Ninguna / None"), (True, f"Sí / Yes: {case.allergies_printed}"))
    put((48, f"Alergias / Allergies:  {allergies}"))
    put((48, "¿Está embarazada? / Could you be pregnant?  "
         + ticks(*((case.pregnant == answer, answer) for answer in ("Sí / Yes", "No", "No sé / Not sure")))))
    return c.tobytes()


def date_dmy(iso: str) -> str:
    d = iso.split("-")
    return f"{d[2]}/{d[1]}/{d[0]}"


# --------------------------------------------------------------------------- identity label abbreviations
# Six forms drawn after the shared identity vocabulary (``extract.values.identity_labels``)
# was written, each naming the patient under abbreviations real forms use ("UR No.",
# "D.O.B.", "Surname" / "Given names", "Health card", "Pat.", "MR#", "Hosp No.") beside
# numbers that are not the record number (Medicare, account, visit, NHS, encounter).
# The clinical part is kept plain: these check identity, not the answer rules.


def _slip(case: LayoutCase, title: str, subtitle: str, identity: list[str], font: str = "helv") -> bytes:
    """A typed slip: a title, the identity lines as given, then the person to call, the
    visit's reason, medications and allergies, one "Label: answer" line each."""
    c = Canvas(font=font, size=9.5)
    c.text(48, 50, title, "hebo" if font == "helv" else "tibo", 13)
    c.text(48, 64, subtitle, size=8.5)
    y = 96
    for line in identity:
        c.text(48, y, line)
        y += 17
    for person in case.others:
        y += 6
        c.text(48, y, f"{person.role}: {person.first} {person.last} ({person.relation})  DOB: {us_date(person.dob)}"
                      f"  Phone: (02) 5550 1873")
        y += 23
    if case.doctor:
        c.text(48, y, f"Family doctor: {case.doctor}")
        y += 17
    c.text(48, y, f"Reason for visit: {case.chief_concern}")
    y += 17
    c.text(48, y, "Medications: " + ("; ".join(m.printed for m in case.medications) or "none"))
    y += 17
    c.text(48, y, f"Allergies: {case.allergies_printed}")
    y += 40
    c.rule(y - 12, 48, 560)
    c.text(48, y, "Received by: ________   Date: __________", size=8.5)
    return c.tobytes()


def _ur_slip(case: LayoutCase) -> bytes:
    """Australian hospital style: Surname / Given names, D.O.B. day-first, UR No., Medicare."""
    p = case.patient
    return _slip(case, "Wattle Creek District Hospital", "Outpatient registration", [
        f"Surname: {p.last.upper()}    Given names: {p.first}",
        f"D.O.B.: {date_dmy(p.dob)}    UR No.: {p.mrn}",
        "Medicare No: 2951 43217 1",
    ])


def _pat_abbrev(case: LayoutCase) -> bytes:
    """Short labels: "Pat.:", "Born:" with the month in words, "Hosp No.", an account and a visit number."""
    p = case.patient
    return _slip(case, "Fenwick Street Day Clinic", "Visit sheet", [
        f"Pat.: {p.last}, {p.first}",
        f"Born: {day_month_year(p.dob)}    Hosp No.: {p.mrn}",
        "Acct #: 55-10293    Visit no.: V-88120",
    ])


def _health_card(case: LayoutCase) -> bytes:
    """Canadian style: Last name / First name, an ISO birth date, Health card no. and a chart number."""
    p = case.patient
    return _slip(case, "Lakehead Family Health Team", "New patient form", [
        f"Last name: {p.last}    First name: {p.first}",
        f"Birth date: {p.dob}",
        f"Health card no.: 4321-987-654-XY    Chart: {p.mrn}",
    ], font="tiro")


def _nhs_form(case: LayoutCase) -> bytes:
    """UK style: "Patient name", D.O.B. day-first, an NHS number in groups and a hospital number."""
    p = case.patient
    return _slip(case, "Millbrook Minor Injuries Unit", "Patient details", [
        f"Patient name: {p.first} {p.last.upper()}",
        f"D.O.B.: {date_dmy(p.dob)}",
        f"NHS No.: 485 777 3456    Hospital No.: {p.mrn}",
    ])


def _mr_hash(case: LayoutCase) -> bytes:
    """One dense line: "Pt:", "MR#" and "DOB" side by side, then the sex."""
    p = case.patient
    return _slip(case, "Ridgeview Urgent Care", "Front desk check-in", [
        f"Pt: {p.last.upper()}, {p.first}    MR#: {p.mrn}    DOB: {us_date(p.dob)}",
        f"Sex: {p.sex}",
    ])


def _record_encounter(case: LayoutCase) -> bytes:
    """Long labels: "Name of patient", a written-out birth date, "Record no." and an encounter number."""
    p = case.patient
    return _slip(case, "Bramblewood Health Centre", "Intake questionnaire", [
        f"Name of patient: {p.first} {p.last}",
        f"Date of birth: {long_date(p.dob)}",
        f"Record no.: {p.mrn}    Encounter #: E-20931",
    ])


LAYOUTS: dict[str, Callable[[LayoutCase], bytes]] = {
    "ur_slip": _ur_slip,
    "pat_abbrev": _pat_abbrev,
    "health_card": _health_card,
    "nhs_form": _nhs_form,
    "mr_hash": _mr_hash,
    "record_encounter": _record_encounter,
    "one_line": _one_line,
    "label_table": _label_table,
    "boxed_grid": _boxed_grid,
    "leader_lines": _leader_lines,
    "spaced_colons": _spaced_colons,
    "caps_underlined": _caps_underlined,
    "bilingual_ticks": _bilingual_ticks,
}


def render(case: LayoutCase) -> bytes:
    return LAYOUTS[case.layout](case)


__all__ = ["OtherPerson", "LayoutCase", "LAYOUTS", "render"]
