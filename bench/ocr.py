"""OCR speed and accuracy on generated scans: ``python -m bench.ocr [--pages N]``.

Types a one-page lab report, scans it with golden/scan.py at several resolutions,
skews and noise levels, reads each scan with every available engine through the
full page pipeline (extract.formats.images.normalize_image) and prints, per engine, the
median seconds per page and the median character error rate against the typed text.
Offline; nothing is written outside a temporary directory.
"""

from __future__ import annotations

import argparse
import statistics
import time

import pymupdf

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from extract.formats.images import normalize_image
from extract.formats.ocr.engines import default_engine, tesseract_available
from extract.formats.ocr.tesseract import TesseractEngine
from golden.scan import char_error_rate, scan_pdf, typed_pdf

REPORT = [
    "Riverside Clinical Laboratory - Final Report",
    "Patient: DOE, JANE        MRN: 00412877",
    "DOB: 03/14/1961           Sex: F",
    "Ordering provider: Dr. Alan Smith, Internal Medicine",
    "Collected: 02/11/2024 08:15   Received: 02/11/2024 10:02",
    "Test                     Result   Units    Reference    Flag",
    "Hemoglobin A1c           7.9      %        4.0-5.6      H",
    "Glucose, fasting         126      mg/dL    70-99        H",
    "Cholesterol, total       212      mg/dL    <200         H",
    "LDL Cholesterol          142      mg/dL    <100         H",
    "HDL Cholesterol          41       mg/dL    >40",
    "Triglycerides            148      mg/dL    <150",
    "Creatinine               0.9      mg/dL    0.6-1.1",
    "Potassium                4.2      mmol/L   3.5-5.1",
    "Comments: Specimen received at room temperature. Results were reviewed",
    "by the laboratory director. Please contact the laboratory with any",
    "questions regarding these results or the reference intervals used.",
]
# (dpi, skew in degrees, speckle fraction): fax-like to office-scanner-like.
CONDITIONS = [
    (150, 1.5, 0.03),
    (200, 0.0, 0.0),
    (200, 1.5, 0.03),
    (200, -3.0, 0.01),
    (300, 1.5, 0.03),
    (300, 0.0, 0.0),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=len(CONDITIONS), help="scans per engine")
    args = parser.parse_args()
    pdf = typed_pdf(REPORT)
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        truth = " ".join(w[4] for w in doc[0].get_text("words", sort=True))
    scans = [
        (cond, scan_pdf(pdf, dpi=cond[0], rotate_deg=cond[1], noise=cond[2], seed=i, as_format="png"))
        for i, cond in enumerate((CONDITIONS * args.pages)[: args.pages])
    ]
    engines = [("rapidocr", default_engine("rapidocr"))]
    if tesseract_available():
        engines[:0] = [
            ("tesseract", default_engine("tesseract")),
            ("tesseract, no re-read", TesseractEngine(reread=False)),
        ]
    print(f"{'engine':44} {'s/page (median)':>16} {'CER (median)':>13} {'CER (max)':>10}")
    for label, engine in engines:
        normalize_image(scans[0][1], engine=engine)  # warm up: model loading is not per page
        seconds, errors = [], []
        for _, data in scans:
            start = time.perf_counter()
            content = normalize_image(data, engine=engine)
            seconds.append(time.perf_counter() - start)
            got = " ".join(w.text for w in content.pages[0].words)
            errors.append(char_error_rate(got, truth))
        print(
            f"{label + ' (' + engine.name + ')':44} {statistics.median(seconds):16.2f}"
            f" {statistics.median(errors):13.2%} {max(errors):10.2%}"
        )


if __name__ == "__main__":
    main()
