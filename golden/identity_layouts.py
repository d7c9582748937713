"""Lab report layouts that print the patient's identity under abbreviated labels.

Drawn after the identity vocabulary (``extract.values.identity_labels``) and the sweep
for values printed but not read (``extract.unread_identity``) were written, to check
them on a header they were not written against:

* ``abbreviated_identity`` - a cumulative-style header: "Pt: SURNAME, Given", a
  "Born MM/DD/YYYY" line without a colon, "Hosp# ...", an account number, "Specimen
  drawn ...", an accession number and a phone line beside them; then a plain results
  table (Test | Result | Units | Reference interval | Flag).
* ``unknown_birth_label`` - the same, with the birth date under "Geb.-Dat.", a label
  the vocabulary does not hold: the sweep must report it as printed but not read.

Every person, number and laboratory here is invented.
"""

from __future__ import annotations

from typing import Callable

from golden.drawing import Canvas, us_date
from golden.ground_truth import LabCase


def _abbreviated_identity(case: LabCase, birth_label: str = "Born") -> bytes:
    """Letter, Helvetica 9: identity in a two-column header under short labels."""
    c = Canvas(font="helv", size=9)
    p = case.patient
    c.text(48, 48, case.lab_name.upper(), "hebo", 13)
    c.text(48, 62, "Clinical Chemistry - results report", size=8)
    c.text(48, 92, f"Pt: {p.last.upper()}, {p.first}")
    c.text(330, 92, f"Specimen drawn {us_date(case.collection_date)} 07:40")
    c.text(48, 106, f"{birth_label} {us_date(p.dob)}")
    c.text(330, 106, "Accession: A26-004127")
    c.text(48, 120, f"Hosp# {p.mrn}")
    c.text(330, 120, "Lab phone: (503) 555-0199")
    c.text(48, 134, "Acct: 90-33187")
    c.text(330, 134, "Reported: 11/03/2026")
    c.rule(146, 44, 568)
    y = 162
    for x, label in ((48, "Test"), (220, "Result"), (290, "Units"), (370, "Reference interval"), (490, "Flag")):
        c.text(x, y, label, "hebo")
    c.rule(168, 44, 568)
    y += 20
    for panel, rows in case.panels:
        c.text(48, y, panel, "hebo", 9)
        y += 14
        for r in rows:
            c.text(56, y, r.test_name)
            c.text(220, y, r.value)
            c.text(290, y, r.unit)
            c.text(370, y, r.reference_range)
            c.text(492, y, r.printed_flag)
            y += 14
        y += 6
    c.ctext(770, "Page 1 of 1", size=7)
    return c.tobytes()


LAYOUTS: dict[str, Callable[[LabCase], bytes]] = {
    "abbreviated_identity": _abbreviated_identity,
    # The same header with the birth date under a label no vocabulary holds.
    "unknown_birth_label": lambda case: _abbreviated_identity(case, "Geb.-Dat."),
}

__all__ = ["LAYOUTS"]
