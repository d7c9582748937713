"""One document's reading as a task for any engine: the stored bytes in, a verified
``Reading`` (or why it failed) out. The reading runs in a child process under the
job's time and memory ceilings, by the worker's own ``run_isolated``; it opens no
database, so it can run on any machine of a Ray cluster."""

from __future__ import annotations

from dataclasses import dataclass

from core.services.ingest.processing import Reading, read_verified
from core.services.ingest.sandbox import INTERNAL_ERROR, run_isolated
from domain.errors import ExtractionError
from extract.registry import require_extractor


@dataclass(frozen=True)
class Ceilings:
    """The per-job ceilings of the worker (settings job_timeout_seconds, job_memory_mb)
    and how its child is started (job_process)."""

    timeout: float
    memory_mb: int
    method: str

    @classmethod
    def from_settings(cls, settings) -> "Ceilings":
        return cls(settings.job_timeout_seconds, settings.job_memory_mb, settings.job_process)


@dataclass(frozen=True)
class ReadRequest:
    """A pending job's reading: ``args`` as ``processing.reading_args`` builds them (the
    stored bytes, doc type, render folder, OCR preference, source id, limits)."""

    job_id: int
    args: tuple


@dataclass(frozen=True)
class ReadFailed:
    """Why a reading gave no result: the error code and message the job ends with."""

    code: str
    message: str


def read_one(args: tuple, ceilings: Ceilings) -> Reading | ReadFailed:
    """``read_verified(*args)`` under the job's ceilings; a bad document is an answer
    (ReadFailed), never an exception, so an engine hands every outcome to the writer."""
    try:
        require_extractor(args[1])
        return run_isolated(read_verified, args, timeout=ceilings.timeout, memory_mb=ceilings.memory_mb,
                            method=ceilings.method)
    except ExtractionError as exc:
        return ReadFailed(exc.code, exc.message)
    except Exception as exc:  # noqa: BLE001 - a defect fails this document, not the batch
        return ReadFailed(INTERNAL_ERROR, (
            f"The workbench met an unexpected problem ({type(exc).__name__}) while reading this document. The "
            "original is kept. This is a fault in the workbench, not in your file: please tell an administrator."))
