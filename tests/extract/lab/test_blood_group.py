"""A blood group is a result printed as letters: a held-out antenatal screen's "ABO group |
O" was dropped without a word (neither read nor reported), while the rows around it were
read. This layout was written after the rule."""

from __future__ import annotations

import pytest

from domain.models import Certainty
from domain.policy.facts.lab_vocabulary import blood_group_result
from tests.support.synthetic import certainty_of, read_lab_table


def test_a_blood_group_row_is_read_and_waits_for_a_person():
    _, result = read_lab_table(
        "TRANSFUSION LABORATORY - GROUP AND SCREEN",
        "Patient: QUILLFEATHER, Honor   DOB: 1988-01-23   MRN: 6620931   Collected: 2026-12-03 11:10",
        [45, 230, 330], ["Test", "Result", "Comment"],
        [["Blood group", "A Rh D negative", ""], ["Antibody screen", "Negative", ""], ["Kleihauer", "To follow", ""]])
    got = {f.structured_value["test_name"]: f for f in result.facts}
    group = got["Blood group"]
    assert group.structured_value["value"] == "A Rh D negative"
    assert group.wants_review and "blood group" in group.review_reason  # letters alone: a person reads them first
    assert certainty_of(group) is Certainty.NEEDS_REVIEW and certainty_of(got["Antibody screen"]) is Certainty.VERIFIED


@pytest.mark.parametrize("name, value, read", [
    ("ABO group", "O", True), ("ABO/Rh", "AB pos", True), ("Blood type", "B+", True),
    ("Blood group", "Group O", False),  # as printed, not a blood group alone: left to the guard
    ("Sodium", "A", False), ("ABO group", "a", False), ("Vitamin", "B", False),
])
def test_only_a_blood_grouping_test_reads_letters_as_its_result(name, value, read):
    assert blood_group_result(name, value) is read
