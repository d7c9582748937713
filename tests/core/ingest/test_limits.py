"""Resource limits on reading one document (domain/limits.py): every family refuses
its oversized input with its own code and a plain sentence naming the setting,
before the expensive step (zip directory, streamed XML counts, page and header
sizes), in bounded memory; inputs at a limit still read; a job over a limit
fails with that code and keeps its original. All inputs are generated here."""

from __future__ import annotations

import tracemalloc
from dataclasses import fields

import pymupdf
import pytest

from domain.errors import ExtractionError
from domain.models import DocType
from core.services.review.facts import document_report
from core.services.ingest.ingestion import attach_and_extract
from core.services.ingest.worker import Worker
from domain.settings import Settings
from domain.limits import DEFAULT_LIMITS, LIMIT_CODES, Limits
from extract.formats.hl7.parse import known_segments
from extract.normalize import normalize
from tests.support.file_builders import docx, hl7, merged_sheet, pdf, png_header, with_part, xlsx
from tests.support import fhir_bundles as F


# ---------------------------------------------------------------------------- helpers

known_segments()  # hl7apy's segment tables load once, outside the timed and traced checks

def refused(data: bytes, code: str, limits: Limits = DEFAULT_LIMITS, doc_type: DocType | None = None,
            megabytes: float = 100.0) -> ExtractionError:
    """The error ``normalize`` raises, checked for its code, its sentence, and that it came
    within ``megabytes`` of Python allocations (bench/ measures time; tests do not)."""
    tracemalloc.start()
    try:
        with pytest.raises(ExtractionError) as err:
            normalize(data, allow_ocr=False, doc_type=doc_type, limits=limits)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    assert err.value.code == code, (err.value.code, err.value.message)
    assert "WORKBENCH_MAX_" in err.value.message and "kept" in err.value.message
    assert peak < megabytes, f"{peak:.0f} MB allocated before refusing"
    return err.value



class _NoEngine:
    name = "none"

    def __getattr__(self, item):
        raise AssertionError("the image was decoded")


# ---------------------------------------------------------------------------- settings

def test_every_limit_is_a_setting_with_the_same_default():
    settings = Settings()
    for f in fields(Limits):
        assert getattr(settings, f.name) == getattr(DEFAULT_LIMITS, f.name), f.name
    assert Limits.from_settings(settings) == DEFAULT_LIMITS
    assert len(set(LIMIT_CODES)) == 8


def test_a_setting_reaches_the_limits(monkeypatch):
    monkeypatch.setenv("WORKBENCH_MAX_PAGES", "7")
    assert Limits.from_settings(Settings()).max_pages == 7


# ---------------------------------------------------------------------------- PDF and images

def test_too_many_pages_is_refused_and_the_limit_itself_reads():
    refused(pdf(pages=4), "too_many_pages", Limits(max_pages=3))
    assert len(normalize(pdf(pages=3), allow_ocr=False, limits=Limits(max_pages=3)).pages) == 3


def test_a_sixty_page_fax_is_within_the_scanned_page_limit():
    assert DEFAULT_LIMITS.max_scanned_pages >= 60 and DEFAULT_LIMITS.max_pages >= 60


def test_a_page_larger_than_any_paper_is_refused():
    err = refused(pdf(width=14_400, height=14_400), "page_too_large")  # 200 x 200 in, the PDF maximum
    assert "200 x 200 inches" in err.message
    assert normalize(pdf(width=2384, height=3370), allow_ocr=False).pages  # A0 reads


def test_too_much_text_on_one_page_is_refused():
    doc = pymupdf.open()
    page = doc.new_page()
    for row in range(60):  # 60 lines of 50 characters
        page.insert_text((36, 36 + 10 * row), "x" * 50, fontsize=4)
    refused(doc.tobytes(), "page_too_large", Limits(max_text_chars_per_page=2000))


@pytest.mark.parametrize("size", [(9_000, 9_000), (100_000, 100_000)], ids=["our_limit", "pillow_guard"])
def test_a_decompression_bomb_header_is_refused_before_decoding(size):
    from extract.formats.images import normalize_image

    data = png_header(*size)
    with pytest.raises(ExtractionError) as err:
        normalize_image(data, engine=_NoEngine())  # never reaches the engine
    assert err.value.code == "image_too_large" and "WORKBENCH_MAX_IMAGE_PIXELS" in err.value.message


# ---------------------------------------------------------------------------- DOCX / XLSX archives

def test_a_zip_bomb_docx_is_refused_from_the_zip_directory():
    def write(part):  # 300 MB of paragraphs, deflated to well under 1 MB
        block = b"<w:p><w:r><w:t>x</w:t></w:r></w:p>" * 30_000
        for _ in range(300 * 2**20 // len(block)):
            part.write(block)
    bomb = with_part(docx(), "word/document.xml", write)
    assert len(bomb) < 2 * 2**20
    err = refused(bomb, "archive_too_large", megabytes=20)
    assert "MB" in err.message


def test_too_many_archive_members_are_refused():
    refused(docx(), "archive_too_large", Limits(max_archive_members=5))


def test_a_million_paragraphs_are_counted_before_python_docx_parses_them():
    def write(part):
        part.write(b'<?xml version="1.0"?><w:document xmlns:w="urn:w"><w:body>')
        for _ in range(100):
            part.write(b"<w:p/>" * 10_000)
        part.write(b"</w:body></w:document>")
    refused(with_part(docx(), "word/document.xml", write), "document_too_long", megabytes=30)


def test_too_many_paragraphs_are_refused_and_the_limit_itself_reads():
    data = docx(paragraphs=40)
    refused(data, "document_too_long", Limits(max_docx_paragraphs=39))
    assert normalize(data, limits=Limits(max_docx_paragraphs=40)).meta["paragraphs"] == 40


@pytest.mark.parametrize("ref", ["A1:XFD1048576", "A1:Z100000", "A:A"])
def test_a_merged_range_over_the_sheet_is_refused_without_expanding_it(ref):
    refused(merged_sheet(ref), "sheet_too_large", megabytes=30)


def test_a_small_merged_range_still_reads():
    content = normalize(merged_sheet("A1:C1"))
    assert any(s.meta.get("merged_from") == "A1" for s in content.sections)


def test_too_many_rows_or_cells_are_refused():
    data = xlsx(rows=60, cols=2)
    refused(data, "sheet_too_large", Limits(max_sheet_rows=50))
    refused(data, "sheet_too_large", Limits(max_sheet_cells=100))
    assert normalize(data, limits=Limits(max_sheet_rows=60, max_sheet_cells=120)).sections


# ---------------------------------------------------------------------------- HL7

def test_an_hl7_file_over_the_byte_limit_is_refused_unread():
    data = hl7() + b"NTE|1||" + b"x" * (DEFAULT_LIMITS.max_hl7_bytes + 1) + b"\r"
    refused(data, "hl7_too_large", megabytes=10)


def test_a_batch_with_too_many_messages_is_refused_and_the_limit_itself_reads():
    refused(hl7(messages=6), "hl7_too_large", Limits(max_hl7_messages=5))
    content = normalize(hl7(messages=5), limits=Limits(max_hl7_messages=5))
    assert len(content.meta["messages"]) == 5


def test_a_message_with_too_many_segments_is_refused():
    refused(hl7(obx=60), "hl7_too_large", Limits(max_hl7_segments_per_message=50))


def test_a_field_with_a_huge_number_of_repetitions_is_refused():
    # 200,000 repetitions (the file had a million): enough to show the refusal
    # comes before the field is split, and quick to trace.
    pid = "PID|1||" + "~".join(["WB-204118^^^CLINIC^MR"] * 200_000) + "||QUENTARA^MARISOL"
    err = refused(hl7(pid=pid), "hl7_too_large", megabytes=60)
    assert "PID-3" in err.message


def test_an_ordinary_message_reads_under_the_default_limits():
    assert normalize(hl7(), limits=DEFAULT_LIMITS).sections


# ---------------------------------------------------------------------------- as jobs

@pytest.mark.parametrize("data, doc_type, setting, code", [
    (pdf(pages=4), "lab_pdf", ("max_pages", 3), "too_many_pages"),
    (merged_sheet("A1:XFD1048576"), "clinical_workbook", None, "sheet_too_large"),
    (hl7(obx=60), "hl7v2_message", ("max_hl7_segments_per_message", 50), "hl7_too_large"),
    (F.as_bytes(F.bundle(*[F.lab("2951-2", "Sodium", 139, "mmol/L")] * 6)), "fhir_bundle", ("max_fhir_resources", 5),
     "fhir_too_large"),
], ids=["pdf_pages", "xlsx_merged", "hl7_segments", "fhir_resources"])
def test_a_job_over_a_limit_fails_with_its_code_and_keeps_the_original(wb, demo_patient, data, doc_type,
                                                                        setting, code):
    if setting:
        setattr(wb.settings, *setting)  # the worker reads its limits from the settings
    attached = attach_and_extract(wb, patient_id=demo_patient["id"], source="limits", data=data,
                                  filename=f"big.{doc_type}", doc_type=doc_type, by="dr.reviewer")
    Worker(wb).run_specific(attached.job["id"])
    report = document_report(wb, attached.document["id"])
    job = report["job"]
    assert (job["status"], job["error_code"]) == ("failed", code), job["error_message"]
    assert "WORKBENCH_MAX_" in job["error_message"] and "Traceback" not in job["error_message"]
    assert wb.blobs.get(attached.document["sha256"]) == data
    assert not report["facts"]
