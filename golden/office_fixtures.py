"""Synthetic referral letters (DOCX) and clinical workbooks (XLSX) with their ground truth.

Every patient, clinician, clinic and value here is invented. The two letters are laid
out in visibly different ways (a prose letter with labelled paragraphs and bullet lists;
a form built from tables with merged section rows), and so are the two workbooks (a
results export with a header block, a merged title and a merged date column, a hidden
row and an unrecalculated formula; a medication list plus labs with a day-first date
and a hidden sheet). Extractors never see these objects, only the bytes the builders
return.

Write the files somewhere with ``python -m golden.office_fixtures OUT_DIR``.
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from golden.ground_truth import ExpectedAllergy, ExpectedLab, ExpectedMedication

# --------------------------------------------------------------------------- ground truth


@dataclass(frozen=True)
class ExpectedIdentity:
    name: str  # as printed
    dob: str  # YYYY-MM-DD
    mrn: str


@dataclass(frozen=True)
class ExpectedProblem:
    description: str
    code: str | None


@dataclass(frozen=True)
class ReferralCase:
    name: str
    identity: ExpectedIdentity
    referral: dict[str, str]  # field -> value (dates as YYYY-MM-DD)
    problems: tuple[ExpectedProblem, ...]
    medications: tuple[ExpectedMedication, ...]
    allergies: tuple[ExpectedAllergy, ...]


@dataclass(frozen=True)
class WorkbookCase:
    name: str
    identity: ExpectedIdentity
    labs: tuple[ExpectedLab, ...] = ()
    medications: tuple[ExpectedMedication, ...] = ()
    skipped_tests: tuple[str, ...] = ()  # rows that must NOT become facts (hidden, formula)
    warnings: tuple[str, ...] = ()  # warning codes the normalizer must raise
    notes: dict[str, str] = field(default_factory=dict)


QUENTARA = ExpectedIdentity("Marisol QUENTARA", "1978-03-14", "WB-204118")
BELLAMIRE = ExpectedIdentity("Oskar BELLAMIRE-TOTH", "1962-11-05", "QF-778201")

LETTER_PROSE = ReferralCase(
    name="referral_prose_letter",
    identity=QUENTARA,
    referral={
        "letter_date": "2024-03-14",
        "receiving_provider": "Dr. Imogen Vantreight, Brightwater Cardiology Clinic",
        "reason": "Exertional chest tightness over the past six weeks, relieved by rest.",
        "requested_service": "Outpatient cardiology assessment and exercise stress test",
        "appointment": "2024-04-02",
        "referring_provider": "Dr. Tobias Wrenfield",
    },
    problems=(
        ExpectedProblem("Hypertension", "I10"),
        ExpectedProblem("Type 2 diabetes mellitus", "E11.9"),
        ExpectedProblem("Hyperlipidaemia", None),
    ),
    medications=(
        ExpectedMedication("Metformin", "500 mg", "twice daily"),
        ExpectedMedication("Lisinopril", "10 mg", "once daily"),
        ExpectedMedication("Atorvastatin", "40 mg", "at night"),
    ),
    allergies=(
        ExpectedAllergy("Penicillin", "rash"),
        ExpectedAllergy("? sulfa", "patient unsure", needs_review=True),
    ),
)

LETTER_FORM = ReferralCase(
    name="referral_table_form",
    identity=BELLAMIRE,
    referral={
        "referring_provider": "Dr. Anneliese Korvath",
        "referring_clinic": "Quillfeather Family Practice",
        "receiving_provider": "Dr. Samir Olowenkwe",
        "receiving_clinic": "Larchfield Endocrinology Clinic",
        "reason": "Poorly controlled type 2 diabetes despite dual oral therapy (HbA1c 9.1%)",
        "requested_service": "Endocrinology consultation and insulin initiation",
        "letter_date": "2024-02-05",
        "urgency": "Routine",
    },
    problems=(
        ExpectedProblem("Type 2 diabetes mellitus with hyperglycaemia", "E11.65"),
        ExpectedProblem("Chronic kidney disease, stage 3a", "N18.31"),
    ),
    medications=(
        ExpectedMedication("Metformin", "1000 mg", "twice daily"),
        ExpectedMedication("Gliclazide", "80 mg", "once daily"),
        ExpectedMedication("Ramipril", "5 mg", "once daily"),
    ),
    allergies=(
        ExpectedAllergy("Codeine", "Nausea and vomiting"),
        ExpectedAllergy("Latex", "possible contact dermatitis", needs_review=True),
    ),
)

WORKBOOK_LABS = WorkbookCase(
    name="workbook_results_export",
    identity=ExpectedIdentity("QUENTARA, Marisol", "1978-03-14", "WB-204118"),
    labs=(
        ExpectedLab("Glucose, fasting", "7.9", "mmol/L", "3.9-5.5", "high", collection_date="2024-03-12"),
        ExpectedLab("Sodium", "139", "mmol/L", "135-145", "normal", collection_date="2024-03-12", flag_derived=True),
        ExpectedLab("Potassium", "5.9", "mmol/L", "3.5-5.1", "high", collection_date="2024-03-12", flag_derived=True),
        ExpectedLab("Creatinine", "88", "umol/L", "45-90", "normal", collection_date="2024-03-12"),
        ExpectedLab("HbA1c", "7.9", "%", "<5.7", "high", collection_date="2024-03-12"),
        ExpectedLab("CRP", "<0.5", "mg/L", "0-5", "normal", collection_date="2024-03-12", flag_derived=True),
        ExpectedLab("Haemoglobin", "118", "g/L", "120-150", "low", collection_date="2024-03-14", flag_derived=True),
        ExpectedLab("White cell count", "6.2", "x10^9/L", "4.0-11.0", "normal",
                    collection_date="2024-03-14", flag_derived=True),
        ExpectedLab("Platelets", "410", "x10^9/L", "150-400", "high", collection_date="2024-03-14", flag_derived=True),
    ),
    skipped_tests=("Creatinine (superseded)", "eGFR"),
    warnings=("xlsx_hidden_rows", "formula_without_value"),
)

WORKBOOK_MEDS = WorkbookCase(
    name="workbook_medications_and_labs",
    identity=ExpectedIdentity("BELLAMIRE-TOTH, Oskar", "1962-11-05", "QF-778201"),
    labs=(
        ExpectedLab("LDL cholesterol", "3.4", "mmol/L", "<3.0", "high", collection_date="2024-01-20"),
        ExpectedLab("HDL cholesterol", "1.1", "mmol/L", ">1.0", "normal",
                    collection_date="2024-01-20", flag_derived=True),
        ExpectedLab("Urine albumin/creatinine ratio", "4.2", "mg/mmol", "<3.0", "high", collection_date="2024-01-20"),
    ),
    medications=(
        ExpectedMedication("Metformin", "1000 mg", "twice daily with meals"),
        ExpectedMedication("Gliclazide", "80 mg", "once daily"),
        ExpectedMedication("Ramipril", "5 mg", "once daily"),
        ExpectedMedication("Insulin glargine", "10 units", "10 units at night - to be confirmed", needs_review=True),
    ),
    skipped_tests=("Old LDL cholesterol",),
    warnings=("xlsx_hidden_sheet",),
)

REFERRALS = (LETTER_PROSE, LETTER_FORM)
WORKBOOKS = (WORKBOOK_LABS, WORKBOOK_MEDS)

# --------------------------------------------------------------------------- DOCX builders


def document_bytes(doc) -> bytes:
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def build_prose_letter() -> bytes:
    """A typed letter: letterhead in the header, labelled paragraphs, bullet lists."""
    import docx
    from docx.shared import Pt

    doc = docx.Document()
    section = doc.sections[0]
    section.header.paragraphs[0].text = "Quillfeather Family Practice \u00b7 12 Larkspur Row, Eastmere EM4 7QT"
    section.footer.paragraphs[0].text = "Confidential \u2013 page 1 of 1"
    style = doc.styles["Normal"]
    style.font.name = "Georgia"
    style.font.size = Pt(11)

    doc.add_paragraph("14 March 2024")
    doc.add_paragraph("")
    doc.add_paragraph("To: Dr. Imogen Vantreight, Brightwater Cardiology Clinic")
    doc.add_paragraph("Re: Marisol QUENTARA, DOB 03/14/1978, MRN WB-204118")
    doc.add_paragraph("")
    doc.add_paragraph("Dear Dr. Vantreight,")
    doc.add_paragraph(
        "I would be grateful if you could see Ms Quentara, a 46-year-old teacher who has "
        "noticed tightness across her chest when walking uphill."
    )
    doc.add_paragraph("Reason for referral: Exertional chest tightness over the past six weeks, relieved by rest.")
    doc.add_paragraph("Requested service: Outpatient cardiology assessment and exercise stress test")
    doc.add_paragraph("Problems:")
    for item in ("Hypertension (I10)", "Type 2 diabetes mellitus (E11.9)", "Hyperlipidaemia"):
        doc.add_paragraph(item, style="List Bullet")
    doc.add_paragraph("Current medications:")
    for item in ("Metformin 500 mg twice daily", "Lisinopril 10 mg once daily", "Atorvastatin 40 mg at night"):
        doc.add_paragraph(item, style="List Bullet")
    doc.add_paragraph("Allergies: Penicillin (rash); ? sulfa - patient unsure")
    doc.add_paragraph("Appointment requested: 2 April 2024")
    doc.add_paragraph("Thank you for seeing her.")
    doc.add_paragraph("Yours sincerely,")
    doc.add_paragraph("Dr. Tobias Wrenfield")
    doc.add_paragraph("General Practitioner, Quillfeather Family Practice")
    return document_bytes(doc)


def build_table_form() -> bytes:
    """A referral form: a title, a label/value table with merged section rows, list tables."""
    import docx

    doc = docx.Document()
    section = doc.sections[0]
    section.header.paragraphs[0].text = "Quillfeather Family Practice \u2014 Specialist referral"
    section.footer.paragraphs[0].text = "Referral form v3"
    doc.add_paragraph("REFERRAL FORM", style="Title")

    details = [
        ("PATIENT DETAILS", None),
        ("Patient name", "Oskar BELLAMIRE-TOTH"),
        ("Date of birth", "1962-11-05"),
        ("MRN", "QF-778201"),
        ("REFERRAL DETAILS", None),
        ("Referring provider", "Dr. Anneliese Korvath"),
        ("Referring practice", "Quillfeather Family Practice"),
        ("Referred to", "Dr. Samir Olowenkwe"),
        ("Receiving clinic", "Larchfield Endocrinology Clinic"),
        ("Reason for referral", "Poorly controlled type 2 diabetes despite dual oral therapy (HbA1c 9.1%)"),
        ("Requested service", "Endocrinology consultation and insulin initiation"),
        ("Date of referral", "05-Feb-2024"),
        ("Urgency", "Routine"),
    ]
    table = doc.add_table(rows=len(details), cols=2)
    table.style = "Table Grid"
    for i, (label, value) in enumerate(details):
        row = table.rows[i]
        if value is None:
            merged = row.cells[0].merge(row.cells[1])
            merged.text = label
        else:
            row.cells[0].text = label
            row.cells[1].text = value

    doc.add_paragraph("")
    doc.add_paragraph("Current medications", style="Heading 2")
    meds = doc.add_table(rows=1, cols=3)
    meds.style = "Table Grid"
    for cell, text in zip(meds.rows[0].cells, ("Medication", "Dose", "Frequency")):
        cell.text = text
    for row in (("Metformin", "1000 mg", "twice daily"), ("Gliclazide", "80 mg", "once daily"),
                ("Ramipril", "5 mg", "once daily")):
        cells = meds.add_row().cells
        for cell, text in zip(cells, row):
            cell.text = text

    doc.add_paragraph("")
    allergies = doc.add_table(rows=1, cols=3)
    allergies.style = "Table Grid"
    for cell, text in zip(allergies.rows[0].cells, ("Allergen", "Reaction", "Severity")):
        cell.text = text
    for row in (("Codeine", "Nausea and vomiting", "Moderate"), ("Latex", "possible contact dermatitis", "Mild")):
        cells = allergies.add_row().cells
        for cell, text in zip(cells, row):
            cell.text = text

    doc.add_paragraph("")
    problems = doc.add_table(rows=1, cols=2)
    problems.style = "Table Grid"
    for cell, text in zip(problems.rows[0].cells, ("Diagnosis", "ICD-10 code")):
        cell.text = text
    for row in (("Type 2 diabetes mellitus with hyperglycaemia", "E11.65"),
                ("Chronic kidney disease, stage 3a", "N18.31")):
        cells = problems.add_row().cells
        for cell, text in zip(cells, row):
            cell.text = text
    doc.add_paragraph("Signed electronically by the referring provider.")
    return document_bytes(doc)


# --------------------------------------------------------------------------- XLSX builders


def _wb_bytes(wb) -> bytes:
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def build_results_workbook() -> bytes:
    """A results export: cover sheet, header block, merged title and date column, a hidden
    superseded row, a formula never recalculated, and a second sheet in another column order."""
    import openpyxl
    from openpyxl.styles import Font

    wb = openpyxl.Workbook()
    cover = wb.active
    cover.title = "Cover"
    cover["A1"] = "Quillfeather Family Practice - results export"
    cover["A2"] = "Generated 2024-03-15 for referral"

    ws = wb.create_sheet("Chemistry")
    ws["A1"], ws["B1"] = "Patient:", "QUENTARA, Marisol"
    ws["A2"], ws["B2"] = "MRN:", "WB-204118"
    ws["A3"], ws["B3"] = "DOB:", datetime(1978, 3, 14)
    ws["B3"].number_format = "dd/mm/yyyy"
    ws["A5"] = "Basic metabolic panel"
    ws["A5"].font = Font(bold=True)
    ws.merge_cells("A5:F5")
    header = ("Test", "Result", "Units", "Reference range", "Flag", "Collected")
    for col, text in enumerate(header, start=1):
        ws.cell(6, col, text).font = Font(bold=True)
    rows = [
        (7, "Glucose, fasting", 7.9, "mmol/L", "3.9-5.5", "H"),
        (8, "Sodium", 139, "mmol/L", "135-145", None),
        (9, "Potassium", 5.9, "mmol/L", "3.5-5.1", None),
    ]
    for r, test, value, unit, rng, flag in rows:
        ws.cell(r, 1, test), ws.cell(r, 2, value), ws.cell(r, 3, unit), ws.cell(r, 4, rng)
        if flag:
            ws.cell(r, 5, flag)
    ws.cell(7, 6, datetime(2024, 3, 12)).number_format = "yyyy-mm-dd"
    ws.merge_cells("F7:F9")  # one collection date for the three rows
    # row 10 is left blank on purpose
    for r, values in (
        (11, ("Creatinine", 88, "umol/L", "45-90", "N", "2024-03-12")),
        (12, ("Creatinine (superseded)", 140, "umol/L", "45-90", "H", "2023-01-04")),
        (13, ("eGFR", "=ROUND(186*(B11/88.4)^-1.154,0)", "mL/min/1.73m2", ">60", None, "2024-03-12")),
        (14, ("HbA1c", "7.9 %", None, "<5.7", "H", "March 12, 2024")),
        (15, ("CRP", "<0.5", "mg/L", "0-5", None, "12-Mar-2024")),
    ):
        for col, v in enumerate(values, start=1):
            if v is not None:
                ws.cell(r, col, v)
    ws.row_dimensions[12].hidden = True

    haem = wb.create_sheet("Haematology")
    haem["A1"], haem["B1"] = "Name", "QUENTARA, Marisol"
    for col, text in enumerate(("Date", "Analyte", "Value", "Units", "Normal range"), start=1):
        haem.cell(3, col, text)
    for r, row in enumerate((
        ("14/03/2024", "Haemoglobin", 118, "g/L", "120-150"),
        ("14/03/2024", "White cell count", 6.2, "x10^9/L", "4.0-11.0"),
        ("14/03/2024", "Platelets", 410, "x10^9/L", "150-400"),
    ), start=4):
        for col, v in enumerate(row, start=1):
            haem.cell(r, col, v)
    return _wb_bytes(wb)


def build_medication_workbook() -> bytes:
    """A medication list with a header block, a labs sheet and a hidden sheet of old data."""
    import openpyxl

    wb = openpyxl.Workbook()
    meds = wb.active
    meds.title = "Medications"
    meds["A1"], meds["B1"] = "Name", "BELLAMIRE-TOTH, Oskar"
    meds["A2"], meds["B2"] = "Date of birth", "1962-11-05"
    meds["A3"], meds["B3"] = "Hospital no.", "QF-778201"
    for col, text in enumerate(("Drug", "Strength", "Directions", "Route", "Start date"), start=1):
        meds.cell(5, col, text)
    for r, row in enumerate((
        ("Metformin", "1000 mg", "twice daily with meals", "oral", datetime(2019, 6, 1)),
        ("Gliclazide", "80 mg", "once daily", "oral", "2022-01-15"),
        ("Ramipril", "5 mg", "once daily", "oral", datetime(2021, 9, 30)),
        ("Insulin glargine", None, "10 units at night - to be confirmed", "subcutaneous", None),
    ), start=6):
        for col, v in enumerate(row, start=1):
            if v is not None:
                meds.cell(r, col, v)

    labs = wb.create_sheet("Recent labs")
    labs["A1"] = "Lipids and renal screen"
    for col, text in enumerate(("Analyte", "Result", "Unit", "Range", "Flag", "Date"), start=1):
        labs.cell(3, col, text)
    for r, row in enumerate((
        ("LDL cholesterol", 3.4, "mmol/L", "<3.0", "H", datetime(2024, 1, 20)),
        ("HDL cholesterol", 1.1, "mmol/L", ">1.0", None, datetime(2024, 1, 20)),
        ("Urine albumin/creatinine ratio", 4.2, "mg/mmol", "<3.0", "H", "20/01/2024"),
    ), start=4):
        for col, v in enumerate(row, start=1):
            if v is not None:
                labs.cell(r, col, v)

    old = wb.create_sheet("Old data")
    for row in (("Analyte", "Result", "Unit", "Range", "Flag", "Date"),
                ("Old LDL cholesterol", 4.9, "mmol/L", "<3.0", "H", "2019-05-02")):
        old.append(row)
    old.sheet_state = "hidden"
    return _wb_bytes(wb)


BUILDERS = {
    "referral_prose_letter.docx": build_prose_letter,
    "referral_table_form.docx": build_table_form,
    "workbook_results_export.xlsx": build_results_workbook,
    "workbook_medications_and_labs.xlsx": build_medication_workbook,
}


def write_all(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, build in BUILDERS.items():
        path = out_dir / name
        path.write_bytes(build())
        paths.append(path)
    return paths


if __name__ == "__main__":  # pragma: no cover - a convenience for humans
    if len(sys.argv) != 2:
        print("usage: python -m golden.office_fixtures OUT_DIR", file=sys.stderr)
        sys.exit(2)
    for p in write_all(Path(sys.argv[1])):
        print(p)
