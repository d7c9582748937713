"""Damaged and crafted files (issue 13): a file a reader had to repair is flagged
``file_repaired`` and everything it yields waits for review, never the chart; malformed,
crafted or looping files fail as ``corrupt_file`` with the original kept; a job that
keeps nothing says so; the CLI reads only regular files, refusing by size before reading.
All inputs are generated here."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from domain.errors import BadInput, ExtractionError
from domain.models import DocType
from domain.policy.facts.certainty import FILE_REPAIRED
from core.services.ingest.ingestion import ingest_now, read_upload_file
from core.services.admin.patients import add_patient
from core.services.ingest.processing import NOTHING_FOUND
from extract.normalize import normalize
from golden.fixtures import LAB_CASES, render_lab
from golden.office_fixtures import build_prose_letter
from tests.support.file_builders import (CATALOG, LAUGHS, LOOPING_PDFS, PAGE_OBJECTS, XXE, pdf_from_objects, rewrite_part,
                                 with_doctype, workbook)

ROOT = Path(__file__).resolve().parents[3]
LAB = LAB_CASES[0]


# ---------------------------------------------------------------------------- helpers

def chart_patient(wb, first: str, last: str, dob: str, mrn: str) -> dict:
    return add_patient(wb, mrn=mrn, first=first, last=last, dob=date.fromisoformat(dob), by="dr.reviewer")


def lab_patient(wb) -> dict:
    p = LAB.patient
    return chart_patient(wb, p.first, p.last, p.dob, p.mrn)


def hl7_patient(wb) -> dict:
    return chart_patient(wb, "Marisol", "Quentara", "1978-03-14", "WB-204118")


def run(wb, patient, data: bytes, doc_type: str, name: str) -> dict:
    ingested = ingest_now(wb, patient_id=patient["id"], source=name, data=data, filename=name,
                          doc_type=doc_type, by="dr.reviewer")
    return {**ingested.report, "sha256": ingested.attached.document["sha256"]}


def codes(report) -> set[str]:
    return {w["code"] for w in report["job"]["warnings"]}


def count(wb, sql: str, *params) -> int:
    with wb.db.cursor() as cur:
        return cur.execute(sql, list(params)).fetchone()[0]


def assert_held_for_review(wb, report) -> None:
    """Everything the document yielded waits for a person; nothing reached the chart."""
    assert report["job"]["status"] == "succeeded" and FILE_REPAIRED in codes(report)
    assert report["facts"], "the repaired file was expected to yield facts"
    for fact in report["facts"]:
        assert fact["certainty"] == "needs_review", fact
        assert "damaged and had to be repaired" in fact["review_reason"]
        assert not fact["active"]
    doc = report["document_id"]
    assert count(wb, "SELECT count(*) FROM promotions WHERE document_id = ? AND outcome = 'promoted'", doc) == 0
    assert count(wb, "SELECT count(*) FROM chart_lab_results") == 0


def assert_corrupt(wb, report) -> None:
    job = report["job"]
    assert (job["status"], job["error_code"]) == ("failed", "corrupt_file"), (job["error_code"], job["error_message"])
    assert job["error_message"] and "Traceback" not in job["error_message"]
    assert wb.blobs.get(report["sha256"])  # the original is kept
    assert not report["facts"]


# ---------------------------------------------------------------------------- PDF


def test_a_hand_written_pdf_with_a_sound_page_tree_reads():
    content = normalize(pdf_from_objects([CATALOG, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", *PAGE_OBJECTS]),
                        allow_ocr=False)
    assert [w.text for w in content.pages[0].words] == ["Glucose", "182", "mg/dL"]
    assert not content.warnings


@pytest.mark.parametrize("name", sorted(LOOPING_PDFS))
def test_a_page_tree_loop_is_corrupt_not_a_defect(name):
    with pytest.raises(ExtractionError) as err:
        normalize(pdf_from_objects(LOOPING_PDFS[name]), allow_ocr=True)  # never reaches OCR
    assert err.value.code == "corrupt_file" and "loops back" in str(err.value)


def test_an_impossible_page_count_is_corrupt():
    data = pdf_from_objects([CATALOG, "<< /Type /Pages /Kids [3 0 R] /Count 1000000 >>", *PAGE_OBJECTS])
    with pytest.raises(ExtractionError) as err:
        normalize(data, allow_ocr=False)
    assert err.value.code == "corrupt_file"


def test_every_cut_of_a_typed_lab_pdf_is_flagged_or_refused():
    """Cut at 30 points: MuPDF either cannot open the rest (a coded error) or rebuilds
    it, and then the content always carries file_repaired."""
    data = render_lab(LAB)
    assert not normalize(data, allow_ocr=False).warnings  # the intact file is clean
    outcomes = {"repaired": 0, "refused": 0}
    for cut in range(len(data) // 31, len(data), len(data) // 31):
        try:
            content = normalize(data[:cut], allow_ocr=False)
        except ExtractionError as exc:
            assert exc.code in ("corrupt_file", "needs_ocr"), (cut, exc.code)
            outcomes["refused"] += 1
            continue
        assert FILE_REPAIRED in {w.code for w in content.warnings}, cut
        outcomes["repaired"] += 1
    assert outcomes["repaired"] and outcomes["refused"], outcomes


def test_a_truncated_lab_pdf_goes_to_review_not_the_chart(wb):
    patient = lab_patient(wb)
    data = render_lab(LAB)
    report = run(wb, patient, data[: int(len(data) * 0.95)], "lab_pdf", "cut.pdf")
    assert_held_for_review(wb, report)


def test_the_intact_lab_pdf_is_not_flagged_and_is_promoted(wb):
    report = run(wb, lab_patient(wb), render_lab(LAB), "lab_pdf", "lab.pdf")
    assert report["job"]["status"] == "succeeded" and FILE_REPAIRED not in codes(report)
    assert any(f["certainty"] == "verified" for f in report["facts"])
    assert count(wb, "SELECT count(*) FROM chart_lab_results") > 0


def test_a_looping_pdf_fails_the_job_as_corrupt_and_keeps_the_original(wb):
    report = run(wb, lab_patient(wb), pdf_from_objects(LOOPING_PDFS["child_points_back_to_its_parent"]),
                 "lab_pdf", "loop.pdf")
    assert_corrupt(wb, report)


# ---------------------------------------------------------------------------- HL7

MSH = "MSH|^~\\&|LAB|WESTFIELD LAB|EHR|CLINIC|20240312093000-0500||ORU^R01^ORU_R01|MSG0001|P|2.5.1"
PID = "PID|1||WB-204118^^^CLINIC^MR||QUENTARA^MARISOL^J^^^^L||19780314|F"
OBR = "OBR|1|ORD1|FIL1|24323-8^Metabolic panel^LN|||20240312081500-0500|||||||||||||||20240312093000|||F"
OBX = ["OBX|1|NM|2345-7^Glucose^LN||182|mg/dL^^UCUM|70-99|H|||F|||20240312081500-0500",
       "OBX|2|NM|2823-3^Potassium^LN||4.1|mmol/L^^UCUM|3.5-5.1|N|||F|||20240312081500-0500"]
WHOLE = "\r".join([MSH, PID, OBR, *OBX])


def hl7_warnings(data: bytes) -> set[str]:
    return {w.code for w in normalize(data, doc_type=DocType.HL7V2_MESSAGE).warnings}


@pytest.mark.parametrize("data", [
    (WHOLE + "\r").encode(),
    WHOLE.encode(),  # many senders omit the last separator
    b"\x0b" + WHOLE.encode() + b"\x1c\r",
    ("FHS|^~\\&|LAB\rBHS|^~\\&|LAB\r" + WHOLE + "\rBTS|1\rFTS|1\r").encode(),
], ids=["terminated", "unterminated", "mllp_framed", "batch"])
def test_a_whole_message_is_not_flagged(data):
    assert FILE_REPAIRED not in hl7_warnings(data)


@pytest.mark.parametrize("data", [
    WHOLE[: WHOLE.rindex("|4.1|") + 3].encode(),  # cut inside the last value: "4." of "4.1"
    (WHOLE + "\rOB").encode(),  # cut inside the next segment's name
    ("\r".join([MSH, PID, OBR, "OBX|1|NM|2345-7^Glucose^LN||18"])).encode(),  # the only OBX, cut before OBX-11
    b"\x0b" + WHOLE.encode(),  # MLLP start byte, no end byte
    ("FHS|^~\\&|LAB\rBHS|^~\\&|LAB\r" + WHOLE + "\r").encode(),  # batch without its trailers
], ids=["mid_value", "mid_segment_name", "lone_obx_before_status", "mllp_unframed_end", "batch_without_trailer"])
def test_a_cut_message_is_flagged(data):
    assert FILE_REPAIRED in hl7_warnings(data)


def test_every_cut_inside_the_last_result_is_flagged():
    """Wherever the transfer stops inside the last OBX before its status, the reader says so."""
    start, status = WHOLE.rindex("\rOBX|") + 1, WHOLE.rindex("|F|")
    for cut in range(start + 1, status + 1):
        assert FILE_REPAIRED in hl7_warnings(WHOLE[:cut].encode()), WHOLE[start:cut]


def test_a_cut_hl7_message_goes_to_review_not_the_chart(wb):
    report = run(wb, hl7_patient(wb), WHOLE[: WHOLE.rindex("|4.1|") + 3].encode(), "hl7v2_message", "cut.hl7")
    assert_held_for_review(wb, report)
    values = {f["structured_value"].get("value") for f in report["facts"] if f["fact_type"] == "lab_result"}
    assert "4." in values or "4" in values  # the cut value was read, and is held


def test_the_whole_hl7_message_is_promoted(wb):
    report = run(wb, hl7_patient(wb), (WHOLE + "\r").encode(), "hl7v2_message", "whole.hl7")
    assert FILE_REPAIRED not in codes(report)
    assert count(wb, "SELECT count(*) FROM chart_lab_results") == 2


# ---------------------------------------------------------------------------- DOCX / XLSX

CRAFTED = [
    ("xlsx", "xl/sharedStrings.xml", with_doctype(XXE, "&xxe;")),
    ("xlsx", "xl/sharedStrings.xml", with_doctype(LAUGHS, "&lol9;")),
    ("xlsx", "xl/worksheets/sheet1.xml", with_doctype(LAUGHS, "&lol9;")),
    ("xlsx", "xl/workbook.xml", with_doctype(XXE, "")),
    ("xlsx", "[Content_Types].xml", with_doctype(XXE, "")),
    ("docx", "word/document.xml", with_doctype(XXE, "&xxe;")),
    ("docx", "word/styles.xml", with_doctype(LAUGHS, "")),
]


def office(kind: str) -> bytes:
    return workbook() if kind == "xlsx" else build_prose_letter()


DOC_TYPES = {"xlsx": DocType.CLINICAL_WORKBOOK, "docx": DocType.REFERRAL_DOCX}


@pytest.mark.parametrize("kind,part,edit", CRAFTED, ids=[f"{k}-{p}-{i}" for i, (k, p, _) in enumerate(CRAFTED)])
def test_a_dtd_in_any_office_part_is_refused_before_parsing(kind, part, edit):
    with pytest.raises(ExtractionError) as err:
        normalize(rewrite_part(office(kind), part, edit), doc_type=DOC_TYPES[kind])
    assert err.value.code == "corrupt_file" and "DTD" in str(err.value) and part in str(err.value)


def test_malformed_sheet_xml_is_corrupt_not_a_defect():
    broken = rewrite_part(workbook(), "xl/worksheets/sheet1.xml", lambda xml: xml.replace("</sheetData>", "", 1))
    with pytest.raises(ExtractionError) as err:
        normalize(broken, doc_type=DocType.CLINICAL_WORKBOOK)
    assert err.value.code == "corrupt_file"


@pytest.mark.parametrize("kind", ["xlsx", "docx"])
@pytest.mark.parametrize("cut", [22, 200, 1000])
def test_an_archive_missing_its_end_is_corrupt(kind, cut):
    data = office(kind)
    with pytest.raises(ExtractionError) as err:
        normalize(data[:-cut], doc_type=DOC_TYPES[kind])
    assert err.value.code == "corrupt_file" and "damaged or incomplete" in str(err.value)


def test_an_intact_workbook_still_reads():
    content = normalize(workbook(), doc_type=DocType.CLINICAL_WORKBOOK)
    assert any("Glucose" in s.text for s in content.sections)
    assert FILE_REPAIRED not in {w.code for w in content.warnings}


def test_crafted_and_cut_office_files_fail_their_jobs_as_corrupt(wb, demo_patient):
    laughs = rewrite_part(workbook(), "xl/sharedStrings.xml", with_doctype(LAUGHS, "&lol9;"))
    assert_corrupt(wb, run(wb, demo_patient, laughs, "clinical_workbook", "laughs.xlsx"))
    cut = build_prose_letter()[:-100]
    assert_corrupt(wb, run(wb, demo_patient, cut, "referral_docx", "cut.docx"))


# ---------------------------------------------------------------------------- nothing found

def test_a_success_that_keeps_nothing_carries_a_warning(wb, demo_patient):
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["Field", "Description"])
    book.active.append(["MRN", "The medical record number"])
    buf = io.BytesIO()
    book.save(buf)
    report = run(wb, demo_patient, buf.getvalue(), "clinical_workbook", "dictionary.xlsx")
    assert report["job"]["status"] == "succeeded" and not report["facts"]
    (warning,) = [w for w in report["job"]["warnings"] if w["code"] == NOTHING_FOUND]
    assert "not one finding" in warning["message"]


def test_a_success_with_findings_has_no_such_warning(wb):
    report = run(wb, hl7_patient(wb), (WHOLE + "\r").encode(), "hl7v2_message", "whole.hl7")
    assert NOTHING_FOUND not in codes(report)


# ---------------------------------------------------------------------------- reading files

def test_read_upload_file_refuses_what_is_not_a_regular_file(tmp_path):
    real = tmp_path / "lab.pdf"
    real.write_bytes(b"%PDF-1.4 tiny")
    assert read_upload_file(real, 1000) == b"%PDF-1.4 tiny"
    link = tmp_path / "link.pdf"
    link.symlink_to("/etc/passwd")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    cases = {link: "symlink_refused", fifo: "not_a_file", tmp_path: "not_a_file", Path("/dev/null"): "not_a_file",
             tmp_path / "absent.pdf": "file_not_found"}
    for path, code in cases.items():
        with pytest.raises(BadInput) as err:
            read_upload_file(path, 1000)
        assert err.value.code == code, path


def test_an_oversized_file_is_refused_from_its_size_before_reading(tmp_path):
    huge = tmp_path / "huge.pdf"
    with open(huge, "wb") as f:
        f.truncate(3 * 1024**3)  # sparse: 3 GB by its size, nothing on disk
    with pytest.raises(BadInput) as err:
        read_upload_file(huge, 50 * 1024**2)
    assert err.value.code == "file_too_large" and "3221.2 MB" in str(err.value)


@pytest.fixture(scope="module")
def cli_data(tmp_path_factory):
    d = tmp_path_factory.mktemp("damaged-cli") / "data"
    # One chart patient is all ingest needs before it reads the file (init would also index the corpus).
    added = cli(d, "patient", "add", "--mrn", "CLI-D1", "--first", "Ada", "--last", "Lind", "--dob", "1970-01-01")
    assert added.returncode == 0, added.stderr
    return d


def cli(data_dir: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    from tests.support.browser_support import make_run_env

    environ = {**make_run_env(data_dir), **env}  # the CLI as a user runs it, plus the setting a case is about
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=environ, capture_output=True,
                          text=True, timeout=120)


def test_cli_ingest_refuses_links_pipes_directories_devices_and_oversize(cli_data, tmp_path):
    link = tmp_path / "passwd.hl7"
    link.symlink_to("/etc/passwd")
    fifo = tmp_path / "pipe.hl7"
    os.mkfifo(fifo)
    big = tmp_path / "big.hl7"
    with open(big, "wb") as f:
        f.truncate(2048)
    cases = [(link, "symlink_refused", {}), (fifo, "not_a_file", {}), (tmp_path, "not_a_file", {}),
             (Path("/dev/null"), "not_a_file", {}), (big, "file_too_large", {"WORKBENCH_UPLOAD_MAX_BYTES": "1024"})]
    for path, code, env in cases:
        proc = cli(cli_data, "ingest", str(path), "--patient", "CLI-D1", "--doc-type", "hl7v2_message", **env)
        assert proc.returncode == 2, (path, proc.stderr)
        assert f"error: {code}:" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert "root:" not in proc.stdout + proc.stderr
