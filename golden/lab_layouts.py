"""Lab report layouts: each draws a LabCase as a visibly different PDF (fonts, column
order, where units and flags sit, line-based vs tabular, one or two pages)."""

from __future__ import annotations

from datetime import date
from typing import Callable

import pymupdf

from golden.drawing import (Canvas, day_mon_year, day_month_year, first_last, last_first, long_date, mon_day_year,
                            us_date)
from golden.ground_truth import ExpectedLab, LabCase


def _lab_classic(case: LabCase) -> bytes:
    """Letter, Helvetica: 5 columns Test | Result | Flag | Units | Reference Range."""
    c = Canvas(font="helv", size=9.5)
    p = case.patient
    c.text(50, 52, case.lab_name, "hebo", 15)
    c.text(50, 66, "1200 Orchard Parkway, Suite 300, Fairview, OR 97024   Tel (503) 555-0142", size=8)
    c.text(50, 96, f"Patient: {last_first(p)}")
    c.text(340, 96, f"Collected: {us_date(case.collection_date)} 08:15")
    c.text(50, 110, f"DOB: {us_date(p.dob)}")
    c.text(340, 110, f"Received: {us_date(case.collection_date)} 11:02")
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
    c = Canvas(width=595, height=842, font="tiro", size=10)
    p = case.patient
    c.ctext(50, case.lab_name, "tibo", 14)
    c.ctext(64, "Clinical Reference Laboratory Report", size=9)
    c.text(40, 96, f"Patient Name: {first_last(p)}")
    c.text(320, 96, f"Date of Birth: {long_date(p.dob)}")
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
    c = Canvas(font="helv", size=8.5)
    p = case.patient
    c.text(45, 48, case.lab_name.upper(), "hebo", 12)
    c.text(400, 48, f"Date Collected: {day_month_year(case.collection_date)}")
    c.text(400, 60, "Date Reported: 24 July 2026")
    c.text(45, 80, f"Name: {first_last(p)}")
    c.text(45, 92, f"Birth Date: {day_mon_year(p.dob)}")
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
    c = Canvas(font="cour", size=9.5)
    p = case.patient
    c.text(50, 50, case.lab_name.upper(), "cobo", 11)
    c.text(50, 76, f"PATIENT: {last_first(p)}")
    c.text(360, 76, f"CHART #: {p.mrn}")
    c.text(50, 89, f"DOB: {us_date(p.dob, two_digit_year=True)}")
    c.text(360, 89, f"SEX: {p.sex}")
    c.text(50, 102, f"Specimen collected: {mon_day_year(case.collection_date)} 0815")
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
    c = Canvas(font="helv", size=9)
    p = case.patient
    pages = 2
    cols = (("Component", 50, "l"), ("Value", 290, "r"), ("Flag", 305, "l"), ("Ref Range", 350, "l"),
            ("Units", 440, "l"), ("Lab", 530, "l"))

    def page_frame(n: int) -> float:
        c.text(50, 46, case.lab_name, "hebo", 13)
        c.text(50, 74, f"Patient Name: {last_first(p)}")
        c.text(300, 74, f"Birth Date: {p.dob}")
        c.text(50, 87, f"Medical Record #: {p.mrn}")
        c.text(300, 87, f"Collection Date: {us_date(case.collection_date)}")
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
    c = Canvas(width=792, height=612, font="cour", size=9)
    p = case.patient
    c.text(40, 40, f"{case.lab_name} - Patient Results Summary", "cobo", 12)
    c.text(40, 62, f"Patient: {p.first} {p.last}")
    c.text(300, 62, f"DOB: {us_date(p.dob)}")
    c.text(520, 62, f"MRN: {p.mrn}")
    c.text(40, 75, f"Date Collected: {us_date(case.collection_date)}")
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


# --------------------------------------------------------------------------- layouts written after the
# geometry rules of issue 23 (panels, dated columns, two-row headers, flag keys): each a
# check of the rules' generality, never a template they were fitted to.


def _unicode_font(c: Canvas) -> None:
    """Embed a font that has the arrows and signs (PyMuPDF's built-in Droid Sans
    Fallback, so the PDF is the same on every machine) under the name "uni"."""
    c.page.insert_font(fontname="uni", fontbuffer=pymupdf.Font("cjk").buffer)


def _by_test(case: LabCase, rows: tuple[ExpectedLab, ...]) -> dict[str, dict[str, ExpectedLab]]:
    """A cumulative panel's results as test -> collection date -> result, in print order."""
    out: dict[str, dict[str, ExpectedLab]] = {}
    for r in rows:
        out.setdefault(r.test_name, {})[case.date_of(r)] = r
    return out


def _dates(case: LabCase, rows: tuple[ExpectedLab, ...], newest_first: bool) -> list[str]:
    """The collection dates a cumulative layout prints as columns (a result without a
    date of its own was collected on the case's date)."""
    return sorted({case.date_of(r) for r in rows}, reverse=newest_first)


def _inline_sentence(case: LabCase) -> str:
    """ "HbA1c 7.9% on 03/02 and 8.4% on 06/01." from the case's inline results."""
    parts = []
    for r in case.inline:
        d = date.fromisoformat(r.collection_date or case.collection_date)
        glue = "" if r.unit == "%" else " "
        parts.append(f"{r.value}{glue}{r.unit} on {d.month:02d}/{d.day:02d}".replace("  ", " "))
    return f"{case.inline[0].test_name} " + " and ".join(parts) + "."


def _flagged(r: ExpectedLab, sep: str = " ") -> str:
    return f"{r.value}{sep}{r.printed_flag}" if r.printed_flag else r.value


def _lab_two_panel(case: LabCase) -> bytes:
    """Letter, small Helvetica: two panels side by side on the same rows, each with
    its own header Test | Result | Flag | Units | Ref Range; more panels continue
    below, two by two."""
    c = Canvas(font="helv", size=8)
    p = case.patient
    c.text(40, 46, case.lab_name, "hebo", 13)
    c.text(40, 70, f"Patient: {last_first(p)}")
    c.text(230, 70, f"DOB: {us_date(p.dob)}")
    c.text(380, 70, f"MRN: {p.mrn}")
    c.text(40, 82, f"Collected: {us_date(case.collection_date)} 07:55")
    c.text(230, 82, "Reported: 03/04/2026")
    c.rule(90, 36, 576)
    y = 108
    panels = list(case.panels)
    if len(panels) == 1:  # one panel: its second half sits beside the first
        title, rows = panels[0]
        half = (len(rows) + 1) // 2
        panels = [(title, rows[:half]), (f"{title} (cont.)", rows[half:])]
    for k in range(0, len(panels), 2):
        pair = panels[k:k + 2]
        for j, (title, _) in enumerate(pair):
            c.text(40 + 280 * j, y, title.upper(), "hebo", 8.5)
        for j, _ in enumerate(pair):
            for dx, label in ((0, "Test"), (88, "Result"), (122, "Flag"), (160, "Units"), (222, "Ref Range")):
                c.text(40 + 280 * j + dx, y + 14, label, "hebo")
        y += 28
        for i in range(max(len(rows) for _, rows in pair)):
            for j, (_, rows) in enumerate(pair):
                if i < len(rows):
                    r, x = rows[i], 40 + 280 * j
                    c.text(x, y, r.test_name)
                    c.text(x + 88, y, r.value)
                    c.text(x + 124, y, r.printed_flag)
                    c.text(x + 160, y, r.unit)
                    c.text(x + 222, y, r.reference_range)
            y += 12
        y += 14
    c.text(40, 760, "End of report", size=7)
    return c.tobytes()


def _lab_cumulative_newest_first(case: LabCase) -> bytes:
    """A4, Times: a cumulative report, one value column per collection date (newest
    on the left, date in the column header, values right-aligned under it), then
    Units and Reference Interval; a flag letter follows the value."""
    c = Canvas(width=595, height=842, font="tiro", size=9.5)
    p = case.patient
    c.ctext(48, f"{case.lab_name} - Cumulative Report", "tibo", 13)
    c.text(40, 78, f"Patient Name: {first_last(p)}")
    c.text(330, 78, f"Date of Birth: {long_date(p.dob)}")
    c.text(40, 91, f"Patient ID: {p.mrn}")
    c.text(330, 91, "Report printed: 04/01/2026")
    c.rule(100, 36, 559)
    dates = _dates(case, tuple(case.results), newest_first=True)
    xs = [240 + 72 * i for i in range(len(dates))]
    c.text(40, 116, "Analyte", "tibo")
    for x, d in zip(xs, dates):
        c.rtext(x, 116, us_date(d), "tibo")
    c.text(xs[-1] + 30, 116, "Units", "tibo")
    c.text(xs[-1] + 95, 116, "Reference Interval", "tibo")
    c.rule(121, 36, 559)
    y = 138
    for panel, rows in case.panels:
        c.text(40, y, panel, "tibo")
        y += 14
        for test, by_date in _by_test(case, rows).items():
            any_r = next(iter(by_date.values()))
            c.text(48, y, test)
            for x, d in zip(xs, dates):
                if d in by_date:
                    c.rtext(x + 10, y, _flagged(by_date[d]))
            c.text(xs[-1] + 30, y, any_r.unit)
            c.text(xs[-1] + 95, y, any_r.reference_range)
            y += 14
        y += 6
    c.ctext(810, "Page 1 of 1", size=8)
    return c.tobytes()


def _lab_cumulative_oldest_first(case: LabCase) -> bytes:
    """Landscape letter, Courier: "Results" spans the dated columns; the dates
    (oldest first) are printed on a second header row under it; Units and Range."""
    c = Canvas(width=792, height=612, font="cour", size=8.5)
    p = case.patient
    c.text(36, 40, f"{case.lab_name.upper()} -- RESULT TREND", "cobo", 11)
    c.text(36, 60, f"NAME: {last_first(p)}")
    c.text(330, 60, f"DOB: {us_date(p.dob)}")
    c.text(560, 60, f"ACCT #: {p.mrn}")
    c.rule(70, 36, 756)
    dates = _dates(case, tuple(case.results), newest_first=False)
    xs = [250 + 95 * i for i in range(len(dates))]
    c.text(36, 86, "TEST", "cobo")
    c.text(xs[0] + (xs[-1] - xs[0]) / 2, 86, "RESULTS", "cobo")
    units_x = xs[-1] + 100
    c.text(units_x, 86, "UNITS", "cobo")
    c.text(units_x + 110, 86, "RANGE", "cobo")
    for x, d in zip(xs, dates):
        c.text(x, 97, day_mon_year(d), "cobo")
    c.rule(102, 36, 756)
    y = 116
    for panel, rows in case.panels:
        c.text(36, y, f"** {panel.upper()} **")
        y += 11
        for test, by_date in _by_test(case, rows).items():
            any_r = next(iter(by_date.values()))
            c.text(44, y, test)
            for x, d in zip(xs, dates):
                c.text(x, y, _flagged(by_date[d]) if d in by_date else "---")
            c.text(units_x, y, any_r.unit)
            c.text(units_x + 110, y, any_r.reference_range)
            y += 11
        y += 6
    c.text(36, 590, "--- indicates not measured on that date.", size=7.5)
    return c.tobytes()


def _lab_landscape_status(case: LabCase) -> bytes:
    """Landscape letter, Helvetica: Code | Test Description | Result | Flag | Units |
    Reference Range | Status, the code column left of the test name."""
    c = Canvas(width=792, height=612, font="helv", size=9)
    p = case.patient
    c.text(40, 42, case.lab_name, "hebo", 14)
    c.text(520, 42, "Final Report", "heit", 10)
    c.text(40, 66, f"Patient Name: {first_last(p)}")
    c.text(300, 66, f"Birth Date: {us_date(p.dob)}")
    c.text(520, 66, f"Medical Record #: {p.mrn}")
    c.text(40, 79, f"Collection Date: {us_date(case.collection_date)}")
    c.rule(88, 36, 756)
    cols = ((40, "Code"), (110, "Test Description"), (330, "Result"), (400, "Flag"), (450, "Units"),
            (560, "Reference Range"), (690, "Status"))
    for x, label in cols:
        c.text(x, 102, label, "hebo")
    c.rule(107, 36, 756)
    y = 122
    n = 0
    for panel, rows in case.panels:
        c.text(110, y, panel, "hebo")
        y += 13
        for r in rows:
            n += 1
            c.text(40, y, f"{1000 + 37 * n}-{n % 10}", size=8)
            c.text(110, y, r.test_name)
            c.text(330, y, r.value)
            c.text(402, y, r.printed_flag)
            c.text(450, y, r.unit)
            c.text(560, y, r.reference_range)
            c.text(690, y, "Final")
            y += 13
        y += 5
    c.text(40, 585, "Status Final: result verified and released.", size=7.5)
    return c.tobytes()


def _lab_european(case: LabCase) -> bytes:
    """A4, Times: Parameter | Result | Flag | Unit | Reference Interval, decimal commas
    as the case prints them ("4,5", "3,5 - 5,1"), day-month-year dates."""
    c = Canvas(width=595, height=842, font="tiro", size=10)
    p = case.patient
    c.text(50, 50, case.lab_name, "tibo", 14)
    c.text(50, 64, "Laboratoriumgeneeskunde / Laboratory Medicine", "tiit", 9)
    c.text(50, 92, f"Name: {p.last}, {p.first}")
    c.text(320, 92, f"Date of Birth: {day_mon_year(p.dob)}")
    c.text(50, 106, f"Patient ID: {p.mrn}")
    c.text(320, 106, f"Date of Service: {day_mon_year(case.collection_date)}")
    c.rule(116, 45, 550)
    for x, label in ((50, "Parameter"), (220, "Result"), (280, "Flag"), (320, "Unit"), (410, "Reference Interval")):
        c.text(x, 131, label, "tibo")
    c.rule(136, 45, 550)
    y = 152
    for panel, rows in case.panels:
        c.text(50, y, panel, "tibo")
        y += 15
        for r in rows:
            c.text(58, y, r.test_name)
            c.rtext(250, y, r.value)
            c.text(282, y, r.printed_flag)
            c.text(320, y, r.unit)
            c.text(410, y, r.reference_range)
            y += 15
        y += 6
    c.ctext(812, "1/1", size=8)
    return c.tobytes()


def _lab_symbol_flags(case: LabCase) -> bytes:
    """Letter, Helvetica with a Unicode font for the signs: flags only as signs after
    the value (the case's printed flags: arrows, triangles), explained by a key line
    at the foot of the table."""
    c = Canvas(font="helv", size=9)
    _unicode_font(c)
    p = case.patient
    c.text(60, 50, case.lab_name, "hebo", 12)
    c.text(60, 76, f"Patient: {first_last(p)}")
    c.text(330, 76, f"DOB: {us_date(p.dob)}")
    c.text(60, 89, f"Chart #: {p.mrn}")
    c.text(330, 89, f"Drawn: {us_date(case.collection_date)}")
    c.rule(98, 55, 560)
    for x, label in ((60, "Test"), (250, "Result"), (330, "Units"), (420, "Reference Range")):
        c.text(x, 112, label, "hebo")
    c.rule(117, 55, 560)
    y = 132
    for panel, rows in case.panels:
        c.text(60, y, panel, "hebo")
        y += 13
        for r in rows:
            c.text(68, y, r.test_name)
            c.text(250, y, r.value)
            if r.printed_flag:
                c.text(252 + pymupdf.get_text_length(r.value, fontname="helv", fontsize=9) + 3, y,
                       r.printed_flag, "uni")
            c.text(330, y, r.unit)
            c.text(420, y, r.reference_range)
            y += 13
        y += 5
    # The key explains the signs the page uses; letter flags ("H") need no key.
    meaning = {"\u25b2": "high", "\u25bc": "low", "\u203c": "critical", "\u2191": "high", "\u2193": "low",
               "\u2191\u2191": "critical high", "\u2193\u2193": "critical low", "*": "abnormal"}
    signs = sorted({r.printed_flag for r in case.results if r.printed_flag in meaning})
    if signs:
        c.text(60, y + 10, "Key:  " + "   ".join(f"{s} {meaning[s]}" for s in signs), "uni", 8)
    return c.tobytes()


def _lab_word_flags(case: LabCase) -> bytes:
    """Letter, Courier capitals: TEST NAME | RESULT | FLAG | UNITS | REFERENCE with
    flags written as words, as the case prints them ("HIGH", "Critical Low")."""
    c = Canvas(font="cour", size=8.5)
    p = case.patient
    c.text(44, 44, case.lab_name.upper(), "cobo", 10)
    c.text(44, 64, f"PATIENT NAME: {last_first(p)}")
    c.text(330, 64, f"DOB: {us_date(p.dob)}")
    c.text(44, 75, f"MRN: {p.mrn}")
    c.text(330, 75, f"COLLECTED: {us_date(case.collection_date)} 0640")
    c.text(44, 86, "=" * 88)
    for x, label in ((44, "TEST NAME"), (220, "RESULT"), (290, "FLAG"), (390, "UNITS"), (470, "REFERENCE")):
        c.text(x, 100, label, "cobo")
    c.text(44, 110, "=" * 88)
    y = 124
    for panel, rows in case.panels:
        c.text(44, y, f"[{panel.upper()}]")
        y += 11
        for r in rows:
            c.text(52, y, r.test_name.upper())
            c.text(220, y, r.value)
            c.text(290, y, r.printed_flag)
            c.text(390, y, r.unit)
            c.text(470, y, r.reference_range)
            y += 11
        y += 6
    return c.tobytes()


def _lab_flag_left(case: LabCase) -> bytes:
    """Letter, Helvetica oblique header: Flag | Test | Result | Units | Reference Range,
    the flag column at the far left."""
    c = Canvas(font="helv", size=9.5)
    p = case.patient
    c.text(72, 54, case.lab_name, "hebo", 14)
    c.text(72, 80, f"Name: {first_last(p)}")
    c.text(300, 80, f"Birth Date: {day_mon_year(p.dob)}")
    c.text(72, 94, f"Acct #: {p.mrn}")
    c.text(300, 94, f"Date Collected: {day_month_year(case.collection_date)}")
    c.rule(104, 66, 546)
    for x, label in ((72, "Flag"), (110, "Test"), (290, "Result"), (350, "Units"), (440, "Reference Range")):
        c.text(x, 119, label, "heit")
    c.rule(124, 66, 546)
    y = 140
    for panel, rows in case.panels:
        c.text(110, y, panel, "hebo")
        y += 14
        for r in rows:
            c.text(74, y, r.printed_flag, "hebo")
            c.text(110, y, r.test_name)
            c.text(290, y, r.value)
            c.text(350, y, r.unit)
            c.text(440, y, r.reference_range)
            y += 14
        y += 6
    return c.tobytes()


def _lab_units_after_value(case: LabCase) -> bytes:
    """Letter, Times: Investigation | Result | Normal Range, no units column: the unit
    (and a flag letter) follow the value in the result cell."""
    c = Canvas(font="tiro", size=10.5)
    p = case.patient
    c.ctext(50, case.lab_name, "tibo", 15)
    c.text(60, 84, f"Patient: {first_last(p)}")
    c.text(60, 98, f"Date of Birth: {us_date(p.dob)}")
    c.text(330, 84, f"MRN: {p.mrn}")
    c.text(330, 98, f"Collection Date: {us_date(case.collection_date)}")
    c.rule(108, 55, 557)
    for x, label in ((60, "Investigation"), (260, "Result"), (420, "Normal Range")):
        c.text(x, 124, label, "tibo")
    y = 144
    for panel, rows in case.panels:
        c.text(60, y, panel, "tiit")
        y += 16
        for r in rows:
            c.text(70, y, r.test_name)
            c.text(260, y, " ".join(s for s in (r.value, r.unit, r.printed_flag) if s))
            c.text(420, y, r.reference_range)
            y += 16
        y += 6
    return c.tobytes()


def _lab_units_header_row(case: LabCase) -> bytes:
    """Letter, Helvetica: each panel its own header Test | Result | Flag | Reference
    with the panel's unit printed once, on a row under "Result", when all its results
    share it; a panel of mixed units prints each unit after its value."""
    c = Canvas(font="helv", size=9)
    p = case.patient
    c.text(48, 48, case.lab_name, "hebo", 13)
    c.text(48, 72, f"Patient: {last_first(p)}")
    c.text(300, 72, f"DOB: {us_date(p.dob)}")
    c.text(48, 85, f"MRN: {p.mrn}")
    c.text(300, 85, f"Collected: {us_date(case.collection_date)}")
    y = 112
    for panel, rows in case.panels:
        c.text(48, y, panel.upper(), "hebo", 10)
        y += 16
        for x, label in ((48, "Test"), (230, "Result"), (300, "Flag"), (360, "Reference")):
            c.text(x, y, label, "hebo")
        shared = len({r.unit for r in rows}) == 1
        if shared:
            c.text(230, y + 11, rows[0].unit, "heit", 8)
        c.rule(y + 15, 44, 520)
        y += 28
        for r in rows:
            c.text(56, y, r.test_name)
            c.text(230, y, r.value if shared else f"{r.value} {r.unit}".strip())
            c.text(302, y, r.printed_flag)
            c.text(360, y, r.reference_range)
            y += 13
        y += 14
    return c.tobytes()


def _lab_two_row_headers(case: LabCase) -> bytes:
    """A4, Helvetica: every header label stacked over two rows ("Test" / "Name",
    "Unit of" / "Measure", "Reference" / "Range", "Abnormal" / "Flag")."""
    c = Canvas(width=595, height=842, font="helv", size=9)
    p = case.patient
    c.text(40, 50, case.lab_name, "hebo", 12)
    c.text(40, 74, f"Patient Name: {first_last(p)}")
    c.text(300, 74, f"DOB: {us_date(p.dob)}")
    c.text(40, 87, f"Patient ID: {p.mrn}")
    c.text(300, 87, f"Specimen collected: {us_date(case.collection_date)}")
    c.rule(96, 36, 559)
    cols = ((40, "Test", "Name"), (230, "Result", ""), (290, "Unit of", "Measure"), (380, "Reference", "Range"),
            (480, "Abnormal", "Flag"))
    for x, top, bottom in cols:
        c.text(x, 110, top, "hebo")
        c.text(x, 121, bottom, "hebo")
    c.rule(126, 36, 559)
    y = 142
    for panel, rows in case.panels:
        c.text(40, y, panel, "hebo")
        y += 13
        for r in rows:
            c.text(48, y, r.test_name)
            c.text(230, y, r.value)
            c.text(290, y, r.unit)
            c.text(380, y, r.reference_range)
            c.text(482, y, r.printed_flag)
            y += 13
        y += 5
    return c.tobytes()


def _lab_prose_inline(case: LabCase) -> bytes:
    """Letter, Times: a short results table, then a paragraph that states one test's
    earlier and later values inline in one sentence."""
    c = Canvas(font="tiro", size=10.5)
    p = case.patient
    c.text(54, 54, case.lab_name, "tibo", 13)
    c.text(54, 80, f"Patient: {first_last(p)}    DOB: {us_date(p.dob)}    MRN: {p.mrn}")
    c.text(54, 94, f"Collected: {us_date(case.collection_date)}")
    for x, label in ((54, "Test"), (240, "Result"), (300, "Flag"), (340, "Units"), (420, "Reference Range")):
        c.text(x, 120, label, "tibo")
    c.rule(125, 50, 560)
    y = 140
    for _, rows in case.panels:
        for r in rows:
            c.text(54, y, r.test_name)
            c.text(240, y, r.value)
            c.text(302, y, r.printed_flag)
            c.text(340, y, r.unit)
            c.text(420, y, r.reference_range)
            y += 14
    y += 14
    if case.inline:
        c.text(54, y, "Clinical note from the laboratory:", "tiit")
        c.text(54, y + 15, f"Glycaemic control has worsened: {_inline_sentence(case)}")
        c.text(54, y + 30, "Please review at the next appointment.")
    return c.tobytes()


def _lab_bracket_ranges(case: LabCase) -> bytes:
    """Letter, Courier: Test | Result | Units | Reference with the reference range in
    square brackets and the flag in round brackets after the value ("6.6 (H)")."""
    c = Canvas(font="cour", size=9)
    p = case.patient
    c.text(60, 50, case.lab_name, "cobo", 11)
    c.text(60, 72, f"Patient: {last_first(p)}")
    c.text(350, 72, f"DOB: {us_date(p.dob)}")
    c.text(60, 84, f"MRN: {p.mrn}")
    c.text(350, 84, f"Collected: {us_date(case.collection_date)}")
    for x, label in ((60, "Test"), (250, "Result"), (340, "Units"), (440, "Reference")):
        c.text(x, 108, label, "cobo")
    c.text(60, 116, "-" * 82)
    y = 130
    for panel, rows in case.panels:
        c.text(60, y, f"{panel}:", "cobo")
        y += 12
        for r in rows:
            c.text(66, y, r.test_name)
            c.text(250, y, f"{r.value} ({r.printed_flag})" if r.printed_flag else r.value)
            c.text(340, y, r.unit)
            c.text(440, y, f"[{r.reference_range}]" if r.reference_range else "")
            y += 12
        y += 6
    return c.tobytes()


def _lab_labelled_parts(case: LabCase) -> bytes:
    """A4, Helvetica: no columns. Each test's name alone in bold, and under it its
    labelled parts, "Result: 6.2 mmol/L   Reference: 3.5 - 5.3 mmol/L   ** H **", the
    unit printed after the range as well, a flag that is no word as "Flag: *"; panel
    names as headings (issue 23)."""
    c = Canvas(width=595, height=842)
    p = case.patient
    c.text(50, 56, case.lab_name, "hebo", 13)
    c.text(50, 80, f"Patient: {last_first(p)}")
    c.text(320, 80, f"DOB: {day_mon_year(p.dob)}")
    c.text(50, 94, f"Hospital No: {p.mrn}")
    c.text(320, 94, f"Sample collected: {day_mon_year(case.collection_date)}")
    y = 126
    for panel, rows in case.panels:
        c.text(50, y, panel.upper(), "hebo", 11)
        y += 20
        for r in rows:
            if y > 790:  # a result's two rows stay together on the next page
                c.new_page()
                y = 60
            c.text(50, y, r.test_name, "hebo")
            y += 13
            c.text(70, y, f"Result: {r.value} {r.unit}".rstrip())
            if r.reference_range:
                c.text(250, y, f"Reference: {r.reference_range} {r.unit}".rstrip())
            if r.printed_flag.isalpha():
                c.text(450, y, f"** {r.printed_flag} **")  # a word flag, emphasised
            elif r.printed_flag:
                c.text(450, y, f"Flag: {r.printed_flag}")
            y += 20
        y += 6
    return c.tobytes()


def _lab_units_in_name(case: LabCase) -> bytes:
    """A4, Helvetica: Analyte (units) | Result | Flag | Ref. interval. Each name prints its
    unit in brackets ("Sodium (mmol/L)"); there is no units column (issue 23)."""
    c = Canvas(width=595, height=842, size=9.5)
    p = case.patient
    c.text(40, 50, case.lab_name, "hebo", 12)
    c.text(40, 72, f"Name: {last_first(p)}")
    c.text(330, 72, f"Born: {day_mon_year(p.dob)}")
    c.text(40, 86, f"UR No: {p.mrn}")
    c.text(330, 86, f"Collected: {day_mon_year(case.collection_date)}")
    for x, label in ((40, "Analyte (units)"), (230, "Result"), (300, "Flag"), (350, "Ref. interval")):
        c.text(x, 115, label, "hebo")
    c.rule(119, 40, 555)
    y = 134
    for panel, rows in case.panels:
        c.text(40, y, panel, "heit")
        y += 15
        for r in rows:
            c.text(46, y, f"{r.test_name} ({r.unit})" if r.unit else r.test_name)
            c.text(230, y, r.value)
            c.text(300, y, r.printed_flag)
            c.text(350, y, r.reference_range)
            y += 15
        y += 6
    return c.tobytes()


def _lab_urine_portal(case: LabCase) -> bytes:
    """Letter, Times: a patient-portal print of a urinalysis. Component | Your Value |
    Standard Range | Units | Flag, most values words or dipstick grades ("Pale yellow",
    "++", "Few", "None seen"), counts per high-power field ("/hpf"), and the flag
    spelled out at the far right ("Abnormal")."""
    c = Canvas(font="tiro", size=9.5)
    p = case.patient
    heading = ((48, 46, case.lab_name, "tibo", 13), (48, 62, "Test results - printed from the patient portal", "tiit", 8.5),
               (48, 84, first_last(p)), (250, 84, f"Date of birth {us_date(p.dob)}"), (430, 84, f"MRN {p.mrn}"),
               (48, 97, f"Specimen collected {us_date(case.collection_date)} 7:52 AM"))
    for x, y, text, *style in heading:
        c.text(x, y, text, *style)
    c.rule(105, 46, 566)
    columns = {"Component": 48, "Your Value": 220, "Standard Range": 320, "Units": 430, "Flag": 500}
    for label, x in columns.items():
        c.text(x, 120, label, "tibo")
    y = 138
    for panel, rows in case.panels:
        c.text(48, y, panel, "tibo")
        for r in rows:
            y += 15
            cells = (r.test_name, r.value, r.reference_range, r.unit, r.printed_flag)
            for x, text in zip(columns.values(), cells):
                c.text(x + 8 * (x == columns["Component"]), y, text)  # names set in under the panel's
        y += 21
    c.text(48, y + 8, "A result outside the standard range is not always a problem. Talk to your care team.",
           "tiit", 8)
    return c.tobytes()


def _lab_ruled_grid(case: LabCase) -> bytes:
    """Letter, small Helvetica: a ruled grid (a box round every cell), values centred
    in their cells: Test | Result | Units | Reference Range | Flag."""
    c = Canvas(font="helv", size=8)
    p = case.patient
    c.text(50, 50, case.lab_name, "hebo", 12)
    c.text(50, 72, f"Patient: {first_last(p)}")
    c.text(50, 84, f"DOB: {us_date(p.dob)}")
    c.text(260, 72, f"MRN: {p.mrn}")
    c.text(260, 84, f"Collected: {us_date(case.collection_date)}")
    edges = (48, 210, 270, 360, 470, 520)
    labels = ("Test", "Result", "Units", "Reference Range", "Flag")

    def row(y: float, cells: tuple[str, ...], font: str = "helv") -> None:
        for k, text in enumerate(cells):
            x0, x1 = edges[k], edges[k + 1]
            c.box(x0, y - 10, x1, y + 4)
            if k == 0:
                c.text(x0 + 4, y, text, font)
            elif text:
                w = pymupdf.get_text_length(text, fontname=font, fontsize=8)
                c.text((x0 + x1 - w) / 2, y, text, font)

    y = 110
    row(y, labels, "hebo")
    for panel, rows in case.panels:
        y += 14
        c.box(edges[0], y - 10, edges[-1], y + 4)
        c.text(edges[0] + 4, y, panel, "hebo")
        for r in rows:
            y += 14
            row(y, (r.test_name, r.value, r.unit, r.reference_range, r.printed_flag))
    return c.tobytes()


def _lab_two_panel_cumulative(case: LabCase) -> bytes:
    """Letter, Helvetica + a Unicode font: the issue 23 results sheet. Chemistry on the
    left half (its one unit printed on a row under "Result"), haematology on the right
    half as a cumulative table (one column per date), side by side on the same rows;
    flags as signs explained by a key line; identity as "Pt:", "Born", "Hosp#"; the
    collection date as "Specimen drawn:"; two HbA1c results inline in one line."""
    c = Canvas(font="helv", size=8.5)
    _unicode_font(c)
    p = case.patient
    c.text(40, 44, case.lab_name, "hebo", 12)
    c.text(40, 66, f"Pt: {p.last.upper()}, {p.first}")
    c.text(220, 66, f"Born {us_date(p.dob)}")
    c.text(360, 66, f"Hosp# {p.mrn}")
    c.text(40, 79, f"Specimen drawn: {us_date(case.collection_date)} 07:40")
    c.rule(88, 36, 576)
    # The last panel is the cumulative one on the right; the others share the left half.
    panels = list(case.panels) if len(case.panels) > 1 else [*case.panels, ("", ())]
    left_title, left = panels[0][0], tuple(r for _, rows in panels[:-1] for r in rows)
    right_title, right = panels[-1]
    c.text(40, 104, left_title.upper(), "hebo")
    c.text(320, 104, right_title.upper(), "hebo")
    for x, label in ((40, "Test"), (150, "Result"), (220, "Reference")):
        c.text(x, 118, label, "hebo")
    if len({r.unit for r in left}) == 1:
        c.text(150, 128, left[0].unit, "heit", 7.5)
    dates = _dates(case, right, newest_first=True)
    xs = [410 + 50 * i for i in range(len(dates))]
    ux = (xs[-1] if xs else 410) + 55
    if right:
        c.text(320, 118, "Test", "hebo")
        for x, d in zip(xs, dates):
            c.text(x, 118, us_date(d), "hebo", 7.5)
        c.text(ux, 118, "Units", "hebo")
        c.text(ux + 50, 118, "Range", "hebo")
    y = 144
    by_test = list(_by_test(case, right).items())
    for i in range(max(len(left), len(by_test))):
        if i < len(left):
            r = left[i]
            c.text(40, y, r.test_name)
            c.text(150, y, r.value if len({x.unit for x in left}) == 1 else f"{r.value} {r.unit}".strip())
            if r.printed_flag:
                c.text(152 + pymupdf.get_text_length(r.value, fontname="helv", fontsize=8.5) + 2, y,
                       r.printed_flag, "uni")
            c.text(220, y, r.reference_range)
        if i < len(by_test):
            test, by_date = by_test[i]
            any_r = next(iter(by_date.values()))
            c.text(320, y, test)
            for x, d in zip(xs, dates):
                if d in by_date:
                    rr = by_date[d]
                    c.text(x, y, rr.value)
                    if rr.printed_flag:
                        c.text(x + pymupdf.get_text_length(rr.value, fontname="helv", fontsize=8.5) + 2, y,
                               rr.printed_flag, "uni")
            c.text(ux, y, any_r.unit)
            c.text(ux + 50, y, any_r.reference_range)
        y += 13
    c.text(40, y + 12, "\u25b2 high   \u25bc low   \u203c critical", "uni", 8)
    if case.inline:
        c.text(40, y + 30, "Diabetes review:", "hebo")
        c.text(40, y + 43, _inline_sentence(case))
    return c.tobytes()


def _dmy(iso: str, two_digit_year: bool = False) -> str:
    d = date.fromisoformat(iso)
    return f"{d.day:02d}/{d.month:02d}/" + (f"{d.year % 100:02d}" if two_digit_year else f"{d.year}")


def _lab_star_flags_previous(case: LabCase) -> bytes:
    """A4, Helvetica: an Australian pathology report. Identity as "Surname:" / "Given
    names:" / "D.O.B.:" / "UR No.:" with a Medicare number beside; dates day first.
    Test | Result | Units | Ref. Range | Comment, the flag after the value as "*H" or
    "*L" and a key sentence at the foot ("* denotes result outside the reference
    range"); ranges in brackets. The last panel, if its rows carry dates of their own,
    is "PREVIOUS RESULTS": a cumulative table headed only by dates (two-digit years,
    newest first), each row labelled with its test and unit ("Potassium mmol/L")."""
    c = Canvas(width=595, height=842, size=9)
    p = case.patient
    c.text(40, 40, case.lab_name.upper(), "hebo", 13)
    c.rule(60, 40, 555)
    for x, y, label, value in ((40, 76, "Surname:", p.last.upper()), (300, 76, "Given names:", p.first),
                               (40, 90, "D.O.B.:", _dmy(p.dob)), (300, 90, "Sex:", p.sex),
                               (40, 104, "UR No.:", p.mrn), (300, 104, "Medicare:", "4127 80391 2"),
                               (40, 118, "Lab No.:", "26-5530172"),
                               (300, 118, "Collected:", f"{_dmy(case.collection_date)} 08:40")):
        c.text(x, y, label, "hebo")
        c.text(x + 72, y, value)
    c.rule(128, 40, 555)
    panels = list(case.panels)
    previous = panels.pop() if len(panels) > 1 and any(r.collection_date for r in panels[-1][1]) else None
    columns = (40, 190, 290, 370, 470)
    y = 146
    for title, rows in panels:
        c.text(40, y, title.upper(), "hebo", 10)
        y += 15
        for x, label in zip(columns, ("Test", "Result", "Units", "Ref. Range", "Comment")):
            c.text(x, y, label, "hebo", 8.5)
        y += 14
        for r in rows:
            value = f"{r.value} {r.printed_flag}".strip()
            note = "See note" if r.reference_range.startswith("<") else ""
            for x, text in zip(columns, (r.test_name, value, r.unit, f"({r.reference_range})", note)):
                if text:
                    c.text(x, y, text)
            y += 13
        y += 8
    if previous is not None:
        title, rows = previous
        c.text(40, y, title.upper(), "hebo", 10)
        y += 15
        dates = _dates(case, rows, newest_first=True)
        xs = [200 + 80 * i for i in range(len(dates))]
        for x, d in zip(xs, dates):
            c.text(x, y, _dmy(d, two_digit_year=True), "hebo", 8.5)
        y += 13
        for test, by_date in _by_test(case, rows).items():
            c.text(40, y, f"{test} {next(iter(by_date.values())).unit}")
            for x, d in zip(xs, dates):
                if d in by_date:
                    c.text(x, y, by_date[d].value)
            y += 12
        y += 8
    c.text(40, y + 6, "* denotes result outside the reference range.", size=8.5)
    return c.tobytes()


def _lab_flowsheet(case: LabCase) -> bytes:
    """A4 landscape, Helvetica: a renal unit's results trend. One column per test,
    headed by its name ("Na", "Creat"); a row of units and a row of reference ranges
    under the header; then one row per sample date ("01-Dec-2026", oldest first), each
    value with its flag beside it ("6.3 HH"), a cell left empty when the test was not
    done that day. Columns as wide as what they print; tests that do not fit across the
    page go on in another block of columns below, with its own header. A key line at
    the foot says what the flags mean."""
    c = Canvas(width=842, height=595, size=9)
    p = case.patient
    c.text(40, 40, case.lab_name.upper() + " - RESULTS FLOWSHEET", "hebo", 13)
    c.text(40, 58, f"Name: {p.last.upper()}, {p.first}    DOB: {day_mon_year(p.dob)}    Hosp No: {p.mrn}")
    rows = [r for _, panel in case.panels for r in panel]
    by_test = _by_test(case, tuple(rows))
    dates = _dates(case, tuple(rows), newest_first=False)
    first = {t: next(iter(by_date.values())) for t, by_date in by_test.items()}

    def width(t: str) -> float:
        texts = [t, first[t].unit, first[t].reference_range,
                 *(f"{r.value} {r.printed_flag}" for r in by_test[t].values())]
        return max(pymupdf.get_text_length(x, fontname="hebo", fontsize=9) for x in texts) + 18

    blocks: list[list[str]] = [[]]
    used = 150.0
    for t in by_test:
        if blocks[-1] and used + width(t) > 802:
            blocks.append([])
            used = 150.0
        blocks[-1].append(t)
        used += width(t)
    y = 90
    for tests in blocks:
        xs = [40.0]
        for t in tests:
            xs.append(xs[-1] + (110 if len(xs) == 1 else width(tests[len(xs) - 2])))
        for label, cells, font, size in (("Date sampled", tests, "hebo", 9),
                                         ("Units", [first[t].unit for t in tests], "helv", 8),
                                         ("Ref range", [first[t].reference_range for t in tests], "helv", 8)):
            for x, text in zip(xs, [label, *cells]):
                c.text(x, y, text, font, size)
            y += 12
        c.rule(y - 8, 40, 802)
        y += 6
        for d in dates:
            c.text(xs[0], y, day_mon_year(d))
            for x, t in zip(xs[1:], tests):
                if (r := by_test[t].get(d)) is not None:
                    c.text(x, y, f"{r.value} {r.printed_flag}".strip())
            y += 14
        y += 16
    c.text(40, y, "H/L = above/below the reference range; HH/LL = critical, telephoned to the requester.", size=8)
    return c.tobytes()


# Layouts that print one column (or one row) per collection date: a case for them holds each test
# at most once per date (a table with a test twice on one date cannot be drawn so).
CUMULATIVE_LAYOUTS = frozenset({"cumulative_newest_first", "cumulative_oldest_first", "two_panel_cumulative",
                                "flowsheet"})

LAB_LAYOUTS: dict[str, Callable[[LabCase], bytes]] = {
    "classic": _lab_classic,
    "split_range": _lab_split_range,
    "units_in_range": _lab_units_in_range,
    "dotted": _lab_dotted,
    "two_page": _lab_two_page,
    "landscape_courier": _lab_landscape_courier,  # added last: held-out check, extractor unchanged
}

# Issue 23: written after the geometry rules, as checks of them. Kept apart from
# LAB_LAYOUTS, whose six the scanned-lab tolerances (tests/core/ingest/test_scanned.py)
# and the benches are calibrated on; each of these has a golden case of its own.
GEOMETRY_LAB_LAYOUTS: dict[str, Callable[[LabCase], bytes]] = {
    "two_panel": _lab_two_panel,
    "cumulative_newest_first": _lab_cumulative_newest_first,
    "cumulative_oldest_first": _lab_cumulative_oldest_first,
    "landscape_status": _lab_landscape_status,
    "european": _lab_european,
    "symbol_flags": _lab_symbol_flags,
    "word_flags": _lab_word_flags,
    "flag_left": _lab_flag_left,
    "units_after_value": _lab_units_after_value,
    "units_header_row": _lab_units_header_row,
    "two_row_headers": _lab_two_row_headers,
    "prose_inline": _lab_prose_inline,
    "bracket_ranges": _lab_bracket_ranges,
    "ruled_grid": _lab_ruled_grid,
    "two_panel_cumulative": _lab_two_panel_cumulative,
    "labelled_parts": _lab_labelled_parts,
    "units_in_name": _lab_units_in_name,
    "urine_portal": _lab_urine_portal,  # urine words, grades and /hpf counts (issue 23, 2026-12-07)
    "star_flags_previous": _lab_star_flags_previous,  # "*H" flags, a key sentence, previous results (2026-12-07)
    "flowsheet": _lab_flowsheet,  # one column per test, one row per sample date (issue 23, twelfth session)
}


ALL_LAB_LAYOUTS = {**LAB_LAYOUTS, **GEOMETRY_LAB_LAYOUTS}


def render_lab(case: LabCase) -> bytes:
    return ALL_LAB_LAYOUTS[case.layout](case)
