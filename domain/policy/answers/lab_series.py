"""Lab results as series, for answers that read a trend (pure).

A series is every result of one test for the patient, newest first. Attention
answers look at the latest result of each series: critical before abnormal, and
within a severity the most recent first, grouped by topic so a clinician reads the
lipid results together; the previous result of the same test gives the trend.
Look-ups show the latest value first, then its history.

A series is one analyte whatever unit each report printed (creatinine in umol/L and
in mg/dL is one trend): it is shown in the unit of its latest result, an earlier result
in another unit converted to it (``domain.policy.facts.unit_conversion``) beside the
value it printed, which its citation points to. A unit the table cannot convert is
shown as printed, never converted by guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from domain.policy.facts.analytes import canonical_analyte, normalize_unit
from domain.policy.facts.unit_conversion import convert, display_number, read_number
from domain.models import EvidenceItem
from domain.policy.facts.chart_rules import is_abnormal, is_critical
from domain.policy.questions.topics import TOPIC_BY_NAME, group_of, topic_order

CRITICAL, ABNORMAL, IN_RANGE, NOT_FLAGGED = 0, 1, 2, 3


def severity(flag: str | None) -> int:
    """0 critical, 1 abnormal, 2 within range, 3 not flagged (lower is more severe)."""
    if is_critical(flag):
        return CRITICAL
    if is_abnormal(flag):
        return ABNORMAL
    return IN_RANGE if flag == "normal" else NOT_FLAGGED


def test_key(test_name: str | None, unit: str | None = None, loinc: str | None = None) -> str:
    """One series per test: its canonical analyte ("HbA1c" and "Hemoglobin A1c" are one
    trend; the unit only settles a name two analytes share, so creatinine in umol/L and
    in mg/dL is one series), else its name however the report spaced or punctuated it."""
    analyte = canonical_analyte(str(test_name or ""), loinc=loinc, unit=unit)
    return f"analyte:{analyte}" if analyte else re.sub(r"[^a-z0-9]+", " ", str(test_name or "").lower()).strip()


@dataclass
class LabSeries:
    key: str
    topic: str | None
    items: list[EvidenceItem] = field(default_factory=list)  # newest first

    @property
    def latest(self) -> EvidenceItem:
        return self.items[0]

    @property
    def history(self) -> list[EvidenceItem]:
        return self.items[1:]

    @property
    def severity(self) -> int:
        return severity(self.latest.structured.get("abnormal_flag"))

    @property
    def previous(self) -> EvidenceItem | None:
        """The result before the latest one, from an earlier collection date."""
        latest_date = self.latest.date
        for item in self.history:
            if item.date != latest_date or latest_date is None:
                return item
        return None

    @property
    def test_name(self) -> str:
        return str(self.latest.structured.get("test_name") or self.key)

    @property
    def display_unit(self) -> str:
        """The one unit the series is shown in: its latest result's."""
        return str(self.latest.structured.get("unit") or "")

    def value_text(self, item: EvidenceItem) -> str:
        """A result of the series in the series' unit: "1.00 mg/dL (printed 88 umol/L)"
        when converted, else its value and unit as printed."""
        v = item.structured
        value, unit = str(v.get("value") or ""), str(v.get("unit") or "")
        printed = value + (f" {unit}" if unit else "")
        target = self.display_unit
        if normalize_unit(unit) == normalize_unit(target):
            return printed
        number = read_number(value)
        analyte = self.key.removeprefix("analyte:") if self.key.startswith("analyte:") else None
        converted = None if number is None else convert(number.value, analyte, unit, target)
        if converted is None:
            return printed
        shown = number.comparator + display_number(converted, str(self.latest.structured.get("value") or ""))
        return f"{shown} {target} (printed {printed})"


def guide_key(series: LabSeries) -> str:
    """Guidance is looked up per topic, or per test when its topic has no guideline vocabulary."""
    topic = TOPIC_BY_NAME.get(series.topic or "")
    return series.topic if topic and topic.guideline_hint else f"test:{series.key}"


def _newest_first(item: EvidenceItem) -> tuple:
    # Dated results before undated ones; among equal dates the later-stored first.
    return (item.date is not None, item.date or "", item.evidence_id)


def build_series(items: list[EvidenceItem]) -> list[LabSeries]:
    """Group lab items by test (other items are ignored), newest first in each."""
    by_key: dict[str, LabSeries] = {}
    for item in items:
        if item.fact_type != "lab_result":
            continue
        key = test_key(item.structured.get("test_name"), item.structured.get("unit") or None,
                       item.structured.get("loinc") or None)
        by_key.setdefault(key, LabSeries(key=key, topic=item.topic)).items.append(item)
    for series in by_key.values():
        series.items.sort(key=_newest_first, reverse=True)
    return list(by_key.values())


def attention_order(series: list[LabSeries]) -> list[LabSeries]:
    """Every critical result first, most recent first; then the others most severe
    first, most recent first within a severity, gathered by topic group (lipids
    together) in the order the groups first appear. A critical result never waits
    behind another group's abnormal ones (a critical potassium came fourth, after a
    critical triglyceride's two abnormal lipid companions)."""
    ranked = sorted(series, key=lambda s: (s.severity, _neg_date(s.latest.date), topic_order(s.topic), s.key))
    critical = [s for s in ranked if s.severity == CRITICAL]
    rest = [s for s in ranked if s.severity != CRITICAL]
    group_rank: dict[str | None, int] = {}
    for s in ranked:
        group_rank.setdefault(group_of(s.topic), len(group_rank))
    return critical + sorted(rest, key=lambda s: group_rank[group_of(s.topic)])  # stable: severity order inside a group


def lookup_order(series: list[LabSeries]) -> list[LabSeries]:
    """Look-ups: the most recently measured test first."""
    return sorted(series, key=lambda s: (_neg_date(s.latest.date), s.severity, s.key))


def _neg_date(date: str | None) -> tuple:
    # Sort helper: newer dates first, undated last.
    return (date is None, tuple(-ord(ch) for ch in (date or "")))


def trend_text(series: LabSeries) -> str:
    """"previous 5.1 mmol/L on 2025-10-01 (high)" — empty when there is no earlier result."""
    prev = series.previous
    if prev is None:
        return ""
    v = prev.structured
    value = series.value_text(prev)
    when = f" on {prev.date}" if prev.date else " (undated)"
    flag = v.get("abnormal_flag")
    mark = f" ({str(flag).replace('_', ' ')})" if flag and flag != "unknown" else ""
    return f"previous {value}{when}{mark}"
