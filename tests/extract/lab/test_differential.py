"""A white cell differential printing each cell type's count and its share ("%") on one
row: both are results. A held-out haematology page held every differential row for review
("1 word(s) beside the value could not be read"), the share being in a column of its own;
this layout (the "%" column after the units, other names and spacing) was written after
the rule."""

from __future__ import annotations

from domain.policy.facts.analytes import canonical_analyte
from extract.coverage import unread_content
from tests.support.synthetic import read_lab_table


def test_a_share_column_beside_the_count_gives_a_percent_result_of_its_own():
    content, result = read_lab_table(
        "LAKESHORE DIAGNOSTICS - HAEMATOLOGY",
        "Patient: ABERNETHY-COLE, Ruth   DOB: 1970-01-25   MRN: LD-660218   Collected: 2026-11-29 08:05",
        [45, 190, 250, 330, 380], ["Analyte", "Result", "Units", "%", "Ref range"],
        [["WBC", "5.9", "x10E9/L", "", "3.5-10.5"], ["Neut", "3.1", "x10E9/L", "52.5", "1.7-7.0"],
         ["Lymph", "2.0", "x10E9/L", "33.9", "0.9-2.9"], ["Eos", "0.62", "x10E9/L", "10.5", "0.05-0.50 H"]])
    got = {f.structured_value["test_name"]: f for f in result.facts}
    assert sorted(got) == ["Eos", "Eos %", "Lymph", "Lymph %", "Neut", "Neut %", "WBC"]
    assert not any(f.wants_review for f in got.values()), {k: f.review_reason for k, f in got.items()}
    share = got["Eos %"].structured_value
    assert (share["value"], share["unit"], share["reference_range"]) == ("10.5", "%", "")
    assert got["Eos"].structured_value["abnormal_flag"] == "high"  # the count keeps its range and flag
    assert canonical_analyte("Neut %", unit="%") == "neutrophils_pct"
    assert canonical_analyte("Neut", unit="x10E9/L") == "neutrophils_abs"
    assert got["Neut %"].citation.quote_or_value.endswith("52.5")
    assert unread_content(content, result.facts) == []
