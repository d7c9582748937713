"""What a file really is, from its bytes (never from its name)."""

from __future__ import annotations

import io
import zipfile
from codecs import getincrementaldecoder

from domain.models import DocType

# Which real formats each doc_type accepts. A broken zip may still be the DOCX/XLSX it
# claims to be, and text may be an HL7 message behind framing bytes or a banner: those
# reach the format's reader, which fails the job with a precise code if it must.
ACCEPTED_FORMATS: dict[DocType, frozenset[str]] = {
    DocType.LAB_PDF: frozenset({"pdf", "png", "jpeg", "webp", "tiff"}),
    DocType.INTAKE_FORM: frozenset({"pdf", "png", "jpeg", "webp", "tiff"}),
    DocType.FAX_PACKET: frozenset({"pdf", "png", "jpeg", "webp", "tiff"}),
    DocType.REFERRAL_DOCX: frozenset({"docx", "zip", "pdf"}),  # a letter printed to PDF is read by its paragraphs
    DocType.CLINICAL_WORKBOOK: frozenset({"xlsx", "zip"}),
    DocType.HL7V2_MESSAGE: frozenset({"hl7", "text"}),
    DocType.FHIR_BUNDLE: frozenset({"fhir", "json"}),  # JSON that is not FHIR, or cut short: the reader says which
}

MIME_TYPES = {
    "pdf": "application/pdf", "png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp",
    "tiff": "image/tiff", "hl7": "x-application/hl7-v2+er7", "text": "text/plain",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "zip": "application/zip", "fhir": "application/fhir+json", "json": "application/json",
}

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"II*\x00", "tiff"),
    (b"MM\x00*", "tiff"),
    (b"II+\x00", "tiff"),  # BigTIFF
    (b"MM\x00+", "tiff"),
)


def sniff_format(data: bytes) -> str | None:
    """pdf | png | jpeg | webp | tiff | docx | xlsx | zip | hl7 | fhir | json | text, or None (binary)."""
    if not data:
        return None
    for magic, file_format in _MAGIC:
        if data.startswith(magic):
            return file_format
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    if b"%PDF-" in data[:1024]:  # the format lets junk precede the header
        return "pdf"
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return _zip_format(data)
    text = _as_text(data)
    if text is None:
        return None
    if text.lstrip("\ufeff \t\r\n\x0b")[:4] in ("MSH|", "FHS|", "BHS|"):  # \x0b: MLLP start block
        return "hl7"
    if text.lstrip("\ufeff \t\r\n")[:1] in ("{", "["):
        return "fhir" if _top_level_resource_type(text) else "json"
    return "text"


def mime_of(data: bytes) -> str | None:
    file_format = sniff_format(data)
    return MIME_TYPES.get(file_format) if file_format else None


def _zip_format(data: bytes) -> str:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = zf.namelist()
    except zipfile.BadZipFile:
        return "zip"  # truncated or damaged: the reader of the claimed format says so
    if any(n.startswith("word/") for n in names):
        return "docx"
    if any(n.startswith("xl/") for n in names):
        return "xlsx"
    return "zip"


def _top_level_resource_type(text: str) -> bool:
    """Whether a JSON object's own members (not a nested object's) include
    ``resourceType``, judged from the text's head without parsing it: FHIR writes it
    first, but JSON does not promise member order."""
    depth, i, n = 0, 0, len(text)
    expect_key = False
    while i < n:
        ch = text[i]
        if ch == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            if depth == 1 and expect_key and text[i + 1:end] == "resourceType":
                return text[end + 1:end + 64].lstrip().startswith(":")
            expect_key = False
            i = end + 1
            continue
        if ch in "{[":
            depth += 1
            expect_key = ch == "{" and depth == 1
        elif ch in "}]":
            depth -= 1
        elif ch == "," and depth == 1:
            expect_key = True
        i += 1
    return False


def _as_text(data: bytes) -> str | None:
    """Decode the head of ``data`` as text, or None if it is binary."""
    head = data[:65536]
    if b"\x00" in head:
        return None
    try:
        # Incremental: a multi-byte character cut at the boundary is not an error.
        text = getincrementaldecoder("utf-8")().decode(head, final=len(data) <= len(head))
    except UnicodeDecodeError:
        text = head.decode("latin-1")  # legacy 8-bit text (HL7 v2 is often ISO-8859-1)
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\r\n\f\x0b\x1c")
    return text if controls <= len(text) * 0.01 else None
