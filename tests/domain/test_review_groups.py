"""Reasons that differ only by a confidence number group together; confidence bands."""

from __future__ import annotations

import math

from domain.policy.facts.review_groups import band_colour, confidence_band, reason_group


def test_reasons_that_differ_only_by_a_confidence_number_are_one_group():
    a = "value read by OCR with low confidence (0.41)"
    b = "value read by OCR with low confidence (0.38)"
    assert reason_group(a) == reason_group(b) == "value read by OCR with low confidence"
    assert reason_group("low confidence (0.62)") == reason_group("low confidence (.9)") == "low confidence"
    assert reason_group("OCR confidence 0.55, check the unit") == reason_group("OCR confidence: 0.7, check the unit")


def test_the_rest_of_the_reason_still_separates_groups():
    flag = "the printed flag 'H' was read with low confidence (0.41) and says high"
    value = "value read by OCR with low confidence (0.41)"
    assert reason_group(flag) != reason_group(value)
    # Numbers that are not a confidence stay: a range, a count, a value.
    assert reason_group("value outside the printable range (0-14)") == "value outside the printable range (0-14)"
    assert reason_group("unit not recognised (12.5 mg)") == "unit not recognised (12.5 mg)"
    assert reason_group("2 of 3 readers disagree (1)") == "2 of 3 readers disagree (1)"
    assert reason_group("conflict_needs_review") == "conflict_needs_review"
    assert reason_group(None) is None and reason_group("") == ""


def test_confidence_bands_run_low_to_high_and_unknown_is_never_high():
    assert [confidence_band(c) for c in (0.1, 0.49, 0.5, 0.79, 0.8, 1.0)] == \
        ["low", "low", "medium", "medium", "high", "high"]
    assert confidence_band(None) == "unknown" and confidence_band(math.nan) == "unknown"
    assert band_colour(0.2) != band_colour(0.95) and band_colour(None) not in (band_colour(0.95),)
