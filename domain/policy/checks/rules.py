"""The rule table (rules.json) as typed rows. Loading checks the table's shape, so a
row with an unknown kind, comparison, priority, class or analyte fails at start-up
rather than silently never alerting."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from domain.policy.facts.analytes import analyte
from domain.policy.checks.vocabulary import known_classes

RULES_PATH = Path(__file__).with_name("rules.json")
KINDS = ("drug-lab", "drug-allergy", "record-consistency", "missing-indication")
COMPARISONS = ("ge", "gt", "le", "lt", "absent")
PRIORITIES = ("high", "medium", "low")  # in the order alerts are shown


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    version: int
    kind: str
    priority: str
    message: str
    references: tuple[str, ...]
    medication_classes: frozenset[str] = frozenset()
    allergy_classes: frozenset[str] = frozenset()
    match: str | None = None  # drug-allergy: "ingredient" for the same-ingredient rule
    analyte: str | None = None
    comparison: str | None = None
    threshold: float | None = None
    unit: str | None = None
    unit_spellings: tuple[str, ...] = ()


def _rule(row: dict) -> Rule:
    rule = Rule(
        id=row["id"], version=int(row["version"]), kind=row["kind"], priority=row["priority"],
        message=row["message"], references=tuple(row["references"]),
        medication_classes=frozenset(row.get("medication_classes", ())),
        allergy_classes=frozenset(row.get("allergy_classes", ())), match=row.get("match"),
        analyte=row.get("analyte"), comparison=row.get("comparison"),
        threshold=float(row["threshold"]) if row.get("threshold") is not None else None,
        unit=row.get("unit"), unit_spellings=tuple(row.get("unit_spellings", ())))
    problems = []
    if rule.kind not in KINDS:
        problems.append(f"kind {rule.kind!r}")
    if rule.priority not in PRIORITIES:
        problems.append(f"priority {rule.priority!r}")
    if not rule.references:
        problems.append("no reference")
    unknown = (rule.medication_classes | rule.allergy_classes) - known_classes()
    if unknown:
        problems.append(f"classes {sorted(unknown)}")
    if rule.kind == "drug-lab":
        if not rule.medication_classes or rule.comparison not in COMPARISONS or analyte(rule.analyte or "") is None:
            problems.append("a drug-lab rule needs classes, a comparison and a known analyte")
        elif rule.comparison != "absent" and (rule.threshold is None or rule.unit is None):
            problems.append("a threshold needs its unit")
    if rule.kind == "drug-allergy" and rule.match != "ingredient" and not (rule.allergy_classes and rule.medication_classes):
        problems.append("a drug-allergy rule needs allergy and medication classes (or match: ingredient)")
    if problems:
        raise ValueError(f"rules.json: rule {rule.id}: " + "; ".join(problems))
    return rule


@lru_cache(maxsize=1)
def _table() -> tuple[str, tuple[Rule, ...]]:
    data = json.loads(RULES_PATH.read_text(encoding="utf-8"))
    rules = tuple(_rule(r) for r in data["rules"])
    ids = [r.id for r in rules]
    if len(set(ids)) != len(ids):
        raise ValueError("rules.json: duplicate rule ids")
    return data["version"], rules


def all_rules() -> tuple[Rule, ...]:
    return _table()[1]


def rules_version() -> str:
    return _table()[0]


def rule_by_id(rule_id: str) -> Rule | None:
    return next((r for r in all_rules() if r.id == rule_id), None)


def priority_rank(priority: str) -> int:
    return PRIORITIES.index(priority) if priority in PRIORITIES else len(PRIORITIES)
