"""A blood gas report: partial pressures in kPa or mmHg are results with units, not
columns read out of place. A held-out blood gas page sent its pCO2 and pO2 to review as
"the unit column holds 'kPa', which is no unit"; this layout (mmHg, another order and
spacing) was written after the vocabulary learnt them."""

from __future__ import annotations

import pytest

from domain.policy.facts.analytes import canonical_analyte
from domain.policy.facts.unit_conversion import factor
from extract.formats.pdf import normalize_pdf
from extract.lab.extractor import extract_lab
from golden.drawing import placed_text_pdf
from tests.support.synthetic import assert_page_citations_verify


def test_a_blood_gas_in_mmhg_is_read_whole():
    cols = [45, 200, 270, 360]
    rows = [["PaO2", "62", "mmHg", "80-100"], ["PaCO2", "51", "mmHg", "35-45"], ["pH", "7.33", "", "7.35-7.45"],
            ["Standard base excess", "+3.4", "mmol/L", "-2 to +2"]]
    lines = [(45, 40, "POINT OF CARE - ARTERIAL BLOOD GAS", 12, "hebo"),
             (45, 58, "Patient: VANTERPOOL, Ines   DOB: 1949-06-30   MRN: 3381907   Collected: 2026-12-01 04:40"),
             *[(x, 80, h) for x, h in zip(cols, ["Test", "Result", "Units", "Normal"])]]
    for i, row in enumerate(rows):
        lines += [(x, 96 + 14 * i, cell) for x, cell in zip(cols, row) if cell]
    content = normalize_pdf(placed_text_pdf(lines, width=612))
    result = extract_lab(content, "documents:3")
    assert_page_citations_verify(content, result)
    got = {f.structured_value["test_name"]: f for f in result.facts}
    assert not any(f.wants_review for f in got.values()), {k: f.review_reason for k, f in got.items()}
    assert (got["PaO2"].structured_value["unit"], got["PaO2"].structured_value["abnormal_flag"]) == ("mmHg", "low")
    assert got["PaCO2"].structured_value["abnormal_flag"] == "high"
    assert canonical_analyte("PaCO2") == "pco2" and canonical_analyte("pO2") == "po2"
    assert canonical_analyte("Standard base excess") == "base_excess"


def test_partial_pressures_convert_between_kpa_and_mmhg():
    assert factor("pco2", "kPa", "mmHg") == pytest.approx(7.5006, rel=1e-4)
    assert factor("po2", "mmHg", "kPa") == pytest.approx(0.13332, rel=1e-4)
