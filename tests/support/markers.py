"""Which tests are in the slow, ocr and browser groups (pytest.ini's markers), and why;
tests/conftest.py marks them at collection, and orders the files by group (LEAD_FILES
first). `make test` runs every group; `make test-fast` runs `-m "not slow and not ocr
and not browser"`."""

from __future__ import annotations

from pathlib import Path

# By folder where every test of a folder belongs to a group, so test files carry no
# bookkeeping; by module, or by single test, only where a folder mixes, each with why.
# Paths are relative to tests/; tests/test_test_tree.py checks that each still names a
# folder, a file or a test.
TESTS_DIR = Path(__file__).resolve().parents[1]

FOLDER_MARKERS: dict[str, tuple[str, str]] = {
    "browser": ("browser", "headless Debian chromium against a served app (nginx in front of it in one)"),
    "core/cli": ("slow", "the CLI run as real subprocesses: alone, beside a running app, per account"),
}

# Mixed folders: these modules' tests are all in the group.
MODULE_MARKERS: dict[str, tuple[str, str]] = {
    # OCR: the real engine (Tesseract, else RapidOCR) on page images, seconds a page.
    "extract/formats/test_ocr.py": ("ocr", "each engine, uncached, on rendered page images"),
    "extract/formats/test_images.py": ("ocr", "scans in every image format, and real scans and photos"),
    "core/ingest/test_scanned.py": ("ocr", "every lab and intake layout scanned, then read back"),
    "core/brief/test_brief_demo.py": ("ocr", "loads the whole demo once (its scanned lab and fax are OCR'd)"),
    "core/ingest/test_damaged_parts.py": ("ocr", "damaged fax scans read in a real job child, what is left OCR'd"),
    # Slow for another reason than OCR.
    "core/ingest/test_demo.py": ("slow", "reads every demo document end to end through the pipeline"),
    "core/exchange/test_fhir_export_demo.py": ("slow", "reads every demo document, then exports each demo patient"),
    "core/exchange/test_fhir_round_trip.py": ("slow", "reads the demo, exports each patient, reads each bundle back"),
    "core/ingest/test_malformed_corpus.py": ("slow", "a real child process per malformed file, killed at its ceiling"),
    "core/ingest/test_job_ceiling.py": ("slow", "real forkserver children run to their time and memory ceilings"),
    "core/ingest/test_job_child_main.py": ("slow", "starts the jobs' real forkserver and reads a lab in its child"),
    "core/ingest/test_job_reader_reuse.py": ("slow", "real forkserver children kept between jobs, run to their ceilings"),
    "core/ingest/test_crash_safety.py": ("slow", "kills real worker processes and waits for reclaim"),
    "core/test_hardening.py": ("slow", "starts real server and worker subprocesses"),
    "core/review/test_roles.py": ("slow", "every changing service run for every role, each on its own workbench"),
    "golden/test_eval_gate.py": ("slow", "runs golden eval cases through the real pipeline"),
    "retrieve/test_guideline_search.py": ("slow", "embeds the whole guideline corpus with the real MiniLM model"),
    "ui/test_inert_rendering.py": ("slow", "renders every page in AppTest per document format"),
    "ui/test_sign_in_pages.py": ("slow", "starts the sign-in pages in Streamlit's AppTest"),
}

# Single tests in a group, in modules that are not.
TEST_MARKERS: dict[str, tuple[str, str]] = {
    "core/backfill/test_run.py::test_a_scanned_page_is_read_by_ocr":
        ("ocr", "a scanned lab page in a backfill, read by the real OCR engine"),
    "core/ingest/test_stage_timings.py::test_scanned_lab_job_reports_ocr_time":
        ("ocr", "a scanned lab read by the worker, its OCR time reported"),
    "core/review/test_viewer.py::test_every_cited_fact_of_the_real_samples_is_marked_in_the_viewer":
        ("ocr", "real scans and a phone photo among the samples"),
    "core/ingest/test_demo.py::test_the_demo_covers_every_review_and_loads_once":
        ("ocr", "the demo's scanned lab and fax packet are read"),
    "core/exchange/test_fhir_export_demo.py::test_every_demo_patient_exports_a_valid_bundle_of_their_chart":
        ("ocr", "the demo's scanned lab and fax packet are read"),
    "core/exchange/test_fhir_round_trip.py::test_every_demo_patients_chart_comes_back_the_same_through_fhir":
        ("ocr", "the demo's scanned lab and fax packet are read"),
}


def markers_for(path: Path, name: str) -> set[str]:
    """The groups of test ``name`` (its name without parameters) in the file at ``path``."""
    rel = path.resolve().relative_to(TESTS_DIR).as_posix()
    found = {mark for folder, (mark, _) in FOLDER_MARKERS.items() if rel.startswith(folder + "/")}
    if rel in MODULE_MARKERS:
        found.add(MODULE_MARKERS[rel][0])
    if f"{rel}::{name}" in TEST_MARKERS:
        found.add(TEST_MARKERS[f"{rel}::{name}"][0])
    return found


# The file that takes longest (its own app, the demo read, a scenario of minutes): it goes
# first, so that the other test worker takes the shared app's files meanwhile (the order
# of the files: tests/conftest.py).
LEAD_FILES = ("browser/test_browser_workbench.py",)
