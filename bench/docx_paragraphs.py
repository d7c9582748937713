"""DOCX cost per paragraph: a long referral letter, normalized and extracted.

Builds a DOCX of N body paragraphs (labelled lines, headings, list items and prose,
with as many named styles as a real template carries), then times
``normalize_docx`` (python-docx + our walk) and the ``referral_docx`` extractor.
Prints seconds and ms per paragraph for each size; the cost must stay linear
(the 20,000-paragraph letter under 60 s on 2 cores).
Usage: python bench/docx_paragraphs.py [--sizes 2000,20000]
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TEMPLATE_STYLES = 150  # a hospital letter template carries well over a hundred styles


def build_docx(paragraphs: int) -> bytes:
    import docx
    from docx.enum.style import WD_STYLE_TYPE

    document = docx.Document()
    for i in range(TEMPLATE_STYLES):
        document.styles.add_style(f"Template Style {i}", WD_STYLE_TYPE.PARAGRAPH)
    lines = [
        ("Patient: Jane Example", None), ("DOB: 03/14/1978", None), ("Current medications:", "Heading 2"),
        ("Metformin 500 mg twice daily", "List Bullet"), ("Reason for referral: chest pain on exertion", None),
        ("She has been well until recently and walks her dog every morning.", "Template Style 7"),
    ]
    for i in range(paragraphs):
        text, style = lines[i % len(lines)]
        document.add_paragraph(text, style=style)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def run(paragraphs: int) -> tuple[float, float]:
    from extract.formats.office.docx import normalize_docx
    from extract.referral.extractor import extract_referral
    from domain.limits import Limits

    data = build_docx(paragraphs)
    t0 = time.perf_counter()
    content = normalize_docx(data, Limits())
    t1 = time.perf_counter()
    extract_referral(content, "bench:docx")
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000", help="comma-separated paragraph counts")
    args = parser.parse_args()
    print(f"{'paragraphs':>10} {'normalize s':>12} {'extract s':>10} {'total s':>8} {'ms/paragraph':>13}")
    for n in (int(s) for s in args.sizes.split(",")):
        norm, extract = run(n)
        total = norm + extract
        print(f"{n:>10} {norm:>12.2f} {extract:>10.2f} {total:>8.2f} {1000 * total / n:>13.3f}")


if __name__ == "__main__":
    main()
