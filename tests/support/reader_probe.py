"""Functions a job's child runs for tests/core/ingest/test_lazy_readers.py: they must be
importable by name in the child (a forkserver child unpickles them by reference)."""

from __future__ import annotations

import os
import sys


def loaded() -> dict:
    """What the child started with: its process group, its BLAS threads, and whether any
    document reader was imported before this job."""
    readers = ("extract.formats.pdf", "extract.formats.images", "extract.formats.ocr.rapid", "hl7apy.parser")
    return {"group": os.getpgid(0), "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
            "readers_imported": [name for name in readers if name in sys.modules]}


def read_typed_lab() -> list[str]:
    """A typed two-result lab page read by the lab reader, imported here."""
    from extract.formats.pdf import normalize_pdf
    from extract.lab.extractor import extract_lab
    from golden.drawing import placed_text_pdf

    page = placed_text_pdf([(50, 60, "Test"), (200, 60, "Result"), (280, 60, "Units"), (360, 60, "Reference"),
                            (50, 80, "Sodium"), (200, 80, "139"), (280, 80, "mmol/L"), (360, 80, "133-146"),
                            (50, 98, "Potassium"), (200, 98, "4.4"), (280, 98, "mmol/L"), (360, 98, "3.5-5.3")])
    facts = extract_lab(normalize_pdf(page), "documents:1").facts
    return [f.structured_value["test_name"] if isinstance(f.structured_value, dict) else f.structured_value.test_name
            for f in facts if f.fact_type == "lab_result"]


def hog() -> int:
    """Holds far more memory than the test's ceiling."""
    blocks = [bytearray(64 * 1024 * 1024) for _ in range(16)]
    return len(blocks)
