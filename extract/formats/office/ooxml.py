"""Checks shared by the DOCX and XLSX backends before a library touches the bytes.

Turns the ways an Office file goes wrong (empty, password-protected, an old binary
.doc/.xls, a renamed text file, a zip cut short, a workbook uploaded as a letter, XML
parts that declare a DTD) into ``ExtractionError``s a person can act on, and refuses
an archive over the size limits from its zip directory, before anything is inflated.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator

from domain.errors import ExtractionError
from domain.limits import ARCHIVE_TOO_LARGE, DEFAULT_LIMITS, Limits, exceeded

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")

_KINDS = {
    "docx": ("Word document (.docx)", "word/document.xml", "not_docx", ".doc"),
    "xlsx": ("Excel workbook (.xlsx)", "xl/workbook.xml", "not_xlsx", ".xls"),
}
_OTHER = {"word/document.xml": "a Word document", "xl/workbook.xml": "an Excel workbook",
          "ppt/presentation.xml": "a PowerPoint presentation"}


def _describe(data: bytes) -> str:
    head = data[:1024].lstrip()
    if head.startswith(b"%PDF"):
        return "it is a PDF"
    if head[:4] in (b"MSH|", b"FHS|", b"BHS|"):
        return "it is an HL7 message"
    try:
        data[:4096].decode("utf-8")
        return "it is plain text"
    except UnicodeDecodeError:
        return "it is not a zip-based Office file"


def check_ooxml(data: bytes, kind: str, limits: Limits = DEFAULT_LIMITS) -> zipfile.ZipFile:
    """The opened zip when ``data`` is a readable ``kind`` ("docx" | "xlsx") package
    within ``limits`` (member count and uncompressed size, read from its directory)."""
    label, main_part, wrong_code, legacy = _KINDS[kind]
    if not data or not data.strip(b" \t\r\n\x00"):
        raise ExtractionError(f"The {label} file is empty.", code="empty_file")
    if data.startswith(_OLE_MAGIC):
        if _ENCRYPTED_STREAM in data:
            raise ExtractionError(
                f"The {label} is password-protected (encrypted); remove the password and upload it again.",
                code="encrypted_file",
            )
        raise ExtractionError(
            f"This is an old binary Office file ({legacy}), not a {label}; save it as {kind} and upload again.",
            code=wrong_code,
        )
    if not data.startswith(b"PK"):
        raise ExtractionError(f"The file is not a {label}: {_describe(data)}.", code=wrong_code)
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        names = set(zf.namelist())
        _check_archive_size(zf, label, limits)
        damaged = zf.testzip()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as exc:
        raise ExtractionError(
            f"The {label} is damaged or incomplete (its zip structure cannot be read: {exc}).",
            code="corrupt_file",
        ) from None
    if damaged is not None:
        raise ExtractionError(
            f"The {label} is damaged: the part {damaged!r} fails its checksum.", code="corrupt_file")
    if main_part not in names:
        other = next((desc for part, desc in _OTHER.items() if part in names), None)
        what = f"it is {other}" if other else "it is a zip archive without the parts of one"
        raise ExtractionError(f"The file is not a {label}: {what}.", code=wrong_code)
    if crafted := next((n for n in sorted(names) if n.lower().endswith(_XML_PARTS) and _declares_dtd(zf, n)), None):
        raise ExtractionError(
            f"The {label} is damaged or crafted: its part {crafted!r} declares a document type (DTD) or "
            f"entities, which Office files never contain; it was not read.",
            code="corrupt_file",
        )
    return zf


def _check_archive_size(zf: zipfile.ZipFile, label: str, limits: Limits) -> None:
    """Refuse a zip bomb from its directory alone. The sizes it declares bound the work:
    ``zipfile`` never inflates a member past its declared size (a member that would
    is a checksum error)."""
    members = zf.infolist()
    if len(members) > limits.max_archive_members:
        raise exceeded(ARCHIVE_TOO_LARGE, f"The {label} holds {len(members):,} parts; at most "
                       f"{limits.max_archive_members:,} are read.", "max_archive_members")
    total = sum(m.file_size for m in members)
    if total > limits.max_archive_uncompressed_bytes:
        raise exceeded(ARCHIVE_TOO_LARGE, f"The {label} unpacks to {total / 2**20:,.0f} MB; at most "
                       f"{limits.max_archive_uncompressed_bytes / 2**20:,.0f} MB are read.",
                       "max_archive_uncompressed_bytes")


_CHUNK = 1 << 20


def scan_part(zf: zipfile.ZipFile, name: str, pattern: re.Pattern[bytes]) -> Iterator[re.Match[bytes]]:
    """Matches of ``pattern`` (one start tag) in a part, read in 1 MB chunks so that a
    part is measured before any parser builds it. Each chunk is cut after its last ``>``,
    so no tag is split between two chunks."""
    rest = b""
    with zf.open(name) as part:
        while block := part.read(_CHUNK):
            buf = rest + block
            cut = buf.rfind(b">") + 1 or len(buf)
            yield from pattern.finditer(buf, 0, cut)
            rest = buf[cut:]
    yield from pattern.finditer(rest)


# The package format (OPC, ECMA-376 Part 2) forbids DTDs in its XML, so a DOCTYPE can
# only be a crafted payload (external entities reading local files, "billion laughs"
# entity expansion); it is refused before any XML parser sees the part.
_XML_PARTS = (".xml", ".rels", ".vml")
_PROLOG_LIMIT = 64 * 1024  # a real part's prolog is an XML declaration of ~60 bytes


def _declares_dtd(zf: zipfile.ZipFile, name: str) -> bool:
    """Whether the part's prolog (what precedes its root element) holds a ``<!DOCTYPE``
    or other declaration, or runs on past ``_PROLOG_LIMIT``. Reads only that head."""
    with zf.open(name) as part:
        head = part.read(_PROLOG_LIMIT)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = head.decode("utf-16", errors="ignore")
    else:
        text = head.decode("latin-1")  # markup characters are ASCII in UTF-8 too
    i = 0
    while True:
        while i < len(text) and text[i] in "\ufeff\xef\xbb\xbf \t\r\n":
            i += 1
        if text.startswith("<?", i) or text.startswith("<!--", i):
            end = text.find("?>" if text[i + 1] == "?" else "-->", i + 2)
            if end == -1:
                return len(head) >= _PROLOG_LIMIT  # a prolog longer than any real one
            i = end + 2
        else:
            return text.startswith("<!", i)
