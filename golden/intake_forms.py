"""The intake form layouts of the default intake cases: a two-column form with a Notes
box, and a form of questions. (``golden.intake_layouts`` has the label variants.)"""

from __future__ import annotations

from typing import Callable

from golden.drawing import Canvas, first_last, us_date
from golden.ground_truth import IntakeCase


def _intake_two_column(case: IntakeCase) -> bytes:
    """Helvetica form, labels in a left column and answers in a right one, a Notes box."""
    c = Canvas(font="helv", size=10)
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
    field_("Name:", [first_last(p)])
    field_("Date of Birth:", [us_date(p.dob)])
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
    c = Canvas(font="tiro", size=11)
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

    ask("What is your full name?", [first_last(p)])
    ask("Date of birth (MM/DD/YYYY):", [us_date(p.dob)])
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
