"""The demo documents: one of every kind a reviewer meets, for the demo patients.

Built by the same generators as the golden cases (``golden.documents``), so the demo
shows real extraction on documents nobody hand-tuned it for. The set is chosen so a demo
walks through every review: a typed and a scanned lab, a repeat lab with a changed value
(a conflict), an intake form with an uncertain allergy, a referral letter, a workbook, a
fax packet with a page of another patient, an HL7 result with a critical value, and a
report of another patient filed to this chart.

``python -m core demo`` loads them without importing this package: it runs
``python -m golden.demo --write DIR``, which writes every document into DIR with a
``manifest.json`` (``{"documents": [{"patient_mrn", "filename", "doc_type", "file",
"sha256"}]}``), and uploads those files (``core.services.ingest.demo``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from golden.documents import build_spec

# Printed identities of the demo patients (core.services.admin.patients.DEMO_PATIENTS).
MARISOL = {"first": "Marisol", "last": "Quintero-Vale", "dob": "1961-03-14", "mrn": "DEMO-1001", "sex": "F"}
THEODORE = {"first": "Theodore", "last": "Brannigan", "dob": "1948-11-02", "mrn": "DEMO-1002", "sex": "M"}

_BMP = [["Basic Metabolic Panel", [["Sodium", "139", "mmol/L", "134-144", "normal", ""],
                                   ["Potassium", "4.6", "mmol/L", "3.5-5.2", "normal", ""],
                                   # Printed with a stray full stop after the unit: the
                                   # review queue's correction walk-through fixes it.
                                   ["Creatinine", "1.02", "mg/dL.", "0.57-1.00", "high", "H"],
                                   ["Glucose", "131", "mg/dL", "65-99", "high", "H"]]]]
# The repeat changes a value the scan gives the chart (Sodium: the scan's Potassium range
# is read "3.5-5,2" by OCR and waits for review), so it conflicts.
_BMP_REPEAT = [["Basic Metabolic Panel", [["Sodium", "131", "mmol/L", "134-144", "low", "L"],
                                          ["Potassium", "5.9", "mmol/L", "3.5-5.2", "high", "H"],
                                          ["Creatinine", "1.02", "mg/dL", "0.57-1.00", "high", "H"],
                                          ["Glucose", "131", "mg/dL", "65-99", "high", "H"]]]]


@dataclass(frozen=True)
class DemoDocument:
    patient_mrn: str
    filename: str
    doc_type: str
    spec: dict

    def build(self) -> bytes:
        return build_spec(self.spec, {"marisol": MARISOL, "theodore": THEODORE}, key=self.filename)[0]


DOCUMENTS: tuple[DemoDocument, ...] = (
    DemoDocument("DEMO-1001", "demo-lab-typed.pdf", "lab_pdf",
                 {"kind": "lab", "preset": "classic_cbc_lipids", "patient": "marisol"}),
    DemoDocument("DEMO-1001", "demo-lab-scanned.pdf", "lab_pdf",
                 {"kind": "lab", "layout": "split_range", "patient": "marisol", "collection_date": "2026-09-03",
                  "panels": _BMP, "scan": {"seed": 7, "dpi": 200}}),
    DemoDocument("DEMO-1001", "demo-lab-repeat.pdf", "lab_pdf",
                 {"kind": "lab", "layout": "classic", "patient": "marisol", "collection_date": "2026-09-03",
                  "panels": _BMP_REPEAT, "lab_name": "Northgate Clinical Reference Lab"}),
    DemoDocument("DEMO-1001", "demo-intake.pdf", "intake_form",
                 {"kind": "intake", "preset": "questions_margin_sulfa", "patient": "marisol"}),
    DemoDocument("DEMO-1001", "demo-referral.docx", "referral_docx", {"kind": "docx", "paragraphs": [
        "Harbourside Medical Practice, 12 Quay Street",
        "14 October 2026",
        "Referral to: Endocrinology Clinic",
        "Patient: Marisol QUINTERO-VALE    Born: 14/03/1961    MRN: DEMO-1001",
        "Dear colleague,",
        "Please see Mrs Quintero-Vale for poorly controlled type 2 diabetes despite metformin; "
        "her HbA1c has risen over the past year. We would like her seen within four weeks.",
        "Allergies: penicillin - hives.",
        "Current medications:",
        "Metformin 500 mg twice daily",
        "Lisinopril 10 mg once daily",
        "Yours sincerely,",
        "Dr Oriel Haversham",
    ]}),
    DemoDocument("DEMO-1001", "demo-workbook.xlsx", "clinical_workbook", {"kind": "xlsx", "sheets": {
        "Patient": [["Patient name", "Marisol Quintero-Vale"], ["Date of birth", "1961-03-14"], ["MRN", "DEMO-1001"]],
        "Lab trend": [["Date", "Test", "Result", "Units", "Reference range"],
                      ["2025-10-02", "Hemoglobin A1c", 7.1, "%", "<5.7"],
                      ["2026-04-10", "Hemoglobin A1c", 7.9, "%", "<5.7"]],
    }}),
    DemoDocument("DEMO-1001", "demo-fax-packet.pdf", "fax_packet",
                 {"kind": "fax", "parts": [{"kind": "lab", "preset": "classic_cbc_lipids", "patient": "marisol"},
                                           {"kind": "lab", "preset": "dotted_cbc_urine", "patient": "theodore"}]}),
    DemoDocument("DEMO-1001", "demo-critical-potassium.hl7", "hl7v2_message", {"kind": "hl7", "segments": [
        "MSH|^~\\&|LAB|HARBOUR LAB|EHR|CLINIC|20261020101500||ORU^R01^ORU_R01|DEMO0001|P|2.5.1",
        "PID|1||DEMO-1001^^^CLINIC^MR||QUINTERO-VALE^MARISOL||19610314|F",
        "OBR|1|ORD1|FIL1|80048^Basic metabolic panel^C4|||20261020083000|||||||||||||||20261020101000|||F",
        "OBX|1|NM|2823-3^Potassium^LN||6.8|mmol/L|3.5-5.1|HH|||F|||20261020083000",
        "OBX|2|NM|2951-2^Sodium^LN||137|mmol/L|136-145|N|||F|||20261020083000",
    ]}),
    DemoDocument("DEMO-1001", "demo-wrong-patient-lab.pdf", "lab_pdf",
                 {"kind": "lab", "preset": "dotted_cbc_urine", "patient": "theodore"}),
)


MANIFEST = "manifest.json"


def write(directory: Path, documents: tuple[DemoDocument, ...] = DOCUMENTS) -> Path:
    """Build every demo document into ``directory`` (file name = its upload name) and
    write the manifest that lists them; returns the manifest's path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    entries = []
    for doc in documents:
        data = doc.build()
        (directory / doc.filename).write_bytes(data)
        entries.append({"patient_mrn": doc.patient_mrn, "filename": doc.filename, "doc_type": doc.doc_type,
                        "file": doc.filename, "sha256": hashlib.sha256(data).hexdigest()})
    manifest = directory / MANIFEST
    tmp = directory / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps({"documents": entries}, indent=1), encoding="utf-8")
    tmp.replace(manifest)  # the manifest appears last, once every file is there
    return manifest


def main(argv: list[str] | None = None) -> int:
    from storage.private_files import restrict_new_files

    restrict_new_files()  # documents printed with (invented) patient identities: the owner's only
    parser = argparse.ArgumentParser(prog="python -m golden.demo", description="build the demo documents")
    parser.add_argument("--write", required=True, metavar="DIR", help="write the documents and manifest.json here")
    args = parser.parse_args(argv)
    manifest = write(Path(args.write))
    print(json.dumps({"manifest": str(manifest), "documents": len(DOCUMENTS)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
