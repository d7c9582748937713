"""Imported once by a warm jobs' forkserver (core.services.ingest.sandbox: the app's and
`core worker`'s; a command that reads a few documents and ends loads only sandbox_group)
before any job's child is forked from it, so that each child starts with the readers and extractors loaded
(cold, they cost ~1-2 s a job; PyMuPDF alone ~1 s), and warmed: one small typed page is
read here, so what the readers load on first use (the analyte vocabulary, compiled
patterns, PyMuPDF's fonts and PNG encoder) is in the server's memory too. Each child is a
fresh fork of this server, so without that every job paid its first use again: a typed
lab page took ~40 ms to read in its child against ~8 ms warm.

Forking is safe when no other thread holds a lock at that moment. No Python thread of
ours runs here. Two libraries start
native threads on import: numpy's OpenBLAS pool, which sandbox_group keeps to one thread
(the readers do no large linear algebra), and a few idle ones of PyMuPDF's, which take no
lock while the server waits to fork. The OCR engines are loaded here too (warm_ocr):
they start no thread of their own."""

import core.services.ingest.sandbox_group  # noqa: F401 - first: one BLAS thread, a process group of its own
import core.services.ingest.processing  # noqa: F401 - the child's entry point, read_document
import extract.formats.images  # noqa: F401
import extract.formats.ocr.engines  # noqa: F401
import extract.formats.pdf  # noqa: F401
import hl7apy.parser  # noqa: F401
from extract.registry import preload
from extract.formats.ocr.engines import tesseract_available

preload()
tesseract_available()  # probed once here (two short subprocess runs), not in every job's child


def _typed_page() -> bytes:
    """A small typed lab-like page (a result table under a header), made here."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = 72.0
    for line in ("Laboratory Report", "Patient: Sample, Warm   DOB: 01/02/1970   MRN: 000000",
                 "Collected: 01/02/2020 08:00", "Test Result Units Reference Range Flag",
                 "Glucose 95 mg/dL 70-99", "Sodium 140 mmol/L 136-145", "Hemoglobin 13.5 g/dL 12.0-16.0"):
        page.insert_text((72, y), line, fontsize=10, fontname="helv")
        y += 18
    data = doc.tobytes()
    doc.close()
    return data


def warm_up() -> None:
    """Read one typed page as each PDF document type, discarding the result: a warm-up
    that fails costs only speed, so nothing it raises stops the server."""
    import tempfile
    from pathlib import Path

    from core.services.ingest.processing import read_document
    from domain.limits import Limits
    from domain.models import DocType

    try:
        data = _typed_page()
    except Exception:  # noqa: BLE001
        return
    with tempfile.TemporaryDirectory(prefix="workbench-warm-") as tmp:
        for doc_type in (DocType.LAB_PDF, DocType.INTAKE_FORM):
            try:
                read_document(data, doc_type, Path(tmp) / doc_type.value, None, "documents:0", Limits())
            except Exception:  # noqa: BLE001 - e.g. the page is not that type's: warm enough
                pass


def warm_ocr() -> None:
    """The OCR engines a scanned page uses, loaded here once instead of in every job's
    child: RapidOCR's models (the vote on doubtful words) took 1-2 s to load per scanned
    job, and its first read ~0.15 s more; Tesseract's engine is two probes of the binary.
    Neither leaves a thread running (RapidOCR runs onnxruntime on one thread per engine,
    and its crop readers' helper thread ends with the call), so forking stays safe. A
    failure costs only speed: the child loads them as before."""
    try:
        from PIL import Image, ImageDraw

        from extract.formats.ocr.engines import default_engine
        from extract.formats.ocr.rapid import CROP_READERS, rapid_reader

        if tesseract_available():
            default_engine()
        crop = Image.new("L", (160, 32), 255)
        ImageDraw.Draw(crop).text((6, 10), "Glucose 95 mg/dL", fill=0)
        rapid_reader()([crop] * CROP_READERS)  # every engine's model loaded
    except Exception:  # noqa: BLE001
        pass


warm_up()
warm_ocr()
