"""A medication's recorded status: a stopped, completed or held entry is history, never a
current chart medication; a status that says neither goes to a person."""

from __future__ import annotations

import pytest

from domain.models import Certainty, Citation, FactProposal
from domain.policy.facts.certainty import classify
from domain.policy.facts.medication_status import status_reading


@pytest.mark.parametrize("status, reading", [
    ("Stopped", "not_current"), ("stopped 03/2026", "not_current"), ("D/C", "not_current"),
    ("On hold", "not_current"), ("on-hold", "not_current"), ("not-taken", "not_current"),
    ("Completed course", "not_current"), ("Discontinued.", "not_current"),
    ("Active", "current"), ("Taking", "current"), ("PRN", "current"),
    ("see note", "unknown"), ("reduce?", "unknown"),
    ("", None), (None, None), ("  ", None),
])
def test_a_recorded_status_reads_as_current_not_current_or_unknown(status, reading):
    assert status_reading(status) == reading


def _medication(status: str | None) -> FactProposal:
    return FactProposal(
        fact_type="medication", fact_text="Medication: metformin 500 mg", confidence=0.95,
        structured_value={"name": "metformin", "dose": "500 mg", "frequency": "twice daily", "status": status},
        citation=Citation(source_type="xlsx", source_id="1", page_or_section="Medications",
                          field_or_chunk_id="medications[0]", quote_or_value="Metformin"),
    )


def test_a_stopped_medication_is_history_and_an_unclear_status_goes_to_review():
    stopped = classify(_medication("Stopped"), citation_verified=True, paged=False)
    assert stopped.certainty == Certainty.DOCUMENT_FACT and "not a current medication" in stopped.reason
    unclear = classify(_medication("ask pharmacist"), citation_verified=True, paged=False)
    assert unclear.certainty == Certainty.NEEDS_REVIEW and "ask pharmacist" in unclear.reason
    assert classify(_medication("Active"), citation_verified=True, paged=False).certainty == Certainty.VERIFIED
    assert classify(_medication(None), citation_verified=True, paged=False).certainty == Certainty.VERIFIED
