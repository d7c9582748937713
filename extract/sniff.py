"""What a file really is, from its bytes (never from its name)."""

from __future__ import annotations

import io
import zipfile

from core.models import DocType

# Which real formats each doc_type accepts.
ACCEPTED_KINDS: dict[DocType, frozenset[str]] = {
    DocType.LAB_PDF: frozenset({"pdf", "png", "jpeg", "webp", "tiff"}),
    DocType.INTAKE_FORM: frozenset({"pdf", "png", "jpeg", "webp", "tiff"}),
    DocType.FAX_PACKET: frozenset({"pdf", "png", "jpeg", "webp", "tiff"}),
    DocType.REFERRAL_DOCX: frozenset({"docx"}),
    DocType.CLINICAL_WORKBOOK: frozenset({"xlsx"}),
    DocType.HL7V2_MESSAGE: frozenset({"hl7"}),
}

MIME_TYPES = {
    "pdf": "application/pdf", "png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp",
    "tiff": "image/tiff", "hl7": "x-application/hl7-v2+er7", "text": "text/plain",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "zip": "application/zip",
}


def sniff_kind(data: bytes) -> str | None:
    """Return pdf | png | jpeg | webp | tiff | docx | xlsx | zip | hl7 | text, or None."""
    head = data[:16]
    if data[:1024].lstrip().startswith(b"%PDF-") or b"%PDF-" in data[:1024]:
        return "pdf"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        return "tiff"
    if head.startswith(b"PK\x03\x04"):
        try:
            names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        except zipfile.BadZipFile:
            return "zip"
        if any(n.startswith("word/") for n in names):
            return "docx"
        if any(n.startswith("xl/") for n in names):
            return "xlsx"
        return "zip"
    text = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:4] in (b"MSH|", b"FHS|", b"BHS|"):
        return "hl7"
    try:
        data[:4096].decode("utf-8")
    except UnicodeDecodeError:
        return None
    return "text"
