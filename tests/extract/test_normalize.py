"""The boundary between untrusted bytes and the workbench (issue 28): whatever a
format's parser raises on damaged bytes ends as ``corrupt_file`` with a message a person
understands, naming no bytes of the file and promising no retry; coded errors and the
memory ceiling pass through unchanged."""

from __future__ import annotations

import dataclasses

import pytest

from domain.errors import ExtractionError
from extract import normalize as boundary
from extract import registry
from tests.support.file_builders import pdf


def _pdf_reader_raising(monkeypatch, exc: BaseException) -> None:
    def broken(data, **_):
        raise exc

    formats = dict(registry.FORMATS)
    formats["pdf"] = dataclasses.replace(formats["pdf"], normalise=broken)
    monkeypatch.setattr(boundary, "FORMATS", formats)
    monkeypatch.setattr(registry, "FORMATS", formats)


@pytest.mark.parametrize("exc", [TypeError("Missing dimensions"), ValueError("bad xref"),
                                 RuntimeError("code=5: exception stack overflow!"), RecursionError(),
                                 KeyError("Patient Smith")])
def test_any_parser_failure_is_a_damaged_file(monkeypatch, exc):
    _pdf_reader_raising(monkeypatch, exc)
    with pytest.raises(ExtractionError) as err:
        boundary.normalize(pdf())
    assert err.value.code == "corrupt_file"
    message = err.value.message
    assert f"({type(exc).__name__} in the PDF reader)" in message and "damaged" in message
    assert "Smith" not in message  # a parser's text may quote the file: only its class is named
    assert "will not help" in message


@pytest.mark.parametrize("exc", [ExtractionError("too many pages", code="too_many_pages"), MemoryError()])
def test_coded_errors_and_the_memory_ceiling_pass_through(monkeypatch, exc):
    _pdf_reader_raising(monkeypatch, exc)
    with pytest.raises(type(exc)) as err:
        boundary.normalize(pdf())
    assert err.value is exc
