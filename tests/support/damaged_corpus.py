"""Damaged and hostile files, second round (issue 28), generated in code: the kinds a
fresh corpus found ending as ``internal_error`` or charting what the reader could not
read. Written after the fixes, each names what may become of it:

- ``refused``: a failed job with one of ``codes`` (never ``internal_error``);
- ``held``: a damaged file whose intact parts were read: a success whose findings all
  wait for review, with a warning saying which part is damaged, or a refusal;
- ``review``: an intact file holding a finding the reader cannot trust (a result with no
  test name): a success whose findings wait for review.

Each carries the identity of the chart it is uploaded to (``patient``: "lab" or "hl7"),
so that only the damage rule stands between it and that chart."""

from __future__ import annotations

import random
import struct

import pymupdf

from domain.policy.facts.certainty import FILE_DAMAGED, FILE_REPAIRED, PAGE_UNREADABLE
from golden.fax import packet
from golden.fixtures import LAB_CASES, render_lab
from golden.scan import scan_pdf
from tests.support import malformed_corpus
from tests.support.file_builders import MSH, OBR, PID, with_part, workbook

LAB = LAB_CASES[0]
HOLDING = frozenset({FILE_REPAIRED, FILE_DAMAGED, PAGE_UNREADABLE})
# A damaged scan may also end with nothing usable read from what is left of it.
DAMAGED_SCAN = frozenset({"corrupt_image", "corrupt_file", "no_results_found", "ocr_failed", "no_clinical_content"})


def sample(kind: str, name: str, doc_type: str, data: bytes, expect: str,
           codes: frozenset[str] = DAMAGED_SCAN, patient: str = "lab") -> malformed_corpus.Sample:
    """The first round's sample (tests/support/malformed_corpus.py) with this round's
    defaults: the lab chart's identity, the codes a damaged scan may end with.
    ``expect``: refused | held | review."""
    return malformed_corpus.Sample(kind, name, doc_type, data, expect=expect, codes=codes, patient=patient)


# ------------------------------------------------------------------ TIFF surgery

def _order(tiff: bytes) -> str:
    return "<" if tiff[:2] == b"II" else ">"


def directories(tiff: bytes) -> list[int]:
    """Offsets of a classic TIFF's page directories, in chain order."""
    order, out = _order(tiff), []
    offset = struct.unpack_from(order + "I", tiff, 4)[0]
    while offset and offset not in out:
        out.append(offset)
        entries = struct.unpack_from(order + "H", tiff, offset)[0]
        offset = struct.unpack_from(order + "I", tiff, offset + 2 + 12 * entries)[0]
    return out


def _entries(tiff: bytes, directory: int):
    order = _order(tiff)
    for i in range(struct.unpack_from(order + "H", tiff, directory)[0]):
        at = directory + 2 + 12 * i
        tag, kind, count = struct.unpack_from(order + "HHI", tiff, at)
        yield at, tag, kind, count


def looping(tiff: bytes) -> bytes:
    """The last page's next-pointer aimed back at the first page."""
    order, dirs = _order(tiff), directories(tiff)
    last = dirs[-1]
    entries = struct.unpack_from(order + "H", tiff, last)[0]
    out = bytearray(tiff)
    struct.pack_into(order + "I", out, last + 2 + 12 * entries, dirs[0])
    return bytes(out)


def strips_past_end(tiff: bytes, page: int = 0) -> bytes:
    """Page ``page``'s image data said to lie past the end of the file."""
    order, out = _order(tiff), bytearray(tiff)
    for at, tag, _kind, count in _entries(tiff, directories(tiff)[page]):
        if tag == 273:  # StripOffsets: the value, or where the list of values lies
            struct.pack_into(order + "I", out, at + 8, len(tiff) + 4096 * (count + 1))
    return bytes(out)


def bad_directory(tiff: bytes) -> bytes:
    """The first page's directory claims 65,535 entries."""
    out = bytearray(tiff)
    struct.pack_into(_order(tiff) + "H", out, directories(tiff)[0], 0xFFFF)
    return bytes(out)


def directory_out_of_range(tiff: bytes) -> bytes:
    out = bytearray(tiff)
    struct.pack_into(_order(tiff) + "I", out, 4, len(tiff) + 1000)
    return bytes(out)


# ------------------------------------------------------------------ PDF surgery

def garbage_page(pdf: bytes, page: int, seed: int = 1) -> bytes:
    """Page ``page``'s drawing instructions replaced by random bytes."""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        doc.update_stream(doc[page].get_contents()[0], random.Random(seed).randbytes(4000))
        return doc.tobytes()


def nested_arrays(pdf: bytes, depth: int = 200_000) -> bytes:
    """A content stream that opens ``depth`` arrays inside each other (MuPDF's stack
    overflows listing the page's images)."""
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        xref = doc[0].get_contents()[0]
        doc.update_stream(xref, b"[" * depth + b"]" * depth + b"\n" + doc.xref_stream(xref))
        return doc.tobytes()


# ------------------------------------------------------------------ XLSX shared strings

_SST_HEAD = (b'<?xml version="1.0" encoding="UTF-8"?>'
             b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">')


def shared_strings(count: int) -> bytes:
    """A small workbook whose table of texts holds ``count`` one-letter strings."""
    def write(part):
        part.write(_SST_HEAD)
        chunk = b"<si><t>a</t></si>" * 10_000
        for _ in range(count // 10_000):
            part.write(chunk)
        part.write(b"</sst>")
    return with_part(workbook(), "xl/sharedStrings.xml", write)


def one_long_string(megabytes: int) -> bytes:
    def write(part):
        part.write(_SST_HEAD + b"<si><t>")
        block = b"x" * (1 << 20)
        for _ in range(megabytes):
            part.write(block)
        part.write(b"</t></si></sst>")
    return with_part(workbook(), "xl/sharedStrings.xml", write)


# ------------------------------------------------------------------ HL7

def unnamed_result(obx3: str) -> bytes:
    """An intact ORU whose one OBX names no test (critical value and flag present)."""
    segments = [MSH.format(n=1), PID, OBR, f"OBX|1|NM|{obx3}||6.8|mmol/L|3.5-5.1|HH|||F|||20240312081500-0500"]
    return ("\r".join(segments) + "\r").encode()


# ------------------------------------------------------------------ the corpus

def build() -> list[malformed_corpus.Sample]:
    lab = render_lab(LAB)
    fax_pdf = packet([LAB])  # a cover sheet, then the lab: its identity matches the "lab" chart
    fax_tiff = scan_pdf(fax_pdf, seed=5, as_format="tiff", tiff_compression="group4", dpi=200,
                        rotate_deg=0.3, noise=0.003)
    fax_scan = scan_pdf(fax_pdf, seed=5, as_format="pdf", dpi=200, rotate_deg=0.3, noise=0.003)
    held_or_refused = DAMAGED_SCAN
    out = [
        sample("hl7_unnamed_test", "obx3-separators-only", "hl7v2_message", unnamed_result("^&"), "review",
               patient="hl7"),
        sample("hl7_unnamed_test", "obx3-100k-empty-components", "hl7v2_message", unnamed_result("^" * 100_000),
               "review", patient="hl7"),
        sample("tiff_damaged", "ifd-loops-back", "fax_packet", looping(fax_tiff), "held"),
        sample("tiff_damaged", "cover-page-strips-past-end", "fax_packet", strips_past_end(fax_tiff, 0), "held"),
        sample("tiff_damaged", "ifd-65535-entries", "fax_packet", bad_directory(fax_tiff), "refused"),
        sample("tiff_damaged", "ifd-offset-out-of-range", "fax_packet", directory_out_of_range(fax_tiff), "refused"),
        sample("pdf_damaged", "fax-page-2-garbage-typed", "fax_packet", garbage_page(fax_pdf, 1), "held",
               codes=held_or_refused),
        sample("pdf_damaged", "fax-page-2-garbage-scanned", "fax_packet", garbage_page(fax_scan, 1), "held",
               codes=held_or_refused),
        sample("pdf_damaged", "lab-200k-nested-arrays", "lab_pdf", nested_arrays(lab), "held",
               codes=held_or_refused),
        sample("xlsx_shared_strings", "strings-10.5m", "clinical_workbook", shared_strings(10_500_000), "refused",
               codes=frozenset({"sheet_too_large"})),
        sample("xlsx_shared_strings", "strings-5.2m", "clinical_workbook", shared_strings(5_200_000), "refused",
               codes=frozenset({"sheet_too_large"})),
        sample("xlsx_shared_strings", "one-string-150mb", "clinical_workbook", one_long_string(150), "refused",
               codes=frozenset({"sheet_too_large"})),
    ]
    out += [sample("tiff_cut", f"fax-tiff-cut-{cut}", "fax_packet", fax_tiff[: int(len(fax_tiff) * cut)], "held")
            for cut in (0.3, 0.5, 0.7, 0.85, 0.95)]
    out += [sample("pdf_cut", f"fax-pdf-cut-{cut}", "fax_packet", fax_scan[: int(len(fax_scan) * cut)], "held",
                   codes=held_or_refused)
            for cut in (0.3, 0.6, 0.9)]
    return out
