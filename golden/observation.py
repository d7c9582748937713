"""What a golden case did and what the workbench shows afterwards: the runner fills an
``Observation`` while it plays a case, the rubrics read it. Its own module so that the
rubrics need nothing of the runner (and the runner may score with the rubrics)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from golden.cases import Case


@dataclass
class Upload:
    name: str
    doc_key: str
    patient: str
    document_id: int
    doc_type: str | None
    step: int


@dataclass
class Observation:
    """Everything a case did and what the workbench shows afterwards."""

    case: Case
    wb: Any
    data_dir: Path
    patient_ids: dict[str, int] = field(default_factory=dict)
    uploads: dict[str, Upload] = field(default_factory=dict)
    deleted: dict[str, int] = field(default_factory=dict)  # upload name -> step index of the deletion
    step_errors: dict[int, str] = field(default_factory=dict)
    answers: list[dict[str, Any]] = field(default_factory=list)
    briefs: list[dict[str, Any]] = field(default_factory=list)  # {"step", "patient", "payload"} per brief step
    fhir_exports: dict[int, dict[str, Any]] = field(default_factory=dict)  # step index -> the bundle written
    contents: dict[int, Any] = field(default_factory=dict)  # document id -> NormalizedContent the pipeline saw
    processing: int | None = None  # the document whose job is running now
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)
    raw_facts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    checks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    charts: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    review_lists: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    alerts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # patient key -> chart alerts, withdrawn too
    document_owner: dict[int, int] = field(default_factory=dict)  # document id -> patient id
    # Where the uploaded bytes are kept for the Evals page (eval-results/), or None; and
    # what was kept: upload name -> {"sha256", "filename"} (docs/evals.md, kept_documents).
    keep_dir: Path | None = None
    kept_documents: dict[str, dict[str, str]] = field(default_factory=dict)

    def facts(self) -> list[dict[str, Any]]:
        return [f | {"document": name} for name, r in self.reports.items() for f in r["facts"]]
