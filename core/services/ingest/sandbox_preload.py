"""Imported once by the jobs' forkserver (core.services.ingest.sandbox) before any job's child
is forked from it, so that each child starts with the readers and extractors loaded
(cold, they cost ~1-2 s a job; PyMuPDF alone ~1 s).

Forking is safe when no other thread holds a lock at that moment. No Python thread of
ours runs here (OCR engines load in the child that needs them). Two libraries start
native threads on import: numpy's OpenBLAS pool, which we keep to one thread (the
readers do no large linear algebra), and a few idle ones of PyMuPDF's, which take no
lock while the server waits to fork."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported, or it starts a pool

# A process group of its own (and so of every job's child forked from it): Ctrl-C in the
# terminal running `make run`, or a signal sent to the app's group, would otherwise end a
# reading midway while the app shuts down in order. The forkserver still ends with the app
# (multiprocessing closes its "alive" pipe), and a child ends itself within half a second
# of its worker's end (sandbox._orphan_watch).
try:
    os.setpgid(0, 0)
except OSError:  # already a group or session leader
    pass

import core.services.ingest.processing  # noqa: E402,F401 - the child's entry point, read_document
import extract.formats.images  # noqa: E402,F401
import extract.formats.ocr.engines  # noqa: E402,F401
import extract.formats.pdf  # noqa: E402,F401
import hl7apy.parser  # noqa: E402,F401
from extract.registry import preload  # noqa: E402
from extract.formats.ocr.engines import tesseract_available  # noqa: E402

preload()
tesseract_available()  # probed once here (two short subprocess runs), not in every job's child
