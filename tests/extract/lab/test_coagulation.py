"""A clotting screen's units: seconds printed "s" and a D-dimer's "mg/L FEU" are the
units the vocabulary lists for those tests. A held-out coagulation page sent its
prothrombin time, APTT and D-dimer to review as "the unit column holds 's', which is no
unit"; this layout was written after the rule."""

from __future__ import annotations

from domain.policy.facts.analytes import listed_unit
from tests.support.synthetic import read_lab_table


def test_seconds_and_feu_units_are_read_as_the_tests_units():
    _, result = read_lab_table(
        "CLOTTING SCREEN",
        "Patient: OYELARAN-FISK, Tobias   DOB: 1955-02-11   MRN: 7734102   Collected: 2026-12-02 06:30",
        [45, 250, 300, 390], ["Analyte", "Value", "Unit", "Normal range"],
        [["PT", "13.9", "s", "11.5-14.5"], ["Activated partial thromboplastin time", "41", "s", "26-36"],
         ["D-dimer", "0.42", "mg/L FEU", "0.00-0.50"]])
    got = {f.structured_value["test_name"]: f for f in result.facts}
    assert {k: f.structured_value["unit"] for k, f in got.items()} == {
        "PT": "s", "Activated partial thromboplastin time": "s", "D-dimer": "mg/L FEU"}
    assert not any("no unit" in (f.review_reason or "") for f in got.values())
    assert not got["PT"].wants_review and got["Activated partial thromboplastin time"].structured_value[
        "abnormal_flag"] == "high"


def test_a_unit_is_listed_only_for_the_test_that_lists_it():
    assert listed_unit("Prothrombin time", "s") and listed_unit("D dimer", "ng/mL FEU")
    assert not listed_unit("Sodium", "s") and not listed_unit("Unknown test", "s") and not listed_unit("PT", "")
