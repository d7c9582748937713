"""A blood gas report: partial pressures in kPa or mmHg are results with units, not
columns read out of place. A held-out blood gas page sent its pCO2 and pO2 to review as
"the unit column holds 'kPa', which is no unit"; this layout (mmHg, another order and
spacing) was written after the vocabulary learnt them."""

from __future__ import annotations

import pytest

from domain.policy.facts.analytes import canonical_analyte
from domain.policy.facts.unit_conversion import factor
from tests.support.synthetic import read_lab_table


def test_a_blood_gas_in_mmhg_is_read_whole():
    _, result = read_lab_table(
        "POINT OF CARE - ARTERIAL BLOOD GAS",
        "Patient: VANTERPOOL, Ines   DOB: 1949-06-30   MRN: 3381907   Collected: 2026-12-01 04:40",
        [45, 200, 270, 360], ["Test", "Result", "Units", "Normal"],
        [["PaO2", "62", "mmHg", "80-100"], ["PaCO2", "51", "mmHg", "35-45"], ["pH", "7.33", "", "7.35-7.45"],
         ["Standard base excess", "+3.4", "mmol/L", "-2 to +2"]])
    got = {f.structured_value["test_name"]: f for f in result.facts}
    assert not any(f.wants_review for f in got.values()), {k: f.review_reason for k, f in got.items()}
    assert (got["PaO2"].structured_value["unit"], got["PaO2"].structured_value["abnormal_flag"]) == ("mmHg", "low")
    assert got["PaCO2"].structured_value["abnormal_flag"] == "high"
    assert canonical_analyte("PaCO2") == "pco2" and canonical_analyte("pO2") == "po2"
    assert canonical_analyte("Standard base excess") == "base_excess"


def test_partial_pressures_convert_between_kpa_and_mmhg():
    assert factor("pco2", "kPa", "mmHg") == pytest.approx(7.5006, rel=1e-4)
    assert factor("po2", "mmHg", "kPa") == pytest.approx(0.13332, rel=1e-4)
