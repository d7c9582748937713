"""A white cell differential printing each cell type's count and its share ("%") on one
row: both are results. A held-out haematology page held every differential row for review
("1 word(s) beside the value could not be read"), the share being in a column of its own;
this layout (the "%" column after the units, other names and spacing) was written after
the rule."""

from __future__ import annotations

from domain.policy.facts.analytes import canonical_analyte
from extract.coverage import unread_content
from extract.formats.pdf import normalize_pdf
from extract.lab.extractor import extract_lab
from golden.drawing import placed_text_pdf
from tests.support.synthetic import assert_page_citations_verify


def test_a_share_column_beside_the_count_gives_a_percent_result_of_its_own():
    cols = [45, 190, 250, 330, 380]
    rows = [["WBC", "5.9", "x10E9/L", "", "3.5-10.5"], ["Neut", "3.1", "x10E9/L", "52.5", "1.7-7.0"],
            ["Lymph", "2.0", "x10E9/L", "33.9", "0.9-2.9"], ["Eos", "0.62", "x10E9/L", "10.5", "0.05-0.50 H"]]
    lines = [(45, 40, "LAKESHORE DIAGNOSTICS - HAEMATOLOGY", 12, "hebo"),
             (45, 58, "Patient: ABERNETHY-COLE, Ruth   DOB: 1970-01-25   MRN: LD-660218   Collected: 2026-11-29 08:05"),
             *[(x, 80, h) for x, h in zip(cols, ["Analyte", "Result", "Units", "%", "Ref range"])]]
    for i, row in enumerate(rows):
        lines += [(x, 96 + 14 * i, cell) for x, cell in zip(cols, row) if cell]
    content = normalize_pdf(placed_text_pdf(lines, width=612))
    result = extract_lab(content, "documents:4")
    assert_page_citations_verify(content, result)
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
