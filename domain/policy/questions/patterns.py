"""The building blocks of the question rule tables (pure): a named rule, and how a
question says who it is about and who would act.

Shared by the unsafe-request tables (``domain.policy.questions.unsafe_requests``), the look-up frames
(``domain.policy.questions.lookup_terms``) and the classifier (``domain.policy.questions.intent``), so each
phrasing is written once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text)


def named_rules(*pairs: tuple[str, str]) -> tuple[Rule, ...]:
    return tuple(Rule(name, re.compile(rx, re.I)) for name, rx in pairs)


# Who a question is about, and who would act.
PT = r"(?:she|he|they|the patient|the pt|pt|patient|this patient)"
WE = r"(?:i|we|you)"
POSSESSIVE = r"(?:her|his|their|the|this|that|pt'?s|patient'?s)"
START = r"^\s*(?:(?:so|and|but|then|ok(?:ay)?),?\s+)?"  # a question's first words ("so is this…", "and why…")
