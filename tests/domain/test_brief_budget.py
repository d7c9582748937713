"""The brief's rules (domain/policy/answers/brief_budget.py): sentinels chosen for items
waiting for a person, a line without a citation refused, and the fixed cutting order
with its cut list."""

from __future__ import annotations

import pytest

from domain.models import Citation
from domain.policy.answers.brief_budget import (CONFLICT, MISSING, NEVER_CUT, PENDING, UNCLEAR, BriefLine, cut_order,
                                                field_or_missing, fit, review_sentinel, states_no_known_allergies)


def _cite(n: int) -> Citation:
    return Citation(source_type="lab_pdf", source_id=f"documents:{n}", page_or_section="page 1",
                    field_or_chunk_id=f"results[{n}]", quote_or_value=f"quote {n}")


@pytest.mark.parametrize("fact_type, status, reason, expected", [
    ("lab_result", "conflict_needs_review", None, CONFLICT),
    ("lab_result", "conflict_needs_review", "value read by OCR with low confidence (0.41)", CONFLICT),
    ("lab_result", "needs_review", "value read by OCR with low confidence (0.41)", UNCLEAR),
    ("lab_result", "needs_review", "reference range '3.5-' could not be read", UNCLEAR),
    ("allergy", "needs_review", "handwriting illegible beside the allergy box", UNCLEAR),
    ("unread_content", "needs_review", "result-like text no finding cites", UNCLEAR),
    ("allergy", "needs_review", 'hedged: "?"; written in the margin', PENDING),
    ("chief_concern", "needs_review", "red-flag language ('syncope')", PENDING),
    ("medication", None, None, PENDING),
])
def test_an_item_waiting_for_review_gets_the_sentinel_of_why(fact_type, status, reason, expected):
    assert review_sentinel(fact_type, status, reason) == expected


def test_no_known_allergies_is_read_from_the_statement_never_from_an_empty_list():
    assert states_no_known_allergies({"status": "no_known_allergies", "substance": ""})
    assert states_no_known_allergies({"no_known_allergies": True})
    assert not states_no_known_allergies({"substance": "latex"})
    assert not states_no_known_allergies({})
    assert field_or_missing(None) == MISSING and field_or_missing("  ") == MISSING and field_or_missing("hives") == "hives"


def test_a_line_cites_its_facts_or_says_what_stands_in_for_them():
    with pytest.raises(ValueError):
        BriefLine("allergies", "penicillin")
    with pytest.raises(ValueError):
        BriefLine("nowhere", "x", (_cite(1),))
    assert BriefLine("problems", MISSING, sentinels=(MISSING,)).sentinels == (MISSING,)


def _lines() -> list[BriefLine]:
    # Given out of display order on purpose: fit() puts them in order.
    return [
        BriefLine("quarantined", "q1", (_cite(90),)),
        BriefLine("abnormal", "a1 " * 20, (_cite(10),)), BriefLine("abnormal", "a2 " * 20, (_cite(11),)),
        BriefLine("identity", "who", (_cite(1),)),
        BriefLine("critical", "k1 " * 30, (_cite(2),)),
        BriefLine("alerts", "alert " * 30, (_cite(3),)),
        BriefLine("allergies", "al1 " * 10, (_cite(4),)),
        BriefLine("medications", "m1 " * 10, (_cite(5),)), BriefLine("medications", "m2 " * 10, (_cite(6),)),
        BriefLine("review", "r1 " * 10, (_cite(7),), (PENDING,)),
    ]


def _words(kept, cut) -> int:  # a stand-in measure: words of the lines, plus the cut list
    return sum(len(line.text.split()) for line in kept) + 3 * len(cut)


def test_lines_are_cut_lowest_priority_first_each_section_from_its_last_line():
    lines = _lines()
    from domain.policy.answers.brief_budget import ordered

    shown = ordered(lines)
    cut = [shown[i].text.split()[0] for i in cut_order(shown)]
    assert cut == ["q1", "a2", "a1", "m2", "m1", "r1", "al1"]
    assert not {line.section for line in shown if line.text.split()[0] not in cut} - NEVER_CUT


def test_fit_cuts_until_the_measure_is_within_budget_and_lists_what_it_cut():
    full = _words(_lines(), [])
    fitted = fit(_lines(), full - 12, _words)
    assert fitted.tokens <= full - 12 and not fitted.over_budget
    assert [(s, n, of) for s, n, of in fitted.cut] == [("abnormal", 1, 2), ("quarantined", 1, 1)]
    assert fitted.shown["abnormal"] == (1, 2) and fitted.shown["medications"] == (2, 2)
    assert [line.text.split()[0] for line in fitted.lines if line.section == "abnormal"] == ["a1"]
    # Nothing to cut: the same lines back, nothing listed.
    untouched = fit(_lines(), full, _words)
    assert untouched.cut == [] and len(untouched.lines) == len(_lines())


def test_identity_critical_and_alerts_are_never_cut_even_over_budget():
    fitted = fit(_lines(), 10, _words)
    assert {line.section for line in fitted.lines} == NEVER_CUT
    assert fitted.over_budget and fitted.tokens > 10
    assert sum(n for _, n, _ in fitted.cut) == 7
    assert fit(_lines(), 10, _words).lines == fitted.lines  # the same lines give the same cut
