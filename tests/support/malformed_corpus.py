"""A corpus of malformed, damaged, crafted and oversized inputs, generated in code (never
committed binaries), for the robustness test (tests/core/ingest/test_malformed_corpus.py) and its
benchmark (bench/malformed_corpus.py).

Each sample names its family (``kind``), the doc type it is uploaded as, which chart it
goes to, and what may become of it:
- ``refused``: a failed job (or, for a file the upload itself refuses, a BadInput) with
  one of ``codes``;
- ``held``: a damaged file some reader could still rebuild: a success whose findings all
  wait for review, or a refusal with one of ``codes``.
No sample may put anything on a chart. The damaged-but-readable samples carry the
identity of the chart they go to (``patient``: "lab" or "hl7"), so that only the damage
flag stands between them and the chart; the rest go to the demo patient."""

from __future__ import annotations

import io
import random
import zipfile
from dataclasses import dataclass

import pymupdf

from golden.fixtures import LAB_CASES, render_lab
from golden.office_fixtures import build_prose_letter
from tests.support.file_builders import (CATALOG, LAUGHS, LOOPING_PDFS, OBR, OBX, PAGE_OBJECTS, PID, XXE, docx, hl7,
                                 merged_sheet, pdf, pdf_from_objects, png_header, rewrite_part, with_doctype,
                                 with_part, workbook, xlsx)

LAB = LAB_CASES[0]
DOC_TYPES = ("lab_pdf", "intake_form", "referral_docx", "clinical_workbook", "fax_packet", "hl7v2_message")
LIMIT = {"too_many_pages", "page_too_large", "image_too_large", "archive_too_large", "sheet_too_large",
         "document_too_long", "hl7_too_large"}
# What a file that is not what its label says may end as: the reader for what the bytes
# are refuses it, or the extractor for the label finds nothing it can use.
UNREADABLE = {"corrupt_file", "unsupported_format", "wrong_content_kind", "not_hl7", "hl7_parse_error",
              "corrupt_image", "unsupported_image_format", "needs_ocr", "ocr_failed", "encrypted_pdf",
              "encrypted_file", "no_results_found", "no_fields_found", "no_clinical_content",
              "docx_not_a_referral", "xlsx_not_patient_results", "unsupported_doc_type", "empty_file",
              "not_docx", "not_xlsx"}
# What the upload check itself may refuse any sample with (nothing is stored then: the
# sender sees the refusal at once, and there is no job to hold the queue).
UPLOAD_REFUSALS = frozenset({"empty_file", "type_mismatch", "file_too_large"})


@dataclass(frozen=True)
class Sample:
    kind: str
    name: str
    doc_type: str
    data: bytes
    expect: str = "refused"  # or "held"
    codes: frozenset[str] = frozenset(UNREADABLE)
    patient: str = "demo"  # "lab" / "hl7": the chart whose identity the file carries


def _codes(*codes: str) -> frozenset[str]:
    return frozenset(codes)


def _zip(parts: dict[str, bytes | str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in parts.items():
            z.writestr(name, body)
    return out.getvalue()


def _text_pdf(chars_per_page: int, pages: int = 1) -> bytes:
    """A hand-written PDF whose pages each show ``chars_per_page`` letters in tiny lines."""
    line = "A" * 1_000
    lines = " T* ".join(f"({line}) Tj" for _ in range(chars_per_page // len(line)))
    stream = f"BT /F1 0.5 Tf 1 TL 10 785 Td {lines} ET"
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(pages))
    objects = [CATALOG, f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>"]
    font = 3 + 2 * pages
    for i in range(pages):
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
                       f"/Resources << /Font << /F1 {font} 0 R >> >> >>")
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return pdf_from_objects(objects)


def _encrypted_pdf() -> bytes:
    doc = pymupdf.open(stream=pdf(), filetype="pdf")
    return doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")


def _png(width: int = 400, height: int = 200) -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("L", (width, height), 255)
    ImageDraw.Draw(image).text((10, 10), "Glucose 182 mg/dL", fill=0)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _jpeg() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (300, 300), (250, 250, 250)).save(out, format="JPEG")
    return out.getvalue()


def _zip_bomb_docx() -> bytes:
    """word/document.xml is 300 MB of spaces inside the paragraph body, a few hundred KB zipped."""
    def write(part):
        part.write(b'<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/'
                   b'wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>')
        block = b" " * (1 << 20)
        for _ in range(300):
            part.write(block)
        part.write(b"</w:t></w:r></w:p></w:body></w:document>")
    return with_part(docx(), "word/document.xml", write)


def _paragraphs_docx(count: int) -> bytes:
    def write(part):
        part.write(b'<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/'
                   b'wordprocessingml/2006/main"><w:body>')
        for i in range(count):
            part.write(b"<w:p><w:r><w:t>Line %d</w:t></w:r></w:p>" % i)
        part.write(b"</w:body></w:document>")
    return with_part(docx(), "word/document.xml", write)


def _rows_xlsx(rows: int, cols: int = 1) -> bytes:
    def write(part):
        part.write(b'<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/'
                   b'spreadsheetml/2006/main"><sheetData>')
        for r in range(1, rows + 1):
            cells = b"".join(b'<c r="%s%d"><v>%d</v></c>' % (bytes([65 + c]), r, r) for c in range(cols))
            part.write(b'<row r="%d">%s</row>' % (r, cells))
        part.write(b"</sheetData></worksheet>")
    return with_part(xlsx(), "xl/worksheets/sheet1.xml", write)


def _many_members(kind: str) -> bytes:
    base = docx() if kind == "docx" else xlsx()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(base)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info.filename))
        for i in range(2_100):
            dst.writestr(f"extra/part{i}.xml", b"<a/>")
    return out.getvalue()


# A DTD in an Office part: an external entity (XXE) or nested entities ("billion laughs").
_DTDS = {
    "referral_docx": [("xxe", "word/document.xml", XXE, "&xxe;"), ("laughs-styles", "word/styles.xml", LAUGHS, ""),
                      ("laughs-document", "word/document.xml", LAUGHS, "&lol9;")],
    "clinical_workbook": [("xxe-shared-strings", "xl/sharedStrings.xml", XXE, "&xxe;"),
                          ("laughs-sheet", "xl/worksheets/sheet1.xml", LAUGHS, "&lol9;"),
                          ("xxe-content-types", "[Content_Types].xml", XXE, "")],
}


def _with_dtds(kind: str, doc_type: str, base: bytes) -> list[Sample]:
    return [Sample(kind, name, doc_type, rewrite_part(base, part, with_doctype(dtd, reference)),
                   codes=_codes("corrupt_file"))
            for name, part, dtd, reference in _DTDS[doc_type]]


def _hl7_whole() -> str:
    return hl7(messages=1, obx=2).decode()


def families() -> dict[str, list[Sample]]:
    rng = random.Random(13)
    lab = render_lab(LAB)
    letter = build_prose_letter()
    book = workbook()
    whole_hl7 = _hl7_whole()
    out: dict[str, list[Sample]] = {}

    out["empty"] = [Sample("empty", f"empty-{t}", t, b"", codes=_codes("empty_file")) for t in DOC_TYPES]
    out["random_bytes"] = [
        Sample("random_bytes", f"noise-{i}.bin", DOC_TYPES[i % len(DOC_TYPES)],
               rng.randbytes(rng.choice([1, 7, 512, 4096, 65_536, 300_000])))
        for i in range(30)]

    good = {"pdf": lab, "docx": letter, "xlsx": book, "hl7": whole_hl7.encode(), "png": _png(),
            "jpeg": _jpeg()}
    wrong_labels = {"pdf": ["clinical_workbook", "hl7v2_message"],
                    "docx": ["lab_pdf", "clinical_workbook", "hl7v2_message", "fax_packet"],
                    "xlsx": ["referral_docx", "hl7v2_message", "intake_form"],
                    "hl7": ["lab_pdf", "referral_docx", "clinical_workbook"],
                    "png": ["clinical_workbook", "hl7v2_message"],
                    "jpeg": ["referral_docx"]}
    out["mislabelled"] = [Sample("mislabelled", f"{fmt}-as-{label}", label, good[fmt])
                          for fmt, labels in wrong_labels.items() for label in labels]

    cuts = [0.2, 0.35, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99, 0.995, 0.999]
    out["truncated_pdf"] = [
        Sample("truncated_pdf", f"lab-cut-{c}", "lab_pdf", lab[: int(len(lab) * c)], expect="held",
               codes=_codes("corrupt_file", "no_results_found", "needs_ocr", "ocr_failed", "no_collection_date"),
               patient="lab")
        for c in cuts]

    start = whole_hl7.rindex("\rOBX|") + 1
    status = whole_hl7.rindex("|F|")
    hl7_cuts = sorted({start + (status - start) * k // 12 for k in range(1, 13)})
    out["truncated_hl7"] = [
        Sample("truncated_hl7", f"hl7-cut-{cut}", "hl7v2_message", whole_hl7[:cut].encode(), expect="held",
               codes=_codes("hl7_parse_error"), patient="hl7")
        for cut in hl7_cuts]
    out["truncated_hl7"] += [
        Sample("truncated_hl7", "hl7-mllp-unclosed", "hl7v2_message", b"\x0b" + whole_hl7.encode(), expect="held",
               codes=_codes("hl7_parse_error"), patient="hl7"),
        Sample("truncated_hl7", "hl7-batch-no-trailer", "hl7v2_message",
               ("FHS|^~\\&|LAB\rBHS|^~\\&|LAB\r" + whole_hl7).encode(), expect="held",
               codes=_codes("hl7_parse_error"), patient="hl7"),
        Sample("truncated_hl7", "hl7-cut-segment-name", "hl7v2_message", (whole_hl7 + "OB").encode(),
               expect="held", codes=_codes("hl7_parse_error"), patient="hl7")]

    hl7_bad = {"no-msh": "\r".join([PID, OBR, OBX.format(n=1)]),
               "only-pid": PID,
               "prose": "Dear colleague,\nplease see the results below.\nGlucose 182 mg/dL\n",
               "msh-no-delimiters": "MSH\rPID|1\r",
               "msh-binary": "MSH|^~\\&|LAB|\x00\x01\x02\x03\x00\x00\x00" * 50,
               "bhs-only": "FHS|^~\\&|LAB\rBHS|^~\\&|LAB\rBTS|0\rFTS|1\r",
               "csv": "mrn,test,value\nWB-204118,glucose,182\n",
               "json": '{"resourceType": "Observation", "valueQuantity": {"value": 182}}',
               "utf16": whole_hl7.encode("utf-16").decode("latin-1"),
               "control-chars": "".join(chr(rng.randrange(0, 32)) for _ in range(5_000))}
    out["hl7_malformed"] = [Sample("hl7_malformed", name, "hl7v2_message", text.encode("latin-1"),
                                   codes=_codes("not_hl7", "hl7_parse_error", "unsupported_format", "empty_file",
                                                "no_results_found", "no_clinical_content"))
                            for name, text in hl7_bad.items()]

    corrupt_pdf = _codes("corrupt_file", "needs_ocr", "ocr_failed", "no_results_found")
    out["pdf_crafted"] = [Sample("pdf_crafted", f"loop-{name}", "lab_pdf", pdf_from_objects(objects),
                                 codes=_codes("corrupt_file"))
                          for name, objects in LOOPING_PDFS.items()]
    out["pdf_crafted"] += [
        Sample("pdf_crafted", "count-a-million", "lab_pdf",
               pdf_from_objects([CATALOG, "<< /Type /Pages /Kids [3 0 R] /Count 1000000 >>", *PAGE_OBJECTS]),
               codes=_codes("corrupt_file")),
        Sample("pdf_crafted", "no-pages", "lab_pdf",
               pdf_from_objects([CATALOG, "<< /Type /Pages /Kids [] /Count 0 >>"]), codes=corrupt_pdf),
        Sample("pdf_crafted", "header-only", "fax_packet", b"%PDF-1.7\n%%EOF\n", codes=corrupt_pdf),
        Sample("pdf_crafted", "xref-lies", "lab_pdf", lab.replace(b"startxref", b"startxref\n999999999\n%", 1),
               expect="held", codes=corrupt_pdf, patient="lab"),
        Sample("pdf_crafted", "encrypted", "lab_pdf", _encrypted_pdf(), codes=_codes("encrypted_pdf")),
        Sample("pdf_crafted", "encrypted-fax", "fax_packet", _encrypted_pdf(), codes=_codes("encrypted_pdf")),
        Sample("pdf_crafted", "pdf-magic-then-noise", "intake_form", b"%PDF-1.4\n" + rng.randbytes(20_000),
               codes=corrupt_pdf)]

    out["pdf_oversized"] = [
        Sample("pdf_oversized", "pages-201", "lab_pdf", pdf(pages=201), codes=_codes("too_many_pages")),
        Sample("pdf_oversized", "pages-500-fax", "fax_packet", pdf(pages=500), codes=_codes("too_many_pages")),
        Sample("pdf_oversized", "page-200in-square", "lab_pdf", pdf(width=14_400, height=14_400),
               codes=_codes("page_too_large")),
        Sample("pdf_oversized", "text-250k-a-page", "lab_pdf", _text_pdf(250_000), codes=_codes("page_too_large")),
        Sample("pdf_oversized", "text-220k-on-3-pages", "intake_form", _text_pdf(220_000, pages=3),
               codes=_codes("page_too_large"))]

    png = _png()
    out["image_damaged"] = [
        Sample("image_damaged", f"bomb-{w}x{h}", "lab_pdf", png_header(w, h), codes=_codes("image_too_large"))
        for w, h in [(9_000, 9_000), (100_000, 100_000), (60_000, 2_000), (1, 70_000_000)]]
    out["image_damaged"] += [
        Sample("image_damaged", "png-cut-half", "lab_pdf", png[: len(png) // 2]),
        Sample("image_damaged", "png-cut-header", "fax_packet", png[:40]),
        Sample("image_damaged", "jpeg-cut", "lab_pdf", _jpeg()[:200]),
        Sample("image_damaged", "png-magic-then-noise", "lab_pdf", png[:8] + rng.randbytes(5_000)),
        Sample("image_damaged", "gif", "lab_pdf", b"GIF89a" + rng.randbytes(200))]

    corrupt_office = _codes("corrupt_file", "unsupported_format", "not_docx", "not_xlsx", "docx_not_a_referral", "xlsx_not_patient_results",
                            "no_clinical_content", "no_results_found", "encrypted_file")
    out["docx_crafted"] = [
        Sample("docx_crafted", "zip-bomb", "referral_docx", _zip_bomb_docx(), codes=_codes("archive_too_large")),
        Sample("docx_crafted", "paragraphs-60k", "referral_docx", _paragraphs_docx(60_000),
               codes=_codes("document_too_long")),
        Sample("docx_crafted", "paragraphs-1m", "referral_docx", _paragraphs_docx(1_000_000),
               codes=_codes("document_too_long", "archive_too_large")),
        Sample("docx_crafted", "members-2100", "referral_docx", _many_members("docx"),
               codes=_codes("archive_too_large")),
        Sample("docx_crafted", "no-document-part", "referral_docx",
               _zip({"[Content_Types].xml": "<Types/>", "word/styles.xml": "<styles/>"}), codes=corrupt_office),
        Sample("docx_crafted", "document-not-xml", "referral_docx",
               rewrite_part(letter, "word/document.xml", lambda xml: xml[: len(xml) // 2]),
               codes=corrupt_office),
        Sample("docx_crafted", "plain-zip", "referral_docx", _zip({"notes.txt": "Glucose 182"}),
               codes=corrupt_office)]
    out["docx_crafted"] += _with_dtds("docx_crafted", "referral_docx", letter)
    out["docx_crafted"] += [
        Sample("docx_crafted", f"cut-{cut}", "referral_docx", letter[:-cut], codes=_codes("corrupt_file"))
        for cut in (22, 100, 1_000, len(letter) // 2)]

    out["xlsx_crafted"] = [
        Sample("xlsx_crafted", f"merged-{ref}", "clinical_workbook", merged_sheet(ref), codes=_codes("sheet_too_large"))
        for ref in ("A1:XFD1048576", "A1:Z100000", "A:A", "B2:AZ9000")]
    out["xlsx_crafted"] += [
        Sample("xlsx_crafted", "rows-100001", "clinical_workbook", _rows_xlsx(100_001),
               codes=_codes("sheet_too_large")),
        Sample("xlsx_crafted", "cells-600k", "clinical_workbook", _rows_xlsx(60_000, cols=10),
               codes=_codes("sheet_too_large")),
        Sample("xlsx_crafted", "members-2100", "clinical_workbook", _many_members("xlsx"),
               codes=_codes("archive_too_large")),
        Sample("xlsx_crafted", "sheet-xml-broken", "clinical_workbook",
               rewrite_part(book, "xl/worksheets/sheet1.xml", lambda xml: xml.replace("</sheetData>", "", 1)),
               codes=_codes("corrupt_file")),
        Sample("xlsx_crafted", "no-workbook-part", "clinical_workbook",
               _zip({"[Content_Types].xml": "<Types/>", "xl/sharedStrings.xml": "<sst/>"}), codes=corrupt_office),
        Sample("xlsx_crafted", "plain-zip", "clinical_workbook", _zip({"data.csv": "a,b\n1,2\n"}),
               codes=corrupt_office)]
    out["xlsx_crafted"] += _with_dtds("xlsx_crafted", "clinical_workbook", book)
    out["xlsx_crafted"] += [
        Sample("xlsx_crafted", f"cut-{cut}", "clinical_workbook", book[:-cut], codes=_codes("corrupt_file"))
        for cut in (22, 200, len(book) // 2)]

    too_large = _codes("hl7_too_large")
    out["hl7_oversized"] = [
        Sample("hl7_oversized", "bytes-33mb", "hl7v2_message",
               (whole_hl7 + "\r" + "NTE|1||" + "x" * (33 * 1024 * 1024) + "\r").encode(), codes=too_large),
        Sample("hl7_oversized", "segments-6000", "hl7v2_message", hl7(messages=1, obx=6_000), codes=too_large),
        Sample("hl7_oversized", "repetitions-1m", "hl7v2_message",
               ("\r".join([whole_hl7.split("\r")[0], "PID|1||" + "~".join(["WB-204118^^^CLINIC^MR"] * 1_000_000)
                           + "||QUENTARA^MARISOL||19780314|F"]) + "\r").encode(), codes=too_large),
        Sample("hl7_oversized", "repetitions-obx", "hl7v2_message",
               (whole_hl7 + "OBX|3|ST|X^Note||" + "~".join(["a"] * 5_000) + "||||||F\r").encode(), codes=too_large),
        Sample("hl7_oversized", "messages-10001", "hl7v2_message", hl7(messages=10_001, obx=0), codes=too_large)]
    return out


def build() -> list[Sample]:
    return [sample for family in families().values() for sample in family]
