"""Builders of the files the robustness tests feed the readers: minimal PDFs, images,
DOCX and XLSX archives and HL7 v2 messages, each generated in code (never a committed
binary), whole or altered part by part. Shared by test_limits, test_damaged_files and
the malformed corpus (tests/support/malformed_corpus.py). Text placed word for word on a
page is ``golden.drawing.placed_text_pdf``, which the golden documents use too."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

import pymupdf

MSH = "MSH|^~\\&|LAB|WESTFIELD LAB|EHR|CLINIC|20240312093000-0500||ORU^R01^ORU_R01|MSG{n:04d}|P|2.5.1"
PID = "PID|1||WB-204118^^^CLINIC^MR||QUENTARA^MARISOL^J^^^^L||19780314|F"
OBR = "OBR|1|ORD1|FIL1|24323-8^Metabolic panel^LN|||20240312081500-0500|||||||||||||||20240312093000|||F"
OBX = "OBX|{n}|NM|2345-7^Glucose^LN||182|mg/dL^^UCUM|70-99|H|||F|||20240312081500-0500"
# Sniffed as a PDF, unreadable as one: its job fails at extraction, or is claimed and
# killed in the worker tests, without any real reading (the ``queued`` fixture's file).
FAKE_PDF = b"%PDF-1.4\n% not really a pdf but sniffed as one\n"


def pdf(pages: int = 1, text: str = "Glucose 182 mg/dL", width: float = 612, height: float = 792) -> bytes:
    doc = pymupdf.open()
    for _ in range(pages):
        doc.new_page(width=width, height=height).insert_text((72, 72), text, fontsize=10)
    return doc.tobytes()




def png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` and holds no pixels at all."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 16)) + chunk(b"IEND", b""))


def docx(paragraphs: int = 3) -> bytes:
    import docx as python_docx

    document = python_docx.Document()
    for i in range(paragraphs):
        document.add_paragraph(f"Line {i}")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def xlsx(rows: int = 3, cols: int = 3) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    for r in range(rows):
        book.active.append([f"r{r}c{c}" for c in range(cols)])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def with_part(data: bytes, name: str, write) -> bytes:
    """The zip with part ``name`` replaced by what ``write(stream)`` writes (streamed, so a
    part of hundreds of MB never sits in memory)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename != name:
                dst.writestr(info, src.read(info.filename))
        info = zipfile.ZipInfo(name)
        info.compress_type = zipfile.ZIP_DEFLATED
        with dst.open(info, "w", force_zip64=True) as part:
            write(part)
    return out.getvalue()


def merged_sheet(ref: str) -> bytes:
    def write(part):
        xml = zipfile.ZipFile(io.BytesIO(xlsx())).read("xl/worksheets/sheet1.xml")
        part.write(xml.replace(b"</sheetData>", f'</sheetData><mergeCells count="1"><mergeCell ref="{ref}"/>'
                                                 f"</mergeCells>".encode()))
    return with_part(xlsx(), "xl/worksheets/sheet1.xml", write)


def hl7(messages: int = 1, obx: int = 2, pid: str = PID) -> bytes:
    body = []
    for n in range(1, messages + 1):
        body += [MSH.format(n=n), pid, OBR, *(OBX.format(n=k) for k in range(1, obx + 1))]
    return ("\r".join(body) + "\r").encode()


def pdf_from_objects(objects: list[str]) -> bytes:
    """A PDF written by hand (object 1 the catalog) with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


PAGE_TEXT = "BT /F1 12 Tf 72 720 Td (Glucose 182 mg/dL) Tj ET"
PAGE_OBJECTS = [
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    f"<< /Length {len(PAGE_TEXT)} >>\nstream\n{PAGE_TEXT}\nendstream",
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
]
CATALOG = "<< /Type /Catalog /Pages 2 0 R >>"
LOOPING_PDFS = {
    "kids_list_the_root_itself": [CATALOG, "<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>", *PAGE_OBJECTS],
    "child_points_back_to_its_parent": [CATALOG, "<< /Type /Pages /Kids [6 0 R] /Count 1 >>", *PAGE_OBJECTS,
                                        "<< /Type /Pages /Parent 2 0 R /Kids [2 0 R 3 0 R] /Count 1 >>"],
    "two_nodes_only_point_at_each_other": [CATALOG, "<< /Type /Pages /Kids [6 0 R] /Count 5 >>", *PAGE_OBJECTS,
                                           "<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 5 >>"],
}


XXE = '<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
LAUGHS = ('<!DOCTYPE lolz [<!ENTITY lol "lol">'
          + "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10 if i > 1 else "&lol;" * 10}">' for i in range(1, 10))
          + "]>")


_SS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
WORKBOOK_PARTS = {
    "[Content_Types].xml": (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/xl/workbook.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
        '<Override PartName="/xl/sharedStrings.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>'),
    "_rels/.rels": (
        f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{_PKG}">'
        f'<Relationship Id="rId1" Type="{_R}/officeDocument" Target="xl/workbook.xml"/></Relationships>'),
    "xl/workbook.xml": (
        f'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{_SS}" xmlns:r="{_R}">'
        '<sheets><sheet name="Results" sheetId="1" r:id="rId1"/></sheets></workbook>'),
    "xl/_rels/workbook.xml.rels": (
        f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{_PKG}">'
        f'<Relationship Id="rId1" Type="{_R}/worksheet" Target="worksheets/sheet1.xml"/>'
        f'<Relationship Id="rId2" Type="{_R}/sharedStrings" Target="sharedStrings.xml"/></Relationships>'),
    "xl/sharedStrings.xml": (
        f'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="{_SS}" count="4" uniqueCount="4">'
        '<si><t>Test</t></si><si><t>Result</t></si><si><t>Glucose</t></si><si><t>mg/dL</t></si></sst>'),
    "xl/worksheets/sheet1.xml": (
        f'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{_SS}"><sheetData>'
        '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>'
        '<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2"><v>182</v></c><c r="C2" t="s"><v>3</v></c></row>'
        '</sheetData></worksheet>'),
}


def workbook() -> bytes:
    """A minimal workbook written part by part, with shared strings (openpyxl writes none)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, xml in WORKBOOK_PARTS.items():
            z.writestr(name, xml)
    return buf.getvalue()


def rewrite_part(data: bytes, part: str, edit) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    assert part in src.namelist(), src.namelist()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            dst.writestr(info, edit(body.decode()).encode() if info.filename == part else body)
    return out.getvalue()


def with_doctype(doctype: str, reference: str):
    def edit(xml: str) -> str:
        head_end = xml.index("?>") + 2 if xml.startswith("<?xml") else 0
        xml = xml[:head_end] + doctype + xml[head_end:]
        return xml.replace("<t>", f"<t>{reference}", 1).replace("<v>", f"<v>{reference}", 1)
    return edit


def sheets_workbook(sheets: dict[str, list[list]]) -> bytes:
    """A workbook of named sheets, each a list of rows (cells as openpyxl takes them:
    text, numbers, datetimes; None leaves a cell empty)."""
    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def letter_with_tables(*tables: list[list[str]]) -> bytes:
    """A referral letter (DOCX) about Elspeth Marchbank-Oyelaran, DOB 17/10/1972 (her
    dates print day first), with ``tables`` between its greeting and its sign-off."""
    from golden.documents import build_spec

    return build_spec({"kind": "docx", "tables": list(tables), "paragraphs": [
        "Re: Elspeth Marchbank-Oyelaran, DOB 17/10/1972, NHS number 943 476 5919",
        "Dear Dr Kettleby, I would be grateful if you could see this lady about her renal function."],
        "after_table": ["Yours sincerely, Dr R. Abernethy"]}, {})[0]
