"""Imported once by the jobs' forkserver (core.services.sandbox) before any job's child
is forked from it, so that each child starts with the readers and extractors loaded
(cold, they cost ~0.5-2 s a job). Imports only: no threads are started here (OCR
engines load in the child that needs them), so forking the server stays safe."""

import core.services.processing  # noqa: F401 - the child's entry point, read_document
import extract.images  # noqa: F401
import extract.ocr  # noqa: F401
import extract.pdf  # noqa: F401
import hl7apy.parser  # noqa: F401
from extract.extractors import load_all

load_all()
from extract.ocr import tesseract_available

tesseract_available()  # probed once here (two short subprocess runs), not in every job's child
