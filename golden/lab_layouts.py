"""Lab report layouts: each draws a LabCase as a visibly different PDF (fonts, column
order, where units and flags sit, line-based vs tabular, one or two pages)."""

from __future__ import annotations

from typing import Callable

from golden.drawing import (Canvas, day_mon_year, day_month_year, first_last, last_first, long_date, mon_day_year,
                            us_date)
from golden.ground_truth import LabCase


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
