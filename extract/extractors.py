"""Import the extractor modules so their ``@register`` decorators run."""

from __future__ import annotations

import importlib

from extract.registry import EXTRACTORS

_MODULES = ("extract.lab", "extract.intake", "extract.docx", "extract.xlsx", "extract.hl7", "extract.fax")


def load_all() -> dict:
    for name in _MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            # A format module that has not landed yet leaves its doc_type unsupported
            # (jobs fail with unsupported_doc_type); any other import error is a defect.
            if exc.name != name:
                raise
    return EXTRACTORS
