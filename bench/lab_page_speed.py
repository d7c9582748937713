"""Lab report cost per page, rendering included (was a < 150 ms assertion in
tests/extract/lab/test_lab_extract.py; speed is measured here, never asserted in unit tests).

For the generated two-page panel report it times, per page: opening the PDF and
rendering every page at the app's DPI with PyMuPDF alone (the baseline, measured in
the same run: the floor of any reader that keeps page images), then
``normalize_pdf`` with rendering plus ``extract_lab`` (what a lab job pays).
Prints the median of N runs for both.
Usage: python bench/lab_page_speed.py [--runs 5] [--dpi 110]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere


def render_only(data: bytes, out: Path, dpi: int) -> int:
    import pymupdf

    with pymupdf.open(stream=data, filetype="pdf") as doc:
        for i, page in enumerate(doc):
            page.get_pixmap(dpi=dpi).save(out / f"p{i}.png")
        return doc.page_count


def main(argv: list[str] | None = None) -> int:
    from extract.lab.extractor import extract_lab
    from extract.formats.pdf import normalize_pdf
    from golden.fixtures import lab_case, render_lab

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dpi", type=int, default=110)
    parser.add_argument("--case", default="two_page_panels")
    args = parser.parse_args(argv)
    data = render_lab(lab_case(args.case))
    baseline, full = [], []
    with tempfile.TemporaryDirectory(prefix="bench-lab-") as tmp:
        for i in range(args.runs):
            out = Path(tmp) / f"raw{i}"
            out.mkdir()
            start = time.perf_counter()
            pages = render_only(data, out, args.dpi)
            baseline.append((time.perf_counter() - start) * 1000 / pages)
            start = time.perf_counter()
            content = normalize_pdf(data, render_dir=Path(tmp) / f"job{i}", dpi=args.dpi)
            extract_lab(content, "bench:lab")
            full.append((time.perf_counter() - start) * 1000 / len(content.pages))
    print(f"lab case {args.case!r}, {pages} pages at {args.dpi} dpi, median of {args.runs} runs")
    print(f"{'render only (baseline)':>30}: {statistics.median(baseline):8.1f} ms/page")
    print(f"{'normalize_pdf + extract_lab':>30}: {statistics.median(full):8.1f} ms/page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
