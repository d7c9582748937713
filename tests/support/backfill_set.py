"""A backfill manifest of generated documents (the golden generators) with one row of
every kind the report must tell apart: typed lab reports, a scanned one, a lab of one
patient filed under another (wrong patient), a file that claims to be a PDF but is not
one, a file that is not a PDF at all, a missing file, an unknown MRN, an unknown
category, a short row and a repeated row. ``expected`` says, by line, what each is."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from golden.fixtures import KASIMIR, LAB_CASES, LAB_LAYOUTS, MARISOL, render_lab, with_layout
from golden.ground_truth import Patient
from golden.scan import scan_pdf

OPERATOR = "os:backfill-tester"


@dataclass
class BackfillSet:
    manifest: Path
    expected: dict[int, str] = field(default_factory=dict)  # line -> outcome or failure code
    patients: list[Patient] = field(default_factory=list)

    def lines(self, want: str) -> list[int]:
        return sorted(line for line, what in self.expected.items() if what == want)


def add_patients(wb, patients: list[Patient]) -> None:
    from core.services.admin.patients import add_patient

    for p in patients:
        add_patient(wb, mrn=p.mrn, first=p.first, last=p.last, dob=p.dob, sex=p.sex, by=OPERATOR)


def write_set(folder: Path, *, labs: int = 3, scanned: bool = False, odd_rows: bool = True) -> BackfillSet:
    """Write the documents and ``manifest.csv`` into ``folder`` (relative paths, a header
    with its columns out of order)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, str, str, str]] = []  # (mrn, kind, path, expected)

    def document(name: str, data: bytes) -> str:
        (folder / name).write_bytes(data)
        return name

    # Past the six default cases, the same results in the other layouts: new bytes each.
    layouts = sorted(LAB_LAYOUTS)
    cases = [LAB_CASES[i % len(LAB_CASES)] if i < len(LAB_CASES) else
             with_layout(LAB_CASES[i % len(LAB_CASES)], layouts[(i // len(LAB_CASES) + i) % len(layouts)])
             for i in range(labs)]
    for i, case in enumerate(cases):
        rows.append((case.patient.mrn, "lab_pdf", document(f"lab-{i}.pdf", render_lab(case)), "succeeded"))
    if scanned:
        scan = scan_pdf(render_lab(cases[0]), dpi=150, rotate_deg=0.5, noise=0.01, seed=3)
        rows.append((cases[0].patient.mrn, "Lab report", document("scan-0.pdf", scan), "scanned"))
    if odd_rows:
        # Kasimir's report filed under Marisol: stored, read, held for a person.
        kasimir = next(c for c in LAB_CASES if c.patient == KASIMIR)
        rows.append((MARISOL.mrn, "lab_pdf", document("wrong-patient.pdf", render_lab(kasimir)), "held_for_identity"))
        rows.append((MARISOL.mrn, "lab_pdf", document("broken.pdf", b"%PDF-1.4\n1 0 obj broken beyond repair"),
                     "job_failed"))
        rows.append((MARISOL.mrn, "lab_pdf", document("notes.pdf", b"plain words, not a PDF at all\n"),
                     "type_mismatch"))
        rows.append((MARISOL.mrn, "lab_pdf", "no-such-file.pdf", "file_not_found"))
        rows.append(("NO-SUCH-MRN", "lab_pdf", "lab-0.pdf", "unknown_patient"))
        rows.append((cases[0].patient.mrn, "recipes", "lab-0.pdf", "unknown_category"))
        rows.append((cases[0].patient.mrn, "lab_pdf", "lab-0.pdf", "duplicate_row"))
    out = BackfillSet(folder / "manifest.csv", patients=sorted({c.patient for c in cases} | {MARISOL, KASIMIR},
                                                                key=lambda p: p.mrn))
    with out.manifest.open("w", newline="") as fh:
        fh.write("Category,Patient MRN,Path\n")  # a header, its columns in another order than the default
        writer = csv.writer(fh)
        for line, (mrn, kind, path, expected) in enumerate(rows, start=2):
            writer.writerow([kind, mrn, path])
            out.expected[line] = expected
        if odd_rows:
            fh.write("only-a-path.pdf,\n")  # a short row
            out.expected[len(rows) + 2] = "bad_row"
    return out
