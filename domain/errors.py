"""One root exception. Bad input is a ``WorkbenchError`` with a stable ``code``;
anything else that escapes is a defect and is allowed to surface as one."""

from __future__ import annotations


class WorkbenchError(Exception):
    code = "workbench_error"

    def __init__(self, message: str, *, code: str | None = None):
        super().__init__(message)
        if code:
            self.code = code

    @property
    def message(self) -> str:
        return str(self)


class BadInput(WorkbenchError):
    """The user gave us something we cannot accept (file, patient, category...)."""

    code = "bad_input"


class Forbidden(WorkbenchError):
    """A signed-in user, or the account named by --by, lacks the role for this action."""

    code = "forbidden"


class NotFound(WorkbenchError):
    code = "not_found"


class DatabaseBusy(WorkbenchError):
    """Another process holds the DuckDB file."""

    code = "database_busy"


class ExtractionError(WorkbenchError):
    """A document could not be turned into facts. ``code`` names the reason,
    e.g. corrupt_file, encrypted_pdf, needs_ocr, unsupported_doc_type."""

    code = "extraction_failed"


class ResponseRejected(ExtractionError):
    """An extractor response failed whole-response validation (DESIGN §5)."""

    code = "response_rejected"
