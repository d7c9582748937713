"""Layouts written to measure the coverage guard (``extract/coverage.py``), each with the
results it prints as ground truth. Written after the guard's rules, on purpose unlike the
layouts the readers were built on: a two-panel cumulative sheet with arrow flags and units
under the heading, a grid with headers no reader knows, results in prose, a letter in
Word, a workbook sheet of vital signs, tests as column headers (a workbook and a Word
table, one row per date, beside tables of stock counts and doses), and a page that
prints many numbers but no result (letterhead, contacts, identifiers, doses, targets,
reference intervals).

Every name and value is invented. ``LAYOUTS`` maps a name to (doc_type, builder, truth):
``truth`` lists, per printed result, the words its line must show (test name and value).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pymupdf

_SYMBOL_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


@dataclass(frozen=True)
class PrintedResult:
    test: str  # the test name as printed
    value: str  # the value as printed


@dataclass(frozen=True)
class Layout:
    name: str
    doc_type: str  # the reader it goes through
    build: Callable[[], bytes]
    truth: tuple[PrintedResult, ...]  # every result the document prints


class _Page:
    """A page to write on; symbols (▲ ▼ ‼) need a font that has them."""

    def __init__(self, doc: pymupdf.Document, width: float = 612, height: float = 792):
        self.page = doc.new_page(width=width, height=height)
        self.font = "dejavu" if _SYMBOL_FONT.exists() else "helv"
        if self.font == "dejavu":
            self.page.insert_font(fontname="dejavu", fontfile=str(_SYMBOL_FONT))

    def text(self, x: float, y: float, s: str, size: float = 9.5) -> None:
        if self.font == "helv":  # no symbol font on this machine: letters stand in
            s = s.replace("▲", "H").replace("▼", "L").replace("‼", "!!")
        self.page.insert_text((x, y), s, fontname=self.font, fontsize=size)


def _pdf(draw: Callable[[pymupdf.Document], None]) -> bytes:
    doc = pymupdf.open()
    draw(doc)
    data = doc.tobytes(garbage=1, deflate=True, no_new_id=True)
    doc.close()
    return data


# --------------------------------------------------------------------------- 1: two panels, three dates

_CHEM = [("Sodium", ["138", "141", "136"], "mmol/L"), ("Potassium", ["6.6 ‼", "5.2 ▲", "4.4"], "mmol/L"),
         ("Urea", ["9.8 ▲", "7.1", "6.0"], "mmol/L"), ("Creatinine", ["164 ▲", "121 ▲", "98"], "umol/L")]
_HAEM = [("Haemoglobin", ["96 ▼", "104 ▼", "118"], "g/L"), ("White cells", ["12.9 ▲", "9.4", "8.8"], "x10^9/L"),
         ("Platelets", ["402", "388", "350"], "x10^9/L")]


def _two_panel_cumulative() -> bytes:
    def draw(doc: pymupdf.Document) -> None:
        p = _Page(doc, 792, 612)  # landscape
        p.text(40, 40, "HARROWGATE PATHOLOGY  -  CUMULATIVE RESULTS", 12)
        p.text(40, 58, "Pt: TREVELLIAN, Odile   Born 03/11/1961   Hosp# HG-448102")
        p.text(40, 72, "Specimen drawn 18/05/2026 07:40 (latest)")
        for x0, panel, rows in ((40, "CHEMISTRY", _CHEM), (420, "HAEMATOLOGY", _HAEM)):
            p.text(x0, 100, panel, 10)
            p.text(x0, 116, "Test")
            for i, d in enumerate(("18/05/26", "11/05/26", "02/05/26")):
                p.text(x0 + 110 + 70 * i, 116, d)
            p.text(x0 + 110, 128, "Result (units in brackets)", 8)
            for r, (name, values, unit) in enumerate(rows):
                y = 146 + 16 * r
                p.text(x0, y, f"{name} ({unit})")
                for i, v in enumerate(values):
                    p.text(x0 + 110 + 70 * i, y, v)
        p.text(40, 300, "Key: ▲ above reference interval   ▼ below reference interval   ‼ critical, phoned to ward")
    return _pdf(draw)


def _two_panel_truth() -> tuple[PrintedResult, ...]:
    return tuple(PrintedResult(name, v.split()[0]) for name, values, _ in _CHEM + _HAEM for v in values)


# --------------------------------------------------------------------------- 2: a grid with unusual headers

_GRID = [("Ferritin", "9", "ug/L", "15 - 200", "LOW"), ("Transferrin saturation", "11", "%", "20 - 50", "LOW"),
         ("Vitamin B12", "412", "pmol/L", "140 - 700", ""), ("Folate (serum)", "3.1", "nmol/L", "> 7.0", "LOW"),
         ("Reticulocytes", "0.6", "%", "0.5 - 2.5", "")]


def _unusual_grid() -> bytes:
    def draw(doc: pymupdf.Document) -> None:
        p = _Page(doc)
        p.text(40, 40, "Westmere Community Clinic - Iron studies", 12)
        p.text(40, 58, "Client: Bramley-Oduya, Pim    D.O.B. 1990-02-17    UR 5520193")
        p.text(40, 84, "Investigation")
        p.text(220, 84, "Today")
        p.text(290, 84, "Measure")
        p.text(360, 84, "Expected")
        p.text(460, 84, "Comment")
        for r, (name, value, unit, ref, note) in enumerate(_GRID):
            y = 102 + 15 * r
            p.text(40, y, name)
            p.text(220, y, value)
            p.text(290, y, unit)
            p.text(360, y, ref)
            p.text(460, y, note)
        p.text(40, 200, "Validated by: K. Aleksandrov, senior scientist")
    return _pdf(draw)


# --------------------------------------------------------------------------- 3: results in sentences

def _prose_results() -> bytes:
    def draw(doc: pymupdf.Document) -> None:
        p = _Page(doc)
        lines = ["Dear Dr Halloran,", "",
                 "Thank you for seeing Mr Quist in the renal clinic on 4 June 2026.",
                 "His potassium came back at 5.9 mmol/L this morning, up from 5.1 mmol/L last month.",
                 "The eGFR has fallen to 38 mL/min/1.73m2 and his HbA1c is 8.4%.",
                 "We would aim for a potassium below 5.5 mmol/L and an HbA1c under 7%.",
                 "He takes ramipril 10 mg once daily and metformin 500 mg twice daily.",
                 "Please call 0161 555 0192 with any questions.", "", "Yours sincerely,", "Dr L. Venn"]
        for i, line in enumerate(lines):
            p.text(50, 60 + 16 * i, line, 10.5)
    return _pdf(draw)


# --------------------------------------------------------------------------- 4: numbers, but no result

def _no_results_page() -> bytes:
    def draw(doc: pymupdf.Document) -> None:
        p = _Page(doc)
        lines = ["Brackenfield Medical Practice", "Unit 4, 221 Mill Lane, Suite 300, Brackenfield BF2 7QT",
                 "Tel (020) 7946 0321   Fax (020) 7946 0399", "",
                 "Patient: Ysolde Marchetti-Graham    DOB: 14/09/1972    NHS No: 943 476 5919",
                 "Appointment: Tuesday 16 June 2026 at 10:30, Room 12", "",
                 "Current medicines:", "Atorvastatin 20 mg at night", "Levothyroxine 75 micrograms each morning",
                 "Vitamin D 1000 units daily", "",
                 "Targets agreed: LDL below 2.0 mmol/L, blood pressure under 140/90.",
                 "Reference intervals used by our laboratory: sodium 135-145 mmol/L, potassium 3.5-5.3 mmol/L.",
                 "Age 53. Seen 3 times since 2019.", "", "Page 1 of 1   Printed 05/06/2026 09:14"]
        for i, line in enumerate(lines):
            p.text(50, 60 + 15 * i, line, 10)
    return _pdf(draw)


# --------------------------------------------------------------------------- 5: a Word letter, 6: a vitals sheet

def _docx_letter() -> bytes:
    from docx import Document

    doc = Document()
    for text in ["Saltmarsh Medical Centre", "Re: Anouk Vellacott, born 22/08/1966",
                 "Dear colleague, I would be grateful for your opinion on Mrs Vellacott's anaemia.",
                 "Her haemoglobin was 94 g/L on 2 May with a ferritin of 6 ug/L; the MCV was 71 fL.",
                 "She takes ferrous fumarate 210 mg twice daily.", "Kind regards, Dr P. Ashdown"]:
        doc.add_paragraph(text)
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def _vitals_workbook() -> bytes:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "Patient"
    ws.append(["Name", "Odile Trevellian"])
    ws.append(["Date of birth", "1961-11-03"])
    obs = wb.create_sheet("Observations")
    obs.append(["Observation", "Reading", "Unit", "Taken"])
    obs.append(["Blood pressure", "152/94", "mmHg", "2026-05-18"])
    obs.append(["Pulse", 112, "bpm", "2026-05-18"])
    obs.append(["Temperature", 38.4, "°C", "2026-05-18"])
    obs.append(["Oxygen saturation", 93, "%", "2026-05-18"])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


# --------------------------------------------------------------------------- 7, 8: tests as column headers

# One row per date, one column per test: the analyte is the header, never on the row.
_RENAL = [("2026-04-02", "129", "6.1", "14.2", "231"), ("2026-04-09", "133", "5.4", "11.0", "188"),
          ("2026-04-16", "136", "4.7", "8.9", "152")]


def _tests_as_columns_workbook() -> bytes:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "Renal clinic"
    ws.append(["Patient", "Odile Trevellian"])
    ws.append(["Born", "1961-11-03"])
    ws.append([])
    ws.append(["Sample date", "Na", "K", "Urea", "Creat", "Note"])
    for i, row in enumerate(_RENAL):
        ws.append([*row, "fasting" if i == 0 else None])
    # Below, a table of numbers that are not results: counts, dates, a phone and a code.
    ws.append([])
    ws.append(["Supply", "In stock", "Reorder at", "Checked", "Supplier tel", "Item code"])
    ws.append(["Glucose meter strips", 240, 100, "2026-04-01", "(0131) 496 0552", "40017723"])
    ws.append(["Sodium chloride 0.9% 10 mL flushes", 36, 50, "2026-04-01", "(0131) 496 0552", "40017731"])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _tests_as_columns_letter() -> bytes:
    from docx import Document

    doc = Document()
    doc.add_paragraph("Larkfield Surgery")
    doc.add_paragraph("Re: Anouk Vellacott, born 22/08/1966")
    doc.add_paragraph("Dear colleague, her blood counts since March are below.")
    table = doc.add_table(rows=0, cols=4)
    for cells in (["Taken", "Hb (g/L)", "Ferritin", "MCV"], ["04/03/2026", "97", "5", "72"],
                  ["01/04/2026", "103", "11", "75"]):
        for cell, text in zip(table.add_row().cells, cells):
            cell.text = text
    meds = doc.add_table(rows=0, cols=3)
    for cells in (["Medicine", "Dose", "Since"], ["Ferrous fumarate", "210 mg", "2026"],
                  ["Omeprazole", "20 mg", "03/2025"]):
        for cell, text in zip(meds.add_row().cells, cells):
            cell.text = text
    doc.add_paragraph("Kind regards, Dr P. Ashdown")
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


LAYOUTS: dict[str, Layout] = {layout.name: layout for layout in [
    Layout("two-panel cumulative sheet", "lab_pdf", _two_panel_cumulative, _two_panel_truth()),
    Layout("grid with unusual headers", "lab_pdf", _unusual_grid,
           tuple(PrintedResult(name, value) for name, value, *_ in _GRID)),
    Layout("results in sentences", "lab_pdf", _prose_results,
           (PrintedResult("potassium", "5.9"), PrintedResult("potassium", "5.1"), PrintedResult("eGFR", "38"),
            PrintedResult("HbA1c", "8.4%"))),
    Layout("numbers but no result", "lab_pdf", _no_results_page, ()),
    Layout("letter in Word with results", "referral_docx", _docx_letter,
           (PrintedResult("haemoglobin", "94"), PrintedResult("ferritin", "6"), PrintedResult("MCV", "71"))),
    Layout("workbook sheet of vital signs", "clinical_workbook", _vitals_workbook,
           (PrintedResult("Blood pressure", "152/94"), PrintedResult("Pulse", "112"),
            PrintedResult("Temperature", "38.4"), PrintedResult("Oxygen saturation", "93"))),
    Layout("workbook with a column per test", "clinical_workbook", _tests_as_columns_workbook,
           tuple(PrintedResult(test, value) for row in _RENAL
                 for test, value in zip(("Na", "K", "Urea", "Creat"), row[1:]))),
    Layout("Word letter with a column per test", "referral_docx", _tests_as_columns_letter,
           tuple(PrintedResult(test, value) for row in (("97", "5", "72"), ("103", "11", "75"))
                 for test, value in zip(("Hb", "Ferritin", "MCV"), row))),
]}
