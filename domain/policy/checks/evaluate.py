"""Run the rule table over a patient's chart facts (pure, deterministic).

Input: the facts the checks may rest on (``ChartFact``: the service decides which,
see ``counts_for_checks``). Output: alerts, each citing every fact it rests on, and
what could not be checked (a result in another unit, a value that is no number, a
medication the class table does not know), which is reported, never taken as safe.

- drug-lab: the medication entries of the rule's classes with the latest result of
  the analyte: every result of its latest collection date, and every undated one
  (its place in time is unknown, so it is checked too). One alert per result, citing
  the result and every matching medication entry. "absent": no result of the analyte
  at all, citing the medication entries.
- drug-allergy: an allergy entry whose classes (or ingredient) the medication has;
  one alert per allergy substance and medication name, citing every entry of each.
- record-consistency: a "no known (drug) allergies" statement beside a documented
  allergy (an allergy to a food or a sting does not contradict "no known drug
  allergies"); one alert citing the statements and the allergies.
- missing-indication: a medication whose classes have labelled indications and none
  of them among the problems; one note per medication name.
Thresholds are compared in the rule's unit and its spellings only (unit conversion
is the critical-limits work of issue 24; a result in another unit is not checked).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from domain.policy.facts.unit_conversion import factor
from domain.policy.facts.analytes import canonical_analyte, normalize_unit
from domain.policy.checks.indications import classes_with_indications, names_indication
from domain.policy.checks.rules import Rule, all_rules, priority_rank
from domain.policy.checks.vocabulary import (allergy_classes, class_name, ingredients_of, medication_classes,
                                             no_known_allergies, non_drug_allergen, words)

CHECKED_FACT_TYPES = ("lab_result", "medication", "allergy", "problem")


@dataclass(frozen=True, slots=True)
class ChartFact:
    fact_id: int
    fact_type: str
    value: Mapping[str, Any]
    text: str = ""  # the fact's words and the quote it cites ("NKDA", "No known drug allergies")
    document_id: int | None = None


@dataclass(frozen=True, slots=True)
class Alert:
    rule_id: str
    rule_version: int
    kind: str
    priority: str
    message: str
    fact_ids: tuple[int, ...]  # every fact the alert rests on, ascending
    references: tuple[str, ...]

    @property
    def key(self) -> str:
        """Same rule and same supporting facts: the same alert."""
        return f"{self.rule_id}:" + ",".join(map(str, self.fact_ids))


@dataclass(frozen=True, slots=True)
class NotChecked:
    rule_id: str
    fact_ids: tuple[int, ...]
    reason: str


@dataclass
class Evaluation:
    alerts: list[Alert] = field(default_factory=list)
    not_checked: list[NotChecked] = field(default_factory=list)


def counts_for_checks(fact_type: str, certainty: str, value: Mapping[str, Any], text: str) -> bool:
    """Which live, trusted facts the checks rest on: verified ones (the chart), and a
    "no known allergies" statement, which is a negated mention and so never verified."""
    if fact_type not in CHECKED_FACT_TYPES:
        return False
    if certainty == "verified":
        return True
    return fact_type == "allergy" and certainty == "document_fact" and no_known_allergies(dict(value), text) is not None


# ------------------------------------------------------------------ values
_NUMBER = re.compile(r"^\s*(<=|>=|<|>|\u2264|\u2265)?\s*(-?\d+(?:\.\d+)?)\s*$")
_DECIMAL_COMMA = re.compile(r"^(\s*[<>]?=?\s*-?\d+),(\d{1,2})\s*$")


def _number(value: Any) -> tuple[str, float] | None:
    """("", 6.9) for "6.9", (">", 60.0) for ">60", None when the value is no number."""
    text = _DECIMAL_COMMA.sub(r"\1.\2", str(value if value is not None else ""))
    m = _NUMBER.match(text)
    if not m:
        return None
    op = {"\u2264": "<=", "\u2265": ">="}.get(m.group(1) or "", m.group(1) or "")
    return op, float(m.group(2))


def _past(comparison: str, threshold: float, op: str, x: float) -> bool | None:
    """Whether a result is past the threshold; None when a censored value (">60",
    "<0.5") cannot tell."""
    if op in (">", ">="):
        low_ok = x > threshold or (x == threshold and (op == ">" or comparison == "ge"))
        if comparison in ("gt", "ge"):
            return True if low_ok else None
        return False if x >= threshold else None
    if op in ("<", "<="):
        if comparison in ("lt", "le"):
            return True if x < threshold or (x == threshold and (op == "<" or comparison == "le")) else None
        return False if x <= threshold else None
    return {"ge": x >= threshold, "gt": x > threshold, "le": x <= threshold, "lt": x < threshold}[comparison]


def _to_rule_unit(rule: Rule, unit: str | None) -> float | None:
    """What a result in ``unit`` is multiplied by to be in the rule's unit: 1 for the
    rule's own spellings, else the analyte's conversion (unit_conversion: creatinine in
    umol/L against a rule in mg/dL); None when the two cannot be compared."""
    if normalize_unit(unit or "") in {normalize_unit(u) for u in rule.unit_spellings}:
        return 1.0
    return factor(rule.analyte, unit, rule.unit)


# ------------------------------------------------------------------ wording
def _result_text(f: ChartFact) -> str:
    v = f.value
    unit = f" {v['unit']}" if v.get("unit") else ""
    when = f"collected {v['collection_date']}" if v.get("collection_date") else "collection date not stated"
    return f"{v.get('test_name') or 'result'} {v.get('value')}{unit} ({when})"


def _names(facts: list[ChartFact], key: str) -> str:
    return ", ".join(dict.fromkeys(str(f.value.get(key) or f.text).strip() for f in facts))


def _alert(rule: Rule, facts: list[ChartFact], **words_in: str) -> Alert:
    return Alert(rule_id=rule.id, rule_version=rule.version, kind=rule.kind, priority=rule.priority,
                 message=rule.message.format_map(_Blank(words_in)),
                 fact_ids=tuple(sorted({f.fact_id for f in facts})), references=rule.references)


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return ""


# ------------------------------------------------------------------ grouping
def _latest_results(labs: list[ChartFact], analyte_id: str) -> list[ChartFact]:
    mine = [f for f in labs if canonical_analyte(str(f.value.get("test_name") or ""), f.value.get("loinc") or None,
                                                 f.value.get("unit") or None) == analyte_id]
    dated = [str(f.value["collection_date"]) for f in mine if f.value.get("collection_date")]
    latest = max(dated, default=None)
    return [f for f in mine if not f.value.get("collection_date") or str(f.value["collection_date"]) == latest]


def _by_name(facts: list[ChartFact], key: str) -> dict[str, list[ChartFact]]:
    """Entries grouped by what they name (the same medication listed by two documents
    is one medication, cited twice)."""
    groups: dict[str, list[ChartFact]] = {}
    for f in sorted(facts, key=lambda f: f.fact_id):
        groups.setdefault(words(str(f.value.get(key) or f.text)).strip(), []).append(f)
    return groups


# ------------------------------------------------------------------ the kinds
def _drug_lab(rule: Rule, meds: list[ChartFact], labs: list[ChartFact], out: Evaluation) -> None:
    taking = [m for m in meds if medication_classes(str(m.value.get("name") or "")) & rule.medication_classes]
    if not taking:
        return
    results = _latest_results(labs, rule.analyte or "")
    if rule.comparison == "absent":
        if not results:
            out.alerts.append(_alert(rule, taking, medications=_names(taking, "name")))
        return
    for lab in results:
        cited = (lab.fact_id, *sorted(m.fact_id for m in taking))
        number = _number(lab.value.get("value"))
        if number is None:
            out.not_checked.append(NotChecked(rule.id, cited, "the result is not a number"))
            continue
        scale = _to_rule_unit(rule, lab.value.get("unit"))
        if scale is None:
            out.not_checked.append(NotChecked(rule.id, cited, f"the result is in {lab.value.get('unit') or 'no unit'}, "
                                                              f"the rule in {rule.unit or 'no unit'}"))
            continue
        op, x = number
        past = _past(rule.comparison or "", rule.threshold or 0.0, op, x * scale)
        if past is None:
            out.not_checked.append(NotChecked(rule.id, cited, "a value printed as a bound cannot be compared"))
        elif past:
            out.alerts.append(_alert(rule, [lab, *taking], result=_result_text(lab),
                                     medications=_names(taking, "name")))


def _drug_allergy(rule: Rule, meds: list[ChartFact], allergies: list[ChartFact], out: Evaluation) -> None:
    for substance, allergy_group in _by_name(allergies, "substance").items():
        sub = str(allergy_group[0].value.get("substance") or "")
        for name, med_group in _by_name(meds, "name").items():
            med = str(med_group[0].value.get("name") or "")
            if rule.match == "ingredient":
                hit = bool(ingredients_of(sub) & ingredients_of(med))
            else:
                hit = bool(allergy_classes(sub) & rule.allergy_classes) and \
                    bool(medication_classes(med) & rule.medication_classes) and \
                    not ingredients_of(sub) & ingredients_of(med)  # the same-ingredient rule says that
            if hit:
                out.alerts.append(_alert(rule, [*allergy_group, *med_group], allergies=_names(allergy_group, "substance"),
                                         medications=_names(med_group, "name")))


def _consistency(rule: Rule, allergies: list[ChartFact], out: Evaluation) -> None:
    statements = [(f, no_known_allergies(dict(f.value), f.text)) for f in allergies]
    denials = [(f, kind) for f, kind in statements if kind is not None]
    documented = [f for f, kind in statements if kind is None and str(f.value.get("substance") or "").strip()]
    if not denials or not documented:
        return
    everything = any(kind == "all" for _, kind in denials)
    contradicting = [f for f in documented if everything or not non_drug_allergen(str(f.value["substance"]))]
    if contradicting:
        denying = [f for f, _ in denials]
        said = "; ".join(dict.fromkeys(f'"{(f.text or "no known allergies").strip()}"' for f in denying))
        out.alerts.append(_alert(rule, [*denying, *contradicting], statements=said,
                                 allergies=_names(contradicting, "substance")))


def _missing_indication(rule: Rule, meds: list[ChartFact], problems: list[ChartFact], out: Evaluation) -> None:
    checkable = classes_with_indications()
    for name, group in _by_name(meds, "name").items():
        classes = medication_classes(str(group[0].value.get("name") or ""))
        if not classes:
            out.not_checked.append(NotChecked(rule.id, tuple(f.fact_id for f in group),
                                              "the medication is not in the class table"))
            continue
        labelled = classes & checkable
        if not labelled:
            continue  # no indication table row for its classes: nothing to say either way
        if any(names_indication(c, str(p.value.get("description") or p.text), p.value.get("code"))
               for c in labelled for p in problems):
            continue
        out.alerts.append(_alert(rule, group, medications=_names(group, "name"),
                                 classes=", ".join(class_name(c) for c in sorted(labelled)),
                                 problems=f"{len(problems)} entr{'y' if len(problems) == 1 else 'ies'}"))


# Which rule kinds read lab results (the dispatch in ``evaluate`` below): drug-lab rules,
# and only for a medication of their classes (``_drug_lab`` returns before it looks at a
# result when none is taken); the other kinds never. A kind not named here is taken to
# read results always.
_RESULTS_ONLY_FOR_A_MEDICATION = frozenset({"drug-lab"})
_NO_RESULTS = frozenset({"drug-allergy", "record-consistency", "missing-indication"})


def results_only_beside_a_medication(rules: tuple[Rule, ...] | None = None) -> bool:
    """Whether the checks read a chart's lab results only when it holds a medication: a
    chart without one then needs none of its results read (most of a results-only chart)."""
    return all(r.kind in _RESULTS_ONLY_FOR_A_MEDICATION | _NO_RESULTS
               for r in (all_rules() if rules is None else rules))


def evaluate(facts: list[ChartFact], rules: tuple[Rule, ...] | None = None) -> Evaluation:
    """Every rule over the facts; alerts by priority, then rule, then cited facts."""
    of = {t: [f for f in facts if f.fact_type == t] for t in CHECKED_FACT_TYPES}
    meds, labs, allergies, problems = of["medication"], of["lab_result"], of["allergy"], of["problem"]
    out = Evaluation()
    for rule in all_rules() if rules is None else rules:
        if rule.kind == "drug-lab":
            _drug_lab(rule, meds, labs, out)
        elif rule.kind == "drug-allergy":
            _drug_allergy(rule, meds, [a for a in allergies if no_known_allergies(dict(a.value), a.text) is None],
                          out)
        elif rule.kind == "record-consistency":
            _consistency(rule, allergies, out)
        elif rule.kind == "missing-indication":
            _missing_indication(rule, meds, problems, out)
    out.alerts.sort(key=lambda a: (priority_rank(a.priority), a.rule_id, a.fact_ids))
    unique = {a.key: a for a in out.alerts}
    out.alerts = list(unique.values())
    return out
