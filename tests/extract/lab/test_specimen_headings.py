"""A panel heading naming a specimen other than blood ("URINALYSIS (dipstick)", "CSF")
makes the results under it that specimen's: a dipstick's "Glucose Negative" was charted
as a blood glucose, and "What is her glucose?" answered with it. Written after a
held-out renal report printed a urinalysis over a renal panel; the layouts here were
written after the rule, in other spacing, specimens and tests."""

from __future__ import annotations

from domain.policy.facts.analytes import canonical_analyte
from extract.formats.pdf import normalize_pdf
from extract.lab.extractor import extract_lab
from golden.drawing import placed_text_pdf
from tests.support.synthetic import assert_page_citations_verify

COLS = [40, 230, 320, 410, 500]


def _report(blocks: list[tuple[str, list[list[str]]]]) -> list:
    lines = [(40, 40, "EASTFIELD PATHOLOGY", 12, "hebo"),
             (40, 60, "Name: QUIGLEY, Desmond   DOB: 1961-04-17   MRN: 5520913   Collected: 03/12/2026"),
             *[(x, 84, h) for x, h in zip(COLS, ["Test", "Result", "Units", "Reference", "Flag"])]]
    y = 100
    for heading, rows in blocks:
        if heading:
            lines.append((40, y, heading, 10, "hebo"))
            y += 14
        for row in rows:
            lines += [(x, y, cell) for x, cell in zip(COLS, row) if cell]
            y += 14
    content = normalize_pdf(placed_text_pdf(lines, width=612))
    result = extract_lab(content, "documents:1")
    assert_page_citations_verify(content, result)
    return [f.structured_value for f in result.facts if f.fact_type == "lab_result"]


def test_results_under_a_urine_heading_are_the_urines_and_the_next_heading_ends_it():
    labs = _report([
        ("BIOCHEMISTRY", [["Glucose", "9.2", "mmol/L", "3.9-7.8", "H"], ["Sodium", "138", "mmol/L", "135-145"]]),
        ("URINE - MSU", [["Glucose", "++", "", "Negative", "A"], ["Protein", "Trace", "", "Negative", "A"],
                         ["Leucocytes", "+++", "", "Negative", "A"], ["Urine creatinine", "8.1", "mmol/L", ""]]),
        ("HAEMATOLOGY", [["Haemoglobin", "118", "g/L", "115-165"], ["White cell count", "12.4", "x10^9/L",
                                                                   "4.0-11.0", "H"]]),
    ])
    assert [(v["test_name"], canonical_analyte(v["test_name"])) for v in labs] == [
        ("Glucose", "glucose"), ("Sodium", "sodium"),
        ("Glucose (urine)", "urine_glucose"), ("Protein (urine)", "urine_protein"),
        ("Leucocytes (urine)", "urine_leukocyte_esterase"), ("Urine creatinine", "urine_creatinine"),
        ("Haemoglobin", "hemoglobin"), ("White cell count", "wbc")]


def test_a_csf_heading_keeps_its_protein_and_glucose_out_of_the_blood_tests():
    labs = _report([("CSF", [["Protein", "0.62", "g/L", "0.15-0.45", "H"], ["Glucose", "2.1", "mmol/L", "2.2-3.9", "L"]]),
                    ("Serum", [["Glucose", "5.6", "mmol/L", "3.9-7.8"]])])
    assert [(v["test_name"], canonical_analyte(v["test_name"])) for v in labs] == [
        ("Protein (CSF)", None), ("Glucose (CSF)", None), ("Glucose", "glucose")]


def test_a_units_row_read_by_ocr_as_ua_names_no_specimen():
    # The extraction bench's faxed "units in a header row" layout: OCR read the row's
    # "U/L" as "UA", and ALT and AST under it became "ALT (urine)", "AST (urine)".
    from domain.policy.facts.analytes import heading_specimen

    assert heading_specimen("UA") == (True, None)
    assert heading_specimen("URINALYSIS (dipstick)") == (True, "urine")
    assert heading_specimen("Urine - MSU") == (True, "urine")
    assert heading_specimen("Urine protein 0.3 g/L") == (False, None)  # a result line, not a heading
