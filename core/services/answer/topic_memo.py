"""The topics of a piece of evidence, with the lab-topic test worked out once per
distinct test (name, LOINC code, unit) instead of once per result: a chart of 5,000
results holds a few dozen tests, and the test (``topics.lab_topics``, a match of the
name against every lab topic's analytes) was a third of building an answer's evidence."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from domain.models import ClinicalContext
from domain.policy.questions.topics import lab_topics, topics_of


@lru_cache(maxsize=4096)
def _lab_topics(name: str, loinc: str | None, unit: str | None) -> frozenset[str]:
    return frozenset(lab_topics({"test_name": name, "loinc": loinc, "unit": unit}))


def evidence_topics(fact_type: str, value: dict[str, Any], text: str,
                    context: ClinicalContext | None = None) -> set[str]:
    """``topics.topics_of``, the same set, a new one each call (callers may change it)."""
    if fact_type == "lab_result":
        return set(_lab_topics(str(value.get("test_name") or ""), value.get("loinc") or None,
                               value.get("unit") or None))
    return topics_of(fact_type, value, text, context)
