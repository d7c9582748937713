"""Ingestion speed: typed lab pages end to end against the bare PyMuPDF floor.

Prints, from one run on this machine:
- end-to-end median ms per typed lab page: attach_and_extract (store original,
  document row, job) + the worker's full pipeline (normalize with page render,
  extract, verify citations, identity, persist, promote) on a real DuckDB, until
  the job is succeeded and its facts are visible;
- the vector step the worker runs next (embedding the new active facts), apart;
- the floor: PyMuPDF open + words + page render of the same pages, nothing else;
- their ratio (targets: <= 150 ms per page and <= 3x the floor).
With --ocr it also prints median seconds per scanned page (OCR path).
Usage: python bench/ingest.py [--rounds N] [--ocr]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def floor_ms_per_page(pdfs: list[bytes], dpi: int = 110) -> list[float]:
    import pymupdf

    samples = []
    for data in pdfs:
        start = time.perf_counter()
        with pymupdf.open(stream=data, filetype="pdf") as doc:
            for page in doc:
                page.get_text("words")
                page.get_pixmap(dpi=dpi).tobytes("png")
            pages = doc.page_count
        samples.append((time.perf_counter() - start) * 1000 / pages)
    return samples


def end_to_end_ms_per_page(pdfs: list[tuple[bytes, object, int]]) -> tuple[list[float], list[float]]:
    """(job ms per page, vector-indexing ms per page) for each document."""
    from core.services.admin.access_audit import shell_user
    from core.services.ingest.ingestion import attach_and_extract
    from core.services.admin.patients import add_patient
    from core.services.ingest.worker import Worker
    from core.services.workbench import open_workbench
    from domain.settings import reload_settings

    samples, vector_samples = [], []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["WORKBENCH_DATA_DIR"] = tmp
        wb = open_workbench(reload_settings())
        worker = Worker(wb, worker_id="bench")
        seen: dict[str, dict] = {}
        for i, (data, patient, pages) in enumerate(pdfs):
            if patient.mrn not in seen:
                seen[patient.mrn] = add_patient(wb, mrn=patient.mrn, first=patient.first, last=patient.last,
                                                dob=date.fromisoformat(patient.dob), by=shell_user())
            start = time.perf_counter()
            attached = attach_and_extract(wb, patient_id=seen[patient.mrn]["id"], source=f"lab{i}.pdf", data=data,
                                          filename=f"lab{i}.pdf", doc_type="lab_pdf", by=shell_user())
            job = worker.run_specific(attached.job["id"])
            elapsed = (time.perf_counter() - start) * 1000
            assert job["status"] == "succeeded", job["error_code"]
            samples.append(elapsed / pages)
            start = time.perf_counter()
            worker.index_vectors()  # what the worker does next: embed the new active facts
            vector_samples.append((time.perf_counter() - start) * 1000 / pages)
        wb.close()
    return samples, vector_samples


def ocr_seconds_per_page(pdfs: list[bytes]) -> tuple[list[float], str]:
    from extract.formats.images import ocr_pdf
    from golden.scan import scan_pdf

    samples, engine = [], ""
    for data in pdfs:
        scanned = scan_pdf(data, dpi=200, rotate_deg=1.0, noise=0.02, seed=1)
        start = time.perf_counter()
        content = ocr_pdf(scanned)
        samples.append((time.perf_counter() - start) / max(1, len(content.pages)))
        engine = content.engine
    return samples, engine


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=4, help="times each layout is ingested")
    parser.add_argument("--ocr", action="store_true", help="also time OCR of scanned pages")
    args = parser.parse_args()

    import pymupdf

    from golden.fixtures import LAB_CASES, LAB_LAYOUTS, render_lab, with_layout

    cases = [with_layout(LAB_CASES[0], layout) for layout in sorted(LAB_LAYOUTS)]
    rendered = [render_lab(c) for c in cases]
    pages = [pymupdf.open(stream=d, filetype="pdf").page_count for d in rendered]
    # Warm both paths once (imports, font caches) so neither pays a one-off cost.
    floor_ms_per_page(rendered[:1])
    end_to_end_ms_per_page([(rendered[0], cases[0].patient, pages[0])])

    work = [(d, c.patient, n) for d, c, n in zip(rendered, cases, pages)] * args.rounds
    e2e, vectors = end_to_end_ms_per_page(work)
    floor = floor_ms_per_page(rendered * args.rounds)
    e2e_med, floor_med = statistics.median(e2e), statistics.median(floor)
    print(f"typed lab pages: {sum(pages) * args.rounds} across {len(cases)} layouts x {args.rounds} rounds")
    print(f"end-to-end median: {e2e_med:.1f} ms/page (p90 {statistics.quantiles(e2e, n=10)[-1]:.1f})")
    print(f"floor (PyMuPDF open + words + render) median: {floor_med:.1f} ms/page")
    print(f"ratio end-to-end / floor: {e2e_med / floor_med:.2f}x  (targets: <=150 ms/page, <=3x floor)")
    print(f"then embedding the page's active facts (MiniLM, after the job succeeded): "
          f"median {statistics.median(vectors):.1f} ms/page")
    if args.ocr:
        secs, engine = ocr_seconds_per_page(rendered[:3])
        print(f"scanned pages via {engine}: median {statistics.median(secs):.2f} s/page over {len(secs)} documents")


if __name__ == "__main__":
    main()
