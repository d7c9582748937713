"""Reasons to ask for review and factors that lower confidence, gathered per fact while a
reader builds it (the HL7 and FHIR readers, which judge a fact element by element)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Review:
    reasons: list[str] = field(default_factory=list)
    factors: list[float] = field(default_factory=list)

    def add(self, reason: str | None, factor: float = 1.0) -> None:
        """Record a reason (if any) and its confidence factor; no reason, no penalty."""
        if not reason:
            return
        if reason not in self.reasons:
            self.reasons.append(reason)
        self.factors.append(factor)

    def penalise(self, factor: float) -> None:
        self.factors.append(factor)

    def copy(self) -> "Review":
        return Review(list(self.reasons), list(self.factors))

    @property
    def reason(self) -> str | None:
        return "; ".join(self.reasons) or None
