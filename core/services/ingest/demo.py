"""Load demo documents through the normal upload path, once.

The documents themselves are built outside the product: the demo generator
(``python -m golden.demo --write DIR``, :func:`build_demo_documents`) writes them into a
directory with a ``manifest.json``, and :func:`read_demo_dir` reads that directory back.
This service only attaches them like any upload and, unless asked to leave the work to
the running worker, processes each job. A document already on the patient's chart under
the same file name is not loaded again, so running the demo twice changes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

from core.services.review.facts import document_report
from core.services.ingest.ingestion import attach_and_extract
from core.services.admin.patients import get_patient
from core.services.workbench import Workbench
from domain.errors import BadInput, WorkbenchError
from storage import documents_repo, patients_repo

# The demo is loaded by the system, not a person: a system actor may only upload.
DEMO_UPLOADER = "system:demo"
REPO_ROOT = Path(__file__).resolve().parents[3]
# The demo generator, a program of the eval package (never imported by the product).
DEMO_COMMAND = (sys.executable, "-m", "golden.demo")
MANIFEST = "manifest.json"


class DemoDocument(Protocol):
    patient_mrn: str
    filename: str
    doc_type: str

    def build(self) -> bytes: ...


@dataclass(frozen=True)
class DemoFile:
    """A demo document written to a directory, named by its manifest entry."""

    patient_mrn: str
    filename: str
    doc_type: str
    path: Path

    def build(self) -> bytes:
        return self.path.read_bytes()


def build_demo_documents(directory: Path, *, command: tuple[str, ...] | list[str] | None = None) -> Path:
    """Run the demo generator (cwd = repository root) to write the demo documents and
    their manifest into ``directory``; returns the directory. ``command`` replaces the
    program (tests); ``--write DIRECTORY`` is appended to it."""
    argv = [*(command or DEMO_COMMAND), "--write", str(Path(directory).resolve())]
    done = subprocess.run(argv, cwd=REPO_ROOT, env=dict(os.environ), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, encoding="utf-8", errors="replace", timeout=600)
    if done.returncode != 0:
        last = next((ln.strip() for ln in reversed(done.stderr.splitlines()) if ln.strip()), "")
        raise WorkbenchError(f"the demo documents could not be built (exit code {done.returncode})"
                             + (f": {last[:300]}" if last else ""), code="demo_build_failed")
    return Path(directory)


def read_demo_dir(directory: Path) -> list[DemoFile]:
    """The documents listed by ``directory``'s ``manifest.json`` (``{"documents":
    [{"patient_mrn", "filename", "doc_type", "file"}]}``), in manifest order. A manifest
    that is missing, malformed or names a file outside ``directory`` is :class:`BadInput`."""
    directory = Path(directory)
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInput(f"no readable {MANIFEST} in the demo directory ({type(exc).__name__})",
                       code="bad_demo_manifest") from None
    entries = manifest.get("documents") if isinstance(manifest, dict) else None
    if not isinstance(entries, list):
        raise BadInput(f"{MANIFEST} lists no documents", code="bad_demo_manifest")
    out = []
    for n, entry in enumerate(entries):
        fields = {k: entry.get(k) for k in ("patient_mrn", "filename", "doc_type", "file")} \
            if isinstance(entry, dict) else {}
        if not fields or not all(isinstance(v, str) and v for v in fields.values()):
            raise BadInput(f"{MANIFEST} entry {n} needs patient_mrn, filename, doc_type and file",
                           code="bad_demo_manifest")
        path = directory / fields["file"]
        if Path(fields["file"]).name != fields["file"] or not path.is_file():
            raise BadInput(f"{MANIFEST} entry {n} names no file of the demo directory", code="bad_demo_manifest")
        out.append(DemoFile(fields["patient_mrn"], fields["filename"], fields["doc_type"], path))
    return out


def has_documents(wb: Workbench) -> bool:
    with wb.db.cursor() as cur:
        return documents_repo.any_document(cur)


def demo_loaded(wb: Workbench) -> bool:
    """Whether the sample documents are on the demo patients' charts (any live one):
    the welcome box then points to them instead of to `python -m core demo`."""
    from core.services.admin.patients import DEMO_PATIENTS

    with wb.db.cursor() as cur:
        for p in DEMO_PATIENTS:
            patient = patients_repo.by_mrn(cur, p["mrn"])
            if patient and documents_repo.for_patient(cur, patient["id"]):
                return True
    return False


def load_demo(wb: Workbench, documents: Iterable[DemoDocument], *, process: bool = True,
              on_loaded: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    from core.services.review.fact_vectors import index_pending
    from core.services.ingest.worker import Worker

    out = []
    for doc in documents:
        patient = get_patient(wb, mrn=doc.patient_mrn)
        with wb.db.cursor() as cur:
            existing = next((d for d in documents_repo.for_patient(cur, patient["id"]) if d["filename"] == doc.filename),
                            None)
        if existing is not None:
            entry = {"document_id": existing["id"], "patient_mrn": doc.patient_mrn, "doc_type": doc.doc_type,
                     "filename": doc.filename, "loaded": False,
                     "job": {"status": existing["job_status"], "error_code": existing["error_code"]}}
        else:
            attached = attach_and_extract(wb, patient_id=patient["id"], source=doc.filename, data=doc.build(),
                                          filename=doc.filename, doc_type=doc.doc_type, by=DEMO_UPLOADER)
            if process and attached.job is not None:
                Worker(wb, worker_id="intake-extractor:demo").run_specific(attached.job["id"])
            job = document_report(wb, attached.document["id"])["job"] or {}
            entry = {"document_id": attached.document["id"], "patient_mrn": doc.patient_mrn,
                     "doc_type": doc.doc_type, "filename": doc.filename, "loaded": True,
                     "job": {"status": job.get("status"), "error_code": job.get("error_code")}}
        out.append(entry)
        if on_loaded:
            on_loaded(entry)
    if process:
        index_pending(wb)
    return out
