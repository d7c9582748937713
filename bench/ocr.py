"""OCR field accuracy and speed on generated scans: ``python -m bench.ocr [--quick]``.

Every lab layout of golden/lab_layouts.py is typed (its default case from
golden/fixtures.py), scanned by golden/scan.py under several conditions (an office
scanner at 300 dpi, a crooked sheet, a standard-resolution fax of 200 x 100 dpi with
speckle, a sheet fed sideways or upside down), and faxed as packets (golden/fax.py: a
cover sheet plus the labs, bilevel Group 4 TIFF). Each scan is read two ways:

* ``pipeline``: the product's path (extract.formats.images.normalize_image: clean-up,
  deskew, fixed resolution, ruled cells, re-reads and the second engine's vote; on
  bilevel pages also dotted leaders painted out and decimal points the threshold
  erased put back for review);
* ``tesseract alone``: the raw picture straight into Tesseract (psm 3, no clean-up, no
  re-read, no vote), its words grouped into rows the same way.

The OCR'd content then goes through the full lab reader (extract.lab.extractor), and
its results are compared with the case's ground truth, field by field: test name,
value, unit, reference range and flag. Printed: field accuracy per condition and
overall, seconds per page, and critical flags lost (an expected critical result
charted without a critical flag and not sent to review: must be 0), and the pipeline's
misses counted per condition and field (``--misses``: each one, expected vs read).
``--reseed N`` and ``--noise-factor F`` draw held-out pages (other speckle, more or less
of it) for checking that a change holds beyond the pages it was tuned on: on one draw
of the standard-fax pages the score moves by several points with the speckle alone.
Offline; nothing is written to disk.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

import pymupdf  # noqa: E402
from PIL import Image  # noqa: E402

from domain.content import NormalizedContent, PageContent  # noqa: E402
from extract.formats.images import normalize_image  # noqa: E402
from extract.formats.ocr import imageprep  # noqa: E402
from extract.formats.ocr.engines import default_engine  # noqa: E402
from extract.formats.ocr.page import group_lines  # noqa: E402
from extract.formats.ocr.tesseract import TesseractEngine  # noqa: E402
from extract.formats.pdf import normalize_pdf  # noqa: E402
from extract.lab.extractor import extract_lab  # noqa: E402
from golden.fax import packet  # noqa: E402
from golden.fixtures import LAB_CASES, with_layout  # noqa: E402
from golden.ground_truth import LabCase  # noqa: E402
from golden.lab_layouts import LAB_LAYOUTS, render_lab  # noqa: E402
from golden.scan import scan_pdf  # noqa: E402

FIELDS = ("test_name", "value", "unit", "reference_range", "abnormal_flag")
# name -> scan_pdf keyword arguments (always a multi-page grey TIFF for scanned labs).
LAB_CONDITIONS: dict[str, dict] = {
    "office 300dpi": dict(dpi=300, rotate_deg=0.3, noise=0.002),
    "skewed 3deg": dict(dpi=300, rotate_deg=-3.0, noise=0.005),
    "fax-like 200x100": dict(dpi=200, dpi_y=100, rotate_deg=0.8, noise=0.02),
    "rotated 90/180": dict(dpi=300, rotate_deg=91.0, noise=0.005),  # 180 on odd layouts
}
FAX_CONDITIONS: dict[str, dict] = {
    "fax standard 200x100": dict(dpi=200, dpi_y=100, rotate_deg=0.6, noise=0.01),
    "fax fine 200x200": dict(dpi=200, rotate_deg=-1.0, noise=0.01),
}


@dataclass
class Tally:
    right: int = 0
    total: int = 0
    pages: int = 0
    seconds: float = 0.0
    critical_lost: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, other: "Tally") -> None:
        self.right += other.right
        self.total += other.total
        self.pages += other.pages
        self.seconds += other.seconds
        self.critical_lost += other.critical_lost
        self.misses += other.misses

    @property
    def accuracy(self) -> float:
        return self.right / self.total if self.total else 0.0


def lab_cases() -> list[LabCase]:
    """One case per layout: the layout's own default case, else the first case redrawn."""
    own = {c.layout: c for c in LAB_CASES}
    return [own.get(layout) or with_layout(LAB_CASES[0], layout) for layout in LAB_LAYOUTS]


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", name.lower())


def score(case: LabCase, content: NormalizedContent, label: str) -> Tally:
    """Fields of ``case`` the lab reader got right from ``content``."""
    facts = [f for f in extract_lab(content, "bench").facts if f.fact_type == "lab_result"]
    found = [(f.structured_value if isinstance(f.structured_value, dict) else f.structured_value.model_dump(),
              f.wants_review) for f in facts]
    tally = Tally()
    for want in case.results:
        expected = {k: getattr(want, k) for k in FIELDS}
        candidates = [(v, rev) for v, rev in found if _key(str(v.get("test_name", ""))) == _key(want.test_name)]
        best, review = max(
            candidates, key=lambda c: sum(str(c[0].get(k, "")) == expected[k] for k in FIELDS), default=({}, True)
        )
        for k in FIELDS:
            # A name's case and punctuation do not change the test ("Cholesterol Total").
            same = _key if k == "test_name" else str
            ok = bool(best) and same(str(best.get(k, ""))) == same(expected[k])
            tally.right += ok
            tally.total += 1
            if not ok:
                tally.misses.append(f"{label}: {want.test_name}.{k} = {best.get(k)!r}, want {expected[k]!r}")
        if want.abnormal_flag.startswith("critical") and best and not review \
                and best.get("abnormal_flag") != want.abnormal_flag:
            tally.critical_lost += 1
            tally.misses.append(f"{label}: CRITICAL {want.test_name} charted as {best.get('abnormal_flag')!r}")
    return tally


def tesseract_alone(data: bytes, engine: TesseractEngine) -> NormalizedContent:
    """Each frame straight into Tesseract: no clean-up, no turn, no re-read, no vote."""
    content = NormalizedContent(source_kind="ocr", engine=engine.name)
    with Image.open(io.BytesIO(data)) as img:
        for index in range(getattr(img, "n_frames", 1)):
            img.seek(index)
            gray = imageprep.to_grayscale(img.copy())
            page = PageContent(number=index + 1, width=float(gray.width), height=float(gray.height))
            page.lines, page.words = group_lines(engine.recognize(gray))
            content.pages.append(page)
    return content


def split_pages(content: NormalizedContent, first: int, count: int) -> NormalizedContent:
    """Pages ``first``.. ``first + count - 1`` (1-based) as their own document."""
    out = NormalizedContent(source_kind=content.source_kind, engine=content.engine)
    out.pages = content.pages[first - 1:first - 1 + count]
    return out


def page_count(pdf: bytes) -> int:
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        return doc.page_count


def run(quick: bool, only: str = "", pipeline_only: bool = False, misses: bool = False,
        reseed: int = 0, noise_factor: float = 1.0) -> None:
    """``reseed`` > 0 draws other speckle and grain (seeds shifted by it) and
    ``noise_factor`` scales the speckle: held-out pages of the same conditions, to check
    that a change tuned on the default pages holds on pages it was not tuned on."""
    readers = {
        "pipeline": lambda data: normalize_image(data, engine=default_engine("tesseract")),
        "tesseract alone": lambda data, e=TesseractEngine(reread=False, vote=False): tesseract_alone(data, e),
    }
    if pipeline_only:
        del readers["tesseract alone"]
    cases = lab_cases()
    lab_conditions = dict(list(LAB_CONDITIONS.items())[:2]) if quick else LAB_CONDITIONS
    lab_conditions = {k: v for k, v in lab_conditions.items() if only in k}
    typed = Tally()
    for case in cases:
        typed.add(score(case, normalize_pdf(render_lab(case)), f"typed {case.layout}"))
    rows: list[tuple[str, dict[str, Tally]]] = []
    for cond, kwargs in lab_conditions.items():
        per_reader = {name: Tally() for name in readers}
        for i, case in enumerate(cases):
            pdf = render_lab(case)
            args = dict(kwargs)
            if args["rotate_deg"] > 45 and i % 2:
                args["rotate_deg"] += 89.0  # upside down on every other layout
            args["noise"] *= noise_factor
            scan = scan_pdf(pdf, seed=i + 1000 * reseed, as_format="tiff", tiff_compression="lzw", **args)
            for name, read in readers.items():
                start = time.perf_counter()
                content = read(scan)
                t = score(case, content, f"{cond} {case.layout} [{name}]")
                t.seconds = time.perf_counter() - start
                t.pages = len(content.pages)
                per_reader[name].add(t)
        rows.append((f"lab  {cond}", per_reader))
    fax_cases = cases[:3] if quick else cases
    fax_conditions = dict(list(FAX_CONDITIONS.items())[:1]) if quick else FAX_CONDITIONS
    fax_conditions = {k: v for k, v in fax_conditions.items() if only in k}
    for cond, kwargs in fax_conditions.items():
        per_reader = {name: Tally() for name in readers}
        pdf = packet(fax_cases)
        args = dict(kwargs, noise=kwargs["noise"] * noise_factor)
        scan = scan_pdf(pdf, seed=7 + 1000 * reseed, as_format="tiff", tiff_compression="group4", **args)
        for name, read in readers.items():
            start = time.perf_counter()
            content = read(scan)
            seconds = time.perf_counter() - start
            first = 2  # page 1 is the cover sheet
            for case in fax_cases:
                n = page_count(render_lab(case))
                per_reader[name].add(score(case, split_pages(content, first, n), f"{cond} {case.layout} [{name}]"))
                first += n
            per_reader[name].seconds += seconds
            per_reader[name].pages += len(content.pages)
        rows.append((f"fax  {cond}", per_reader))
    if rows:
        _print(rows, typed, misses)


def _print(rows: list[tuple[str, dict[str, Tally]]], typed: Tally, misses: bool = False) -> None:
    names = list(rows[0][1])
    head = f"{'pages / condition':28}" + "".join(f"{n + ' fields':>22}{'s/page':>8}{'crit lost':>10}" for n in names)
    print(f"typed text layer (ceiling of the lab reader): {typed.accuracy:.1%} of {typed.total} fields")
    print(head)
    print("-" * len(head))
    totals: dict[str, dict[str, Tally]] = {"lab": {n: Tally() for n in names}, "fax": {n: Tally() for n in names}}
    for label, per in rows:
        print(f"{label:28}" + "".join(_cells(per[n]) for n in names))
        for n in names:
            totals[label[:3]][n].add(per[n])
    print("-" * len(head))
    for kind, per in totals.items():
        if any(t.total for t in per.values()):
            print(f"{'ALL ' + kind + ' pages':28}" + "".join(_cells(per[n]) for n in names))
    print(f"\n{names[0]} misses per condition and field:")
    for label, per in rows:
        lost = per[names[0]].misses
        by_field = {k: sum(1 for m in lost if m.split(" = ")[0].endswith("." + k)) for k in FIELDS}
        print(f"  {label:26} " + "  ".join(f"{k} {n}" for k, n in by_field.items())
              + f"  critical {sum('CRITICAL' in m for m in lost)}")
        if misses:
            for m in lost:
                print("      " + m)


def _cells(t: Tally) -> str:
    acc = f"{t.accuracy:.1%} ({t.right}/{t.total})"
    return f"{acc:>22}{t.seconds / max(t.pages, 1):8.2f}{t.critical_lost:10d}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two lab conditions, one fax packet of three labs")
    parser.add_argument("--only", default="", help="only the conditions whose name contains this")
    parser.add_argument("--pipeline-only", action="store_true", help="skip the Tesseract-alone baseline")
    parser.add_argument("--misses", action="store_true",
                        help="print every field the pipeline missed (expected vs read) under its condition")
    parser.add_argument("--reseed", type=int, default=0,
                        help="held-out pages: other speckle and grain (seeds shifted by 1000 x this)")
    parser.add_argument("--noise-factor", type=float, default=1.0, help="held-out pages: speckle times this")
    args = parser.parse_args()
    run(args.quick, args.only, args.pipeline_only, args.misses, args.reseed, args.noise_factor)


if __name__ == "__main__":
    main()
