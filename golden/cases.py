"""Golden case files: what a case is, how it is read, and what its steps may say.

A case (``golden/cases/<id>.json``) is declarative: the chart patients, the fixture
documents (specs built by ``golden.documents``), the steps a user takes, and what the
workbench must show afterwards. The runner interprets it; nothing here touches a
database.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

CASES_DIR = Path(__file__).resolve().parent / "cases"

REVIEW_ACTIONS = ("approve-identity", "reject-identity", "approve-fact", "reject-fact")
# The reviewer account the runner creates in its template data dir; steps act as it.
GOLDEN_REVIEWER = "golden-reviewer"


_ACTIONS = ("upload", "reprocess", "delete", "review", "ask", "brief", "export_fhir")


class Step(BaseModel):
    """One user action. Exactly one of upload / reprocess / delete / review / ask / brief / export_fhir."""

    model_config = ConfigDict(extra="forbid")

    upload: str | None = None  # a document key
    reprocess: str | None = None  # an uploaded name
    delete: str | None = None  # an uploaded name
    review: Literal["approve-identity", "reject-identity", "approve-fact", "reject-fact"] | None = None
    ask: str | None = None
    brief: int | None = None  # the patient brief, cut to this many tokens
    export_fhir: str | None = None  # a label: the patient's chart exported as a FHIR R4 bundle

    patient: str | None = None  # a patient key (upload, ask)
    doc_type: str | None = None
    category: str | None = None
    name: str | None = Field(default=None, alias="as")  # the uploaded name (default: the document key)
    document: str | None = None  # review: an uploaded name
    scope: str | None = None  # review: the identity check of a part (fax page, HL7 message)
    fact: dict[str, Any] | None = None  # review: how to pick the fact (same matcher as expectations)
    reason: str | None = None
    by: str = GOLDEN_REVIEWER  # the account the step acts as (upload, delete, review)
    follow_up: bool = False  # ask: continue the previous question's conversation
    expect_error: str | None = None  # the error code this step must fail with
    include_review: bool = False  # export_fhir: review items too, marked unconfirmed
    bundle_id: str | None = None  # export_fhir: the bundle id (the same id again: withdrawn rows entered-in-error)

    @model_validator(mode="after")
    def _one_action(self) -> "Step":
        actions = [a for a in _ACTIONS if getattr(self, a)]
        if len(actions) != 1:
            raise ValueError(f"a step does exactly one thing, got {actions or 'nothing'}")
        if self.review and not self.document:
            raise ValueError("a review step names the uploaded document it decides on")
        if self.review in ("approve-fact", "reject-fact") and not self.fact:
            raise ValueError("a fact review names the fact with 'fact': {...}")
        return self

    @property
    def action(self) -> str:
        return next(a for a in _ACTIONS if getattr(self, a))


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    doc_types: list[str] = Field(default_factory=list)
    scenarios: list[str] = Field(default_factory=list)
    patients: dict[str, dict[str, Any]]
    documents: dict[str, dict[str, Any]] = Field(default_factory=dict)
    steps: list[Step]
    expect: dict[str, Any] = Field(default_factory=dict)
    canaries: list[str] = Field(default_factory=list)  # extra strings that must never be logged
    needs_shared_data: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> "Case":
        for step in self.steps:
            if step.upload and step.upload not in self.documents:
                raise ValueError(f"step uploads unknown document {step.upload!r}")
            if (step.upload or step.ask or step.brief or step.export_fhir) and step.patient \
                    and step.patient not in self.patients:
                raise ValueError(f"step names unknown patient {step.patient!r}")
        unknown = set(self.expect) - EXPECTATION_KEYS
        if unknown:
            raise ValueError(f"unknown expectation keys {sorted(unknown)}")
        return self

    @property
    def default_patient(self) -> str:
        return next(iter(self.patients))

    def phi_strings(self) -> list[str]:
        """Every identifier this case plants: chart patients, people printed on its
        documents, and its explicit canaries. None of them may reach a log."""
        found: set[str] = set(self.canaries)
        for p in self.patients.values():
            found.update(str(p[k]) for k in ("first", "last", "mrn") if p.get(k))
        for spec in self.documents.values():
            _collect_people(spec, found)
        # Very short strings would match innocent text; identifiers here are longer.
        return sorted(s for s in found if len(s) >= 4)


def _collect_people(value: Any, found: set[str]) -> None:
    if isinstance(value, dict):
        if {"first", "last", "mrn"} <= set(value):
            found.update(str(value[k]) for k in ("first", "last", "mrn"))
        for v in value.values():
            _collect_people(v, found)
    elif isinstance(value, list):
        for v in value:
            _collect_people(v, found)


EXPECTATION_KEYS = frozenset({
    "documents",  # {name: {job_status, error_code, identity, warnings_contain}}
    "facts",  # [{document, fact_type, where, text_contains, certainty, promotion_status, active, quote_contains}]
    "no_facts",  # [same matcher]: nothing may match
    "fact_counts",  # {name: {fact_type|"all": n | [min, max]}}
    "needs_review",  # [matcher]: visible, not promoted, labelled for review
    "document_facts",  # [matcher]: kept as document facts, not promoted
    "chart",  # {patient: {labs|allergies|medications|problems|vital_signs: [{field: value}]}}
    "chart_absent",  # {patient: {section: [{field: value}]}}
    "chart_counts",  # {patient: {section: n}}
    "promotions",  # [{document, outcome, min?, max?}]
    "answers",  # [{step, refused, disposition, contains, not_contains, sections_nonempty, ...}]
    "step_errors",  # {step index: error code}
    # The chart checks (issue 24), judged by promotion_expectations with the chart:
    "alerts",  # [{patient, rule, status?, contains?, cites: [fact matcher, ...] (every fact it cites, no other)}]
    "no_alerts",  # [{patient, rule}]: no open alert of the rule
    "briefs",  # [{step, contains, not_contains, sentinels, sections: {key: [text]}, cut_sections, cites_documents}]
    "fhir_exports",  # [{step, resources: {type: n | [min, max]}, has: [{resourceType, where: {path: value}}], lacks}]
})


def case_files(cases_dir: Path = CASES_DIR) -> list[Path]:
    return sorted(cases_dir.glob("*.json"))


@lru_cache(maxsize=None)
def _load(path: str) -> Case:
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    case = Case.model_validate(raw)
    if case.id != Path(path).stem:
        raise ValueError(f"{path}: id {case.id!r} must match the file name")
    return case


def load_case(case_id: str, cases_dir: Path = CASES_DIR) -> Case:
    path = cases_dir / f"{case_id}.json"
    if not path.is_file():
        raise KeyError(f"no golden case {case_id!r} in {cases_dir}")
    return _load(str(path))


def load_cases(cases_dir: Path = CASES_DIR, only: list[str] | None = None) -> list[Case]:
    cases = [_load(str(p)) for p in case_files(cases_dir)]
    if only:
        missing = sorted(set(only) - {c.id for c in cases})
        if missing:
            raise KeyError(f"no golden case named {', '.join(missing)}")
        cases = [c for c in cases if c.id in only]
    return cases
